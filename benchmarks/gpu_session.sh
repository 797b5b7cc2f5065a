#!/usr/bin/env bash
# Everything that needs the GPU, in one script: the CUDA-marked tests, `cudaopt check` on
# KernelBench-sized tasks, the inner-loop benchmark and the README's main command (offline
# replay); GPU_STEPS picks a subset ("tests kernelbench inner replay"). All four take about
# 11 minutes on an H200; where one call is limited to 10, split them. Logs go to $OUT
# (or ./gpu-out) so they come back from a lent machine. Wheels in .whl/ (see
# ../shared/device/wheels.sh) provide litellm and gitpython where the machine lacks them.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1
export PATH=$PWD/benchmarks/bin:$PATH
mkdir -p benchmarks/bin
printf '#!/bin/sh\nexec python3 -m cudaopt.cli "$@"\n' > benchmarks/bin/cudaopt
chmod +x benchmarks/bin/cudaopt
{ nvidia-smi --query-gpu=name,driver_version --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'; } \
  | tee "$out/gpu.txt"
steps=${GPU_STEPS:-tests kernelbench inner replay}
xdist=$(python3 -c 'import xdist' 2>/dev/null && echo "-n ${GPU_TEST_PROCS:-4}")
for step in $steps; do case $step in
tests)
  timeout "${GPU_TEST_TIMEOUT:-300}" python3 -m pytest ${GPU_TESTS:-tests} -m gpu -q -rs $xdist \
    -p no:cacheprovider 2>&1 | tee "$out/gpu_tests.log" | tail -25 ;;
kernelbench)
  timeout 420 python3 benchmarks/kernelbench_check.py 2>&1 | tee "$out/kernelbench.log" ;;
inner)
  timeout 150 python3 benchmarks/inner_loop.py --device cuda --edits 2 2>&1 \
    | tee "$out/bench.log" ;;
throughput)  # opt-in (GPU_STEPS=throughput): `cudaopt bench` on 1 and 2 GPUs
  timeout 590 python3 benchmarks/bench_throughput.py --skip-big 2>&1 \
    | tee "$out/throughput.log" | tail -15 ;;
replay)
  timeout 100 cudaopt optimize examples/fused_swish_cuda/model.py \
    --model replay:examples/replay/fused_swish_cuda.jsonl --no-commit 2>&1 \
    | tee "$out/replay.log" | tail -25 ;;
esac; done
