"""cudaopt: verified custom CUDA kernels for PyTorch models, written by a language model."""

from pathlib import Path
from typing import Any

__version__ = "0.1.0"

#: Repository root (a source checkout) or site-packages (a regular install).
ROOT = Path(__file__).resolve().parent.parent


def _data_dir(name: str) -> Path:
    """`templates/` and `skills/` live at the top of the repository and ship inside the
    package for regular installs (see pyproject.toml)."""
    shipped = Path(__file__).resolve().parent / name
    return shipped if shipped.is_dir() else ROOT / name


TEMPLATES_DIR = _data_dir("templates")
SKILLS_DIR = _data_dir("skills")


def swap(*args: Any, **kwargs: Any) -> Any:
    """`cudaopt.models.swap.swap`, imported on first use so `import cudaopt` stays light."""
    from cudaopt.models.swap import swap as _swap

    return _swap(*args, **kwargs)


swap.__doc__ = "Replace matching submodules with an accepted ModelNew; see cudaopt.models.swap."
