"""A pytest plugin that writes each test's outcome, duration and failure text the moment it
is known, to $OUT/tests_live.log (or ./gpu-out). A lent machine's call ends at its time
limit by killing pytest, which then never prints its summary; this file still holds every
result up to that moment. Load with `-p pytest_live` and benchmarks/ on PYTHONPATH."""

import os
from pathlib import Path

import pytest

_LOG = Path(os.environ.get("OUT", "gpu-out")) / "tests_live.log"


_controller = True  # under xdist, write from the controller only, once per test


def pytest_configure(config: pytest.Config) -> None:
    global _controller
    _controller = not hasattr(config, "workerinput")


@pytest.hookimpl
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not _controller or (report.when != "call" and not (report.failed or report.skipped)):
        return
    with _LOG.open("a") as log:
        log.write(f"{report.outcome.upper():8} {report.duration:7.1f}s {report.nodeid}"
                  f" ({report.when})\n")
        if report.failed:
            log.write(report.longreprtext[-6000:] + "\n" + "-" * 78 + "\n")
