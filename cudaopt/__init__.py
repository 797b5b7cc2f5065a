"""cudaopt: verified custom CUDA kernels for PyTorch models, written by a language model."""

from pathlib import Path

__version__ = "0.1.0"

#: Repository root holding `templates/` and `skills/` (data kept out of code).
ROOT = Path(__file__).resolve().parent.parent
