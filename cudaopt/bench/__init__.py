"""`cudaopt bench`: a model (agent mode) or a folder of kernels (candidate mode) over whole
suites of KernelBench-format tasks, on every local GPU, through the executor seam; results
stream to `results.jsonl` and are summarised the way KernelBench and CUDA Agent report."""
