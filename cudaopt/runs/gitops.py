"""Accepted kernels land on a new git branch, and the user's own work is never touched.

Like aider's git layer, cudaopt remembers the commits it made (`CommitResult`, recorded in the
run's meta). Unlike `git commit`, everything goes through plumbing with a temporary index
(GIT_INDEX_FILE): blobs are written with `hash-object -w`, a tree is built from HEAD's tree
plus the candidate, and only the new branch ref is created. The working tree, the real index,
the stash and the current branch (HEAD) stay byte-for-byte as they were, dirty or not.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from git import Git, GitCommandError, InvalidGitRepositoryError, NoSuchPathError, Repo

from cudaopt.judge import Verdict
from cudaopt.reports.run import fmt_speedup, render_markdown
from cudaopt.runs.folder import RunMeta, task_name
from cudaopt.sandbox import secrets

FALLBACK_NAME = "cudaopt"
FALLBACK_EMAIL = "cudaopt@localhost"
SKIPPED_PARTS = ("__pycache__", "build")
SKIPPED_SUFFIXES = (".so", ".o", ".pyd", ".pyc", ".ninja_deps", ".ninja_log")
EMPTY_SHA = "0" * 40


class GitOpsError(RuntimeError):
    """cudaopt cannot commit; the message says what to do instead."""


class NotARepoError(GitOpsError):
    """The task is outside any git repository."""


class SecretFoundError(GitOpsError):
    """A file about to be committed holds the value of a configured API key."""


@dataclass
class CommitResult:
    """What cudaopt committed: enough to find, review or undo it later."""

    repo_root: str
    branch: str
    commit: str
    base: str | None  # the HEAD commit the branch starts from; None in a repo with no commits
    files: list[str]  # repository-relative paths written by the commit
    requested_branch: str  # the name asked for; differs from `branch` after a collision
    identity_fallback: bool = False  # no git identity configured: committed as cudaopt
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def find_repo(path: Path) -> Repo:
    """The repository whose working tree holds `path`."""
    try:
        repo = Repo(path, search_parent_directories=True)
    except (InvalidGitRepositoryError, NoSuchPathError):
        repo = None
    if repo is None or repo.bare:
        raise NotARepoError(
            f"{path} is not inside a git repository, so there is no branch to commit to. "
            f"Rerun with --init-repo (runs `git init` in {path}), run `git init` yourself, "
            "or pass --no-commit."
        )
    return repo


def ready_to_commit(task: Path, branch: str | None = None, init: bool = False) -> None:
    """Raise the GitOpsError `commit_accepted` would raise for the repository or the branch
    name, so a run that could never be committed stops before it starts. `init`: a missing
    repository will be created (--init-repo), so only the branch name is checked."""
    folder = task.resolve().parent
    try:
        git = find_repo(folder).git
    except NotARepoError:
        if not init:
            raise
        git = Git(str(folder))
    if branch:
        _check_branch_name(git, branch)


def work_tree(repo: Repo) -> Path:
    """The folder `repo` checks out into; `find_repo` and `init_repo` never give a bare one."""
    if repo.working_tree_dir is None:
        raise NotARepoError(f"{repo.git_dir} is a bare repository: no working tree to commit from")
    return Path(repo.working_tree_dir)


def init_repo(directory: Path) -> Path:
    """`git init` in `directory` (no commit: the kernel becomes the root of its branch)."""
    return work_tree(Repo.init(directory))


def commit_accepted(
    task: Path,
    candidate_dir: Path,
    verdict: Verdict,
    meta: RunMeta,
    branch: str | None = None,
    *,
    prefix: str = "cudaopt/",
) -> CommitResult:
    """Commit `candidate_dir` (model_new.py, kernels/) beside `task` on a new branch.

    `branch` names the branch outright; otherwise it is `<prefix><run id>`, so branch and run share
    one name and one timestamp.
    Also records the commit in `meta` (branch, commit, and `extra["commits"]`); the caller
    writes meta afterwards. Raises GitOpsError subclasses with a message fit for the user.
    """
    task = task.resolve()
    repo = find_repo(task.parent)
    folder = task.parent.relative_to(work_tree(repo).resolve()).as_posix()
    files = _candidate_files(candidate_dir.resolve(), folder)
    requested = branch or f"{prefix}{meta.run_id}"
    with tempfile.TemporaryDirectory(prefix="cudaopt-git-") as tmp:
        report = Path(tmp) / "report.md"
        report.write_text(render_markdown(meta, verdict))
        files[_join(folder, f"{task.stem}.cudaopt.md")] = report
        result = commit_files(repo, files, commit_message(task, verdict, meta), requested,
                              replace=_join(folder, "kernels"),
                              dotenv_dirs=[task.parent, Path.cwd()])
    meta.branch, meta.commit = result.branch, result.commit
    meta.extra.setdefault("commits", []).append(result.to_json())
    return result


def commit_files(repo: Repo, files: dict[str, Path], message: str, branch: str, *,
                 replace: str | None = None, dotenv_dirs: list[Path] | None = None
                 ) -> CommitResult:
    """Commit HEAD's tree plus `files` (repository path -> file) to the new branch `branch`
    (suffixed -2, -3... if taken), through a temporary index: the working tree, the index and
    HEAD stay as they were. HEAD's files under the folder `replace` are left out, so that
    folder holds exactly `files`. Refuses files holding a secret's value."""
    root = work_tree(repo).resolve()
    _check_branch_name(repo.git, branch)
    env, fallback = identity_env(repo.git)
    base = _head_commit(repo.git)
    scan_secrets(files, secrets.dotenv_values(dotenv_dirs or [Path.cwd()]))
    with tempfile.TemporaryDirectory(prefix="cudaopt-git-") as tmp:
        env["GIT_INDEX_FILE"] = str(Path(tmp) / "index")
        commit = _write_commit(repo.git, env, replace, files, base, message)
    name = _create_branch(repo.git, branch, commit)
    result = CommitResult(str(root), name, commit, base or None, list(files), branch, fallback)
    if fallback:
        result.notes.append(f"no git identity configured; committed as {FALLBACK_NAME} "
                            f"<{FALLBACK_EMAIL}> (set user.name and user.email to change)")
    if name != branch:
        result.notes.append(f"branch {branch} exists; used {name}")
    return result


