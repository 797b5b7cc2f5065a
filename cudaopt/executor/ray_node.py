"""What runs on the cluster's nodes: a slot actor (a `SlotRunner` holding one GPU), the
start-up probe that says what a node really has, and the CPU build task. Ray is imported
only by the driver (`cluster`), which wraps these plain classes and functions with
`ray.remote`, so this module imports without Ray."""

from __future__ import annotations

import importlib
import io
import os
import platform
import shutil
import socket
import tarfile
from pathlib import Path
from typing import Any

from cudaopt.executor.base import SlotSpec
from cudaopt.executor.jobs import Job, JobResult
from cudaopt.executor.slot import SlotRunner


def probe(device: str) -> dict[str, Any]:
    """The facts a mixed cluster gets wrong: GPU model, torch and CUDA versions, nvcc.
    `problems` are the reasons this node cannot judge `device` jobs at all."""
    import torch

    from cudaopt.judge import find_cuda_home

    info: dict[str, Any] = {
        "host": socket.gethostname(), "node_id": _node_id(), "python": platform.python_version(),
        "torch": torch.__version__, "cuda": torch.version.cuda, "problems": [],
        "device_name": "cpu", "cpu": _cpu_name(), "capability": None, "nvcc": None,
    }
    if device == "cuda":
        home = find_cuda_home()
        nvcc = home / "bin" / "nvcc" if home else None
        info["nvcc"] = str(nvcc) if nvcc and nvcc.exists() else shutil.which("nvcc")
        if not info["nvcc"]:
            info["problems"].append("no nvcc (install the CUDA toolkit or set CUDA_HOME)")
        if not torch.cuda.is_available():
            info["problems"].append("no CUDA device visible to torch "
                                    f"(torch {torch.__version__}, CUDA {torch.version.cuda})")
        else:
            info["device_name"] = torch.cuda.get_device_name(0)
            major, minor = torch.cuda.get_device_capability(0)
            info["capability"] = f"{major}{minor}"
    return info


def _node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


class SlotActor:
    """One slot on one node: its judge stays warm across jobs of one task, as locally."""

    def __init__(self, device: str, index: str, root: str, sandbox: str,
                 plugins: tuple[str, ...]):
        for module in plugins:  # packages that register job kinds (e.g. agent runs)
            importlib.import_module(module)
        import ray

        self.info = probe(device)
        gpu_ids = ray.get_gpu_ids()  # the node's own index of the GPU Ray gave this slot
        index = str(gpu_ids[0]) if gpu_ids else index
        name = f"{self.info['host']}#{self.info['node_id'][:6]}/{device}:{index}"
        self.info["slot"] = name
        spec = SlotSpec(name, device, 0 if device == "cuda" else None)
        self.runner = SlotRunner(spec, Path(root), sandbox)

    def describe(self) -> dict[str, Any]:
        return self.info

    def run(self, job: Job, built: list) -> JobResult:
        """`built` wraps the build task's reference (a list, so Ray hands it over unresolved:
        a lost build is rebuilt here, never a failed job)."""
        if built:
            _unpack(built[0], job, self.runner.root, self.info["node_id"])
        result = self.runner.run(job)
        result.device_name = result.device_name or self.info["device_name"]
        result.torch_version = result.torch_version or self.info["torch"]
        result.extra.setdefault("node", f"{self.info['host']}#{self.info['node_id'][:6]}")
        return result

    def close(self) -> None:
        self.runner.close()


def build(job: Job, root: str, device: str, arch: str | None) -> dict | None:
    """A CPU task: build the candidate's kernels where a slot with the same `root` finds
    them, and hand the build folder back for slots on other nodes. Never raises: a failed
    build is found again, and reported, by the slot's own build."""
    try:
        from cudaopt.judge import build_kernels, default_build_dir, kernel_store

        if arch and device == "cuda":
            os.environ.setdefault("CUDAOPT_CUDA_ARCH", arch)  # build nodes may have no GPU
        _, candidate = job.sources.materialize(Path(root))
        if candidate is None:
            return None
        out = default_build_dir(candidate, job.options.device or device)
        if not build_kernels(candidate.parent / "kernels", out, job.options.build_timeout_s,
                             kernel_store(job.options), shared_entry=False).ok:
            return None
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            tar.add(out, arcname=".", filter=lambda t: None if t.name.endswith(".lock") else t)
        # tar keeps times to the microsecond; ninja compares them to the nanosecond
        times = {str(p.relative_to(out)): p.stat().st_mtime_ns for p in out.rglob("*")}
        return {"node_id": _node_id(), "dir": str(out), "tar": buffer.getvalue(),
                "mtime_ns": times}
    except Exception:  # noqa: BLE001 - the slot's own build reports it
        return None


def _unpack(ref: Any, job: Job, root: Path, node_id: str) -> None:
    """Lay a build made on another node into this node's build folder, with the build's own
    times, and date the (identical) kernel sources before it, so ninja here finds the
    build up to date. A build that did not come is made by the slot itself."""
    import ray

    try:
        built = ray.get(ref, timeout=600)
    except Exception:  # noqa: BLE001 - the build's node was lost: the slot builds itself
        return
    if not built or built["node_id"] == node_id:
        return
    _, candidate = job.sources.materialize(root)
    out = Path(built["dir"])
    if candidate is None or (out / "cuda_extension.so").exists():
        return
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(built["tar"]), mode="r:gz") as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            tar.extractall(out, filter="data")
        else:
            tar.extractall(out)
    for name, mtime_ns in built["mtime_ns"].items():
        if (out / name).exists():
            os.utime(out / name, ns=(mtime_ns, mtime_ns))
    oldest_ns = min(built["mtime_ns"].values()) - 1_000_000_000
    for source in (candidate.parent / "kernels").iterdir():
        os.utime(source, ns=(oldest_ns, oldest_ns))
