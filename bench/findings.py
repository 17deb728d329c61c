"""Reasons found by profiling for targets the run missed, keyed by the `finding`
name a part gives its target row. The report prints the reason for each missed
target; a missed target without an entry here is reported as "not profiled yet".
Profiles were taken with py-spy / pyinstrument on this machine (see the report).
"""
from __future__ import annotations

FINDINGS: dict[str, str] = {}
