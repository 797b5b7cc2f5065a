"""What litellm and the endpoint know about a model: its context window, its tokenizer and
whether it caches a marked prompt prefix. Nothing here downloads: litellm runs in offline
mode (its bundled price list and tokenizers only), and a model whose tokenizer litellm
would fetch from a hub is counted with the conservative estimate instead."""

from __future__ import annotations

import json
import os
import urllib.request
from functools import lru_cache
from typing import Any, cast

# Set before litellm is imported anywhere (cudaopt.agent.policy.llm imports this module first):
# offline, litellm uses its bundled price list, beta headers and tokenizers.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import litellm  # noqa: E402

from cudaopt.agent.policy.context import estimate_tokens  # noqa: E402

litellm.suppress_debug_info = True  # no "Provider List" banners for unknown names

#: Keys servers use for a model's window in their `/models` listing.
CARD_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")
#: Providers whose caching needs `cache_control` markers; others cache on their own
#: (OpenAI, DeepSeek) or not at all, and get no markers.
MARKED_CACHING = ("anthropic", "bedrock", "vertex_ai", "vertex_ai_beta")


@lru_cache(maxsize=64)
def litellm_window(name: str) -> int | None:
    """litellm's `max_input_tokens` for a model it knows."""
    try:
        info = litellm.get_model_info(name)
    except Exception:  # noqa: BLE001 - litellm raises several types for unknown models
        return None
    tokens = info.get("max_input_tokens") or info.get("max_tokens")
    return int(tokens) if tokens else None


def card_window(name: str, api_base: str | None, timeout_s: float = 10.0) -> int | None:
    """The window an OpenAI-compatible endpoint reports for the model in `GET /models`."""
    if not api_base:
        return None
    request = urllib.request.Request(api_base.rstrip("/") + "/models")
    key = os.environ.get("HOSTED_VLLM_API_KEY") or os.environ.get("OPENAI_API_KEY")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310
            listing = json.loads(response.read())
    except (OSError, ValueError):
        return None
    wanted = {name, _bare(name)}
    for card in listing.get("data") or [] if isinstance(listing, dict) else []:
        if isinstance(card, dict) and wanted & {card.get("id"), card.get("root")}:
            for key_name in CARD_KEYS:
                if isinstance(card.get(key_name), int) and card[key_name] > 0:
                    return int(card[key_name])
    return None


def _bare(name: str) -> str:
    """The model's name without its litellm provider prefix, as the endpoint knows it."""
    try:
        return str(litellm.get_llm_provider(name)[0])
    except Exception:  # noqa: BLE001
        return name.split("/", 1)[-1]


def provider(name: str) -> str | None:
    try:
        return str(litellm.get_llm_provider(name)[1])
    except Exception:  # noqa: BLE001
        return None


def marks_cache(name: str) -> bool:
    """True where litellm says the model caches prompts and caching needs markers."""
    try:
        supported = bool(litellm.utils.supports_prompt_caching(name))
    except Exception:  # noqa: BLE001
        return False
    return supported and provider(name) in MARKED_CACHING


@lru_cache(maxsize=64)
def tokenizer_known(name: str) -> bool:
    """litellm counts this model with a tokenizer it holds (or OpenAI's, which it bundles)."""
    if litellm_window(name) is None:
        return False
    hub_kind = getattr(litellm.utils, "huggingface_tokenizer_kind", None)
    bundled = getattr(litellm.utils, "_BUNDLED_TOKENIZER_LOAD_LOCKS", {})
    kind = hub_kind(name) if hub_kind else None
    return kind is None or kind in bundled


def count_tokens(name: str, messages: list[dict[str, Any]],
                 tools: list[dict[str, Any]] | None) -> int:
    """litellm's count for a model whose tokenizer it holds, else the estimate."""
    if tokenizer_known(name):
        try:
            # our tool schemas are OpenAI's tool dicts, which litellm types more narrowly
            return int(litellm.token_counter(model=name, messages=messages,
                                             tools=cast(Any, tools)))
        except Exception:  # noqa: BLE001 - a message shape the counter does not take
            pass
    return estimate_tokens(messages, tools)
