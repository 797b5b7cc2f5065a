"""Which compile caches the judge's processes use: torch.compile's own first compile in the
judging process sets TORCHINDUCTOR_CACHE_DIR to its default, which must neither replace
the folder a caller gave (`cache_dir`) nor pass for the user's own setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

PROBE = """
import os, torch
from pathlib import Path
from cudaopt.judge import JudgeOptions, worker_env
torch.compile(lambda x: x * 2, backend=lambda gm, example: gm.forward)(torch.ones(2))
assert os.environ["TORCHINDUCTOR_CACHE_DIR"], "torch set its default"
print(worker_env(JudgeOptions())["TORCHINDUCTOR_CACHE_DIR"])
print(worker_env(JudgeOptions(cache_dir=Path({given!r})))["TORCHINDUCTOR_CACHE_DIR"])
"""


def _probe(env: dict[str, str], given: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE.format(given=str(given))], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_compile_in_the_judging_process_does_not_move_the_judges_caches(
        tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "home")
    default, given = _probe(env, tmp_path / "given")
    assert default == str(tmp_path / "home" / "cudaopt" / "inductor")
    assert given == str(tmp_path / "given" / "inductor")


def test_the_users_own_cache_setting_is_kept_unless_a_folder_is_given(tmp_path: Path) -> None:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "mine")}
    default, given = _probe(env, tmp_path / "given")
    assert default == str(tmp_path / "mine")
    assert given == str(tmp_path / "given" / "inductor")
