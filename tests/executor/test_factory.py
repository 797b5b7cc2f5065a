"""`make_executor`: local slots by default, a clear way to Ray, clear refusals; and what a
cluster reports about mixed nodes (none of it needs Ray installed)."""

from __future__ import annotations

import sys

import pytest

from cudaopt.executor import LocalExecutor, make_executor
from cudaopt.executor.ray_setup import INSTALL_HINT, require_ray


def test_without_ray_the_local_executor_is_made() -> None:
    with make_executor("cpu", workers=2, plugins=("tests.executor.plugin",)) as ex:
        assert isinstance(ex, LocalExecutor)
        assert [s.name for s in ex.slots] == ["cpu:0", "cpu:1"]


def test_gpus_cannot_be_picked_on_a_cluster() -> None:
    with pytest.raises(ValueError, match="--gpus picks GPUs of this machine"):
        make_executor("cuda", [0, 1], ray="auto")


def test_lookahead_is_refused_on_a_cluster_before_ray_is_reached() -> None:
    with pytest.raises(ValueError, match="--lookahead sets this machine's slots"):
        make_executor("cuda", ray="auto", lookahead=2)


def test_without_ray_installed_the_error_says_how_to_get_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without Ray sees
    with pytest.raises(ImportError, match=r"pip install 'cudaopt\[ray\]'"):
        require_ray()
    with pytest.raises(ImportError) as caught:
        make_executor("cpu", ray="auto")
    assert str(caught.value) == INSTALL_HINT


def test_mixed_gpu_models_and_torch_versions_are_reported() -> None:
    from cudaopt.executor.cluster import mixed

    nodes = [{"device_name": "NVIDIA H200", "torch": "2.13.0"},
             {"device_name": "NVIDIA H200", "torch": "2.13.0"},
             {"device_name": "NVIDIA A100-SXM4-80GB", "torch": "2.12.1"}]
    assert mixed(nodes) == [
        "mixed device models: NVIDIA H200 (2 slots), NVIDIA A100-SXM4-80GB (1 slots); "
        "each result names its own",
        "mixed torch versions: 2.13.0 (2 slots), 2.12.1 (1 slots); each result names its own"]
    assert mixed(nodes[:2]) == []
