"""summary.png: the distribution of speedups over torch.compile per level (a task that is not
correct sits at 1.0x, as in the geometric mean). Needs the `plot` extra (matplotlib)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cudaopt.bench.metrics import natural

INSTALL_HINT = "pip install 'cudaopt[plot]'"


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def speedups_by_level(lines: list[dict[str, Any]], against: str) -> dict[str, list[float]]:
    levels: dict[str, list[float]] = {}
    for line in lines:
        if line.get("infra_status") != "ok":
            continue
        value = line.get(f"speedup_vs_{against}") if line.get("correct") else None
        levels.setdefault(line.get("level") or "-", []).append(value or 1.0)
    return dict(sorted(levels.items(), key=lambda item: natural(item[0])))


def write_png(lines: list[dict[str, Any]], path: Path, title: str) -> Path | None:
    """The figure, or None without matplotlib (the caller says how to get it)."""
    if not available():
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, against in zip(axes, ("compile", "eager"), strict=True):
        data = speedups_by_level(lines, against)
        if data:
            ax.boxplot(list(data.values()), showfliers=False)
            for i, values in enumerate(data.values(), start=1):
                jitter = [i + ((k % 7) - 3) * 0.04 for k in range(len(values))]
                ax.scatter(jitter, values, s=10, alpha=0.6)
            ax.set_xticks(range(1, len(data) + 1), list(data))
        ax.set_yscale("log")
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.axhline(1.05, color="grey", linewidth=0.8, linestyle="--")
        ax.set_title(f"speedup vs {'torch.compile' if against == 'compile' else 'eager'}")
    axes[0].set_ylabel("speedup (x, log scale; not correct = 1.0x)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
