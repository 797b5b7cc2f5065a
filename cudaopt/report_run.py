"""The old path of `cudaopt.reports.run`, kept while `cudaopt.models` still imports it from
here (its owners move it over; then this file goes)."""

from cudaopt.reports.run import fmt_speedup as fmt_speedup
