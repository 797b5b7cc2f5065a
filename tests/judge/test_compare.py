"""The output comparison: stretches equal bit for bit pass after one read, and every other
stretch still takes the tolerance test, NaNs and signed zeros as before."""

from __future__ import annotations

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
