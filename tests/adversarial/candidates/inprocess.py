"""Shared by the hacks of test_inprocess.py (not a candidate): the judge's worker, reached
from inside the candidate's own process through the interpreter's frames."""

import sys
from pathlib import Path

_frames = getattr(sys, "_current" + "_frames")
HERE = Path(__file__).resolve().parent


def command_table():
    """The worker's command table: the dict of handlers its serving loop looks up."""
    for frame in _frames().values():
        while frame is not None:
            if "handlers" in frame.f_locals and isinstance(frame.f_locals["handlers"], dict):
                return frame.f_locals["handlers"]
            frame = frame.f_back
    raise LookupError("no command table on any stack")


def wrap(ops, make):
    """Replace each handler of `ops` by `make(handler)`; returns the table."""
    table = command_table()
    for op in ops:
        table[op] = make(table[op])
    return table


def scaled_clocks(factor):
    """Every timing reply says `factor` of what the worker measured."""
    def make(handler):
        def step(cmd):
            reply = handler(cmd)
            for key in ("ms", "host_ms"):
                if key in reply:
                    reply[key] *= factor
            return reply
        return step
    wrap(("go", "burst_go"), make)


def garbled_memory_figures():
    """Every `finish` and `burst_end` reply says it holds memory of the wrong shape and type."""
    def make(handler):
        def step(cmd):
            reply = handler(cmd)
            reply["memory_gib"] = ["lots", {"held": None}, -1, float("nan")]
            return reply
        return step
    wrap(("finish", "burst_end"), make)


def without_violations_or_copies():
    """Every reply loses its violations; `dump` hands over no copy of any output."""
    def make(handler):
        def step(cmd):
            reply = handler(cmd)
            reply["violations"] = []
            return reply
        return step
    table = wrap(list(command_table()), make)
    table["dump"] = lambda cmd: {"manifests": {}}


def fix_up_kept_copies(answer):
    """Before the step that keeps the last call's copy, write `answer(inputs)` into it;
    returns a dict whose "honest" says whether the call running now is verified at once
    (guarded, or in a back-to-back burst)."""
    table = command_table()
    worker, state = table["go"].__self__, {"honest": False}

    def fix(handler):
        def step(cmd):
            bench = worker.bench
            if cmd.get("keep") and bench.last is not None and bench.inputs:
                bench.last[1][0][1].copy_(answer(bench.inputs))
            return handler(cmd)
        return step

    def honest_when(flag):
        def make(handler):
            def step(cmd):
                state["honest"] = flag(cmd)
                return handler(cmd)
            return step
        return make

    wrap(("prep", "finish"), fix)
    wrap(("go",), honest_when(lambda cmd: bool(cmd.get("guard"))))
    wrap(("burst_go",), honest_when(lambda cmd: True))
    return state


def hook_draw(compute):
    """The task's `get_inputs` wrapped: each draw's answer computed with the draw, by
    `compute(inputs)`, kept for `forward` by the inputs' data pointers."""
    task = getattr(sys, "mod" + "ules")["cudaopt_task"]
    draw, answers = task.get_inputs, {}

    def drawing():
        inputs = draw()
        answers[tuple(x.data_ptr() for x in inputs)] = compute(inputs)
        return inputs

    task.get_inputs = drawing
    return answers
