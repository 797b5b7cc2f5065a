"""One judgement at a time per GPU, across processes and tools: a bench's slot, a reward
service's episodes and a user's `cudaopt optimize` that happen to share a GPU take turns,
so a GPU never times two things at once. The lock is an exclusive `flock` on a file named
for the GPU as the host names it, in a folder every user's judges share."""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: In a worker's environment: the lock file of the GPU it runs on, which it holds around the
#: steps that run on the GPU while its judgement does not hold the GPU (see `gpu_turn`).
TURN_ENV = "CUDAOPT_GPU_TURN"


class DeviceLock:
    """A context manager like `threading.Lock` (what `JudgePool.lock` expects) that also
    holds an exclusive `flock` on `path` while it is held. `host_wide`: the path is the
    GPU's own (`gpu_lock`), not one an executor chose for its slot."""

    def __init__(self, path: Path, host_wide: bool = False):
        self.path = path
        self.host_wide = host_wide
        self._thread = threading.Lock()
        self._fd: int | None = None

    def __enter__(self) -> DeviceLock:
        self._thread.acquire()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = _exclusive(self.path)
        except BaseException:
            self._thread.release()
            raise
        self._fd = fd
        try:  # who holds it, for the progress line of whoever waits next
            self.path.with_suffix(".holder").write_text(f"pid {os.getpid()}: {_command()}\n")
        except OSError:
            pass
        return self

    def waiting_on(self) -> str | None:
        """Who holds the lock now (another process), or None when it is free: said to the
        user before waiting, so a judgement queued behind another tool's is not silent."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CREAT, 0o644)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                return self.path.with_suffix(".holder").read_text().strip() or "another process"
            except OSError:
                return "another process"
        finally:
            os.close(fd)
        return None

    def __exit__(self, *exc: object) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor releases the flock
        self._thread.release()


def _exclusive(path: Path | str) -> int:
    """A new descriptor of the lock file holding an exclusive `flock`, waiting for it: the
    lock is this descriptor's, so closing it releases the lock and nothing else does."""
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)  # flock needs no write
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _command() -> str:
    """This process's command line, shortened: `cudaopt bench ...`, `pytest ...`."""
    try:
        argv = Path("/proc/self/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    words = [Path(a.decode(errors="replace")).name if i == 0 else a.decode(errors="replace")
             for i, a in enumerate(argv) if a]
    return " ".join(words)[:120]


def gpu_identity(index: int, environ: dict[str, str] | None = None) -> str:
    """How the host names the GPU a process calls `cuda:index`: through its
    CUDA_VISIBLE_DEVICES when set (an index, a UUID or a MIG name), else the index. A
    process that narrows CUDA_VISIBLE_DEVICES for a child must pass this on, not its own
    index (with CUDA_VISIBLE_DEVICES=2,3 a process's cuda:0 is the host's GPU 2)."""
    value = (os.environ if environ is None else environ).get("CUDA_VISIBLE_DEVICES", "")
    visible = [x.strip() for x in value.split(",") if x.strip()]
    return visible[index] if index < len(visible) else str(index)


def shared_dir(name: str) -> Path:
    """A folder of lock files every judge on the host sees, whichever user runs it: in the
    temporary folder, sticky and world-writable like /tmp itself."""
    folder = Path(tempfile.gettempdir()) / name
    if not folder.is_dir():
        folder.mkdir(exist_ok=True)
        try:
            folder.chmod(0o1777)
        except OSError:
            pass  # another user's folder
    return folder


def gpu_lock(identity: str) -> DeviceLock:
    """The host-wide lock of the GPU the host names `identity`."""
    name = "gpu-" + re.sub(r"[^A-Za-z0-9_.-]", "_", identity) + ".lock"
    return DeviceLock(shared_dir("cudaopt-devices") / name, host_wide=True)


@contextmanager
def gpu_turn(on_gpu: bool, compiling: bool = False) -> Iterator[None]:
    """Inside a reference worker: hold the GPU's lock (`TURN_ENV`) for one step that puts
    work on the GPU outside the judgement's own turn: building the model, its first untimed
    call, torch.compile's first calls (the judge holds it for the candidate's weights).
    Those steps run while another judgement may be timing on the same GPU (a bench's next
    task is prepared during the current one's timing); their kernels would land inside its
    timed calls. A worker never takes it for a step its own judgement awaits while holding
    the GPU.

    `compiling`: the step runs torch.compile, whose tracing and code generation put no work
    on the GPU and took 7 s per KernelBench task on average on an H200 with cold caches (51 s
    at most), while other lanes' judgements waited for the GPU. The turn is let go while
    torch.compile compiles, once the device has finished what the step gave it, and taken
    again before the compiled code runs. Only for modes whose compile runs nothing on the
    device: max-autotune benchmarks its choices on the GPU while it compiles."""
    path = os.environ.get(TURN_ENV)
    if not (on_gpu and path):
        yield
        return
    turn = _Turn(path)
    turn.take()
    try:
        if compiling:
            with _let_go_while_compiling(turn):
                yield
        else:
            yield
    finally:
        turn.give()


class _Turn:
    """The GPU's lock as a worker holds it: no thread lock and no `.holder` file, unlike
    `DeviceLock`, so a judge waiting for the GPU keeps naming the judgement it waits for."""

    def __init__(self, path: str):
        self.path = path
        self.fd: int | None = None

    def take(self) -> None:
        if self.fd is None:
            self.fd = _exclusive(self.path)

    def give(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)  # its only descriptor: the flock goes with it


@contextmanager
def _let_go_while_compiling(turn: _Turn) -> Iterator[None]:
    """Dynamo's compile callbacks (start: give the turn, end: take it) for the context's
    length; where this torch has none, the turn is simply held throughout."""
    import torch

    handler = getattr(getattr(torch._dynamo, "callback", None), "callback_handler", None)
    if handler is None or not hasattr(handler, "register_start_callback"):
        yield
        return

    def start(*_: object) -> None:  # torch < 2.6 passes no argument, later ones one
        if torch.cuda.is_initialized():
            torch.cuda.synchronize()  # the step's kernels so far end inside its turn
        turn.give()

    def end(*_: object) -> None:
        turn.take()

    handler.register_start_callback(start)
    handler.register_end_callback(end)
    try:
        yield
    finally:
        handler.remove_start_callback(start)
        handler.remove_end_callback(end)
