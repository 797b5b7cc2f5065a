"""A `kernels/` build is shared between folders holding the same sources, never between
different ones: the judge imports a copy of an earlier build only when every input of it
is the same, and builds its own after any edit."""

from __future__ import annotations

import shutil
from pathlib import Path

from cudaopt.judge import (
    MODULE_NAME,
    JudgeOptions,
    Status,
    build_kernels,
    check,
    default_build_dir,
    kernel_store,
)

ZOO = Path(__file__).parent / "zoo"
MODULE = f"{MODULE_NAME}.so"


def _candidate(folder: Path) -> Path:
    shutil.copytree(ZOO / "kernels", folder / "kernels")
    shutil.copy(ZOO / "correct.py", folder / "model_new.py")
    return folder / "model_new.py"


def test_the_same_kernels_elsewhere_reuse_the_build_and_an_edit_builds_its_own(
        tmp_path: Path) -> None:
    opts = JudgeOptions(device="cpu", profile=False, cache_dir=tmp_path / "cache")
    first, second = _candidate(tmp_path / "a"), _candidate(tmp_path / "b")
    assert check(ZOO / "task.py", first, opts).status is Status.OK
    built = default_build_dir(first, "cpu")
    assert list(built.glob("*.o")) and (kernel_store(opts)).is_dir()

    assert check(ZOO / "task.py", second, opts).status is Status.OK
    copied = default_build_dir(second, "cpu")
    assert not list(copied.glob("*.o"))  # nothing compiled here: the first build, copied
    assert (copied / MODULE).read_bytes() == (built / MODULE).read_bytes()

    source = second.parent / "kernels" / "zoo.cpp"
    text = source.read_text()
    assert "bias[i % cols])" in text
    source.write_text(text.replace("bias[i % cols])", "2.0f * bias[i % cols])"))
    edited = check(ZOO / "task.py", second, opts)
    assert edited.status is Status.WRONG, edited.error  # its own build, of the edit
    assert list(copied.glob("*.o"))
    # the judge's own entry object, compiled by the first build, is linked as it was kept
    [kept] = (tmp_path / "cache" / "entry").rglob("cudaopt_module.o")
    assert not (copied / "cudaopt_module.o").exists()
    assert str(kept) in (copied / "build.ninja").read_text()
    assert check(ZOO / "task.py", first, opts).status is Status.OK  # the store is intact

    kept.write_bytes(b"a kept entry object gone bad")  # costs a build, never a verdict
    source.write_text(text.replace("bias[i % cols])", "3.0f * bias[i % cols])"))
    again = check(ZOO / "task.py", second, opts)
    assert again.status is Status.WRONG and again.compiled, again.error
    assert kept.read_bytes().startswith(b"\x7fELF")  # compiled afresh, and kept again


def test_a_build_that_reads_a_header_outside_kernels_is_not_shared(tmp_path: Path) -> None:
    """Such a header could change while `kernels/` does not: its build stays its own."""
    candidate = _candidate(tmp_path / "a")
    (candidate.parent / "extra.h").write_text("#define ZOO_EXTRA 1\n")
    source = candidate.parent / "kernels" / "zoo.cpp"
    source.write_text('#include "../extra.h"\n' + source.read_text())
    store = tmp_path / "store"
    result = build_kernels(candidate.parent / "kernels", tmp_path / "build", 600, store)
    assert result.ok and "zoo.o" in result.rebuilt, result.log
    assert not list(store.rglob(MODULE))
    (candidate.parent / "extra.h").write_text("#define ZOO_EXTRA 2\n")
    again = build_kernels(candidate.parent / "kernels", tmp_path / "build", 600, store)
    assert again.ok and again.rebuilt == ["zoo.o"]  # the header's edit is seen, incrementally


def test_a_module_not_compiled_in_the_call_is_never_shared(tmp_path: Path) -> None:
    """A folder's module may have been put there by whoever can write the folder (an
    agent's workspace): one that ninja finds up to date is not the store's to keep."""
    candidate = _candidate(tmp_path / "a")
    kernels, build, store = candidate.parent / "kernels", tmp_path / "build", tmp_path / "store"
    assert build_kernels(kernels, build, 600).ok
    (build / MODULE).write_bytes(b"not what the compiler made")
    planted = build_kernels(kernels, build, 600, store)
    assert planted.ok and planted.rebuilt == []
    assert not list(store.rglob(MODULE))
    assert not (tmp_path / "entry").exists()  # nor its entry object
