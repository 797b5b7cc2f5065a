"""The `cudaopt` command line: thin over the library; each command group lives in its own module."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Make PyTorch models faster with verified custom CUDA kernels.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    from cudaopt import cli_judge

    cli_judge.register(app)
    for name in ("cli_optimize", "cli_misc"):
        try:
            module = __import__(f"cudaopt.{name}", fromlist=["register"])
        except ModuleNotFoundError as exc:  # command groups land one at a time
            if exc.name != f"cudaopt.{name}":
                raise
            continue
        module.register(app)


_register()

if __name__ == "__main__":
    app(prog_name="cudaopt")
