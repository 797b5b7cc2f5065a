"""The checks a candidate must pass: the static scan, the operator guard, integrity, stream
ordering, outputs that follow their inputs, derived inputs, the verification trials that
drive them, and the task's own check before any candidate."""
