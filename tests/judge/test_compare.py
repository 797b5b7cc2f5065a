"""The output comparison: stretches equal bit for bit pass after one read, and every other
stretch still takes the tolerance test, NaNs and signed zeros as before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from cudaopt.judge.workers import tensors
from cudaopt.judge.workers.tensors import compare


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tensors, "_CHUNK", 1000)  # several chunks in a small tensor


def _pair() -> tuple[torch.Tensor, torch.Tensor]:
    ref = torch.randn(10_000, generator=torch.Generator().manual_seed(0))
    return ref, ref.clone()


def test_an_equal_output_and_one_within_tolerance_pass() -> None:
    ref, cand = _pair()
    assert compare(ref, cand, 1e-5, 1e-5) == []
    cand[4321] += 1e-7  # not equal bit for bit in that chunk, within tolerance
    assert compare(ref, cand, 1e-5, 1e-5) == []


def test_one_element_off_after_equal_chunks_is_found_where_it_is() -> None:
    ref, cand = _pair()
    cand[9876] += 1.0
    found = compare(ref, cand, 1e-5, 1e-5)
    assert found[0].startswith("out: 1 of 10000 elements differ")
    assert "(9876,)" in found[1]


def test_nans_match_nans_only_and_signed_zeros_match() -> None:
    ref, cand = _pair()
    ref[10] = cand[10] = float("nan")
    ref[20], cand[20] = 0.0, -0.0
    assert compare(ref, cand, 0.0, 0.0) == []
    cand[3000] = float("nan")
    assert "1 of 10000" in compare(ref, cand, 1e-3, 1e-3)[0]


def test_stretches_tested_against_the_tolerance_in_parts_lose_no_element(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tensors, "_TOL_CHUNK", 300)  # parts ending inside and at a chunk's end
    ref, cand = _pair()
    for i in (299, 300, 999, 1000, 2500):
        cand[i] += 1.0
    found = compare(ref, cand, 1e-5, 1e-5)
    assert found[0].startswith("out: 5 of 10000 elements differ")
    assert [line.split(":")[0].strip() for line in found[1:]] == [
        "at (299,)", "at (300,)", "at (999,)", "at (1000,)", "at (2500,)"]


def _peak_rss_gib(work: Callable[[], object]) -> float:
    """The most this process held while `work` ran, above what it held before (Linux)."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the high-water mark restarts from the current size
    before = _status_kib("VmRSS")
    work()
    return (_status_kib("VmHWM") - before) / 2**20


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc")
def test_a_wrong_multi_gb_output_is_compared_without_temporaries_of_its_size(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The tolerance test and the worst difference make about a dozen temporaries of what
    they test; on the chunks of a 6 GiB output they took 2 GiB more in the comparing
    process, beside the device's three processes' copies of it."""
    monkeypatch.setattr(tensors, "_CHUNK", 1 << 26)
    ref = torch.randn(1 << 26, generator=torch.Generator().manual_seed(0))  # 256 MiB
    cand = ref + 1e-3
    gib = 256 / 1024
    assert _peak_rss_gib(lambda: compare(ref, cand, 1e-5, 1e-5)) < 4 * gib  # 6.2 times before
