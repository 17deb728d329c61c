"""The parts of the benchmark run, one module each. Every part is one function
``run(ctx) -> None`` that adds `Row`s (and plot data) to the shared `Context`; the
registry in `bench.parts.registry` maps part names to those functions, so adding a
part (reconcile drain, terminal) is one function and one registry line.
"""
