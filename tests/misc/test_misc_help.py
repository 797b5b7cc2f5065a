"""`--help` reads like git's, uv's or gh's: one style, metavars that say what to type,
defaults shown; and neither the README nor docs/ documents a flag `--help` does not know."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cudaopt import ROOT
from cudaopt.cli import app

COMMANDS = ("optimize", "check", "verify", "profile", "serve", "runs", "show", "config",
            "doctor")


def _help(*command: str) -> str:
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("command", COMMANDS)
def test_help_is_plain_and_consistent(command: str) -> None:
    text = _help(command)
    assert not re.search(r"<(str|bool|int|float|path|list)", text), text  # Typer's type labels
    assert "{" not in text.splitlines()[0] and "x>=" not in text  # usage as in the argument list
    for name in re.findall(r"\[([A-Z]+)\]|\b([A-Z]{3,})\b", text.splitlines()[0]):
        argument = next(n for n in name if n)
        if argument not in ("OPTIONS",):
            assert f"\n  {argument}" in text, f"{argument} is in the usage, not the list"
    options = [line.split()[0] for line in text.splitlines() if line.startswith("  --")]
    assert options and all("--" in o for o in options)


def test_optimize_shows_resume_and_its_defaults() -> None:
    text = " ".join(_help("optimize").split())
    assert "--resume RUN" in text and "--max-steps N" in text
    for shown in ("[default: 40]", "[default: 10]", "[default: 60]", "[default: auto]"):
        assert shown in text, shown


def test_every_judge_command_takes_the_judges_options() -> None:
    check = _help("check")
    assert re.search(r"--compile-baseline / --no-compile-baseline\s+\S", check)  # has help
    for command in ("verify", "profile"):
        text = _help(command)
        for flag in ("--trace", "--allow", "--atol", "--rtol", "--trials", "--timeout",
                     "--device", "--json"):
            assert flag in text, (command, flag)
    assert "--compile-mode" in _help("profile") and "--ceiling" in _help("profile")


DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))


def _documented_command_lines(page: Path) -> list[tuple[str, str]]:
    """(COMMAND, the rest of the line) for each `cudaopt COMMAND ...` line in a page's
    fenced and indented code blocks."""
    text = page.read_text()
    code = re.findall(r"```\w*\n(.*?)```", text, re.S)  # fenced blocks, and indented ones
    code += re.findall(r"^ {4,}(cudaopt .*(?:\n {6,}\[.*)*)", text, re.M)
    return re.findall(r"^\s*cudaopt ([a-z-]+)\b(.*)$", "\n".join(code), re.M)


def test_readme_and_help_agree() -> None:
    """Each `cudaopt COMMAND [SUBCOMMAND] ... --flag` line in the code blocks of the README
    and of every page in docs/ names only flags that COMMAND's `--help` lists."""
    assert len(DOCUMENTS) > 1, "docs/ has no pages"
    lines = [(page, *line) for page in DOCUMENTS for line in _documented_command_lines(page)]
    assert len(lines) > 10
    assert len(_documented_command_lines(ROOT / "README.md")) > 10  # every family in the README
    helps: dict[tuple[str, ...], str] = {}
    for page, command, rest in lines:
        path: tuple[str, ...] = (command,)
        words = rest.split()
        if path not in helps:
            helps[path] = _help(*path)
        if "Commands:" in helps[path] and words:  # a group: its subcommand has the flags
            path = (command, words[0])
            helps.setdefault(path, _help(*path))
        for flag in re.findall(r"(--[a-z][a-z-]*(?:/--[a-z-]+)?)", rest.split("#")[0]):
            for part in flag.split("/"):
                assert part in helps[path], \
                    f"{page.relative_to(ROOT)}: cudaopt {' '.join(path)} {part}"
