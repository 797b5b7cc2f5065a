#!/usr/bin/env bash
# Everything that needs the GPU, in one script: the CUDA-marked tests, `cudaopt check` on
# KernelBench-sized tasks, the inner-loop benchmark and the README's main command (offline
# replay), the stream-ordering and identity benchmarks; GPU_STEPS picks a subset ("tests
# kernelbench inner replay streams identity figures models"; opt-in: "throughput env compile
# phases sample synth rounding ways start"). The first four take about 11 minutes on an H200, the last
# two up to 14 more; where one call is limited to 10, split them. Logs go to $OUT (or
# ./gpu-out) so they come back from a lent machine. Wheels in .whl/ (see
# ../shared/device/wheels.sh) provide litellm and gitpython where the machine lacks them.
# Real KernelBench tasks (phases, sample): KB_SAMPLE=DIR, made here by
#   python benchmarks/kernelbench_sample.py KernelBench/ DIR --n 8 --seed 5
# (DIR in a git-excluded folder, named in the device call's carry); GPU_SAMPLE_ARGS=--cold-only
# fits a 25-task sample in one call. The rounding step reads the whole suite: KB_SUITE=DIR
# (KernelBench's folder of level1..level3, git-excluded and carried likewise).
# On a lent machine (10 minutes a call), three calls cover the throughput figures, on two
# GPUs where they can be had:
#   GPU_STEPS="throughput compile" GPU_THROUGHPUT_ARGS=--no-check bash benchmarks/gpu_session.sh
#   GPU_STEPS=env bash benchmarks/gpu_session.sh
#   GPU_STEPS=tests bash benchmarks/gpu_session.sh   # 10 test processes, 540 s
# A step stopped by its time limit stops what it started (so the next step measures a quiet
# GPU); with timeout's -k, it gets a minute for that.
# The tests step writes each result as it comes to $OUT/tests_live.log (benchmarks/pytest_live.py).
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
if [ -f .whl/bubblewrap.deb ] && ! command -v bwrap >/dev/null; then  # see ../shared/device
  mkdir -p /tmp/bw /tmp/bin && dpkg -x .whl/bubblewrap.deb /tmp/bw \
    && cp /tmp/bw/usr/bin/bwrap /tmp/bin/ && export PATH=/tmp/bin:$PATH
fi
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1
export PATH=$PWD/benchmarks/bin:$PATH
mkdir -p benchmarks/bin
printf '#!/bin/sh\nexec python3 -m cudaopt.cli "$@"\n' > benchmarks/bin/cudaopt
chmod +x benchmarks/bin/cudaopt
{ nvidia-smi --query-gpu=name,driver_version --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'; } \
  | tee "$out/gpu.txt"
steps=${GPU_STEPS:-tests kernelbench inner replay streams identity figures models}
xdist=$(python3 -c 'import xdist' 2>/dev/null && echo "-n ${GPU_TEST_PROCS:-10}")
for step in $steps; do case $step in
tests)
  # the longest first (their durations under -n 8 in docs/development.md)
  export TESTS_FIRST=${TESTS_FIRST:-"tests/env tests/synth tests/models
    tests/agent/test_racy_session.py tests/bench tests/agent/test_replay.py
    tests/judge/test_ipc_gpu.py"}
  PYTHONPATH=$PWD/benchmarks:$PYTHONPATH timeout -k 30 "${GPU_TEST_TIMEOUT:-540}" \
    python3 -m pytest ${GPU_TESTS:-tests} -m gpu -q -rs $xdist -p no:cacheprovider \
    -p pytest_live --durations=0 2>&1 | tee "$out/gpu_tests.log" | tail -25 ;;
kernelbench)
  timeout 420 python3 benchmarks/kernelbench_check.py 2>&1 | tee "$out/kernelbench.log" ;;
inner)
  timeout 150 python3 benchmarks/inner_loop.py --device cuda --edits 2 2>&1 \
    | tee "$out/bench.log" ;;
