"""`cudaopt doctor`: is this machine ready to build, judge and time CUDA kernels?

A run that fails forty minutes in because nvcc and torch disagree about CUDA wastes a model
budget; each check here fails fast with one line saying what is wrong and what to do.
Trial builds run in a child process with a timeout, so a hung compiler cannot hang doctor.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

PASS, FAIL, WARN, SKIP, ABSENT = "pass", "fail", "warn", "skip", "absent"
#: What each path needs. Without a GPU the CUDA path's checks are "absent", not failures:
#: the CPU path (README's CPU demo, `--device cpu`) is a supported way to use cudaopt.
CPU_PATH = ("config", "ninja", "c++", "cpu build")
CUDA_PATH = ("torch", "gpu", "driver", "nvcc", "cuda build")
EXIT_READY, EXIT_BROKEN, EXIT_PARTLY = 0, 1, 3
PROBE_TIMEOUT_S = 20.0
BUILD_TIMEOUT_S = 600.0
MODEL_TIMEOUT_S = 60.0

_BINDING = """#include <torch/types.h>
#include <torch/csrc/utils/pybind.h>
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("add_one", &add_one); }
"""
_CPU_SOURCE = """#include <torch/types.h>
torch::Tensor add_one(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) dst[i] = src[i] + 1.0f;
  return y;
}
"""
_CUDA_SOURCE = """#include <torch/types.h>
extern "C" void launch_add_one(const float* x, float* y, int64_t n);
torch::Tensor add_one(torch::Tensor x) {
  auto y = torch::empty_like(x);
  launch_add_one(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return y;
}
"""
_KERNEL = """#include <cstdint>
__global__ void add_one_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.0f;
}
extern "C" void launch_add_one(const float* x, float* y, int64_t n) {
  add_one_kernel<<<(n + 255) / 256, 256>>>(x, y, n);
}
"""
_PROBE = """import sys, torch
from torch.utils.cpp_extension import load
folder, device, sources = sys.argv[1], sys.argv[2], sys.argv[3:]
mod = load("cudaopt_doctor_" + device, sources, build_directory=folder)
x = torch.arange(1024, dtype=torch.float32, device=device)
assert torch.equal(mod.add_one(x).cpu(), x.cpu() + 1), "wrong result"
print("ok")
"""


@dataclass
class Check:
    """One line of doctor's answer."""

    name: str
    status: str  # pass | fail | warn | skip | absent
    detail: str
    hint: str = ""
    output: str = ""  # tail of a failed trial build's log (shown by --json)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _run(cmd: list[str], timeout_s: float = PROBE_TIMEOUT_S) -> tuple[int, str]:
    """Exit code and combined output; a missing or hung program is a failure, not a crash."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, str(exc)
    return done.returncode, (done.stdout + done.stderr).strip()


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _first_error(text: str) -> str:
    """The compiler's first error line: a build log's last line only says that it failed."""
    for line in text.splitlines():
        if re.search(r"\berror\b", line):  # gcc, nvcc, ld; not Python's "RuntimeError: Error"
            return line.strip()
    return _last_line(text)


def check_torch() -> Check:
    import torch

    cuda = torch.version.cuda
    if cuda is None:
        return Check("torch", FAIL, f"torch {torch.__version__}, CPU-only build",
                     "install a CUDA build of torch (see pytorch.org) to judge CUDA kernels")
    return Check("torch", PASS, f"torch {torch.__version__}, CUDA {cuda}")


def check_gpu() -> Check:
    import torch

    if not torch.cuda.is_available():
        return Check("gpu", FAIL, "torch sees no CUDA device",
                     "check the driver line below and CUDA_VISIBLE_DEVICES")
    props = torch.cuda.get_device_properties(0)
    count = torch.cuda.device_count()
    more = f", {count} devices" if count > 1 else ""
    return Check("gpu", PASS, f"{props.name} (sm_{props.major}{props.minor}, "
                 f"{props.total_memory / 2**30:.0f} GiB){more}")


def check_driver() -> Check:
    if shutil.which("nvidia-smi") is None:
        return Check("driver", FAIL, "nvidia-smi not found", "install the NVIDIA driver")
    code, out = _run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    if code != 0:
        return Check("driver", FAIL, f"nvidia-smi failed: {_last_line(out)}")
    return Check("driver", PASS, out.splitlines()[0])


def find_nvcc() -> str | None:
    """nvcc as torch's extension builder finds it: CUDA_HOME first, then PATH."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and (Path(home) / "bin" / "nvcc").is_file():
        return str(Path(home) / "bin" / "nvcc")
    return shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").is_file() else None)


