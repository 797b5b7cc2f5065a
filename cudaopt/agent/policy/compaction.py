"""What is sent when the whole conversation would not fit the model's context budget.

The conversation itself (and `trajectory.jsonl`) keeps everything; only the request is
compacted. Sent whole, always: the system prompt, the task (the first user message), the
latest turns and their results, and a summary standing in for the older steps, which holds
one line per action and what came of it, the run's standing (best verdict, last judgement)
and the workspace's candidate files in full. Compaction moves in chunks (above HIGH of the
budget, down to LOW) so the request's prefix stays the same, and cached, for several steps.
The view is a function of the conversation and the budget, so a resumed run compacts the
same way before its first request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cudaopt.agent import prompts, records
from cudaopt.agent.environment import actions as act
from cudaopt.agent.policy.context import CHARS_PER_TOKEN, HALVED, STATED, Budget, Counter

KEEP_TURNS = 2  # latest assistant turns, with their results, always sent whole
HIGH, LOW = 0.85, 0.55  # compact past HIGH of the budget, down to LOW
CLIP_CHARS = 4000  # after a refusal: kept results longer than this lose their middle
LINE_CHARS = 160
SUMMARY_SHARE = 0.1  # of the budget, for the summary's lines: the oldest are folded first

Message = dict[str, Any]
State = Callable[[], tuple[str, str]]  # (the run's standing, the candidate files)


@dataclass
class Compaction:
    """One compaction, as the trajectory and the episode record keep it."""

    before_step: int  # compacted for this step's request
    reason: str  # "budget": before the budget was reached; "refused": after a refusal
    steps: list[int]  # first and last step shown compacted
    messages: int  # conversation messages replaced by the summary
    tokens_before: int
    tokens_after: int
    budget: dict[str, Any]
    clipped: bool = False  # kept results were clipped too (only after a refusal)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Compactor:
    def __init__(self, budget: Budget, count: Counter, state: State) -> None:
        self.budget, self.count, self.state = budget, count, state
        self.upto = 0  # messages[2:upto] are summarized; 0: nothing is
        self.summary = ""
        self.keep_turns = KEEP_TURNS
        self.clip_chars: int | None = None

    def view(self, messages: list[Message], tools: list[dict[str, Any]] | None,
             step: int) -> tuple[list[Message], Compaction | None]:
        """The request for this step, compacted first when it would pass HIGH."""
        sent = self.render(messages)
        limit = self.budget.prompt_tokens
        if limit is None:
            return sent, None
        tokens = self.count(sent, tools)
        if tokens <= HIGH * limit:
            return sent, None
        kept = self.upto, self.summary
        compacted, done = self._compact(messages, tools, step, "budget", tokens)
        if self.upto == kept[0]:  # nothing left to compact: the request stays as it was
            self.upto, self.summary = kept
            return sent, None
        return compacted, done

    def harder(self, messages: list[Message], tools: list[dict[str, Any]] | None, step: int,
               stated: int | None) -> tuple[list[Message], Compaction]:
        """After a refusal: the window the provider stated (else half the refused request,
        which over-counts), one turn kept, long results clipped; compacted to LOW."""
        tokens = self.count(self.render(messages), tools)
        if stated:
            self.budget = Budget(stated, STATED)
        else:
            ceiling = min(tokens, self.budget.window_tokens or tokens)
            self.budget = Budget(ceiling // 2, HALVED)
        self.keep_turns, self.clip_chars = 1, CLIP_CHARS
        sent, done = self._compact(messages, tools, step, "refused", tokens)
        return sent, done

    def relax(self) -> None:
        """After the harder request went through: later requests keep the usual turns whole
        and clip nothing, under the budget just learned; a later refusal clips again. The
        model reads its latest results whole whenever they fit."""
        self.keep_turns, self.clip_chars = KEEP_TURNS, None

    def render(self, messages: list[Message]) -> list[Message]:
        if self.upto <= 2 or len(messages) < 2:
            sent = list(messages)
        else:
            task = dict(messages[1])
            task["content"] = f"{task.get('content') or ''}\n\n{self.summary}"
            sent = [messages[0], task, *messages[self.upto:]]
        if self.clip_chars:
            sent = sent[:2] + [self._clipped(m) for m in sent[2:]]
        return sent

    def _compact(self, messages: list[Message], tools: list[dict[str, Any]] | None, step: int,
                 reason: str, before: int) -> tuple[list[Message], Compaction]:
        """The smallest cut that brings the request to LOW (binary search over turn starts);
        the largest cut allowed when none does."""
        starts = [i for i in range(2, len(messages)) if messages[i].get("role") == "assistant"]
        allowed = starts[: len(starts) - self.keep_turns + 1]  # the kept turns stay whole
        cuts = [c for c in allowed if c > max(self.upto, 2)]  # cutting at 2 cuts nothing
        target = LOW * (self.budget.prompt_tokens or before)
        low, high = 0, len(cuts) - 1
        best = cuts[-1] if cuts else self.upto
        while low <= high:
            middle = (low + high) // 2
            self._cut(messages, cuts[middle], step)
            if self.count(self.render(messages), tools) <= target:
                best, high = cuts[middle], middle - 1
            else:
                low = middle + 1
        self._cut(messages, best, step)
        sent = self.render(messages)
        first, last = _step_of(messages, 2), _step_of(messages, max(2, best - 1))
        return sent, Compaction(step, reason, [first, last], max(0, best - 2), before,
                                self.count(sent, tools), self.budget.to_json(),
                                self.clip_chars is not None)

    def _cut(self, messages: list[Message], upto: int, step: int) -> None:
        self.upto = upto
        if upto <= 2:
            self.summary = ""
            return
        status, files = self.state()
        self.summary = prompts.prompt(
            "compacted", budget=self.budget.describe(), first_step=_step_of(messages, 2),
            last_step=_step_of(messages, upto - 1), now_step=step,
            lines="\n".join(fold(summary_lines(messages[2:upto], _step_of(messages, 2)),
                                 self._summary_chars())),
            status=status, files=files)

    def _summary_chars(self) -> int:
        return int(SUMMARY_SHARE * (self.budget.prompt_tokens or 0) * CHARS_PER_TOKEN)

    def _clipped(self, message: Message) -> Message:
        content = message.get("content")
        limit = self.clip_chars or 0
        if message.get("role") not in ("tool", "user") or not isinstance(content, str) \
                or len(content) <= limit:
            return message
        half = limit // 2
        cut = len(content) - 2 * half
        return {**message, "content": f"{content[:half]}\n[... {cut:,} characters cut by "
                                      f"cudaopt to fit the context ...]\n{content[-half:]}"}


def summary_lines(messages: list[Message], first_step: int) -> list[str]:
    """One line per action (with what it returned), per model remark and per cudaopt note."""
    results = {m.get("tool_call_id"): str(m.get("content") or "") for m in messages
               if m.get("role") == "tool"}
    lines, step = [], first_step - 1
    for message in messages:
        role, content = message.get("role"), str(message.get("content") or "")
        if role == "assistant":
            step += 1
            calls = act.from_tool_calls(message.get("tool_calls") or [])
            if content.strip():
                lines.append(f"- step {step}, the model said: {_line(content)}")
                calls = calls or act.from_text(content)
            for action in calls:
                result = results.get(action.call_id) if action.call_id else None
                lines.append(f"- step {step}: {_action(action)}" +
                             (f" -> {_result(result)}" if result is not None else ""))
        elif role == "user":
            lines.append(f"- after step {step}, {_result(content)}")
    return lines


def fold(lines: list[str], max_chars: int) -> list[str]:
    """The newest lines that fit `max_chars`, the older ones folded into one: a session of
    thousands of steps keeps a summary of bounded size."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        used += len(line) + 1
        if used > max_chars and kept:
            break
        kept.append(line)
    folded = len(lines) - len(kept)
    head = [f"- ({folded} older lines folded to fit the context budget)"] if folded else []
    return head + kept[::-1]


def _action(action: act.Action) -> str:
    if action.name == "write":
        size = len(str(action.args.get("content", "")))
        return f"write {action.args.get('path', '')} ({size:,} chars)"
    if action.name == "edit":
        return f"edit {action.args.get('path', '')}"
    return _line(action.summary())


def _result(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return "(no output)"
    if len(lines) == 1:
        return _line(lines[0])
    return f"{len(text):,} chars: {_line(lines[0], 80)} ... {_line(lines[-1], 80)}"


def _line(text: str, limit: int = LINE_CHARS) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _step_of(messages: list[Message], index: int) -> int:
    """The step a message belongs to: each step is one assistant message."""
    return max(1, sum(1 for m in messages[: index + 1] if m.get("role") == "assistant"))


def files_text(root: Path) -> str:
    """The candidate's sources (model_new.py, kernels/), each whole in a fence."""
    parts = []
    for file in records.candidate_files(root):
        text = file.read_text(errors="replace")
        parts.append(f"{file.relative_to(root).as_posix()}:\n```\n{text.rstrip()}\n```")
    return "\n\n".join(parts) or "(none yet)"
