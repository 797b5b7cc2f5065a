"""Build a candidate's `kernels/` folder into one extension module, `cuda_extension`.

We write our own ninja file rather than calling `torch.utils.cpp_extension.load`, because
`load` imports the module it built, which would run candidate code in the judge's process.
The build directory persists per candidate folder, so ninja recompiles only the sources
that changed: editing one `.cu` file never rebuilds the torch-heavy binding objects.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from cudaopt.judge.building import pch, shared
from cudaopt.runs.folder import state_dir

MODULE_NAME = "cuda_extension"
DATA_DIR = Path(__file__).resolve().parent / "data"
KERNEL_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx")


@dataclass
class BuildResult:
    ok: bool
    build_dir: Path
    seconds: float
    log: str
    rebuilt: list[str]  # object files ninja actually recompiled


def kernel_sources(kernels_dir: Path) -> list[Path]:
    return sorted(p for p in kernels_dir.iterdir() if p.suffix in KERNEL_SUFFIXES and p.is_file())


def find_cuda_home() -> Path | None:
    """The CUDA toolkit nvcc and its headers come from, or None (also a cluster node's probe)."""
    from torch.utils.cpp_extension import CUDA_HOME

    if CUDA_HOME:
        return Path(CUDA_HOME)
    nvcc = shutil.which("nvcc")
    if nvcc:
        real = Path(os.path.realpath(nvcc))
        if (real.parent.parent / "include" / "cuda_runtime.h").is_file():
            return real.parent.parent
    for guess in (Path("/usr/local/cuda"),):
        if (guess / "bin" / "nvcc").exists():
            return guess
    return None


def _cuda_arch_flags() -> list[str]:
    """`-gencode` for the local GPU (or CUDAOPT_CUDA_ARCH, e.g. "90"), so Hopper code is native."""
    arch = os.environ.get("CUDAOPT_CUDA_ARCH")
    if not arch:
        import torch

        major, minor = torch.cuda.get_device_capability()
        arch = f"{major}{minor}"
    return [f"-gencode=arch=compute_{arch},code=sm_{arch}"]


def _flags(with_cuda: bool) -> dict[str, str]:
    import torch
    from torch.utils import cpp_extension as ce

    torch_lib = Path(ce.library_paths()[0])
    includes = [f"-I{DATA_DIR}"] + [f"-isystem {p}" for p in ce.include_paths()]
    includes.append(f"-isystem {sysconfig.get_paths()['include']}")
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    with warnings.catch_warnings():  # deprecated (and empty) from torch 2.9 on
        warnings.simplefilter("ignore")
        pyb: list[str] = getattr(ce, "_get_pybind11_abi_build_flags", lambda: [])()
    common = [f"-DTORCH_EXTENSION_NAME={MODULE_NAME}", f"-D_GLIBCXX_USE_CXX11_ABI={abi}", *pyb]
    cflags = [*common, *includes, "-fPIC", "-std=c++17", "-O3", "-fopenmp"]
    libs = ["c10", "torch", "torch_cpu", "torch_python"]
    ldflags = ["-shared", "-fopenmp", f"-L{torch_lib}", f"-Wl,-rpath,{torch_lib}"]
    cuda_cflags: list[str] = []
    cuda_home = find_cuda_home()
    if with_cuda:
        if cuda_home is None:
            raise FileNotFoundError("nvcc not found: install the CUDA toolkit or set CUDA_HOME")
        libs += [n for n in ("c10_cuda", "torch_cuda") if (torch_lib / f"lib{n}.so").exists()]
        lib64 = cuda_home / "lib64"
        ldflags += [f"-L{lib64}", f"-Wl,-rpath,{lib64}", "-lcudart", "-lcublas", "-lcublasLt"]
        includes.append(f"-isystem {cuda_home / 'include'}")
        cflags.append(f"-isystem {cuda_home / 'include'}")
        cuda_cflags = [*common, *includes, *_cuda_arch_flags(), "-O3", "-std=c++17",
                       "--expt-relaxed-constexpr", "--compiler-options", "'-fPIC'"]
    ldflags += [f"-l{n}" for n in libs]
    return {
        "cxx": os.environ.get("CXX", "c++"),
        "nvcc": str(cuda_home / "bin" / "nvcc") if cuda_home else "nvcc",
        "cflags": " ".join(cflags),
        "cuda_cflags": " ".join(cuda_cflags),
        "ldflags": " ".join(ldflags),
    }


def _object(src: Path) -> str:
    return f"{src.stem}{'.cuda' if src.suffix == '.cu' else ''}.o"


def _ninja_file(sources: list[Path], flags: dict[str, str], entry: Path | None,
                header: Path | None = None, with_header: frozenset[Path] = frozenset()) -> str:
    """`entry`: the judge's entry object kept from an earlier build, linked as it is (the
    file is written anew on each build, so an entry object gone is compiled here again);
    the sources in `with_header` are compiled with the precompiled binding `header`."""
    lines = ["ninja_required_version = 1.3"]
    lines += [f"{k} = {v}" for k, v in flags.items()]
    lines += [
        "rule compile",
        "  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out",
        "  depfile = $out.d",
        "  deps = gcc",
    ]
    if header is not None:
        lines += [
            "rule compile_pch",
            "  command = $cxx -MMD -MF $out.d $cflags -include "
            f"{shlex.quote(str(header)).replace('$', '$$')} -c $in -o $out",
            "  depfile = $out.d",
            "  deps = gcc",
        ]
    lines += [
        "rule cuda_compile",
        "  command = $nvcc --generate-dependencies-with-compile --dependency-output $out.d "
        "$cuda_cflags -c $in -o $out",
        "  depfile = $out.d",
        "  deps = gcc",
        "rule link",  # renamed into place: a process loading the old module never sees half
        "  command = $cxx $in $ldflags -o $out.tmp && mv -f $out.tmp $out",
    ]
    objects = [str(entry) if entry is not None else shared.ENTRY]
    if entry is None:
        lines.append(f"build {shared.ENTRY}: compile {DATA_DIR / 'cudaopt_module.cpp'}")
    for src in sources:
        obj = _object(src)
        rule = ("cuda_compile" if src.suffix == ".cu"
                else "compile_pch" if src in with_header else "compile")
        lines.append(f"build {obj}: {rule} {src.resolve()}")
        objects.append(obj)
    lines.append(f"build {MODULE_NAME}.so: link {' '.join(objects)}")
    lines.append(f"default {MODULE_NAME}.so")
    return "\n".join(lines) + "\n"


def build_kernels(kernels_dir: Path, build_dir: Path, timeout_s: float,
                  store: Path | None = None, shared_entry: bool = True) -> BuildResult:
    """Compile `kernels_dir` into `build_dir/cuda_extension.so`; ninja keeps it incremental.
    With `store` (`shared.kernel_store`), a build of the same inputs done for another folder
    is copied in instead, and this one is kept there for the next (see `shared`); with
    `shared_entry` too, it links the judge's entry object kept beside the store, where a
    build shipped to another host (`shared_entry=False`) compiles its own."""
    start = time.perf_counter()
    build_dir.mkdir(parents=True, exist_ok=True)
    sources = kernel_sources(kernels_dir)
    if not sources:
        return BuildResult(False, build_dir, 0.0, f"{kernels_dir} holds no .cu or .cpp files", [])
    try:
        flags = _flags(with_cuda=any(s.suffix == ".cu" for s in sources))
    except FileNotFoundError as exc:
        return BuildResult(False, build_dir, 0.0, str(exc), [])
    flags_key = shared.digest(None, flags, DATA_DIR) if store is not None else None
    entry_key = flags_key if shared_entry else None
    entry = shared.entry_object(store, entry_key) if store and entry_key else None
    pch_dir = pch.folder(store, flags_key) if store and flags_key else None
    # Two judgements of one candidate folder at once share its build folder: take turns.
    with open(build_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        key = shared.digest(kernels_dir, flags, DATA_DIR) if store is not None else None
        module = build_dir / f"{MODULE_NAME}.so"
        marker = build_dir / shared.MARKER
        if key and module.is_file() and marker.is_file() and marker.read_text() == key:
            return BuildResult(True, build_dir, time.perf_counter() - start, "up to date", [])
        marker.unlink(missing_ok=True)
        if key and store is not None and shared.fetch(store, key, build_dir, module.name):
            return BuildResult(True, build_dir, time.perf_counter() - start,
                               f"the same sources' build reused from {store / key}", [])
        result, with_header = _compile(build_dir, sources, flags, entry, pch_dir, start,
                                       timeout_s)
        if entry is not None and not result.ok and _link_failed(result.log, module.name):
            entry.unlink(missing_ok=True)  # a kept entry object that does not link: our own
            result, with_header = _compile(build_dir, sources, flags, None, pch_dir, start,
                                           timeout_s)
            entry = None
        # only what was compiled in this call is shared: a folder's earlier objects or
        # module may not be the compiler's (a workspace is the agent's to write)
        if result.ok and store and entry_key and shared.ENTRY in result.rebuilt:
            shared.keep_entry(store, entry_key, build_dir / shared.ENTRY)
        if (result.ok and key and store is not None
                and len(result.rebuilt) == len(sources) + (entry is None)):
            allowed = [kernels_dir, DATA_DIR, *_toolchain()]
            if with_header and pch_dir is not None:
                allowed.append(pch_dir)
            shared.store(store, key, build_dir, allowed, module.name, _ninja_bin())
        return result


def _compile(build_dir: Path, sources: list[Path], flags: dict[str, str], entry: Path | None,
             pch_dir: Path | None, start: float,
             timeout_s: float) -> tuple[BuildResult, frozenset[Path]]:
    """Write the folder's ninja file and run it; also the sources compiled with the
    precompiled binding header (kept in `pch_dir`, asked for there after a binding compiled
    without it)."""
    manifest = build_dir / "build.ninja"
    old = manifest.read_text() if manifest.exists() else ""
    takes = [s for s in sources if s.suffix != ".cu" and pch.applies(s)] if pch_dir else []
    header = pch.ready(pch_dir) if pch_dir is not None else None
    with_header = _with_header(takes, header, build_dir, old)
    if with_header and pch_dir is not None:
        pch.used(pch_dir)
    text = _ninja_file(sources, flags, entry, header, with_header)
    if text != old:
        manifest.write_text(text)
    result = _ninja(build_dir, start, timeout_s)
    if pch_dir is not None and result.ok and any(
            _object(s) in result.rebuilt for s in takes if s not in with_header):
        pch.start(pch_dir, DATA_DIR, flags["cxx"], flags["cflags"])
    return result, with_header


def _with_header(takes: list[Path], header: Path | None, build_dir: Path,
                 old: str) -> frozenset[Path]:
    """Of the C++ sources that include the binding header first (`takes`, see
    `pch.applies`), those to compile with its precompiled form `header`: not one this folder
    compiled without it and has not changed since (its object would be compiled again only
    for the new command)."""
    if header is None:
        return frozenset()
    chosen = set()
    for src in takes:
        obj = build_dir / _object(src)
        kept = (f"build {obj.name}: compile {src.resolve()}" in old and obj.is_file()
                and obj.stat().st_mtime >= src.stat().st_mtime)
        if not kept:
            chosen.add(src)
    return frozenset(chosen)


def _link_failed(log: str, module: str) -> bool:
    """Whether ninja's failed step is the link (`FAILED: [code=1] cuda_extension.so`)."""
    return any(line.startswith("FAILED:") and line.split()[-1:] == [module]
               for line in log.splitlines())


def _toolchain() -> list[Path]:
    """Where headers that only an installation changes live: torch's, Python's, CUDA's and
    the system's."""
    import torch

    roots = [Path(torch.__file__).parent, Path(sysconfig.get_paths()["include"]),
             Path(sys.base_prefix), Path("/usr")]
    cuda = find_cuda_home()
    return roots + ([cuda] if cuda is not None else [])


def _ninja_bin() -> str:
    return shutil.which("ninja") or str(Path(sys.executable).parent / "ninja")


def _ninja(build_dir: Path, start: float, timeout_s: float) -> BuildResult:
    try:
        proc = subprocess.run([_ninja_bin(), "-C", str(build_dir), "-v"], capture_output=True,
                              text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return BuildResult(False, build_dir, time.perf_counter() - start,
                           f"build timed out after {timeout_s:.0f} s\n{out}", [])
    except FileNotFoundError:
        return BuildResult(False, build_dir, 0.0, "ninja not found: pip install ninja", [])
    log = proc.stdout + proc.stderr
    rebuilt = [line.split(" -o ")[-1].strip() for line in proc.stdout.splitlines()
               if line.startswith("[") and " -c " in line and " -o " in line]
    return BuildResult(proc.returncode == 0, build_dir, time.perf_counter() - start, log, rebuilt)


def default_build_dir(candidate: Path, device: str) -> Path:
    """Beside the candidate, inside the self-ignoring `.cudaopt/` folder, one per device."""
    return state_dir(candidate.resolve().parent) / f"build-{device}"
