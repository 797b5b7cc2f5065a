"""Reaching beside the candidate's own process (DESIGN.md §3, item 13): the judge's other
workers, the torch.compile cache the baselines load, processes that outlive the
judgement. The judge puts its candidate worker in namespaces of its own in every mode,
standalone `check` included (`isolation`); each test shows the reach working with
isolation off, as the old judge ran every standalone `check`, and failing with it on."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, JudgePool, Status, check, worker_env
from cudaopt.judge.workers.lending import Loaded
from cudaopt.sandbox.bwrap import cached_probe
from tests.procs import processes

ZOO = Path(__file__).resolve().parent.parent / "judge" / "zoo"
MARK = "cudaopt-adversarial-outlive"

#: The trusted workers of the judge that started this process (started anew, or forked
#: from its template, whose command line a fork keeps); only those: a test process beside
#: this one (pytest-xdist) keeps its own.
SIBLINGS = '''
def _parent(pid):
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])


def trusted_siblings():
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            line = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
            parents = {_parent(int(pid)), _parent(_parent(int(pid)))}
        except (OSError, IndexError, ValueError):
            continue
        if os.getppid() in parents and (
                b"cudaopt.judge.roles.worker" in line and b"reference" in line
                or b"cudaopt.judge.roles.template" in line):
            found.append(int(pid))
    return found
'''

PROBE = '''
import os
import subprocess
import sys
{siblings_code}

import torch
import torch.nn as nn

for pid in trusted_siblings():  # the judge's reference workers, re-pinned and reniced
    for thread in os.listdir(f"/proc/{{pid}}/task"):
        os.sched_setaffinity(int(thread), {{min(os.sched_getaffinity(0))}})
        os.setpriority(os.PRIO_PROCESS, int(thread), 19)
try:  # the baselines' torch.compile cache
    with open(os.path.join({cache!r}, "planted.py"), "w") as planted:
        planted.write("slow = True")
except OSError:
    pass
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", {mark!r}],
                 start_new_session=True)  # a grandchild in a session of its own


class ModelNew(nn.Module):
    def __init__(self, features, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        return torch.clamp(x * torch.sigmoid(x) * self.scale + self.bias, -1.0, 1.0)
'''


def _marked() -> list[int]:
    return processes(MARK)


@pytest.fixture
def reached(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[dict]:
    """Judge the probe with isolation on or off (the parameter); what it reached."""
    isolate = request.param
    if isolate and not cached_probe().ok:
        pytest.skip(f"no working bubblewrap here: {cached_probe().detail}")
    opts = JudgeOptions(device="cpu", profile=False, allow=["*"], cache_dir=tmp_path / "c",
                        isolation="required" if isolate else "off")
    inductor = Path(worker_env(opts)["TORCHINDUCTOR_CACHE_DIR"])
    inductor.mkdir(parents=True)
    (tmp_path / "model.py").write_text((ZOO / "task.py").read_text())
    (tmp_path / "model_new.py").write_text(
        PROBE.format(cache=str(inductor), mark=MARK, siblings_code=SIBLINGS))
    pool = JudgePool(worker_env(opts), isolate=isolate)  # warm: its reference may stay up
    nice = []
    keep = pool.keep

    def kept(reference: Loaded | None, baseline: Loaded | None) -> None:
        """The reference's priority as the judgement ends, before the pool decides."""
        if reference is not None:
            nice.append(os.getpriority(os.PRIO_PROCESS, reference.worker.proc.pid))
        keep(reference, baseline)

    pool.keep = kept  # type: ignore[method-assign]
    try:
        verdict = check(tmp_path / "model.py", tmp_path / "model_new.py", opts, pool=pool)
        time.sleep(0.5)  # a grandchild left behind is up by now
        yield {"verdict": verdict, "planted": (inductor / "planted.py").exists(),
               "nice": nice, "reused": pool.references(tmp_path / "model.py", "cpu")[0],
               "outlived": _marked()}
    finally:
        pool.close()
        for pid in _marked():
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("reached", [False], indirect=True)
def test_without_isolation_the_probe_reaches_all_three(reached: dict) -> None:
    assert reached["verdict"].status is Status.OK, reached["verdict"].error
    assert not reached["verdict"].isolated
    assert reached["planted"] and reached["nice"] == [19] and reached["outlived"]
    assert reached["reused"] is None, "a reniced reference process was kept for reuse"


