"""Build a user's model from its ENTRY without cudaopt.

Generated task and candidate files embed this module's text, so they run where cudaopt is
not importable (the judge's workers may not allow it) and a copied task file stays whole.
Keep it free of cudaopt imports.
"""

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path

import torch


def import_entry(entry: str, root: str = "."):
    """The callable ENTRY names: `path/to/file.py:callable` or `package.module:callable`.
    `root` is the folder relative paths and packages are found from."""
    where, _, name = entry.rpartition(":")
    if where.endswith(".py"):
        path = (Path(root) / where).resolve()
        folder = str(path.parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        module_name = "cudaopt_user_" + path.stem.replace("-", "_")
        module = sys.modules.get(module_name)
        if module is None or getattr(module, "__file__", None) != str(path):
            spec = importlib.util.spec_from_file_location(module_name, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"no loader imports {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
    else:
        if root not in sys.path:
            sys.path.insert(0, str(Path(root).resolve()))
        module = importlib.import_module(where)
    return getattr(module, name)


def takes_device(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "device" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def build_entry(entry: str, root: str = ".", device=None):
    """Call ENTRY (with `device=` when it takes one) and return its `(model, inputs)`."""
    fn = import_entry(entry, root)
    if device is None:
        device = torch.get_default_device() if hasattr(torch, "get_default_device") else "cpu"
    return fn(device=str(device)) if takes_device(fn) else fn()


def plain(output):
    """Outputs the judge can compare: model-output classes (dict or tuple subclasses, as
    Hugging Face models return) become plain dicts, tuples and lists."""
    if isinstance(output, torch.Tensor) or output is None:
        return output
    if isinstance(output, dict):
        return {str(k): plain(v) for k, v in output.items()}
    if isinstance(output, (list, tuple)):
        items = [plain(v) for v in output]
        return items if isinstance(output, list) else tuple(items)
    return output