def _write_commit(git: Git, env: dict[str, str], replace: str | None, files: dict[str, Path],
                  base: str, message: str) -> str:
    """A commit of HEAD's tree plus `files`, built in the temporary index named by `env`."""
    if base:
        git.read_tree(base, env=env)
    entries = _stale_entries(git, env, replace) if replace else []
    for rel, source in files.items():
        blob = git.hash_object("-w", f"--path={rel}", str(source), env=env)
        entries.append(f"{_mode(source)} {blob}\t{rel}")
    _run(git, ["update-index", "--index-info"], env, stdin="\n".join(entries) + "\n")
    tree = git.write_tree(env=env)
    return git.commit_tree(tree, *(["-p", base] if base else []), "-m", message, env=env)


def commit_message(task: Path, verdict: Verdict, meta: RunMeta) -> str:
    """Subject with the headline speedup; body with what a reviewer needs to trust it."""
    subject = (f"cudaopt: {task_name(task)} {fmt_speedup(verdict.speedup_vs_compile)} vs "
               f"torch.compile, {fmt_speedup(verdict.speedup_vs_eager)} vs eager")
    body = [
        f"GPU: {verdict.device_name or meta.gpu or verdict.device or meta.device}",
        f"torch: {verdict.torch_version or meta.torch_version or 'unknown'}",
        f"model: {meta.model}",
        f"run: {meta.run_id}",
        "",
        f"Reproduce: cudaopt check {task.name} model_new.py",
    ]
    return subject + "\n\n" + "\n".join(body) + "\n"


def scan_secrets(files: dict[str, Path], dotenv: dict[str, str] | None = None) -> None:
    """Refuse to commit anything that holds a configured secret's value; name the file.
    Every value set in a `.env` file (`dotenv`) counts, whatever its name."""
    found = secrets.secret_values(os.environ)
    found.update({f"{name} (from .env)": value for name, value in (dotenv or {}).items()
                  if len(value) >= secrets.MIN_SECRET_CHARS})
    for name, path in files.items():
        data = path.read_bytes()
        for var, value in found.items():
            if value.encode() in data:
                raise SecretFoundError(
                    f"refusing to commit: {name} contains the value of ${var}. "
                    "Remove it from the candidate and commit by hand, or rerun.")


