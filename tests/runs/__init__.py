"""The whole-run tier: tests that read whole runs of the suite (every test here is slow, by
``conftest.py``: `make test-slow`); each run is made once per session (``shared_runs.py``)."""
