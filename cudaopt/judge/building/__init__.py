"""Building: the candidate's `kernels/` compiled into one extension, its `load_inline` builds
(done ahead, in folders keyed by content), the caches compiled code lands in, and how a task
or candidate file is imported in a process of its own."""