def identity_env(git: Git) -> tuple[dict[str, str], bool]:
    """Environment for commit-tree; falls back to cudaopt's identity when none is set."""
    env: dict[str, str] = {}
    name = os.environ.get("GIT_AUTHOR_NAME") or _config(git, "user.name")
    email = (os.environ.get("GIT_AUTHOR_EMAIL") or _config(git, "user.email")
             or os.environ.get("EMAIL"))
    if name and email:
        return env, False
    for role in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{role}_NAME"] = FALLBACK_NAME
        env[f"GIT_{role}_EMAIL"] = FALLBACK_EMAIL
    return env, True


def _config(git: Git, key: str) -> str:
    try:
        return git.config("--get", key)
    except GitCommandError:
        return ""


def _candidate_files(candidate_dir: Path, folder: str) -> dict[str, Path]:
    """Repository path -> source file: model_new.py and kernel sources, no build output."""
    model_new = candidate_dir / "model_new.py"
    if not model_new.is_file():
        raise GitOpsError(f"{candidate_dir} has no model_new.py to commit")
    files = {_join(folder, "model_new.py"): model_new}
    kernels = candidate_dir / "kernels"
    for path in sorted(kernels.rglob("*")) if kernels.is_dir() else []:
        rel = path.relative_to(candidate_dir)
        if (path.is_file() and not path.is_symlink()
                and not any(p in SKIPPED_PARTS or p.startswith(".") for p in rel.parts)
                and not path.name.endswith(SKIPPED_SUFFIXES)):
            files[_join(folder, rel.as_posix())] = path
    return files


def _stale_entries(git: Git, env: dict[str, str], folder: str) -> list[str]:
    """Index lines removing HEAD's files under `folder`, so the branch holds exactly ours."""
    listed = git.ls_files("-z", "--", folder, env=env)
    return [f"0 {EMPTY_SHA}\t{path}" for path in listed.split("\0") if path]


def _create_branch(git: Git, requested: str, commit: str) -> str:
    """Create refs/heads/<name> only where no branch exists; suffix -2, -3... on collision."""
    for n in range(1, 100):
        name = requested if n == 1 else f"{requested}-{n}"
        try:  # the empty old value makes creation atomic: git refuses if the ref exists
            git.update_ref("-m", "cudaopt: accepted kernel", f"refs/heads/{name}", commit, "")
            return name
        except GitCommandError as exc:
            if not _ref_exists(git, f"refs/heads/{name}"):
                raise GitOpsError(f"cannot create branch {name}: {exc.stderr.strip()}") from exc
    raise GitOpsError(f"could not find a free branch name starting with {requested}")


def _ref_exists(git: Git, ref: str) -> bool:
    try:
        git.rev_parse("--verify", "-q", ref)
        return True
    except GitCommandError:
        return False


def _check_branch_name(git: Git, name: str) -> None:
    try:
        git.check_ref_format("--branch", name)
    except GitCommandError as exc:
        raise GitOpsError(f"{name!r} is not a valid branch name") from exc


def _head_commit(git: Git) -> str:
    """HEAD's commit, or "" in a repository without commits (HEAD is left unborn)."""
    try:
        return git.rev_parse("--verify", "-q", "HEAD^{commit}")
    except GitCommandError:
        return ""


def _mode(path: Path) -> str:
    return "100755" if os.access(path, os.X_OK) else "100644"


def _join(folder: str, name: str) -> str:
    return name if folder in ("", ".") else f"{folder}/{name}"


def _run(git: Git, args: list[str], env: dict[str, str], stdin: str) -> None:
    """A git command fed on stdin (GitPython's wrappers take stdin only as a stream)."""
    with tempfile.TemporaryFile() as stream:
        stream.write(stdin.encode())
        stream.seek(0)
        git.execute(["git", *args], istream=stream, env=env)
