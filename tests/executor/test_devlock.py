"""The device lock excludes other processes (a slot process and the episodes' judges on the
same GPU, another tool's slots on that GPU), not only other threads."""

from __future__ import annotations

from pathlib import Path

from cudaopt.executor import SlotSpec
from cudaopt.executor.devlock import device_lock
from cudaopt.judge.workers.devlock import gpu_identity
from tests.conftest import lock_from_another_process


def test_a_held_device_lock_is_held_for_other_processes(tmp_path: Path) -> None:
    lock = device_lock(tmp_path, SlotSpec("cuda:1", "cuda", 1))
    with lock:
        assert lock.path == tmp_path / "locks" / "cuda-1.lock"
        assert lock_from_another_process(lock.path) == "held"
    assert lock_from_another_process(lock.path) == "got it"
    with lock:  # reusable, like a threading.Lock
        assert lock_from_another_process(lock.path) == "held"


def test_a_gpu_is_locked_host_wide_whatever_the_executor_folder(tmp_path: Path,
                                                                 monkeypatch) -> None:
    """A bench and a reward service sharing GPU 3 never time at once; GPU 4 is free."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")  # a slot process's view: one GPU
    bench = device_lock(tmp_path / "bench", SlotSpec("cuda:0", "cuda", 0), gpu_identity(0))
    service = device_lock(tmp_path / "serve", SlotSpec("cuda:1", "cuda", 1), "3")
    other = device_lock(tmp_path / "serve", SlotSpec("cuda:2", "cuda", 2), "4")
    with other:  # its file exists from now on
        pass
    with bench:
        assert bench.path == service.path != other.path
        assert lock_from_another_process(service.path) == "held"
        assert lock_from_another_process(other.path) == "got it"


def test_gpus_are_named_as_the_host_names_them(monkeypatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3, GPU-5d3c")
    assert (gpu_identity(0), gpu_identity(1)) == ("3", "GPU-5d3c")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert gpu_identity(1) == "1"
