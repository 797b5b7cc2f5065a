"""Concurrent judgements never share a load_inline build: same extension name, different
code, judged at once, each gets its own verdict (and identical code still reuses a build)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cudaopt.judge import JudgeOptions, Status, Verdict, check

HERE = Path(__file__).parent
TASK = HERE / "zoo" / "task.py"
SOURCE = (HERE / "inline" / "swish_inline.py").read_text()


def _candidate(folder: Path, clamp: str) -> Path:
    folder.mkdir()
    path = folder / "model_new.py"
    path.write_text(SOURCE.replace("CLAMP = 1.0", f"CLAMP = {clamp}"))
    return path


def test_same_named_inline_extensions_judged_at_once_keep_their_own_binary(
        tmp_path: Path) -> None:
    right = _candidate(tmp_path / "right", "1.0")
    wrong = _candidate(tmp_path / "wrong", "0.5")  # clamps too early: a different result
    options = JudgeOptions(device="cpu", profile=False, trials=2, cache_dir=tmp_path / "cache")

    def judge(candidate: Path) -> Verdict:
        return check(TASK, candidate, options)

    with ThreadPoolExecutor(2) as threads:
        verdicts = list(threads.map(judge, [right, wrong]))
    assert verdicts[0].status is Status.OK, verdicts[0].error or verdicts[0].mismatch
    assert verdicts[1].status is Status.WRONG, verdicts[1].error or verdicts[1].status
    builds = tmp_path / "cache" / "torch_extensions" / "by-content"
    assert len(list(builds.iterdir())) == 2

    again = judge(right)  # the same code again: the same folder, no new build
    assert again.status is Status.OK and len(list(builds.iterdir())) == 2
