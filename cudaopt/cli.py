"""The `cudaopt` command line: thin over the library; each command group lives in its own module."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Make PyTorch models faster with verified custom CUDA kernels.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help, one style for every command (see cli_style)
)


def _register() -> None:
    from cudaopt import (
        cli_bench,
        cli_env,
        cli_judge,
        cli_misc,
        cli_models,
        cli_optimize,
        cli_style,
        cli_synth,
    )

    for module in (cli_judge, cli_optimize, cli_misc, cli_bench, cli_models, cli_env, cli_synth):
        module.register(app)
    cli_style.apply(app)


_register()

if __name__ == "__main__":
    app(prog_name="cudaopt")
