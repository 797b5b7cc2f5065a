"""Getting onto a Ray cluster the way Ray users expect (RAY_ADDRESS, `ray start`, runtime
environments), and deciding how many slot actors it holds. Ray is an optional dependency:
without it, a clear message says how to get it."""

from __future__ import annotations

import logging
from typing import Any

INSTALL_HINT = ("running on a Ray cluster needs Ray: pip install 'cudaopt[ray]' "
                "(on the driver and on every node of the cluster)")


def require_ray() -> Any:
    """The `ray` module, or an ImportError that says how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError(INSTALL_HINT) from None
    return ray


def connect(address: str | None, runtime_env: dict[str, Any] | None) -> tuple[Any, bool]:
    """Join the cluster at `address` ("auto": RAY_ADDRESS or the one `ray start` made here;
    "local": a private Ray on this machine). Returns Ray and whether we started the
    connection (and so must end it). An existing `ray.init` in this process is reused."""
    ray = require_ray()
    if ray.is_initialized():
        return ray, False
    settings: dict[str, Any] = {"runtime_env": runtime_env, "namespace": "cudaopt",
                                "log_to_driver": False,  # results carry what matters
                                "logging_level": logging.WARNING}  # no chatter in the table
    try:
        if address in (None, "", "local"):
            ray.init(**settings)
        else:
            ray.init(address=address, **settings)
    except ConnectionError as exc:
        raise ConnectionError(
            f"no Ray cluster at {address!r}: start one with `ray start --head` (then "
            "`ray start --address HEAD:6379` on each other node), or set RAY_ADDRESS "
            f"({exc})") from None
    return ray, True


def slot_plan(ray: Any, device: str, slots: int | None,
              slot_cpus: float) -> tuple[int, dict[str, Any]]:
    """How many slot actors, and the resources each asks for: one GPU each (GPUs declared
    on CPU nodes, `ray start --num-gpus N`, count too); on a CPU cluster without declared
    GPUs, one slot per node, spread, since two timings on one CPU disturb each other. Each
    slot holds `slot_cpus` CPUs unless that would leave none for the builds."""
    if device not in ("cuda", "cpu"):
        raise ValueError(f"device must be 'cuda' or 'cpu', not {device!r}")
    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0))
    options: dict[str, Any]
    if gpus:
        total, options = gpus, {"num_gpus": 1, "num_cpus": slot_cpus}
    elif device == "cuda":
        raise ValueError("the Ray cluster has no GPU: start its nodes on GPU machines "
                         "(`ray start` finds them), or judge on CPU with --device cpu")
    else:
        total = sum(1 for node in ray.nodes() if node.get("Alive"))
        options = {"num_cpus": slot_cpus, "scheduling_strategy": "SPREAD"}
    if slots is not None and slots < 1:
        raise ValueError(f"slots must be at least 1, not {slots}")
    count = min(slots or total, total)
    if resources.get("CPU", 0) - count * slot_cpus < 1:
        options["num_cpus"] = 0  # else builds (CPU tasks) would wait forever behind the slots
    return count, options
