"""What runs inside each worker process: the entry point and the reference and candidate
roles, built from every stage's in-process half (the guard, the stream checks, the bench
loops, the pinned timing thread). The parent starts them by module path and never imports
them, which is why they can sit above every stage they assemble."""