@pytest.mark.parametrize("reached", [True], indirect=True)
def test_an_isolated_candidate_reaches_no_sibling_no_cache_and_leaves_nothing(
        reached: dict) -> None:
    verdict = reached["verdict"]
    assert verdict.status is Status.OK and verdict.isolated, verdict.error
    assert "namespaces" in verdict.isolation
    assert not reached["planted"], "the baselines' cache was written"
    assert reached["nice"] == [0], "a reference worker was reniced"
    assert reached["reused"] is not None
    assert not reached["outlived"], "a process outlived the judgement"


def test_unisolated_earns_no_speed_milestone_unless_accepted() -> None:
    from cudaopt.judge.verdict.reward import milestone_reward
    from cudaopt.judge.verdict.verdict import Verdict

    fast = Verdict(status=Status.OK, compiled=True, correct=True, speedup_vs_eager_low=3.0,
                   speedup_vs_compile_low=3.0, isolation="none: no bwrap")
    assert milestone_reward(fast, 0.05, isolation_required=True) == 1.0
    assert milestone_reward(fast, 0.05, isolation_required=False) == 3.0
    fast.isolated = True
    assert milestone_reward(fast, 0.05, isolation_required=True) == 3.0


def test_an_unknown_isolation_is_refused_before_anything_starts(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text((ZOO / "task.py").read_text())
    (tmp_path / "model_new.py").write_text(PROBE.format(cache=str(tmp_path), mark=MARK,
                                                           siblings_code=SIBLINGS))
    verdict = check(tmp_path / "model.py", tmp_path / "model_new.py",
                    JudgeOptions(device="cpu", isolation="sometimes"))
    assert verdict.status is Status.BAD_INPUT and "unknown isolation" in verdict.error


RENICE = '''
import os

import torch
import torch.nn as nn
{siblings_code}


class ModelNew(nn.Module):
    def __init__(self, features, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):  # the judge's trusted workers at nice 19, once they are up
        for pid in trusted_siblings():
            for thread in os.listdir(f"/proc/{{pid}}/task"):
                try:
                    os.setpriority(os.PRIO_PROCESS, int(thread), 19)
                except OSError:
                    pass
        return torch.clamp(x * torch.sigmoid(x) * self.scale + self.bias, -1.0, 1.0)
'''


def test_a_baseline_reniced_by_an_unisolated_candidate_leaves_the_timing_untrusted(
        tmp_path: Path) -> None:
    """Any process of the judge's user may renice the baseline process; eager and
    torch.compile then time slower and the candidate looks faster. The judge reads how the
    baseline was scheduled after its timing: the verdict is noisy (no speed reward), and
    neither trusted process is used again."""
    opts = JudgeOptions(device="cpu", allow=["*"], isolation="off", compile_baseline=False,
                        time_budget_s=2.0, min_rounds=2, max_rounds=4)
    task = tmp_path / "model.py"
    task.write_text((ZOO / "task.py").read_text())
    (tmp_path / "model_new.py").write_text(RENICE.format(siblings_code=SIBLINGS))
    pool = JudgePool(worker_env(opts), isolate=False)
    try:
        verdict = check(task, tmp_path / "model_new.py", opts, pool=pool)
        assert verdict.status is Status.OK, verdict.error
        assert any(w.startswith("the baseline process was rescheduled while it was timed")
                   for w in verdict.warnings), verdict.warnings
        assert verdict.noisy and verdict.reward <= 1
        assert pool.references(task, "cpu") == (None, None)
    finally:
        pool.close()
