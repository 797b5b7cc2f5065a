"""One optimization run from start (or resume) to the final verdict, kept on disk in a run
directory (see `cudaopt.runs.folder`) so Ctrl-C loses nothing and `--resume` picks it up."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from cudaopt.agent import prompts
from cudaopt.agent.best import BestTracker
from cudaopt.agent.checkpoint import finish, save
from cudaopt.agent.config import Limits, RunConfig, RunState
from cudaopt.agent.environment.layout import (
    READ_ONLY,
    check_backend,
    create_workspace,
    install_cli,
    shell_env,
    skill_values,
)
from cudaopt.agent.environment.shell import LocalShell
from cudaopt.agent.environment.workspace import Workspace
from cudaopt.agent.errors import ModelError
from cudaopt.agent.events import OnEvent, ignore
from cudaopt.agent.judging import JudgeService
from cudaopt.agent.loop import Agent
from cudaopt.agent.policy import context
from cudaopt.agent.policy.model import Model, make_model
from cudaopt.agent.trajectory import Trajectory
from cudaopt.judge import JudgeOptions, Verdict, gpu_identity
from cudaopt.runs.folder import RunMeta, new_run_dir, read_meta, write_meta
from cudaopt.runs.index import register
from cudaopt.sandbox import Sandbox


@dataclass
class RunResult:
    run_dir: Path
    meta: RunMeta
    reason: str  # why the loop stopped: done, max_steps, max_cost, ... interrupted
    final: Verdict | None  # the fresh re-check of the best; the only verdict that counts

    @property
    def accepted(self) -> bool:
        return self.final is not None and self.final.accepted


def start_run(task: Path, config: RunConfig, on_event: OnEvent = ignore,
              model: Model | None = None) -> RunResult:
    """Preflight the model, lay out a run directory and workspace, and run the loop.
    `model` replaces the one `config.model` names (e.g. a policy driven over HTTP)."""
    check_backend(config.backend, config.device)  # before the model is asked anything
    model = model or make_model(config.model, config.api_base, config.tools)
    model.preflight()  # before anything is created: a dead endpoint leaves no run behind
    notice = getattr(model, "notice", None)  # a policy's word to the user, e.g. a replay's
    if notice:
        on_event("message", {"role": "cudaopt", "text": notice})
    run_dir = _fresh_dir(config.run_dir) if config.run_dir else new_run_dir(task)
    register(run_dir, task)
    task = task.resolve()
    meta = RunMeta(
        run_id=run_dir.name,
        task=str(task),
        model=config.model,
        device=config.device,
        started=datetime.now().isoformat(timespec="seconds"),
        api_base=config.api_base,
        torch_version=_torch_version(),
    )
    meta.mark_running()
    meta.extra.update(
        limits=asdict(config.limits),
        tools=model.uses_tools,
        bash_timeout_s=config.bash_timeout_s,
        context_tokens=config.context_tokens,
        judge=_options_json(config),
        sandbox=config.sandbox.kind if config.sandbox else "none",
        backend=config.backend,
    )
    write_meta(run_dir, meta)
    options = config.judge_options()
    values = skill_values(config.device, options.margin * 100, options.atol, config.backend)
    create_workspace(run_dir / "workspace", task, values)
    messages = [
        {"role": "system", "content": _system_prompt(run_dir, model, values, config)},
        {"role": "user", "content": prompts.prompt("first_user", task_path=task, **values)},
    ]
    trajectory = Trajectory(run_dir / "trajectory.jsonl")
    for message in messages:
        trajectory.append(message, 0)
    return _drive(run_dir, meta, model, messages, config, RunState(), on_event)


def resume_run(
    run_dir: Path,
    on_event: OnEvent = ignore,
    limits: Limits | None = None,
    judge: JudgeOptions | None = None,
    api_base: str | None = None,
    stage_dir: Path | None = None,
    sandbox: Sandbox | None = None,
    context_tokens: int | None = None,
) -> RunResult:
    """Continue an interrupted (or finished) run where its trajectory ends; `None`s keep
    what the run was started with (the endpoint may have moved: `api_base`)."""
    meta = read_meta(run_dir)
    extra = meta.extra
    meta.api_base = api_base or meta.api_base
    config = RunConfig(
        model=meta.model,
        device=meta.device,
        backend=extra.get("backend", "cuda"),
        api_base=meta.api_base,
        stage_dir=stage_dir,
        tools=extra.get("tools"),
        judge=judge,
        limits=limits or Limits(**extra.get("limits", {})),
        bash_timeout_s=extra.get("bash_timeout_s", 600.0),
        context_tokens=context_tokens or extra.get("context_tokens"),
        run_dir=run_dir,
        sandbox=sandbox,
    )
    messages = Trajectory(run_dir / "trajectory.jsonl").messages()
    model = make_model(config.model, config.api_base, config.tools, history=messages)
    model.preflight()
    progress = RunState(**extra.get("progress", {}))
    meta.mark_running()
    write_meta(run_dir, meta)
    values = skill_values(config.device, config.judge_options().margin * 100,
                          config.judge_options().atol, config.backend)
    resumed = {"role": "user", "content": prompts.prompt("resumed", **values)}
    messages.append(resumed)
    Trajectory(run_dir / "trajectory.jsonl").append(resumed, progress.steps)
    return _drive(run_dir, meta, model, messages, config, progress, on_event)


def _drive(
    run_dir: Path,
    meta: RunMeta,
    model: Model,
    messages: list[dict[str, Any]],
    config: RunConfig,
    progress: RunState,
    on_event: OnEvent,
) -> RunResult:
    """Run the loop, keep meta.json current, then re-check the best from scratch."""
    with JudgeService(run_dir, config, Path(meta.task),
                      progress=lambda line: on_event("judge", {"text": line})) as service:
        return _run_agent(
            _agent(run_dir, meta, model, messages, config, progress, on_event, service),
            run_dir,
            meta,
            on_event,
        )


def _run_agent(agent: Agent, run_dir: Path, meta: RunMeta, on_event: OnEvent) -> RunResult:
    """The loop to its end, then the best re-checked from scratch: the verdict that counts."""
    try:
        reason = agent.run()
    except KeyboardInterrupt:
        reason = "interrupted"
    except ModelError as exc:
        reason = "model_error"
        meta.extra["error"] = str(exc)
    except Exception as exc:
        meta.extra["error"] = f"{type(exc).__name__}: {exc}"
        finish(run_dir, meta, "crashed", None)
        raise
    finally:
        save(run_dir, meta, agent)
    agent.trajectory.note("stop", agent.progress.steps, reason=reason)
    meta.extra["stop_reason"] = reason
    final = None
    if reason != "interrupted":
        try:
            final = _final_check(run_dir, agent.tracker, on_event)
        except KeyboardInterrupt:
            reason = "interrupted"
    finish(run_dir, meta, reason, final)
    on_event("done", {"reason": reason, "verdict": final, "meta": meta, "run_dir": run_dir})
    return RunResult(run_dir, meta, reason, final)


def _agent(
    run_dir: Path,
    meta: RunMeta,
    model: Model,
    messages: list[dict[str, Any]],
    config: RunConfig,
    progress: RunState,
    on_event: OnEvent,
    service: JudgeService,
) -> Agent:
    """The loop wired to this run: judge, workspace tools, shell, trajectory, meta."""
    options = config.judge_options()
    tracker = service.tracker
    bin_dir = run_dir / "bin"
    install_cli(bin_dir)
    env = shell_env(bin_dir, tracker.record_dir, config.device)
    env["CUDAOPT_JUDGE_SOCKET"] = str(service.socket_path)
    if config.gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu_identity(config.gpu)
    sandbox = config.sandbox  # judge front end and records reachable; task and skills locked
    if sandbox is not None:
        writable = [tracker.record_dir, service.socket_path.parent]
        sandbox = sandbox.with_paths([bin_dir], writable, READ_ONLY)
    shell = LocalShell(env, timeout_s=config.bash_timeout_s, sandbox=sandbox)
    workspace = Workspace(run_dir / "workspace", shell, READ_ONLY)
    budget = _budget(model, config, meta, on_event)
    agent = Agent(
        model,
        workspace,
        tracker,
        Trajectory(run_dir / "trajectory.jsonl"),
        messages,
        config.limits,
        progress,
        skill_values(config.device, options.margin * 100, options.atol, config.backend),
        on_event,
        checkpoint=lambda: save(run_dir, meta, agent),
        budget=budget,
    )
    return agent


def _budget(model: Model, config: RunConfig, meta: RunMeta,
            on_event: OnEvent) -> context.Budget:
    """The model's context budget and whether its prompts are cached: in meta.json and the
    run's header."""
    budget = context.for_model(model, config.context_tokens, meta.extra.get("context"))
    caching = bool(getattr(model, "caching", False))
    meta.extra.update(context=budget.to_json(), prompt_caching=caching)
    on_event("context", {"budget": budget, "caching": caching})
    return budget


def _final_check(run_dir: Path, tracker: BestTracker, on_event: OnEvent) -> Verdict | None:
    on_event("judge", {"text": "final check of the best candidate with fresh seeds"})
    final = tracker.final_check()
    if final is not None:
        final.write(run_dir / "final_verdict.json")
    return final


def _system_prompt(run_dir: Path, model: Model, values: dict[str, str], config: RunConfig) -> str:
    fmt = "tools_format" if model.uses_tools else "text_format"
    action_format = prompts.prompt(fmt, bash_timeout_s=f"{config.bash_timeout_s:g}", **values)
    skill = (run_dir / "workspace" / "skills" / "SKILL.md").read_text()
    return prompts.prompt(
        "system",
        workspace=run_dir / "workspace",
        skill=skill,
        action_format=action_format,
        **values,
    )


def _fresh_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    if any(path.iterdir()):
        raise FileExistsError(f"{path} is not empty; give a new --run-dir or --resume it")
    return path


def _options_json(config: RunConfig) -> dict[str, Any]:
    data = asdict(config.judge_options())
    return {k: str(v) if isinstance(v, Path) else v for k, v in data.items()}


def _torch_version() -> str:
    import torch

    return torch.__version__
