"""A pytest plugin that writes each test's outcome, duration and failure text the moment it
is known, to $OUT/tests_live.log (or ./gpu-out). A lent machine's call ends at its time
limit by killing pytest, which then never prints its summary; this file still holds every
result up to that moment. Load with `-p pytest_live` and benchmarks/ on PYTHONPATH.

It also runs the tests named in $TESTS_FIRST (space-separated node-id prefixes) before
the rest: xdist hands tests out in collection order, so the longest ones, started last,
would otherwise set the whole run's length."""

import os
from pathlib import Path

import pytest

_LOG = Path(os.environ.get("OUT", "gpu-out")) / "tests_live.log"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    first = os.environ.get("TESTS_FIRST", "").split()
    rank = {item.nodeid: next((i for i, p in enumerate(first) if item.nodeid.startswith(p)),
                              len(first)) for item in items}
    items.sort(key=lambda item: rank[item.nodeid])  # stable: the rest keep their order


@pytest.hookimpl
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Under xdist the controller writes (each worker's reports reach it), once per test."""
    if os.environ.get("PYTEST_XDIST_WORKER") or (
            report.when != "call" and not (report.failed or report.skipped)):
        return
    with _LOG.open("a") as log:
        log.write(f"{report.outcome.upper():8} {report.duration:7.1f}s {report.nodeid}"
                  f" ({report.when})\n")
        if report.failed:
            log.write(report.longreprtext[-6000:] + "\n" + "-" * 78 + "\n")
