"""`python -m cudaopt.cli`: the `cudaopt` command, for a checkout without the entry point."""

from cudaopt.cli import app

app(prog_name="cudaopt")
