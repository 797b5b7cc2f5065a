"""One real `cudaopt env serve` process for the session (CPU, no sandbox, cheap judging)
and helpers to start more (the restart test). Everything goes over HTTP on 127.0.0.1."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cudaopt.env import EnvClient
from tests.conftest import EXAMPLES, ROOT
from tests.procs import processes

SWISH = EXAMPLES / "fused_swish_cpu"
ADVERSARIAL = ROOT / "tests" / "adversarial" / "candidates"
TOKEN = "tok-" + "0123456789abcdef" * 2
#: Small limits so that each is reachable in a test: two episodes, eight steps, two
#: candidates queued, no retry of a candidate whose slot died.
SERVE_ARGS = ("--device", "cpu", "--sandbox", "none", "--trials", "2", "--time-budget", "2",
              "--max-episodes", "2", "--max-steps", "8", "--queue-per-slot", "2",
              "--attempts", "1", "--idle", "300")


class Service:
    def __init__(self, root: Path, *args: str, env: dict[str, str] | None = None):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.token_file = root / "token.txt"
        self.token_file.write_text(TOKEN + "\n")
        self.log = root / "serve.log"
        argv = [sys.executable, "-m", "cudaopt.cli", "env", "serve", "--port", "0",
                "--root", str(root / "state"), "--token-file", str(self.token_file), *args]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=log,
                                         stdin=subprocess.DEVNULL, start_new_session=True,
                                         env={**os.environ, **(env or {})})
        self.url = self._wait_url()

    def _wait_url(self) -> str:
        deadline = time.monotonic() + 180
        seen = self.log.stat().st_size
        while time.monotonic() < deadline:
            text = self.log.read_bytes()[seen:].decode(errors="replace")
            found = re.search(r"listening on (http://\S+)", text)
            if found:
                return found.group(1)
            assert self.proc.poll() is None, self.log.read_text()[-3000:]
            time.sleep(0.2)
        raise AssertionError("the service did not start:\n" + self.log.read_text()[-3000:])

    def client(self, **kwargs: object) -> EnvClient:
        return EnvClient(self.url, token_file=self.token_file, **kwargs)

    def kill(self) -> None:
        """As a crash or a lost machine would: no chance to clean up."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()

    def children(self, marker: str) -> list[int]:
        """Child processes of the service whose command line holds `marker`."""
        return processes(marker, parent=self.proc.pid)


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    running = Service(tmp_path_factory.mktemp("env"), *SERVE_ARGS)
    yield running
    running.stop()


@pytest.fixture(scope="session")
def client(service: Service) -> EnvClient:
    return service.client()


#: An O(n) kernel for an O(n^2) task (see tests/agent/conftest.py for its margins): wins
#: by far more than any noise on any CPU, for tests that need a candidate accepted.
PREFIX = EXAMPLES / "prefix_sum_cpu"


def swish_files(folder: Path = SWISH) -> dict[str, str]:
    """A candidate's files (the shipped CPU example's by default): what a scripted policy
    writes."""
    files = {"model_new.py": (folder / "model_new.py").read_text()}
    for path in sorted((folder / "kernels").iterdir()):
        files[f"kernels/{path.name}"] = path.read_text()
    return files


def swish_item(folder: Path = SWISH) -> dict[str, object]:
    """A `/verify` item of a shipped example (fused swish by default; `PREFIX` where the
    test needs the candidate accepted, since swish's fusion gains too little to stay above
    the noise of a loaded CPU)."""
    files = swish_files(folder)
    return {"task": (folder / "model.py").read_text(), "task_name": f"{folder.name}.py",
            "model_new": files.pop("model_new.py"),
            "kernels": {name.split("/", 1)[1]: text for name, text in files.items()}}
