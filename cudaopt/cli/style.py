"""One look for every command's `--help`, as git, uv and gh print theirs: plain text, the
usage line and the argument list naming arguments alike (`MODEL`, never `{model}`),
metavars that say what to type (`N`, `PATH`), the default of every option shown, and no
click range labels (`x>=1`: a value out of range is still refused, and the error says why).
tests/misc/test_misc_help.py walks every command and holds them to it."""

from __future__ import annotations

import re
from typing import Any

import typer
from rich.console import Console
from typer.core import TyperCommand

EXIT_BAD_INPUT = 2


def fail(message: str, code: int = EXIT_BAD_INPUT) -> typer.Exit:
    """`error: …` on stderr, unwrapped (paths stay whole); raise what it returns."""
    Console(stderr=True, soft_wrap=True).print(f"error: {message}", markup=False,
                                               highlight=False)
    return typer.Exit(code)


class Command(TyperCommand):
    """A Typer command whose help reads the same way in every `cudaopt` command."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if _is_argument(param):
                name = _name(param)
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        params = self.get_params(ctx)
        arguments = [(_name(p), _argument_help(p)) for p in params
                     if _is_argument(p)]
        options = [(r[0], _without_range(r[1])) for p in params if not _is_argument(p)
                   for r in [p.get_help_record(ctx)] if r]
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def _is_argument(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "argument"


def _name(param: Any) -> str:
    name = param.metavar or (param.name or "").upper()
    return name + ("..." if param.nargs != 1 else "")


def _argument_help(param: Any) -> str:
    text: str = getattr(param, "help", None) or ""
    default: Any = param.default
    if not param.required and default is not None:
        text += f"  [default: {default}]"
    return text


_RANGE = re.compile(r"^([-+.\w]+<=?)?x([<>]=?[-+.\w]+)?$")  # x>=1, 1<=x<=5, 0<x
_EXTRAS = re.compile(r"(\s*\[[^\[\]]*\])+$")  # the closing `[...]`s of a help text


def _without_range(help: str) -> str:
    """An option's help with one closing `[...]`: the default said by hand and what click
    adds (env var, required) joined, the range click adds left out."""
    found = _EXTRAS.search(help)
    if not found:
        return help
    parts = [part for group in re.findall(r"\[([^\[\]]*)\]", found.group())
             for part in group.split("; ") if not _RANGE.match(part)]
    head = help[:found.start()]
    return f"{head}  [{'; '.join(parts)}]" if parts else head


def apply(app: typer.Typer) -> None:
    """Every registered command (whichever module added it), in groups too, gets the
    common help style."""
    for info in app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = Command
    for group in app.registered_groups:
        if group.typer_instance is not None:
            apply(group.typer_instance)
