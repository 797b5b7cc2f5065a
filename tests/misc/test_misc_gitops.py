"""The git layer on real temporary repositories: the user's work is never touched."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from cudaopt.runs.gitops import (
    GitOpsError,
    NotARepoError,
    SecretFoundError,
    commit_accepted,
    init_repo,
)
from tests.misc.misc_helpers import git, make_candidate, make_meta, make_verdict

BRANCH = "cudaopt/model-20250101-120000"  # the run id of make_meta: one name, one time


def _repo_with_task(root: Path) -> Path:
    """A repo whose task lives in a subfolder, with one commit."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "proj").mkdir()
    (root / "proj" / "model.py").write_text("class Model: pass\n")
    (root / "README.md").write_text("hello\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root / "proj" / "model.py"


def _dirty(root: Path) -> None:
    """A stash, then staged, unstaged and untracked changes, all at once."""
    (root / "README.md").write_text("stashed change\n")
    git(root, "stash", "-q")
    (root / "README.md").write_text("staged\n")
    git(root, "add", "README.md")
    (root / "README.md").write_text("staged then edited\n")
    (root / "proj" / "model.py").write_text("class Model: pass  # unstaged\n")
    (root / "proj" / "model_new.py").write_text("untracked user draft\n")
    (root / "notes.txt").write_text("untracked\n")
    git(root, "status")  # let git refresh its index stat cache before the snapshot


def _snapshot(root: Path) -> dict[str, str]:
    """Everything a user could notice: index bytes first (status may rewrite them)."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    return {
        "index": hashlib.sha256((root / ".git" / "index").read_bytes()).hexdigest(),
        "files": "\n".join(f"{p}:{hashlib.sha256(p.read_bytes()).hexdigest()}" for p in files),
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
        "diff": git(root, "diff"),
        "cached": git(root, "diff", "--cached"),
        "head": git(root, "rev-parse", "HEAD", check=False),
        "symbolic": git(root, "symbolic-ref", "HEAD"),
        "stash": git(root, "stash", "list"),
        "stash_show": git(root, "stash", "show", "-p", check=False),
    }


def test_dirty_tree_stays_exactly_as_it_was(tmp_path: Path, identity: Path) -> None:
    task = _repo_with_task(tmp_path / "repo")
    root = task.parent.parent
    head = git(root, "rev-parse", "HEAD").strip()
    _dirty(root)
    before = _snapshot(root)
    meta = make_meta(task)
    result = commit_accepted(task, make_candidate(tmp_path / "cand"), make_verdict(), meta)
    assert _snapshot(root) == before
    assert result.branch == BRANCH and result.base == head
    assert git(root, "rev-parse", f"{BRANCH}^").strip() == head
    assert git(root, "show", f"{BRANCH}:proj/model_new.py") == "class ModelNew:  # fast\n    pass\n"
    # the branch is HEAD plus the candidate: none of the user's uncommitted work leaks in
    assert git(root, "show", f"{BRANCH}:proj/model.py") == "class Model: pass\n"
    assert git(root, "show", f"{BRANCH}:README.md") == "hello\n"
    tree = git(root, "ls-tree", "-r", "--name-only", BRANCH).split()
    assert sorted(tree) == ["README.md", "proj/kernels/add.cu", "proj/kernels/add_binding.cpp",
                            "proj/model.cudaopt.md", "proj/model.py", "proj/model_new.py"]
    assert sorted(result.files) == sorted(set(tree) - {"README.md", "proj/model.py"})
    modes = git(root, "ls-tree", "-r", BRANCH, "proj/kernels").split()
    assert modes[0::4] == ["100755", "100644"]  # add.cu is executable in the candidate
    assert meta.branch == BRANCH and meta.commit == result.commit
    assert meta.extra["commits"][0]["commit"] == result.commit


def test_commit_message_and_author(tmp_path: Path, identity: Path) -> None:
    task = _repo_with_task(tmp_path / "repo")
    root = task.parent.parent
    result = commit_accepted(task, make_candidate(tmp_path / "cand"), make_verdict(1.5),
                             make_meta(task))
    message = git(root, "log", "-1", "--format=%B", result.commit)
    assert "1.50x vs torch.compile" in message
    assert "NVIDIA H200" in message and "2.9.0+cu128" in message
    assert "anthropic/claude-sonnet-4-5" in message
    assert git(root, "log", "-1", "--format=%an <%ae>", result.commit).strip() == \
        "Ada <ada@example.com>"
    assert not result.identity_fallback
    report = git(root, "show", f"{result.branch}:proj/model.cudaopt.md")
    assert "cudaopt check model.py model_new.py" in report and "1.50x" in report


def test_name_collision_gets_a_suffix(tmp_path: Path, identity: Path) -> None:
    task = _repo_with_task(tmp_path / "repo")
    root = task.parent.parent
    git(root, "branch", BRANCH)
    taken = git(root, "rev-parse", BRANCH)
    cand = make_candidate(tmp_path / "cand")
    first = commit_accepted(task, cand, make_verdict(), make_meta(task))
    second = commit_accepted(task, cand, make_verdict(), make_meta(task))
    assert (first.branch, second.branch) == (f"{BRANCH}-2", f"{BRANCH}-3")
    assert first.requested_branch == BRANCH and "exists" in first.notes[0]
    assert git(root, "rev-parse", BRANCH) == taken


def test_explicit_branch_and_prefix(tmp_path: Path, identity: Path) -> None:
    task = _repo_with_task(tmp_path / "repo")
    cand = make_candidate(tmp_path / "cand")
    named = commit_accepted(task, cand, make_verdict(), make_meta(task), "review/fast-gelu")
    assert named.branch == "review/fast-gelu"
    prefixed = commit_accepted(task, cand, make_verdict(), make_meta(task), prefix="k/")
    assert prefixed.branch == "k/model-20250101-120000"
    with pytest.raises(GitOpsError, match="not a valid branch name"):
        commit_accepted(task, cand, make_verdict(), make_meta(task), "bad..name")


def test_stale_kernels_of_head_are_replaced(tmp_path: Path, identity: Path) -> None:
    task = _repo_with_task(tmp_path / "repo")
    root = task.parent.parent
    (task.parent / "kernels").mkdir()
    (task.parent / "kernels" / "old.cu").write_text("old\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "old kernel")
    result = commit_accepted(task, make_candidate(tmp_path / "cand"), make_verdict(),
                             make_meta(task))
    tree = git(root, "ls-tree", "-r", "--name-only", result.branch).split()
    assert "proj/kernels/old.cu" not in tree and "proj/kernels/add.cu" in tree
    assert (task.parent / "kernels" / "old.cu").read_text() == "old\n"


def test_repo_without_commits_gets_a_root_commit(tmp_path: Path, identity: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    task = root / "model.py"
    task.write_text("class Model: pass\n")
    git(root, "add", "model.py")  # staged in the real index, no commit yet
    before = _snapshot(root)
    result = commit_accepted(task, make_candidate(tmp_path / "cand"), make_verdict(),
                             make_meta(task))
    assert _snapshot(root) == before
    assert result.base is None
    assert git(root, "rev-parse", "--verify", "-q", "HEAD", check=False) == ""  # still unborn
    assert git(root, "log", "--format=%P", result.branch).strip() == ""  # a root commit
    assert "model_new.py" in git(root, "ls-tree", "--name-only", result.branch).split()


def test_outside_any_repo_says_what_to_do_then_init_repo_works(
        tmp_path: Path, identity: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    task = folder / "model.py"
    task.write_text("class Model: pass\n")
    cand = make_candidate(tmp_path / "cand")
    with pytest.raises(NotARepoError, match="--init-repo"):
        commit_accepted(task, cand, make_verdict(), make_meta(task))
    assert init_repo(folder).resolve() == folder.resolve()
    result = commit_accepted(task, cand, make_verdict(), make_meta(task))
    assert result.base is None and result.branch == BRANCH


def test_missing_identity_falls_back_and_says_so(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    task = root / "model.py"
    task.write_text("class Model: pass\n")
    result = commit_accepted(task, make_candidate(tmp_path / "cand"), make_verdict(),
                             make_meta(task))
    assert result.identity_fallback and "no git identity" in result.notes[0]
    author = git(root, "log", "-1", "--format=%an <%ae>|%cn <%ce>", result.branch).strip()
    assert author == "cudaopt <cudaopt@localhost>|cudaopt <cudaopt@localhost>"
    assert git(root, "config", "--get", "user.name", check=False) == ""  # nothing configured


def test_secret_in_candidate_is_refused(tmp_path: Path, identity: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    task = _repo_with_task(tmp_path / "repo")
    root = task.parent.parent
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-0123456789")
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # under 8 characters: not a secret worth scanning
    cand = make_candidate(tmp_path / "cand")
    (cand / "kernels" / "leak.cu").write_text("// abc sk-live-0123456789\n")
    branches = git(root, "branch", "--list")
    with pytest.raises(SecretFoundError, match=r"proj/kernels/leak\.cu.*OPENAI_API_KEY"):
        commit_accepted(task, cand, make_verdict(), make_meta(task))
    assert git(root, "branch", "--list") == branches
    (cand / "kernels" / "leak.cu").write_text("// abc\n")
    assert commit_accepted(task, cand, make_verdict(), make_meta(task)).branch == BRANCH
