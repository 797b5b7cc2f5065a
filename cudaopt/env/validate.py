"""Request bodies checked against their shapes before anything runs: a malformed request
gets a 400 naming what is wrong and never reaches the judge or a workspace."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cudaopt.agent import prompts
from cudaopt.config import BACKENDS
from cudaopt.env.errors import ServiceError, bad
from cudaopt.env.options import ServiceOptions
from cudaopt.executor import Sources

EPISODE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_TASK_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}\.py$")


@dataclass(frozen=True)
class Action:
    """One step: a tool call, or (tool None) the policy ending its turn with `message`."""

    tool: str | None
    args: dict[str, str]
    message: str = ""


def _tool_params() -> dict[str, tuple[set[str], set[str]]]:
    """tool name -> (required, allowed) argument names, from the schemas `optimize` uses."""
    params = {}
    for schema in prompts.tool_schemas():
        function = schema["function"]
        spec = function["parameters"]
        params[function["name"]] = (set(spec.get("required", [])), set(spec["properties"]))
    return params


TOOL_PARAMS = _tool_params()


def verify_items(body: Any, options: ServiceOptions) -> list[Sources]:
    """`{"items": [{"task", "model_new", "kernels"?, "task_name"?}]}` as Sources."""
    items = _field(_object(body, "the request"), "items", list, "the request")
    if not 1 <= len(items) <= options.max_items:
        raise bad(f"items: give 1 to {options.max_items} candidates, got {len(items)}")
    return [_sources(item, f"items[{n}]", options) for n, item in enumerate(items)]


def _sources(item: Any, where: str, options: ServiceOptions) -> Sources:
    item = _object(item, where)
    _only(item, {"task", "model_new", "kernels", "task_name"}, where)
    task = _text(_field(item, "task", str, where), f"{where}.task", options)
    model_new = _text(_field(item, "model_new", str, where), f"{where}.model_new", options)
    kernels = _object(item.get("kernels", {}), f"{where}.kernels")
    for name, text in kernels.items():
        if not isinstance(text, str):
            raise bad(f"{where}.kernels[{name!r}]: must be a string (the file's source)")
        _text(text, f"{where}.kernels[{name!r}]", options)
    sources = Sources(_task_name(item, where), task, model_new, dict(kernels))
    try:
        sources.validate()
    except ValueError as exc:
        raise bad(f"{where}: {exc}") from None
    return sources


def reset_body(body: Any, options: ServiceOptions) -> tuple[str, str, str | None, str]:
    """`{"task", "task_name"?, "episode_id"?, "seed"?, "backend"?}` -> (task name, source,
    episode id, backend: the kernel language the episode's skill teaches)."""
    body = _object(body, "the request")
    _only(body, {"task", "task_name", "episode_id", "seed", "backend"}, "the request")
    backend = body.get("backend", "cuda")
    if backend not in BACKENDS:
        raise bad(f"backend: one of {', '.join(BACKENDS)}")
    task = _text(_field(body, "task", str, "the request"), "task", options)
    episode_id = body.get("episode_id")
    if episode_id is not None and not (isinstance(episode_id, str) and
                                       EPISODE_ID.match(episode_id)):
        raise bad("episode_id: 1-64 letters, digits, '_' or '-', starting with a letter or digit")
    return _task_name(body, "the request"), task, episode_id, backend


def step_body(body: Any, options: ServiceOptions) -> tuple[str, Action]:
    """`{"episode_id", "action": {"tool", "args"} | {"message"}}` (OpenEnv's StepRequest
    shape; `timeout_s` and `request_id` are accepted and ignored)."""
    body = _object(body, "the request")
    _only(body, {"episode_id", "action", "timeout_s", "request_id"}, "the request")
    return episode_id_of(body), action_of(_field(body, "action", dict, "the request"), options)


def episode_id_of(body: dict[str, Any]) -> str:
    episode_id = body.get("episode_id")
    if not isinstance(episode_id, str) or not EPISODE_ID.match(episode_id):
        raise bad("episode_id: missing or not an id returned by /reset")
    return episode_id


def action_of(action: dict[str, Any], options: ServiceOptions) -> Action:
    _only(action, {"tool", "args", "message"}, "action")
    message = action.get("message", "")
    if not isinstance(message, str):
        raise bad("action.message: must be a string")
    _text(message, "action.message", options)
    tool = action.get("tool")
    if tool is None:
        if "args" in action:
            raise bad("action.args given without action.tool")
        return Action(None, {}, message)
    if tool not in TOOL_PARAMS:
        raise bad(f"action.tool: unknown tool {tool!r}; tools: {', '.join(TOOL_PARAMS)}")
    args = _object(action.get("args", {}), "action.args")
    required, allowed = TOOL_PARAMS[tool]
    missing, extra = required - set(args), set(args) - allowed
    if missing or extra:
        raise bad(f"action.args for {tool}: " + "; ".join(
            part for part in (f"missing {sorted(missing)}" if missing else "",
                              f"unknown {sorted(extra)}" if extra else "") if part))
    for name, value in args.items():
        if not isinstance(value, str):
            raise bad(f"action.args.{name}: must be a string")
        _text(value, f"action.args.{name}", options)
    return Action(tool, dict(args), message)


def _task_name(body: dict[str, Any], where: str) -> str:
    name = body.get("task_name", "model.py")
    if not isinstance(name, str) or not _TASK_NAME.match(name):
        raise bad(f"{where}.task_name: a plain file name ending in .py, e.g. 19_ReLU.py")
    return name


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad(f"{where}: must be a JSON object")
    return value


def _field(body: dict[str, Any], name: str, kind: type, where: str) -> Any:
    if name not in body:
        raise bad(f"{where}: missing field {name!r}")
    if not isinstance(body[name], kind):
        raise bad(f"{where}.{name}: must be a JSON {_json_kind(kind)}")
    return body[name]


def _only(body: dict[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(body) - allowed)
    if extra:
        raise bad(f"{where}: unknown field(s) {extra}; allowed: {sorted(allowed)}")


def _text(text: str, where: str, options: ServiceOptions) -> str:
    size = len(text.encode(errors="surrogatepass"))
    if size > options.max_field_bytes:
        raise ServiceError(413, f"{where}: {size} bytes, more than the limit of "
                           f"{options.max_field_bytes}", code="too_large")
    if "\0" in text:
        raise bad(f"{where}: contains a NUL byte")
    return text


def _json_kind(kind: type) -> str:
    kinds: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return kinds[kind]
