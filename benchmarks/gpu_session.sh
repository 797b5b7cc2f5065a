#!/usr/bin/env bash
# Everything that needs the GPU, in one call: the CUDA-marked tests, the inner-loop benchmark
# and a sample verdict. Logs go to $OUT (or ./gpu-out) so they come back from a lent machine.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 CUDAOPT_GPU_SESSION=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee "$out/gpu.txt"
python3 -c 'import torch; print(torch.__version__, torch.version.cuda)' | tee -a "$out/gpu.txt"
python3 -m pytest ${GPU_TESTS:-tests} -m gpu -q -rs 2>&1 | tee "$out/gpu_tests.log" | tail -40
python3 benchmarks/inner_loop.py --device cuda --edits 3 2>&1 | tee "$out/bench.log"
python3 -m cudaopt.cli check examples/fused_swish_cuda/model.py \
  examples/fused_swish_cuda/model_new.py --json "$out/verdict.json" 2>&1 | tee "$out/check.log"
