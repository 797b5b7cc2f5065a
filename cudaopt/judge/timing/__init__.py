"""Timing and the figures it yields: the clocks, the per-call and back-to-back protocols,
the CPU both contestants are timed from, the noise and contention checks on the
measurements, the clock cross-check, the roofline distance, and the timing phase itself."""
