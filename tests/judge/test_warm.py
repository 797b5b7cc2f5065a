"""The warm protocol and the breakdown on CPU: back-to-back calls on fresh inputs, what the
JSON verdict and `cudaopt profile` carry, and the reward needing both protocols."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from cudaopt.judge import Verdict
from cudaopt.judge.building.loading import load_module
from cudaopt.judge.insight.ncu import unavailable
from cudaopt.judge.timing.bench import Bench
from cudaopt.judge.timing.burst import Burst
from cudaopt.judge.timing.profile import ROUND_CALLS
from cudaopt.judge.timing.timer import calls_per_round
from cudaopt.judge.verdict.reward import milestone_reward
from cudaopt.judge.workers.tensors import draw_inputs

ZOO = Path(__file__).parent / "zoo"
TASK = ZOO / "task.py"
MODES = "default,max-autotune-no-cudagraphs"


@pytest.fixture(scope="module")
def profiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, str]:
    """One `cudaopt profile --ncu` of a correct candidate with two torch.compile modes."""
    out = tmp_path_factory.mktemp("profile") / "verdict.json"
    proc = subprocess.run(
        [sys.executable, "-m", "cudaopt.cli", "profile", str(TASK), str(ZOO / "correct.py"),
         "--device", "cpu", "--json", str(out), "--time-budget", "3", "--compile-mode", MODES,
         "--ncu"],
        capture_output=True, text=True, timeout=900, env={**os.environ, "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stdout, proc.stderr


def test_per_operator_breakdown_adds_up_within_the_stated_gap(profiled) -> None:
    data, _, _ = profiled
    eager = data["breakdown"]["eager"]
    assert eager["unit"] == "operator" and eager["calls"] >= 2
    ops = {e["name"]: e for e in eager["entries"]}
    for op in ("aten::sigmoid", "aten::mul", "aten::add", "aten::clamp"):
        assert op in ops, sorted(ops)
    assert ops["aten::mul"]["launches"] == 2  # x * sigmoid(x), then y * scale
    summed = sum(e["ms"] for e in eager["entries"])
    assert summed == pytest.approx(eager["summed_ms"])
    assert summed > 0 and eager["gap_ms"] >= 0
    assert abs(eager["call_ms"] - summed) <= eager["gap_ms"] + 1e-9
    assert sum(e["share"] for e in eager["entries"]) <= 1.0 + 1e-9
    assert eager["entries"] == sorted(eager["entries"], key=lambda e: -e["ms"])
    assert set(data["breakdown"]) == {"eager", "compile", "candidate"}


def test_short_calls_fill_a_round_only_up_to_its_cap_and_a_warm_burst_beyond_it(
        profiled) -> None:
    """A call far under a millisecond costs its worker's requests far more than itself, so a
    timed round holds at most `ROUND_CALLS` of a contestant's; a warm burst keeps its own
    cap (its length is what shows a forged clock)."""
    data = profiled[0]
    timings = ("eager_timing", "compile_timing", "candidate_timing")
    assert data["timing_rounds"] >= 5
    for timing in timings:
        assert data[timing]["samples"] <= data["timing_rounds"] * ROUND_CALLS, timing
    assert data["warm"]["calls"] == calls_per_round(max(data[t]["median_ms"] for t in timings))
    assert calls_per_round(0.01) == 50 and calls_per_round(0.01, 1.0, most=ROUND_CALLS) == 20


def test_the_profiled_round_and_the_verification_steps_are_booked_apart(profiled) -> None:
    """Where a judgement's seconds go: each contestant's profiled burst, the check of the
    kept outputs, the first verification trial (a Triton kernel's compile) and each step of
    the trials apart, the steps within the verification's own seconds."""
    phases = profiled[0]["phases_s"]
    for name in ("eager", "compile", "candidate"):
        assert phases[f"warm.profiled.{name}"] <= phases["warm.profile"], phases
    assert 0 < phases["warm.compare"] and 0 < phases["verify.first_trial"] <= phases["verify"]
    steps = [phases[f"verify.{step}"] for step in
             ("prep", "go", "finish", "compare", "derived", "signal")]
    assert all(spent > 0 for spent in steps) and sum(steps) <= phases["verify"], phases


def test_json_and_terminal_carry_warm_figures_modes_and_roofline(profiled) -> None:
    data, stdout, _ = profiled
    warm = data["warm"]
    for key in ("eager_ms", "compile_ms", "candidate_ms", "speedup_vs_eager_low",
                "speedup_vs_compile_low", "calls", "rounds", "protocol"):
        assert key in warm, key
    assert set(warm["compile_modes_ms"]) == set(MODES.split(","))
    assert warm["compile_mode"] in MODES.split(",")
    assert data["compile_mode"] in MODES.split(",")
    assert data["breakdown"]["compile"]["mode"] == warm["compile_mode"]
    roof = data["roofline"]
    assert roof["task"]["in_bytes"] == 8 * 256 * 4 and roof["task"]["out_bytes"] == 8 * 256 * 4
    assert roof["peaks"]["source"] and roof["candidate"]["pct_of_roofline"] > 0
    for text in ("warm, back to back", "where the time goes", "distance to the limit",
                 "aten::sigmoid", f"torch.compile mode: {data['compile_mode']} (the fastest"):
        assert text in stdout, text
    assert max(len(line) for line in stdout.splitlines()) <= 80


def _pointer_cached(fn: Any) -> tuple[Any, list[int]]:
    """`fn` behind a cache keyed on the input's data pointer and shape; counts its hits."""
    hits: list[int] = []
    cache: dict[tuple[int, tuple[int, ...]], torch.Tensor] = {}

    def call(x: torch.Tensor) -> torch.Tensor:
        key = (x.data_ptr(), tuple(x.shape))
        if key in cache:
            hits.append(1)
            return cache[key]
        cache[key] = fn(x)
        return cache[key]

    return call, hits


def _run(burst: Burst, fn: Any, cmd: dict[str, Any]) -> dict[str, Any]:
    """Both requests of a burst, as a worker gets them (`ready`, then `go`)."""
    assert burst.ready(fn, cmd)["calls"] == len(cmd["seeds"]) - 1
    return burst.go(fn, cmd)


def test_pointer_cache_never_hits_across_back_to_back_calls() -> None:
    """Every call of a burst has its own inputs, and the next burst's are drawn while the
    last one's are held: no address repeats, so a pointer cache gains nothing; the copies
    kept of every call's outputs are that call's own."""
    task = load_module(TASK, "zoo_task_warm")
    bench = Bench(task, torch.device("cpu"))
    burst = Burst(bench)
    model = task.Model(*task.get_init_inputs())
    fn, hits = _pointer_cached(model)
    for first in (1, 100):
        seeds = list(range(first, first + 9))
        reply = _run(burst, fn, {"seeds": seeds, "keep": True})
        assert reply["calls"] == 8 and reply["ms"] > 0 and not reply["violations"]
        for i, seed in enumerate(seeds[1:]):
            _, leaves = bench.kept[f"w{i}"]
            expected = model(*draw_inputs(task, seed, bench.device))
            torch.testing.assert_close(leaves[0][1], expected)
    assert hits == []


def test_burst_breakdown_entries_and_gap_add_up_to_the_call() -> None:
    task = load_module(TASK, "zoo_task_breakdown")
    bench = Bench(task, torch.device("cpu"))
    reply = _run(Burst(bench), task.Model(*task.get_init_inputs()),
                 {"seeds": list(range(6)), "profile": True})
    part = reply["breakdown"]
    assert part["calls"] == 5 and part["call_ms"] == pytest.approx(reply["ms"])
    assert part["summed_ms"] + part["gap_ms"] == pytest.approx(part["call_ms"])


def _verdict(cold: float, warm: float | None, skipped: bool = False) -> Verdict:
    verdict = Verdict(compiled=True, correct=True)
    verdict.speedup_vs_eager = verdict.speedup_vs_eager_low = cold
    verdict.speedup_vs_compile = verdict.speedup_vs_compile_low = cold
    if skipped:
        verdict.warm = {"skipped": "too large"}
    elif warm is not None:
        verdict.warm = {f"speedup_vs_{b}{s}": warm for b in ("eager", "compile")
                        for s in ("", "_low")}
    return verdict


@pytest.mark.parametrize(("cold", "warm", "skipped", "reward"), [
    (1.5, 1.5, False, 3.0),   # faster under both protocols
    (1.5, 0.94, False, 1.0),  # wins single calls, loses back to back: not faster
    (1.5, 1.04, False, 1.0),  # back to back inside the margin: not faster
    (0.9, 2.0, False, 1.0),   # warm alone never earns it either
    (1.5, None, True, 3.0),   # warm not measurable (memory): the cold figure decides
])
def test_speed_milestones_need_both_protocols(cold: float, warm: float | None, skipped: bool,
                                              reward: float) -> None:
    verdict = _verdict(cold, warm, skipped)
    verdict.reward = milestone_reward(verdict, 0.05)
    assert verdict.reward == reward
    assert verdict.accepted is (reward >= 3)


def test_wins_eager_both_ways_but_compile_only_cold_earns_two() -> None:
    verdict = _verdict(1.5, 1.5)
    verdict.warm["speedup_vs_compile_low"] = 0.9
    assert milestone_reward(verdict, 0.05) == 2.0


def test_ncu_refused_clearly_where_it_cannot_run(tmp_path: Path) -> None:
    assert "needs a CUDA device" in unavailable("cpu")
    path = os.environ["PATH"]
    try:
        os.environ["PATH"] = str(tmp_path)  # a machine without Nsight Compute
        assert "`ncu`) is not on PATH" in unavailable("cuda")
    finally:
        os.environ["PATH"] = path


def test_cli_profile_ncu_refuses_at_once_and_still_profiles(profiled) -> None:
    data, stdout, stderr = profiled
    assert "--ncu: not run: --ncu needs a CUDA device" in stderr
    assert data["ncu"] == {"available": False, "reason": data["ncu"]["reason"]}
    assert "Nsight Compute: not run" in stdout
    assert data["warm"] and data["breakdown"] and data["roofline"]


def test_cli_rejects_an_unknown_compile_mode() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "cudaopt.cli", "check", str(TASK), str(ZOO / "correct.py"),
         "--device", "cpu", "--compile-mode", "default,fastest"],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "'fastest'" in proc.stdout + proc.stderr


