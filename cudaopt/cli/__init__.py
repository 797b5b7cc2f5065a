"""The `cudaopt` command line: thin over the library; each command group lives in its own
module here, what several of them share in `common` and the look of `--help` in `style`."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Make PyTorch models faster with verified custom CUDA kernels.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help, one style for every command (see style)
)


def _register() -> None:
    from cudaopt.cli import bench, env, judge, misc, models, optimize, style, synth

    for module in (judge, optimize, misc, bench, models, env, synth):
        module.register(app)
    style.apply(app)


_register()
