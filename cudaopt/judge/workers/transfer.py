"""Output copies passed from the candidate worker to a reference worker for comparison.

A manifest (JSON) names each output leaf's dtype and shape and where its bytes are: a CUDA
IPC handle for device memory when IPC works (no copy at all, see `ipc`), else a
memory-mapped file. No pickle on either path, so a hostile candidate process cannot make
the judge execute anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import torch

from cudaopt.judge.workers import ipc
from cudaopt.judge.workers.digest import digest, leaf_paths
from cudaopt.judge.workers.tensors import Snapshot, flatten, unflatten

_copy = torch.Tensor.copy_
_DTYPES = {str(d): d for d in (
    torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
    torch.int16, torch.int8, torch.uint8, torch.bool, torch.complex64, torch.complex128,
)}


def write_outputs(snap: Snapshot, out_dir: Path, tag: str, share: bool) -> dict[str, Any]:
    """The manifest of a snapshot: CUDA leaves exported by IPC when `share` (and possible),
    the rest copied into memory-mapped files under `out_dir`."""
    skeleton, leaves = snap
    tensors = {}
    for i, (p, t) in enumerate(leaves):
        meta: dict[str, Any] = {"dtype": str(t.dtype), "shape": list(t.shape)}
        if t.numel() and share and t.is_cuda:
            try:
                meta.update(ipc.export(t))
            except ipc.OpenFailed:
                pass
        if t.numel() and "ipc" not in meta:
            meta["file"] = str(_write_file(t, out_dir / f"{tag}-{i}.bin"))
        tensors[p] = meta
    return {"skeleton": skeleton, "tensors": tensors}


def _write_file(t: torch.Tensor, name: Path) -> Path:
    flat = t.reshape(-1)
    target = torch.from_file(str(name), shared=True, size=flat.numel() * flat.element_size(),
                             dtype=torch.uint8)
    _copy(target, flat.view(torch.uint8))
    return name


@contextmanager
def read_outputs(manifest: dict[str, Any], device: torch.device) -> Iterator[Any]:
    """The nested outputs of a manifest, valid inside the block (IPC mappings close after).

    Raises `ipc.OpenFailed` when shared memory cannot be mapped here."""
    with ExitStack() as stack:
        mapped: dict[str, torch.Tensor] = {}  # leaves may share one allocation

        def region(meta: dict[str, Any]) -> torch.Tensor:
            if meta["ipc"] not in mapped:
                mapped[meta["ipc"]] = stack.enter_context(ipc.opened(meta["ipc"], device))
            whole, offset = mapped[meta["ipc"]], int(meta["offset"])
            if offset % 16 or not 0 <= offset <= offset + int(meta["nbytes"]) <= whole.numel():
                raise ipc.OpenFailed("an output claims bytes outside its shared allocation")
            return whole[offset:offset + int(meta["nbytes"])]  # aligned for any dtype

        tensors = {p: _leaf(meta, device, region) for p, meta in manifest["tensors"].items()}
        yield unflatten(manifest["skeleton"], tensors)


def _leaf(meta: dict[str, Any], device: torch.device,
          region: Callable[[dict[str, Any]], torch.Tensor]) -> torch.Tensor:
    dtype = _DTYPES[meta["dtype"]]
    numel = 1
    for s in meta["shape"]:
        numel *= s
    if numel == 0:
        return torch.empty(meta["shape"], dtype=dtype, device=device)
    nbytes = numel * dtype.itemsize
    if "ipc" in meta:
        if int(meta["nbytes"]) != nbytes or device.type != "cuda":
            raise ipc.OpenFailed("IPC leaf does not match its dtype and shape")
        raw = region(meta)
    else:
        raw = torch.from_file(meta["file"], shared=False, size=nbytes, dtype=torch.uint8)
    return raw.view(dtype).reshape(meta["shape"]).to(device)


def manifest_digest(manifest: dict[str, Any], outputs: Any) -> str:
    """The digest (see `digest`) of the outputs `read_outputs` made of `manifest`: its
    leaves come back in the order its skeleton lists them."""
    tensors = [t for _, t in flatten(outputs)[1]]
    paths = leaf_paths(manifest["skeleton"])
    if len(paths) != len(tensors):
        raise ValueError("the manifest's skeleton and its tensors disagree")
    return digest(manifest["skeleton"], dict(zip(paths, tensors, strict=True)))