streams)
  timeout 240 python3 benchmarks/streams_check.py --profile 2>&1 | tee "$out/streams.log" ;;
identity)
  timeout 600 python3 benchmarks/identity.py 2>&1 | tee "$out/identity.log" ;;
figures)
  timeout 300 python3 benchmarks/speed_figures.py 2>&1 | tee "$out/figures.log" ;;
models)
  timeout 300 python3 benchmarks/model_swap.py 2>&1 | tee "$out/models.log" ;;
ways)  # opt-in: an accepted kernel eager, compiled and exported; KernelBench's MiniGPT too
  timeout -k 30 300 python3 benchmarks/model_ways.py ${KB_SUITE:+--kernelbench "$KB_SUITE"} \
    2>&1 | tee "$out/ways.log" ;;
env)
  timeout -k 60 "${GPU_ENV_TIMEOUT:-590}" python3 benchmarks/env_throughput.py ${GPU_ENV_ARGS:-} 2>&1 \
    | tee "$out/env_throughput.log" | tail -20 ;;
throughput)  # opt-in (GPU_STEPS=throughput): `cudaopt bench` on 1 and 2 GPUs
  timeout -k 60 "${GPU_THROUGHPUT_TIMEOUT:-590}" python3 benchmarks/bench_throughput.py --skip-big \
    ${GPU_THROUGHPUT_ARGS:-} --save "$out/throughput" 2>&1 | tee "$out/throughput.log" \
    | tail -25 ;;
phases)  # where one judgement's time goes, first and later, on real KernelBench tasks
  timeout -k 10 "${GPU_PHASES_TIMEOUT:-300}" python3 benchmarks/judge_phases.py "$KB_SAMPLE" \
    --repeat 2 ${GPU_PHASES_ARGS:-} 2>&1 | tee "$out/phases.log" ;;
sample)  # `cudaopt bench` over a KernelBench sample (KB_SAMPLE: kernelbench_sample.py's folder)
  timeout -k 60 "${GPU_SAMPLE_TIMEOUT:-590}" python3 benchmarks/bench_throughput.py --no-check \
    --sample "$KB_SAMPLE" ${GPU_SAMPLE_ARGS:-} --save "$out/sample" 2>&1 | tee "$out/sample.log" | tail -25 ;;
synth)  # tasks kept per minute on the GPU, then `bench` over them with identity candidates
  timeout -k 30 "${GPU_SYNTH_TIMEOUT:-420}" python3 benchmarks/synth_rate.py --n "${GPU_SYNTH_N:-20}" \
    --device cuda --identity --bench --out "$out/synth/tasks" 2>&1 | tee "$out/synth.log" \
    | tail -25 ;;
rounding)  # honest candidates that round otherwise, through the signal checks, on the GPU
  timeout -k 10 "${GPU_ROUNDING_TIMEOUT:-300}" python3 benchmarks/honest_rounding.py "$KB_SUITE" \
    --device cuda 2>&1 | tee "$out/rounding.log" | grep -v '^\[' | tail -40 ;;
start)  # a worker's start-up by stage; a trusted one started anew against forked
  timeout -k 10 "${GPU_START_TIMEOUT:-240}" python3 benchmarks/worker_start.py --device cuda \
    2>&1 | tee "$out/worker_start.log" ;;
compile)  # what the baseline's torch.compile costs a fresh worker, plain and prewarmed
  timeout "${GPU_COMPILE_TIMEOUT:-120}" python3 benchmarks/compile_cost.py \
    benchmarks/suite/level1/1_Sigmoid.py 2>&1 | tee "$out/compile_cost.log" ;;
replay)
  timeout 100 cudaopt optimize examples/fused_swish_cuda/model.py \
    --model replay:examples/replay/fused_swish_cuda.jsonl --no-commit --sandbox none 2>&1 \
    | tee "$out/replay.log" | tail -25 ;;
esac; done
