"""Static scan of a candidate's sources: the second line of defence behind the runtime guard.

Patterns that only make sense for defeating the judge (patching torch or the clock,
introspecting the dispatcher, bypassing it from C++) are violations. Patterns that are
usually a mistake but can be honest (torch calls, streams, try/except around kernels,
threads) are warnings; the runtime guard decides whether they actually did harm.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Finding:
    severity: str  # "violation" | "warning"
    text: str


_PY_VIOLATIONS = [
    (r"\b(torch|time|cudaopt|threading)(\.\w+)+\s*=[^=]", "assigns to a library attribute"),
    (r"setattr\(\s*(torch|time|cudaopt)", "patches a library with setattr"),
    (r"\bimport\s+cudaopt|\bfrom\s+cudaopt|import_module\(\s*['\"]cudaopt|"
     r"__import__\(\s*['\"]cudaopt", "imports the judge"),
    (r"\bset(?:profile|trace)\b|sys\.monitoring|addaudithook|gc\.callbacks",
     "installs an interpreter hook that would run inside the judge's own code"),
    (r"sys\.modules|sys\._getframe|\binspect\.|gc\.get_objects|\bctypes\b",
     "introspects or rewrites the running process"),
    (r"_python_dispatch|TorchDispatchMode|_len_torch_dispatch_stack|_DisableTorchDispatch|"
     r"_pop_torch_dispatch_stack|_unset_dispatch_mode|_profiler_enabled",
     "inspects or disables the dispatcher's modes"),
    (r"/proc/self|os\.fdopen|os\.write\(", "touches the process's own file descriptors"),
]
_PY_WARNINGS = [
    (r"^\s*except\b", "try/except in the candidate: a fallback path must not exist"),
    (r"\bthreading\b|\b_thread\b|\bmultiprocessing\b|concurrent\.futures",
     "starts threads or processes"),
    (r"_make_wrapper_subclass|_make_subclass|__torch_dispatch__|__torch_function__",
     "defines a tensor subclass: outputs must be plain tensors"),
    (r"torch\.cuda\.Stream", "creates its own stream: it must be synchronized "
     "with the current stream before forward returns"),
    (r"\bF\.\w+\(|torch\.nn\.functional\.", "calls torch.nn.functional"),
]
_CPP_VIOLATIONS = [
    (r"at::native\b|at::cpu::|at::_ops::|redispatch|ATen/native/|_native\.h|NativeFunctions",
     "calls ATen kernels directly, bypassing the dispatcher"),
    (r"DispatchKey|ExcludeDispatchKeyGuard|IncludeDispatchKeyGuard|AutoDispatchBelow",
     "changes dispatch keys"),
]
_CPP_WARNINGS = [
    (r"std::thread|std::async|pthread_create", "starts native threads: all work must finish "
     "before the function returns"),
    (r"cudaStreamCreate", "creates its own stream: it must be synchronized with the current "
     "stream before forward returns"),
]
_ALLOWED_TORCH_CPP = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "from_blob", "Tensor",
    "TensorOptions", "kFloat", "kHalf", "kBFloat16", "kDouble", "kInt", "kLong", "kByte",
    "kBool", "kCUDA", "kCPU", "Device", "ScalarType", "dtype", "IntArrayRef", "Scalar",
}
_CPP_TORCH_CALL = re.compile(r"\b(?:torch|at)::(\w+)\s*\(")


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError:
        return []


def _match(path: Path, rules: list[tuple[str, str]], severity: str) -> list[Finding]:
    found = []
    for pattern, why in rules:
        regex = re.compile(pattern)
        for n, line in enumerate(_lines(path), 1):
            if regex.search(line.split("#")[0] if path.suffix == ".py" else line):
                found.append(Finding(severity, f"{path.name}:{n}: {why}: {line.strip()[:100]}"))
                break
    return found


def scan_candidate(candidate: Path) -> list[Finding]:
    """Findings for model_new.py and the sources in kernels/ beside it."""
    found = _match(candidate, _PY_VIOLATIONS, "violation")
    found += _match(candidate, _PY_WARNINGS, "warning")
    kernels = candidate.resolve().parent / "kernels"
    sources = sorted(kernels.glob("*")) if kernels.is_dir() else []
    native = [s for s in sources if s.suffix in (".cu", ".cpp", ".cc", ".cuh", ".h")]
    for src in [candidate, *native]:  # load_inline candidates carry C++ inside model_new.py
        found += _match(src, _CPP_VIOLATIONS, "violation")
        found += _match(src, _CPP_WARNINGS, "warning")
        calls = {m.group(1) for line in _lines(src) for m in _CPP_TORCH_CALL.finditer(line)}
        for name in sorted(calls - _ALLOWED_TORCH_CPP):
            found.append(Finding("warning", f"{src.name}: calls torch::{name} (the runtime guard "
                                            "rejects PyTorch compute operators)"))
    return found