def test_ncu_raw_csv_is_read_past_its_own_messages() -> None:
    """The shape of `ncu --csv --page raw`: ==PROF== lines around a header, a units row and
    one row per kernel; the costliest stall reason per kernel is named."""
    from cudaopt.judge.insight.ncu import COMPUTE, MEMORY, OCCUPANCY, parse

    stall = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
    columns = ["ID", "Kernel Name", OCCUPANCY, MEMORY, COMPUTE, stall.format("long_scoreboard"),
               stall.format("wait")]
    rows = [columns, ["", "", "%", "%", "%", "ratio", "ratio"],
            ["0", "fused_swish_kernel(const float4 *)", "81.2", "88.04", "20.1", "3.5", "0.8"]]
    text = "\n".join(",".join(f'"{c}"' for c in row) for row in rows)
    found = parse(f"==PROF== Connected to process 1\n{text}\n==PROF== Disconnected\n")
    assert found == [{"name": "fused_swish_kernel(const float4 *)", "occupancy": "81%",
                      "memory": "88%", "compute": "20%",
                      "stall": "long_scoreboard (3.50 cycles/instr)"}]


def test_task_too_large_for_a_burst_keeps_the_breakdown_and_the_cold_figure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where three sets of inputs and outputs do not fit the burst's memory budget, the warm
    figure is marked skipped (the cold one decides the reward), and the breakdown comes from
    one profiled call; the roofline then uses the cold per-call times."""
    from cudaopt.judge import JudgeOptions, Status, check
    from cudaopt.judge.timing import warm

    monkeypatch.setattr(warm, "BUDGET_BYTES", {"cpu": 1, "cuda": 1})
    verdict = check(TASK, ZOO / "correct.py",
                    JudgeOptions(device="cpu", seed=7, compile_baseline=False,
                                 time_budget_s=2.0, min_rounds=3, max_rounds=6))
    assert verdict.status is Status.OK, verdict.error or verdict.violations
    assert "do not fit" in verdict.warm["skipped"]
    assert set(verdict.breakdown) == {"eager", "candidate"}
    assert verdict.breakdown["eager"]["calls"] == 1
    assert verdict.roofline["time"] == "cold per-call time"
    assert verdict.roofline["candidate"]["ms"] == verdict.candidate.median_ms
    assert verdict.reward == milestone_reward(verdict, 0.05)


def test_branch_report_shows_warm_figure_and_distance_to_the_limit(profiled) -> None:
    from cudaopt.reports.run import render_markdown
    from cudaopt.runs.folder import RunMeta

    data, _, _ = profiled
    verdict = Verdict.from_json(data)
    assert verdict.warm == data["warm"] and verdict.roofline == data["roofline"]
    meta = RunMeta(run_id="r", task=str(TASK), model="m", device="cpu", started="now")
    text = render_markdown(meta, verdict)
    for row in ("| warm (back to back) |", "| distance to the limit |",
                f"| torch.compile mode | {data['compile_mode']} |"):
        assert row in text, text
    assert f"{data['roofline']['candidate']['pct_of_roofline']:.0f}% of roofline" in text


def test_warm_baseline_is_the_fastest_compile_mode_per_round() -> None:
    """Per round, the compile baseline is the fastest mode; the summed kernel time too."""
    from cudaopt.judge.timing.warm_figures import summarize

    def burst(ms: float) -> dict[str, float]:  # ten calls; the requests cost 3 ms and 9 ms
        return {"ms": ms, "host_ms": ms, "calls": 10, "go_wall_ms": 10 * ms + 3.0,
                "prep_wall_ms": 9.0}

    rounds = [{"eager": burst(2.0), "compile:a": burst(1.1 if i % 2 else 1.5),
               "compile:b": burst(1.2), "candidate": burst(1.0)} for i in range(5)]
    profiled = {n: {"breakdown": {"unit": "kernel", "summed_ms": ms}}
                for n, ms in (("eager", 1.8), ("compile:a", 1.0), ("compile:b", 1.1),
                              ("candidate", 0.9))}
    warm = summarize(rounds, ["eager", "compile:a", "compile:b"], profiled, 10)
    assert warm["compile_mode"] == "b" and warm["compile_modes_ms"] == {"a": 1.5, "b": 1.2}
    assert warm["speedup_vs_compile"] == pytest.approx(1.2)  # rounds: 1.2, 1.1, 1.2, 1.1, 1.2
    assert warm["speedup_vs_eager"] == pytest.approx(2.0)
    assert warm["kernel_ms"] == {"eager": 1.8, "compile": 1.0, "candidate": 0.9}
    assert warm["kernel_speedup_vs_compile"] == pytest.approx(1.0 / 0.9)
    assert warm["judge_clock"]["added_ms"] == 0


def _rounds(cand_go_ms: float, cand_prep_ms: float, noise_ms: float = 0.0) -> list[Any]:
    """Five rounds of ten calls: eager at 2 ms and a candidate saying 1 ms a call; the
    judge's clock saw `cand_go_ms` and `cand_prep_ms` around its requests (each with one
    call: the warm-up), and 3 ms and 7 ms beyond eager's calls around eager's, give or
    take `noise_ms` round to round."""
    def burst(ms: float, go_ms: float, prep_ms: float) -> dict[str, float]:
        return {"ms": ms, "host_ms": ms, "go_wall_ms": go_ms, "prep_wall_ms": prep_ms}

    return [{"eager": burst(2.0, 23.0 + noise_ms * (-1) ** i, 9.0 + noise_ms * (i % 3 - 1)),
             "candidate": burst(1.0, cand_go_ms + noise_ms * (i % 2),
                                cand_prep_ms - noise_ms * (i % 2))} for i in range(5)]


@pytest.mark.parametrize(("go_ms", "prep_ms", "credited_ms"), [
    (13.0, 8.0, 1.0),        # honest: the judge's clock agrees with the candidate's
    (13.0 + 3.0, 8.0, 1.3),  # its clock hid 30% of each call (beyond the 0.3 ms allowance)
    (13.0, 8.0 + 4.0, 1.4),  # 4 ms of work done on the inputs before the timed calls
])
def test_back_to_back_figure_is_credited_from_the_judges_clock(
        go_ms: float, prep_ms: float, credited_ms: float) -> None:
    """The candidate's own clocks are its to forge: what its two requests cost by the
    judge's clock beyond eager's is added to its figure, less an allowance (10% of eager's
    protocol cost here, 0.3 ms and 0.7 ms, and a slack per request)."""
    from cudaopt.judge.timing.warm_figures import REQUEST_SLACK_MS, credited

    times, clock = credited(_rounds(go_ms, prep_ms), ["eager"], 10)
    allowance = {1.0: 0.0, 1.3: 0.03 + REQUEST_SLACK_MS / 10,
                 1.4: 0.07 + REQUEST_SLACK_MS / 10}[credited_ms]
    assert statistics.median(times) == pytest.approx(credited_ms - allowance)
    assert clock["added_ms"] == pytest.approx(credited_ms - 1.0 - allowance)


def test_round_to_round_noise_on_either_side_is_not_charged() -> None:
    """A moment of load hits one request in some rounds: it falls out of the median."""
    from cudaopt.judge.timing.warm_figures import credited

    _, clock = credited(_rounds(13.0, 8.0, noise_ms=2.0), ["eager"], 10)
    assert clock["added_ms"] == 0


def test_settings_take_several_compile_modes_and_refuse_unknown_ones(tmp_path: Path) -> None:
    from cudaopt.config import ConfigError, load_settings

    env = {"HOME": str(tmp_path), "CUDAOPT_COMPILE_MODE": MODES}
    assert load_settings(tmp_path, env=env).judge_options().compile_mode == MODES
    with pytest.raises(ConfigError, match="'fastest' is not one of"):
        load_settings(tmp_path, env={**env, "CUDAOPT_COMPILE_MODE": "default,fastest"})


def test_without_the_breakdown_the_warm_figure_stands_and_nothing_is_profiled() -> None:
    """What a bench or a reward service asks for: the warm figure the reward needs, without
    the profiled burst (per-kernel breakdown, roofline) that only a person reads."""
    from cudaopt.judge import JudgeOptions, Status, check

    zoo = Path(__file__).parent / "zoo"
    opts = JudgeOptions(device="cpu", trials=1, time_budget_s=1.0, min_rounds=3,
                        compile_baseline=False, breakdown=False)
    verdict = check(zoo / "task.py", zoo / "correct.py", opts)
    assert verdict.status is Status.OK and verdict.correct
    assert verdict.warm and verdict.warm.get("speedup_vs_eager_low") is not None
    assert verdict.breakdown is None and verdict.roofline is None
    assert "warm.profile" not in verdict.phases_s and "kernel_ms" not in verdict.warm


def test_the_judges_profiler_imports_no_compiler_into_the_candidates_process() -> None:
    """torch.profiler's start imports inductor and dynamo where no compile ran before (the
    candidate's process: seconds of its profiled burst, under the device's lock); the
    judge's profiler records the operators and leaves them out."""
    probe = ("import sys, torch\n"
             "from cudaopt.judge.timing.burst import judge_profiler\n"
             "x = torch.randn(64)\n"
             "with judge_profiler(False) as prof:\n"
             "    x * torch.sigmoid(x)\n"
             "names = {e.name for e in prof.function_events}\n"
             "print('aten::sigmoid' in names, 'torch._inductor' in sys.modules,"
             " 'torch._dynamo' in sys.modules)\n")
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.split() == ["True", "False", "False"], ran.stdout


def test_a_profiled_reply_that_hides_its_kernels_names_none() -> None:
    """The candidate writes its profiled burst's reply: leaving the kernel list out, or
    filling it with anything but names, must not pass for a kernel of its own."""
    from types import SimpleNamespace

    from cudaopt.judge.workers.session import Session

    for reply in ({}, {"kernels": "all of them"}, {"kernels": [1, None]}):
        session = SimpleNamespace(kernels=None)
        Session.note_kernels(session, reply)  # type: ignore[arg-type]
        assert session.kernels == set(), reply
    session = SimpleNamespace(kernels={"a"})
    Session.note_kernels(session, {"kernels": ["b" * 300, 7]})  # type: ignore[arg-type]
    assert session.kernels == {"a", "b" * 200}
