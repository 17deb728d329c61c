"""The cashier ledger's benchmark suite (issues 7 and 9): `python -m bench` starts
private Redis servers (standalone and a 3-master Cluster) on free loopback ports and
uses its own PostgreSQL database, measures the machine's ceiling (`redis-benchmark`
running the product's deduct script), a bare redis-py baseline, the product
(`Ledger.deduct`, `Ledger.deduct_many`), hot accounts, latency at half of the peak,
memory per record, and the comparison of deduction methods, all in one run, and
writes `docs/benchmarks.md` plus PNG plots. Ratios measured side by side in one run
are the point; absolute figures drift with whatever else the machine is doing.
"""
