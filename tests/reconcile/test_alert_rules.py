"""The Prometheus alert rules of docs/operations.md (issue 33 items 2 and 5) name only
metrics that exist: every `reconcile_*` name in an expression is in the exposition of a
real `Metrics()` registry (counters with their `_total`, histograms with `_bucket`/`_sum`/
`_count`), every other name is Prometheus's own (`up`) or redis_exporter's; and the
memory, time-to-full and pass-age rules are there with the thresholds the issue asks for."""
from __future__ import annotations

import re
from pathlib import Path

import yaml
from prometheus_client.exposition import generate_latest

from reconcile_service.metrics import Metrics

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
PROMQL_WORDS = {"and", "or", "unless", "on", "ignoring", "by", "without", "group_left", "group_right", "bool",
                "offset", "sum", "min", "max", "avg", "count"}
REDIS_EXPORTER = {"redis_memory_used_bytes", "redis_memory_max_bytes", "redis_cpu_sys_seconds_total",
                  "redis_cpu_user_seconds_total", "redis_commands_failed_calls_total", "redis_commands_total",
                  "redis_aof_last_write_status", "redis_aof_last_bgrewrite_status"}
PROMETHEUS_OWN = {"up"}


def rules() -> list[dict]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Suggested Prometheus alert rules", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    return [rule for group in yaml.safe_load(block)["groups"] for rule in group["rules"]]


def metric_names(expr: str) -> set[str]:
    expr = re.sub(r'"[^"]*"', "", expr)                 # label values
    expr = re.sub(r"\{[^}]*\}", "", expr)               # label matchers
    expr = re.sub(r"\[[^\]]*\]", "", expr)              # range selectors
    expr = re.sub(r"\b(?:on|by|without|ignoring)\s*\([^)]*\)", "", expr)   # label lists
    names = {m.group(0) for m in re.finditer(r"(?<![\w.])[A-Za-z_:][A-Za-z0-9_:]*", expr)
             if not expr[m.end():].lstrip().startswith("(")}      # a name before "(" is a function
    return names - PROMQL_WORDS


def exported() -> set[str]:
    metrics = Metrics()
    names: set[str] = set()
    for line in generate_latest(metrics.registry).decode().splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            names.add(name)
            names |= {"counter": {name + "_total"}, "histogram": {name + s for s in ("_bucket", "_sum", "_count")}
                      }.get(kind, set())
        elif line and not line.startswith("#"):
            names.add(re.match(r"[A-Za-z_:][A-Za-z0-9_:]*", line).group(0))
    return names


def test_every_rule_names_only_metrics_that_exist():
    daemon = exported()
    assert "reconcile_redis_full_in_seconds" in daemon and "reconcile_entries_applied_total" in daemon
    named_any = set()
    for rule in rules():
        names = metric_names(str(rule["expr"]))
        assert names, rule
        named_any |= names
        unknown = {n for n in names if n.startswith("reconcile_") and n not in daemon}
        assert not unknown, (rule["alert"], unknown)
        foreign = {n for n in names if not n.startswith("reconcile_")} - REDIS_EXPORTER - PROMETHEUS_OWN
        assert not foreign, (rule["alert"], foreign)
    assert {"reconcile_redis_used_memory_bytes", "reconcile_redis_maxmemory_bytes", "reconcile_redis_full",
            "reconcile_last_pass_timestamp_seconds", "reconcile_pass_interval_seconds"} <= named_any


def test_the_capacity_rules_have_the_issues_thresholds():
    by_name = {r["alert"]: str(r["expr"]) for r in rules()}
    assert "> 0.70" in by_name["CashierRedisMemory70"] and "> 0.85" in by_name["CashierRedisMemory85"]
    full = by_name["CashierRedisFullWithin24h"]
    assert "reconcile_redis_full_in_seconds < 86400" in full and "reconcile_redis_full_in_seconds >= 0" in full
    stale = by_name["CashierReconcilePassStale"]
    assert "time() - reconcile_last_pass_timestamp_seconds > 2 * reconcile_pass_interval_seconds" in stale


def test_the_parser_sees_a_misspelt_metric():
    """The check above is only worth something if a wrong name is caught."""
    names = metric_names('rate(reconcile_entries_aplied_total{partition="0"}[5m]) > 0 and on() hour() >= 2')
    assert names == {"reconcile_entries_aplied_total"}
    assert not names <= exported()