def check_nvcc() -> Check:
    import torch

    nvcc = find_nvcc()
    if nvcc is None:
        return Check("nvcc", FAIL, "nvcc not found", "install the CUDA toolkit or set CUDA_HOME")
    code, out = _run([nvcc, "--version"])
    match = re.search(r"release (\d+)\.(\d+)", out)
    if code != 0 or match is None:
        return Check("nvcc", FAIL, f"{nvcc} --version failed: {_last_line(out)}")
    version = f"{match[1]}.{match[2]}"
    torch_cuda = torch.version.cuda
    if torch_cuda and torch_cuda.split(".")[0] != match[1]:
        return Check("nvcc", FAIL, f"nvcc {version} ({nvcc}) but torch was built with CUDA "
                     f"{torch_cuda}", "extension builds refuse a major version mismatch; "
                     "point CUDA_HOME at a matching toolkit")
    return Check("nvcc", PASS, f"nvcc {version} ({nvcc})")


def check_ninja() -> Check:
    code, out = _run(["ninja", "--version"])
    if code != 0:
        return Check("ninja", FAIL, "ninja not found", "pip install ninja")
    return Check("ninja", PASS, f"ninja {out.strip()}")


def check_cxx() -> Check:
    compiler = os.environ.get("CXX") or next(
        (c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)
    if compiler is None:
        return Check("c++", FAIL, "no C++ compiler found", "install g++ (build-essential)")
    code, out = _run([compiler, "--version"])
    if code != 0:
        return Check("c++", FAIL, f"{compiler} --version failed: {_last_line(out)}")
    return Check("c++", PASS, out.splitlines()[0])


def check_build(device: str, timeout_s: float = BUILD_TIMEOUT_S) -> Check:
    """Build and call a tiny extension the way the judge builds kernels (split sources)."""
    name = f"{device} build"
    with tempfile.TemporaryDirectory(prefix="cudaopt-doctor-") as tmp:
        folder = Path(tmp)
        (folder / "binding.cpp").write_text(
            (_CUDA_SOURCE if device == "cuda" else _CPU_SOURCE) + _BINDING)
        sources = [str(folder / "binding.cpp")]
        if device == "cuda":
            (folder / "kernel.cu").write_text(_KERNEL)
            sources.append(str(folder / "kernel.cu"))
        start = time.monotonic()
        code, out = _run([sys.executable, "-c", _PROBE, tmp, device, *sources], timeout_s)
        elapsed_s = time.monotonic() - start
    if code != 0 or "ok" not in out.splitlines():  # warnings may follow on stderr
        return Check(name, FAIL, f"trial extension failed after {elapsed_s:.0f} s: "
                     f"{_first_error(out)}", "`cudaopt doctor --json` shows the build log",
                     output=out[-4000:])
    return Check(name, PASS, f"trial extension built and ran in {elapsed_s:.1f} s")


def check_sandbox() -> Check:
    """The agent's shell runs in bwrap; without a working one `cudaopt optimize` refuses
    to start (unless told --sandbox none), so a broken bwrap is a failure, not a note."""
    from cudaopt.sandbox.bwrap import probe

    status = probe()
    if not status.ok:
        return Check("sandbox", FAIL, f"{status.detail}; `cudaopt optimize` refuses to start",
                     f"{status.hint()}; or opt out with --sandbox none (unconfined shell)")
    root = (" (as root: processes bounded by polling, and root-only files outside the home "
            "stay readable; run as a normal user for full confinement)"
            if os.geteuid() == 0 else "")
    return Check("sandbox", PASS, f"{status.detail}: the agent's shell runs sandboxed{root}")


def check_model(model: str, api_base: str | None = None,
                completion: Callable[..., Any] | None = None) -> Check:
    """A one-token completion: proves the key, the endpoint and the model name at once."""
    if completion is None:
        # as in cudaopt.agent.policy.llm: the bundled price list, not ~10 s of offline fetch retries
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        completion = litellm.completion
    start = time.monotonic()
    try:
        completion(model=model, api_base=api_base, max_tokens=1, timeout=MODEL_TIMEOUT_S,
                   messages=[{"role": "user", "content": "Reply with OK."}])
    except Exception as exc:  # any failure is the answer we report
        where = f" at {api_base}" if api_base else ""
        return Check("model", FAIL, f"{model}{where}: {type(exc).__name__}: "
                     f"{_last_line(str(exc))[:300]}",
                     "check the provider's API key variable, the model name and --api-base")
    return Check("model", PASS, f"{model} answered in {time.monotonic() - start:.1f} s")


def run_doctor(model: str | None = None, api_base: str | None = None,
               build: bool = True) -> list[Check]:
    """Every check in order; builds only where their tools were found."""
    checks = [check_torch(), check_gpu(), check_driver(), check_nvcc(), check_ninja(),
              check_cxx()]
    ok = {c.name for c in checks if c.status == PASS}
    if not build:
        checks.append(Check("builds", SKIP, "trial builds skipped (--quick)"))
    elif {"ninja", "c++"} <= ok:
        checks.append(check_build("cpu"))
        if {"gpu", "nvcc"} <= ok:
            checks.append(check_build("cuda"))
        else:
            checks.append(Check("cuda build", SKIP, "needs a GPU and nvcc"))
    else:
        checks.append(Check("builds", SKIP, "needs ninja and a C++ compiler"))
    checks.append(check_sandbox())
    if model:
        checks.append(check_model(model, api_base))
    else:
        checks.append(Check("model", SKIP, "pass --model to check reachability"))
    return [_absent(c) for c in checks] if _no_gpu() else checks


def _no_gpu() -> bool:
    """No GPU at all (no driver, no device), rather than a GPU cudaopt cannot use."""
    import torch

    return shutil.which("nvidia-smi") is None and not torch.cuda.is_available()


def _absent(check: Check) -> Check:
    if check.name not in CUDA_PATH or check.status != FAIL:
        return check
    return Check(check.name, ABSENT, check.detail)  # the summary says what it means


def assess(checks: list[Check]) -> tuple[int, list[str]]:
    """The exit code and a few lines on what works: 0 everything, 3 the CPU path works but
    not everything (no GPU, no sandbox, ...), 1 nothing can be judged here."""
    status = {c.name: c.status for c in checks}
    cpu = [n for n in CPU_PATH if status.get(n) == FAIL]
    if cpu:
        return EXIT_BROKEN, [f"CPU path: broken ({', '.join(cpu)}); nothing can be judged here"]
    lines = ["CPU path: works (`cudaopt check --device cpu`, `cudaopt optimize --device cpu`)"]
    absent = [n for n in CUDA_PATH if status.get(n) == ABSENT]
    cuda = [n for n in CUDA_PATH if status.get(n) == FAIL]
    if absent:
        lines.append("CUDA path: absent, no GPU here (needed for CUDA kernels only)")
    elif cuda:
        lines.append(f"CUDA path: broken ({', '.join(cuda)})")
    elif any(status.get(n) == PASS for n in CUDA_PATH):
        lines.append("CUDA path: works")
    other = [c.name for c in checks if c.status == FAIL and c.name not in CPU_PATH + CUDA_PATH]
    if other:
        lines.append(f"not working: {', '.join(other)} (see above)")
    return (EXIT_PARTLY if absent or cuda or other else EXIT_READY), lines
