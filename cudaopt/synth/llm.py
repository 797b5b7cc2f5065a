"""Compositions written by a language model, as CUDA Agent's were: the model is shown a
draw of catalogue operators and the tasks kept so far, and answers with a whole task file,
which then goes through the same filters as a random composition."""

from __future__ import annotations

import re
from typing import Any

from cudaopt.agent.policy.llm import LitellmModel
from cudaopt.agent.prompts import prompt
from cudaopt.synth.compose import rng_for
from cudaopt.synth.similarity import api_calls
from cudaopt.synth.sources import Candidate

OPS_SHOWN = 12
KEPT_SHOWN = 40
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)


class ModelSource:
    def __init__(self, model: LitellmModel, catalog: list[dict[str, Any]], seed: int,
                 max_ops: int, device: str, window_ms: tuple[float, float]) -> None:
        self.model, self.catalog, self.seed = model, catalog, seed
        self.system = prompt("synth_system", max_ops=max(max_ops, 2), device=device,
                             low_ms=f"{window_ms[0]:g}", high_ms=f"{window_ms[1]:g}")

    def propose(self, attempt: int, kept: list[str]) -> Candidate:
        shown = rng_for(self.seed, attempt).sample(self.catalog,
                                                   min(OPS_SHOWN, len(self.catalog)))
        user = prompt("synth_user", ops=", ".join(op["id"] for op in shown),
                      kept=", ".join(kept[-KEPT_SHOWN:]) or "none")
        reply = self.model.query([{"role": "system", "content": self.system},
                                  {"role": "user", "content": user}], None)
        source = code_of(reply.get("content") or "")
        if source is None:
            return Candidate([], None, self.model.name, note="the reply held no Python block")
        return Candidate(api_calls(source) or ["unknown"], source, self.model.name)


def code_of(text: str) -> str | None:
    found = _FENCE.search(text)
    return found.group(1).strip() + "\n" if found else None
