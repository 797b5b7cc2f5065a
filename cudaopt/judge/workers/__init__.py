"""The worker processes and their transport: starting a child and its side channel, warm
pools of them, one judgement's set and its secret seeds, GPU turns across processes, and the
tensors they draw, snapshot and pass to each other (by file or CUDA IPC)."""
