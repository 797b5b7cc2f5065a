"""The litellm policy: any provider litellm knows, or an OpenAI-compatible `--api-base`.
Keys come from the provider's usual environment variables (a `.env` is loaded by the CLI).
"""

from __future__ import annotations

import time
from typing import Any

# First: it sets litellm's offline mode before litellm is imported (the live price list
# would be fetched at import, ~10 s of retries offline; tokenizers from a hub at counting).
from cudaopt.agent.policy import llm_info  # isort: skip

import litellm

from cudaopt.agent import prompts
from cudaopt.agent.errors import ContextTooLong, ModelError, PreflightError
from cudaopt.agent.policy import caching
from cudaopt.agent.policy.context import stated_window
from cudaopt.agent.policy.usage import Usage, from_response

litellm.suppress_debug_info = True
TRANSIENT = (litellm.RateLimitError, litellm.APIConnectionError, litellm.InternalServerError,
             litellm.ServiceUnavailableError, litellm.Timeout)
PING = [{"role": "user", "content": "Reply with the single word: ok"}]


class LitellmModel:
    def __init__(
        self,
        name: str,
        api_base: str | None = None,
        tools: bool | None = None,
        timeout_s: float = 600.0,
        num_retries: int = 3,
    ) -> None:
        self.name = name
        self.api_base = api_base
        self.cost_usd = 0.0
        self.timeout_s = timeout_s
        self.num_retries = num_retries
        self._auto_tools = tools is None
        self.uses_tools: bool = bool(tools) if tools is not None else _known_tools(name) is True
        self.notice: str | None = None  # what preflight decided, for the user
        self.caching = llm_info.marks_cache(name)  # cache markers on the stable prefix
        self.usage = Usage()  # billed so far in this process
        self.last_usage = Usage()

    def context_windows(self) -> list[tuple[int | None, str]]:
        """The windows litellm and the endpoint report (None where they say nothing)."""
        return [
            (llm_info.litellm_window(self.name), "litellm's model information"),
            (llm_info.card_window(self.name, self.api_base), "the endpoint's model card"),
        ]

    def count_tokens(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> int:
        return llm_info.count_tokens(self.name, messages, tools)

    def preflight(self) -> None:
        """One tiny call. With auto tool detection and a model litellm does not know, the
        call carries the tools: a server that rejects them gets fenced actions instead."""
        probe = self.uses_tools or (self._auto_tools and _known_tools(self.name) is None)
        try:
            self._complete(
                PING,
                prompts.tool_schemas() if probe else None,
                timeout_s=60.0,
                max_tokens=16,
            )
            self.uses_tools = probe
        except litellm.BadRequestError as exc:
            if not (probe and self._auto_tools and "tool" in str(exc).lower()):
                raise explain(self.name, self.api_base, exc) from exc
            self._ping_plain()
            self.uses_tools = False
            self.notice = f"{self.name} rejected tool calls; using fenced action blocks"
        except Exception as exc:  # noqa: BLE001 - every failure here is reported the same way
            raise explain(self.name, self.api_base, exc) from exc

    def _ping_plain(self) -> None:
        try:
            self._complete(PING, None, timeout_s=60.0, max_tokens=16)
        except Exception as exc:  # noqa: BLE001
            raise explain(self.name, self.api_base, exc) from exc

    def query(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        try:
            response = self._with_retries(messages, tools)
        except litellm.ContextWindowExceededError as exc:
            raise ContextTooLong(
                f"{self.name} refused the request as too long: {_first_line(exc)}",
                stated_window(str(exc)),
            ) from exc
        except Exception as exc:  # noqa: BLE001
            raise ModelError(f"call to {self.name} failed: {_first_line(exc)}") from exc
        return _assistant_message(response)

    def _with_retries(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> Any:
        """Transient failures retried with backoff here: litellm's own retries need an
        optional package (tenacity) and, without it, turn every error into an import error."""
        for attempt in range(self.num_retries + 1):
            try:
                return self._complete(messages, tools, timeout_s=self.timeout_s)
            except TRANSIENT:
                if attempt == self.num_retries:
                    raise
                time.sleep(min(2.0**attempt, 30.0))
        raise AssertionError("unreachable")

    def _complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        timeout_s: float,
        max_tokens: int | None = None,
    ) -> Any:
        kwargs: dict[str, Any] = {"tools": tools} if tools else {}
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        response = litellm.completion(
            model=self.name,
            messages=caching.mark(messages) if self.caching else messages,
            api_base=self.api_base,
            timeout=timeout_s,
            num_retries=0,
            drop_params=True,
            **kwargs,
        )
        self.last_usage = from_response(response, _cost_usd(response))
        self.usage.add(self.last_usage)
        self.cost_usd += self.last_usage.cost_usd
        return response


def _known_tools(name: str) -> bool | None:
    """litellm's own answer on function calling, or None when it does not know the model."""
    try:
        info = litellm.get_model_info(name)
    except Exception:  # noqa: BLE001 - litellm raises several types for unknown models
        return None
    return bool(info.get("supports_function_calling"))


def _cost_usd(response: Any) -> float:
    """What litellm billed for one response (cache reads and writes at their own prices);
    models without a known price count as free."""
    hidden = getattr(response, "_hidden_params", None) or {}
    if hidden.get("response_cost") is not None:
        return float(hidden["response_cost"])
    try:
        return float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:  # noqa: BLE001
        return 0.0


def _assistant_message(response: Any) -> dict[str, Any]:
    message = response.choices[0].message
    out: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments or "{}"},
            }
            for c in calls
        ]
    return out


def explain(name: str, api_base: str | None, exc: Exception) -> PreflightError:
    """A failed first call, said in terms of what the user can fix."""
    where = api_base or "the provider"
    detail = _first_line(exc)
    missing = _missing_keys(name, api_base)
    if isinstance(exc, litellm.AuthenticationError) or missing:
        which = f": {', '.join(missing)} is not set" if missing else ""
        why = (
            f"authentication failed (missing or invalid API key for {name}{which}); set the "
            "provider's key in the environment or a .env file"
        )
    elif isinstance(exc, litellm.NotFoundError):
        why = f"model {name!r} not found at {where}"
    elif isinstance(exc, litellm.BadRequestError) and "LLM Provider NOT provided" in str(exc):
        why = (
            f"unknown model {name!r}: give a litellm model string with its provider, "
            "e.g. anthropic/claude-sonnet-4-5, openai/gpt-4o, hosted_vllm/NAME"
        )
    elif isinstance(
        exc,
        litellm.APIConnectionError
        | litellm.InternalServerError
        | litellm.ServiceUnavailableError
        | litellm.Timeout,
    ):
        why = f"cannot reach {where} for model {name!r}"
    else:
        why = f"the first call to {name!r} at {where} failed"
    return PreflightError(f"{why}\n  ({detail})")


def _missing_keys(name: str, api_base: str | None) -> list[str]:
    """The provider's key variables litellm finds unset: some clients (OpenAI's) report a
    missing key as a server error, not as an authentication failure."""
    try:
        found = litellm.validate_environment(model=name, api_base=api_base)
    except Exception:  # noqa: BLE001 - unknown providers: nothing to say
        return []
    return list(found.get("missing_keys") or [])


def _first_line(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]
