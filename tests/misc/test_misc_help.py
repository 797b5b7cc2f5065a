"""`--help` reads like git's, uv's or gh's: one style for every command and sub-command,
found by walking the app (named metavars, defaults shown, summaries in the same verbs);
and neither the README nor docs/ documents a flag `--help` does not know."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from cudaopt import ROOT
from cudaopt.cli import app

# The first word of every command's summary: the same imperative verbs throughout.
VERBS = {"Bench", "Build", "Check", "Compare", "Judge", "Keep", "List", "Make", "Optimize",
         "Run", "Serve", "Show", "Time", "Write"}
TYPE_LABELS = {"TEXT", "INTEGER", "FLOAT", "BOOLEAN", "FILENAME", "DIRECTORY", "UUID",
               "CHOICE", "INTEGER RANGE", "FLOAT RANGE"}  # click's, where no metavar is named
METAVAR = re.compile(r"^[A-Z][A-Z0-9_]*([=,][A-Z][A-Z0-9_]*)?$")  # N, BENCH_A, LO,HI, P=S


def _walk(command: Any, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += _walk(sub, (*path, name))
    return found


# Every command and sub-command, found from the app itself: one added later is held to
# the same style without anyone listing it here.
COMMANDS = _walk(typer.main.get_command(app), ())
PATHS = [path for path, _ in COMMANDS]
GROUPS = [path for path, command in COMMANDS if hasattr(command, "commands")]
LEAVES = [(path, command) for path, command in COMMANDS if not hasattr(command, "commands")]


def _id(path: tuple[str, ...]) -> str:
    return " ".join(path) or "cudaopt"


def _help(*command: str) -> str:
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return result.output


def _summary(command: Any) -> str:
    return " ".join((command.help or "").split("\n\n")[0].split())


def _entries(text: str, section: str) -> dict[str, str]:
    """A help section's rows, wrapped lines joined, under each name the row starts with
    (`-v` and `--verbose`, `--profile` and `--no-profile`, `FOLDER` for `FOLDER...`)."""
    marker = f"\n{section}:\n"
    body = text.split(marker, 1)[1].split("\n\n", 1)[0] if marker in text else ""
    rows: list[tuple[list[str], str]] = []
    for line in body.splitlines():
        if re.match(r"^  \S", line):
            words = line.split()
            names = [w.rstrip(",") for w in words[:1] + [w for w in itertools.takewhile(
                lambda w: w.startswith("-") or w == "/", words[1:]) if w != "/"]]
            rows.append(([n.removesuffix("...") for n in names], line.strip()))
        else:
            rows[-1] = (rows[-1][0], f"{rows[-1][1]} {line.strip()}")
    return {name: " ".join(row.split()) for names, row in rows for name in names}


def test_every_command_is_found() -> None:
    assert len(PATHS) == len(set(PATHS)) > 15
    for path in [("check",), ("optimize",), ("bench", "run"), ("bench", "compare"),
                 ("env", "serve"), ("check-model",), ("extract",), ("profile-model",)]:
        assert path in PATHS, path


@pytest.mark.parametrize("path", PATHS, ids=_id)
def test_help_is_plain_and_consistent(path: tuple[str, ...]) -> None:
    text = _help(*path)
    assert not re.search(r"<(str|bool|int|float|path|list|text|file|choice)", text), text
    assert "x>=" not in text and "x<" not in text, text  # click's range labels
    assert "(default" not in text, text  # defaults read `[default: ...]`, nowhere else
    assert "{" not in text.splitlines()[0]  # usage names arguments as their list does
    for name in re.findall(r"\[([A-Z_]+)(?:\.\.\.)?\]|\b([A-Z_]{3,})\b", text.splitlines()[0]):
        argument = next(n for n in name if n)
        if argument not in ("OPTIONS", "COMMAND", "ARGS"):
            assert f"\n  {argument}" in text, f"{argument} is in the usage, not the list"
    for row in _entries(text, "Options").values():
        words = row.split()
        if len(words) > 1 and words[1] in TYPE_LABELS | {w.split()[0] for w in TYPE_LABELS}:
            raise AssertionError(f"{_id(path)}: a type label, not a named metavar: {row}")


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=[_id(p) for p, _ in LEAVES])
def test_every_value_has_a_named_metavar_help_and_a_shown_default(
        path: tuple[str, ...], command: Any) -> None:
    """A flag alone (`--trace`) is off unless given: its default goes unsaid. A flag pair
    (`--profile/--no-profile`) and every option or argument that takes a value and has a
    default say it; one whose default the settings or the command decide says it by hand
    (`[default: cuda when present, else cpu]`)."""
    text = _help(*path)
    options, arguments = _entries(text, "Options"), _entries(text, "Arguments")
    for param in command.params:
        where = f"{_id(path)} {param.opts[0]}"
        assert param.help, f"{where}: no help text"
        row = (arguments if param.param_type_name == "argument" else options)[
            param.metavar if param.param_type_name == "argument" else param.opts[0]]
        if not (param.param_type_name == "option" and param.is_flag):
            assert param.metavar and METAVAR.match(param.metavar), f"{where}: {param.metavar}"
            assert param.metavar not in TYPE_LABELS, where
        lone_flag = param.param_type_name == "option" and param.is_flag and not (
            param.secondary_opts)
        if param.default is not None and not param.required and not lone_flag:
            assert "[default: " in row, f"{where}: its default is not shown: {row}"


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[_id(p) for p, _ in COMMANDS])
def test_every_summary_is_one_imperative_sentence(path: tuple[str, ...], command: Any) -> None:
    """`Build, verify and time ...`, `List past runs, newest first.`: one sentence, before
    the details in a paragraph of their own; the listing above shows it whole (see below)."""
    summary = _summary(command)
    verb = re.match(r"[\w-]+", summary)
    assert verb and verb.group() in VERBS, f"{_id(path)}: {summary!r} starts with no known verb"
    assert summary.endswith(".") and ". " not in summary, f"{_id(path)}: {summary!r}"


@pytest.mark.parametrize("path", GROUPS, ids=_id)
def test_the_listings_show_each_summary_whole(path: tuple[str, ...]) -> None:
    """`cudaopt --help` (and `bench --help`, `env --help`) list every command with its
    whole summary, never one cut short with `...`."""
    group = dict(COMMANDS)[path]
    rows = _entries(_help(*path), "Commands")
    listed = {name: row.split(None, 1)[1] for name, row in rows.items()}
    assert set(listed) == set(group.commands)
    for name, sub in group.commands.items():
        assert listed[name] == _summary(sub), (name, listed[name])


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
