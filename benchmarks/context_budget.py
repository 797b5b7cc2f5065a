"""What a long session sends, compacted and not: tokens per request and the compactor's
own time, on a synthetic session shaped like a real one.

    python benchmarks/context_budget.py [--model anthropic/claude-sonnet-4-5]
        [--window 131072] [--steps 120]

The session: optimize's real system prompt and skill, then per step one tool call, each
fourth a kernel written whole (6,000 characters), the others shell output at the tool's
12,000-character cap. Counted with `--model`'s tokenizer where litellm holds one, else the
estimate (JSON / 3). Printed every tenth step: the whole conversation's tokens, the
compacted request's, and the milliseconds `view()` took (counting included).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudaopt.agent import prompts  # noqa: E402
from cudaopt.agent.environment.layout import skill_values  # noqa: E402
from cudaopt.agent.policy import llm_info  # noqa: E402
from cudaopt.agent.policy.compaction import Compactor  # noqa: E402
from cudaopt.agent.policy.context import Budget  # noqa: E402

KERNEL = "".join(f"    acc += a[i * {n}] * b[{n}];  // unrolled term {n:04d}\n"
                 for n in range(120))


def session_step(n: int) -> list[dict[str, object]]:
    if n % 4 == 1:
        args = {"path": f"kernels/k{n % 3}.cu", "content": KERNEL}
        name, result = "write", f"wrote {len(KERNEL)} chars to kernels/k{n % 3}.cu"
    else:
        args = {"command": f"cudaopt profile --device cuda  # attempt {n}"}
        name, result = "bash", "".join(f"[{n}] line {i}: " + "x" * 50 + "\n" for i in range(190))
    call = {"id": f"c{n}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}
    return [{"role": "assistant", "content": f"Step {n}: trying the next variant.",
             "tool_calls": [call]}, {"role": "tool", "tool_call_id": f"c{n}",
                                     "content": result[:12000]}]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="anthropic/claude-sonnet-4-5")
    parser.add_argument("--window", type=int, default=131072)
    parser.add_argument("--steps", type=int, default=120)
    args = parser.parse_args()
    values = skill_values("cuda", 5.0, 0.01)
    system = prompts.prompt("system", workspace="/w", skill=prompts.skill(**values),
                            action_format=prompts.prompt("tools_format", bash_timeout_s="600",
                                                         **values), **values)
    messages = [{"role": "system", "content": system},
                {"role": "user", "content": prompts.prompt("first_user", task_path="/t",
                                                            **values)}]
    tools = prompts.tool_schemas()

    def count(sent: list[dict[str, object]], tools_: object) -> int:
        return llm_info.count_tokens(args.model, sent, tools)

    files = f"kernels/k0.cu:\n```\n{KERNEL}```"
    compactor = Compactor(Budget(args.window, "--window"), count,
                          lambda: ("best so far is candidate 7: 1.31x.", files))
    print(f"{args.model}, window {args.window:,} tokens, litellm tokenizer: "
          f"{llm_info.tokenizer_known(args.model)}")
    print(f"{'step':>5} {'whole':>9} {'sent':>9} {'view ms':>8} compactions")
    compactions = 0
    for step in range(1, args.steps + 1):
        started = time.perf_counter()
        sent, done = compactor.view(messages, tools, step)
        view_ms = (time.perf_counter() - started) * 1000
        compactions += done is not None
        if step % 10 == 0 or step == 1:
            print(f"{step:>5} {count(messages, tools):>9,} {count(sent, tools):>9,} "
                  f"{view_ms:>8.1f} {compactions}")
        messages += session_step(step)


if __name__ == "__main__":
    main()
