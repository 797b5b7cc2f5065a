"""The old path of `cudaopt.runs.gitops`, kept while `cudaopt.models` and `cudaopt.cli.models`
still import it from here (their owners move them over; then this file goes)."""

from cudaopt.runs.gitops import SKIPPED_SUFFIXES as SKIPPED_SUFFIXES
from cudaopt.runs.gitops import CommitResult as CommitResult
from cudaopt.runs.gitops import GitOpsError as GitOpsError
from cudaopt.runs.gitops import commit_files as commit_files
from cudaopt.runs.gitops import find_repo as find_repo
