"""The live view: plain lines when piped, a redrawn rich panel on a terminal."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from cudaopt.cli.live import LiveView
from cudaopt.judge.verdict.verdict import Status, Verdict
from cudaopt.reports.run import render_markdown
from tests.misc.misc_helpers import make_meta, make_verdict

BROKEN = Verdict(status=Status.BUILD_FAILED, compiled=False, error="nvcc: error")


def _feed(view: LiveView) -> None:
    with view:
        view.on_event("step", {"step": 1, "summary": "profiling the reference"})
        view.on_event("tool", {"name": "bash", "args": {"command": "nvcc"},
                               "summary": "nvcc -O3 kernels/add.cu\nsecond line"})
        view.on_event("message", {"text": "Fuse the add into the GEMM epilogue."})
        view.on_event("step", {"step": 2, "cost_usd": 0.125, "elapsed_s": 90.0})
        view.on_event("tool", {"name": "bash", "summary": "bash make", "ok": False})
        view.on_event("judge", {"text": "verifying candidate 1"})
        for k in range(1, 6):  # as the judge reports each judgement
            view.on_event("judge", {"text": f"verifying: trial {k}/5"})
            view.on_event("judge", {"text": f"timing: round {k}"})
        view.on_event("candidate", {"index": 1, "verdict": BROKEN})
        view.on_event("candidate", {"index": 2, "verdict": make_verdict(1.52)})
        view.on_event("best", {"index": 2, "verdict": make_verdict(1.5)})
        view.on_event("future-kind", {"anything": 1})  # ignored, not a crash
        meta = make_meta(Path("/t/model.py"), branch="cudaopt/model-1", cost_usd=0.5, steps=3,
                         extra={"stop_reason": "replay_exhausted"})
        view.on_event("done", {"meta": meta, "verdict": make_verdict(1.48),
                               "reason": "replay_exhausted", "run_dir": Path("/t/r/x")})


def test_piped_output_is_plain_lines() -> None:
    out = io.StringIO()
    _feed(LiveView(Console(file=out, width=200)))
    text = out.getvalue()
    assert "\x1b[" not in text
    lines = text.splitlines()
    assert lines[:6] == ["step 1  profiling the reference", "  bash: nvcc -O3 kernels/add.cu",
                         "  model: Fuse the add into the GEMM epilogue.", "step 2  $0.12  1.5 min",
                         "  bash: make  [failed]", "  judge: verifying candidate 1"]
    del lines[:3]
    assert lines[3] == ("candidate 1 (the agent's own check): compiled=no  correct=-  time=-  "
                        "vs_eager=-  vs_compile=-  reward=-1  status=build_failed")
    assert lines[4] == ("candidate 2 (the agent's own check): compiled=yes  correct=yes  "
                        "time=1.316 ms ± 0.030  vs_eager=2.28x  vs_compile=1.52x  reward=3")
    assert lines[5].startswith(
        "best so far: candidate 2, 1.50x vs torch.compile as judged by cudaopt")
    assert "cudaopt/model-1" in text and "1.48x (lower quartile 1.43x)" in text


def test_the_runs_story_reads_plainly() -> None:
    """Why three figures differ, why the run ended in plain words, no repeated judging
    lines, and no "bash: bash"."""
    out = io.StringIO()
    _feed(LiveView(Console(file=out, width=200)))
    text = out.getvalue()
    assert "bash: bash" not in text
    assert "trial" not in text and "round" not in text  # the live line's, not the log's
    assert "run ended: the replayed session has no more recorded turns" in text
    assert "replay_exhausted" not in text
    assert "final check in fresh processes with new secret seeds: 1.48x" in text
    assert "Only this figure counts" in text and "figures differ by a few %" in text
    verbose = io.StringIO()
    _feed(LiveView(Console(file=verbose, width=200), verbose=True))
    lines = verbose.getvalue().splitlines()
    assert "  judge: verifying: trial 3/5" in lines and "  judge: timing: round 5" in lines


def test_terminal_output_redraws_a_table() -> None:
    out = io.StringIO()
    view = LiveView(Console(file=out, width=200, force_terminal=True))
    assert view.interactive
    _feed(view)
    text = out.getvalue()
    assert "\x1b[" in text  # colours and cursor movement
    assert "candidate 2:" not in text  # rows in a table, not log lines
    assert "vs compile" in text and "cudaopt/model-1" in text
    assert "judge: timing: round 5" in text  # the one live line the judging steps share


def test_markdown_report_for_the_branch() -> None:
    text = render_markdown(make_meta(Path("/t/model.py")), make_verdict(1.5))
    assert text.startswith("# cudaopt: model.py")
    assert "| vs compile | 1.50x (lower quartile 1.45x) |" in text
    assert "| device | NVIDIA H200 |" in text
    assert "cudaopt check model.py model_new.py" in text


def test_a_run_without_a_commit_says_where_the_kernel_is(tmp_path: Path) -> None:
    from cudaopt.agent.run import RunResult
    from cudaopt.cli.optimize import say_where

    meta = make_meta(tmp_path / "model.py")
    out = io.StringIO()
    say_where(RunResult(tmp_path, meta, "done", make_verdict(1.5)), False, Console(file=out))
    assert f"not committed (--no-commit): the accepted kernel is in {tmp_path / 'best'}" in (
        " ".join(out.getvalue().split()))
    out = io.StringIO()
    say_where(RunResult(tmp_path, meta, "done", make_verdict(1.5)), True, Console(file=out))
    assert "not committed" not in out.getvalue()


def test_the_report_says_when_a_kernel_beat_the_roofline() -> None:
    """Past 100% of the bound the report names why (less work than the reference's, or a
    cache); short of it, it says nothing of the kind."""
    from cudaopt.reports.perf import summary_rows

    peaks = {"source": "data sheet (H200, dense)"}
    for pct, beyond in ((1190.0, True), (85.0, False)):
        verdict = make_verdict(1.5)
        verdict.roofline = {"peaks": peaks, "candidate": {
            "pct_of_roofline": pct, "bound": "compute", "achieved_gbps": 6.6,
            "achieved_tflops": 1.68}}
        [row] = [value for key, value in summary_rows(verdict) if key == "distance to the limit"]
        assert row.startswith(f"{pct:.0f}% of roofline (compute-bound")
        assert ("less work than the reference's" in row) == beyond, row
