"""CUDA: cache tricks below the timer (a persisting-L2 window), a stale output under graph
capture named as such, and the persisting-L2 reset itself."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest
import torch

from cudaopt.judge import Status
from cudaopt.judge.checks import variants
from cudaopt.judge.checks.streams import STALE
from cudaopt.judge.timing import l2

from .harness import GPU, judge

pytestmark = pytest.mark.gpu
CUDA = dict(folder=GPU, device="cuda")


def test_a_persisting_l2_window_is_reset_and_reported() -> None:
    verdict = judge("persisting_l2", task="l2_task.py", profile=True, **CUDA)
    assert verdict.status is Status.OK, verdict.violations or verdict.mismatch or verdict.error
    assert any("persisting accesses; the judge reset it" in w for w in verdict.warnings), (
        verdict.warnings)


def test_an_honest_kernel_draws_no_persisting_l2_warning() -> None:
    """The device's own set-aside (11.25 MiB on an H200, before any candidate ran) is
    nobody's doing: only a change the candidate made is reported."""
    verdict = judge("honest_tiled", profile=True, **CUDA)
    assert verdict.status is Status.OK, verdict.violations or verdict.mismatch or verdict.error
    assert not any("persisting accesses" in w for w in verdict.warnings), verdict.warnings


def test_the_reset_demotes_a_set_aside_made_in_this_process() -> None:
    torch.cuda.synchronize()  # the primary context is current on this thread
    props = torch.cuda.get_device_properties(0)
    wanted = min(getattr(props, "persisting_l2_cache_max_size", 0) or (4 << 20), 4 << 20)
    cuda = ctypes.CDLL("libcuda.so.1")
    assert cuda.cuCtxSetLimit(ctypes.c_int(l2.CU_LIMIT_PERSISTING_L2_CACHE_SIZE),
                              ctypes.c_size_t(wanted)) == 0
    assert l2.persisting_bytes() > 0
    assert l2.reset_persisting() > 0
    assert l2.persisting_bytes() == 0


def test_a_stale_output_under_graph_capture_is_named_as_such() -> None:
    verdict = judge("stale_under_capture", **CUDA)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1, verdict.error
    assert any(v.startswith(STALE) for v in verdict.violations), verdict.violations
    assert not any(v.startswith("work left unordered") for v in verdict.violations)


_DERIVE = """
import hashlib, torch
from cudaopt.judge.checks import variants
x = torch.randn(4096, 4096, device="cuda", generator=torch.Generator("cuda").manual_seed(5))
for kind in sorted(variants.MAGNITUDE + variants.ORDER):
    v = {"kinds": [kind], "seed": 11, "mix_seed": 12}
    other = lambda s: [torch.randn(x.shape, device="cuda",
                                   generator=torch.Generator("cuda").manual_seed(s))]
    y = variants.derive([x], v, other)[0]
    print(kind, hashlib.sha256(y.cpu().numpy().tobytes()).hexdigest())
"""


def test_derived_inputs_are_the_same_in_two_processes() -> None:
    """Both workers derive the inputs themselves, so a transform with a device-dependent
    result (a write to a repeated index) hands the candidate other inputs than the
    reference, and an honest kernel is judged wrong. 16M elements: spiky's 16k outliers
    drawn with replacement repeat a few positions."""
    runs = [subprocess.run([sys.executable, "-c", _DERIVE], capture_output=True, text=True,
                           timeout=300, check=True).stdout for _ in range(2)]
    kinds = len(set(variants.MAGNITUDE + variants.ORDER))
    assert runs[0] == runs[1] and runs[0].count("\n") == kinds


_PEAK = """
import torch
from cudaopt.judge.checks import variants
GIB = 2**30
for shape in [(8192, 65536), (2, 16384, 16384)]:  # 2 GiB each; the second is square images
    for kinds in [[k] for k in variants.MAGNITUDE + variants.ORDER] + [["block", "sort"]]:
        inputs = [torch.rand(shape, device="cuda")]
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        out = variants.derive(inputs, {"kinds": kinds, "seed": 3, "mix_seed": 4},
                              lambda s: [torch.rand(shape, device="cuda")])
        peak = (torch.cuda.max_memory_allocated() - base) / GIB
        print(shape, "+".join(kinds), f"{peak:.2f}")
        del out
"""


def test_deriving_a_large_input_takes_little_more_than_its_output() -> None:
    """Two workers derive KernelBench's multi-GB inputs at once on one device; a transform
    whose temporaries are several times the input (a whole sort's indices, a full-size
    symmetry test on square images) ran the judge out of memory on real tasks and failed
    identity candidates. Beyond the drawn 2 GiB input, one output and chunk-sized
    temporaries."""
    run = subprocess.run([sys.executable, "-c", _PEAK], capture_output=True, text=True,
                         timeout=300, check=True)
    peaks = [line.rsplit(" ", 1) for line in run.stdout.splitlines()]
    assert len(peaks) == 2 * (len(variants.MAGNITUDE + variants.ORDER) + 1), run.stdout
    over = [f"{what} {gib} GiB" for what, gib in peaks if float(gib) > 2.5]
    assert not over, over
