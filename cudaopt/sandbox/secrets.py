"""Which environment variables are credentials, and the environment the agent's shell gets.

The shell's environment is built from an allow-list, not by removing known keys: a provider
nobody thought of (or a key loaded from `.env` under any name) never reaches the model
because nothing passes that was not asked for. The deny rules then drop credentials even
from allowed prefixes (`CUDAOPT_API_KEY`), and any allowed value that embeds a secret's
value (`https://user:<key>@host`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from pathlib import Path

MIN_SECRET_CHARS = 8  # shorter values are too common to scan for without false alarms

#: Variables the agent's shell may see (exact names).
ALLOWED_NAMES = frozenset({
    "PATH", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME", "LD_LIBRARY_PATH",
    "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "VIRTUAL_ENV",
    "CC", "CXX", "MAX_JOBS",
})
#: Prefixes of variables the shell may see: locale, CUDA and driver, cudaopt's own, torch
#: build settings (TORCH_CUDA_ARCH_LIST) and CPU thread counts (timings must match).
ALLOWED_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "CUDAOPT_", "TORCH_", "OMP_", "MKL_",
                    "OPENBLAS_")
#: Credentials, whatever the prefix (matched on the upper-cased name).
SECRET_PATTERNS = ("*_API_KEY", "*_KEY", "*_TOKEN", "*_SECRET", "*_SECRET_*", "*PASSWORD*",
                   "*PASSWD*", "*CREDENTIAL*", "AWS_*")


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_PATTERNS)


def secret_values(env: Mapping[str, str]) -> dict[str, str]:
    """Values of the credentials in `env`, by variable name (short values left out)."""
    return {name: value for name, value in env.items()
            if is_secret_name(name) and len(value) >= MIN_SECRET_CHARS}


def dotenv_values(folders: Iterable[Path]) -> dict[str, str]:
    """Everything set in the `.env` files of `folders`: cudaopt loads those files into its
    own environment, so each of their values is treated as a secret."""
    found: dict[str, str] = {}
    for folder in folders:
        path = folder / ".env"
        if path.is_file():
            from dotenv import dotenv_values as read

            found.update({k: v for k, v in read(path).items() if v})
    return found


def scrub_env(env: Mapping[str, str], extra_secrets: Mapping[str, str] | None = None
              ) -> dict[str, str]:
    """The allow-listed, credential-free part of `env`.

    `extra_secrets` (the `.env` files' settings) are dropped by name, even allowed ones. A
    value embedding a credential's value is dropped too; other `.env` values are not
    scanned for, since they are often plain paths (`CUDA_HOME=/usr/local/cuda`) that PATH
    legitimately contains."""
    extra = dict(extra_secrets or {})
    secrets = [*secret_values(env).values(), *secret_values(extra).values()]
    kept = {}
    for name, value in env.items():
        allowed = name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)
        if not allowed or name in extra or is_secret_name(name):
            continue
        if any(secret in value for secret in secrets):
            continue
        kept[name] = value
    return kept
