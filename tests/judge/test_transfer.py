"""Outputs crossing from the candidate worker to a reference worker (CPU side of it)."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest
import torch

from cudaopt.judge.workers import ipc
from cudaopt.judge.workers.tensors import compare, snapshot
from cudaopt.judge.workers.transfer import read_outputs, write_outputs


def test_nested_outputs_of_every_kind_survive_the_file_path(tmp_path: Path) -> None:
    out = {"a": torch.randn(3, 4), "b": (torch.arange(5), torch.zeros(0, 2)),
           "c": [torch.randn(2, dtype=torch.float64).to(torch.bfloat16), 7, None]}
    manifest = write_outputs(snapshot(out), tmp_path, "k", share=True)  # CPU: never IPC
    assert all("ipc" not in leaf for leaf in manifest["tensors"].values())
    with read_outputs(manifest, torch.device("cpu")) as back:
        assert compare(out, back, 0.0, 0.0) == []
        assert back["c"][0].dtype == torch.bfloat16 and back["b"][1].shape == (0, 2)


def test_an_ipc_leaf_is_refused_off_cuda(tmp_path: Path) -> None:
    """A manifest claiming shared device memory cannot make a CPU judge read anything."""
    leaf = {"dtype": "torch.float32", "shape": [4], "ipc": "00" * 64, "offset": 0, "nbytes": 16}
    manifest = {"skeleton": {"tensor": "out"}, "tensors": {"out": leaf}}
    with pytest.raises(ipc.OpenFailed), read_outputs(manifest, torch.device("cpu")):
        pass


def test_ipc_handles_keep_their_zero_bytes() -> None:
    """Handles are opaque bytes with NULs inside; none may be cut off on the way."""
    raw = bytes([0, 1, 0, 255] * 16)
    handle = ipc._Handle()
    ctypes.memmove(ctypes.addressof(handle), raw, len(raw))
    assert bytes(handle.reserved) == raw


def test_outputs_die_with_their_last_reference_not_at_the_next_collection() -> None:
    """A reference cycle around an output keeps gigabytes alive until the cyclic collector
    happens to run; three worker processes on one GPU cannot afford that."""
    import gc
    import weakref

    out = (torch.randn(8), [torch.randn(2)])
    alive = [weakref.ref(out[0]), weakref.ref(out[1][0])]
    gc.disable()
    try:
        snap = snapshot(out)
        del out
        assert [ref() for ref in alive] == [None, None]
        assert len(snap[1]) == 2
    finally:
        gc.enable()
