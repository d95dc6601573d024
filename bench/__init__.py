"""Benchmarks of the harness's hot paths.

Every ``bench/bench_*.py`` module exposes ``main() -> None``; it prints its figures and raises
``SystemExit`` with a non-zero code (or prints ``FAIL``) when a budget is exceeded.
``python -m bench`` runs them all (see ``bench/__main__.py``).
"""
