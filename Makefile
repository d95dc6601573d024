# The two commands of the README: `make run` (the suite against the bundled reference server,
# reports written) and `make test` (the project's own tests). Each creates .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# The line and branch coverage of conformance/ and reference_server/ under `make test`'s tests
# (pytest-cov, configured in pyproject.toml) may not fall below this floor (docs/guides/develop.md).
# `make coverage` is `make test` measuring it, which CI runs (.ci/run): the tests run once there,
# and the tracer's cost (a fifth of make test's time on CPython 3.11) stays out of a developer's
# `make test`. `make test COVERAGE="$(COVERAGE_ON)"` is the same.
COVERAGE_FLOOR := 75
COVERAGE_ON := --cov --cov-report= --cov-fail-under=$(COVERAGE_FLOOR)
COVERAGE ?=

.PHONY: run test coverage test-not-slow test-slow independent selfcheck selfcheck-full selfcheck-demanding selfcheck-examples lint bench openapi docs release-manifest release-check clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/conformance run

# The project's own checks: lint, format, the layer contracts (ARCHITECTURE.md), types, tests.
# The checks and the tests run side by side (they do not depend on one another; mypy's one
# process fits in the CPU the test workers leave idle while they wait), each one's output kept
# together; either failing fails the target. The tests are in tiers (docs/guides/develop.md,
# "Where a test goes"): make test runs the fast ones (tests/unit, tests/repo, tests/server,
# tests/suite, tests/signing, tests/traffic but their tests marked slow); test-slow runs the
# whole-run tier (tests/runs, every test slow) and the few slow tests of the others; CI runs both
# (.ci/run).
test: $(STAMP)
	$(MAKE) --no-print-directory -j2 --output-sync=target lint test-not-slow

coverage: $(STAMP)
	$(MAKE) --no-print-directory test COVERAGE="$(COVERAGE_ON)"

test-not-slow: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist worksteal -m "not slow" $(COVERAGE) --ignore=tests/runs tests

test-slow: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist worksteal -m slow --durations=15 tests

# The suite against an implementation of interface.md another team wrote (../shared/banks/),
# held to its EXPECTED.md: must failures on exactly its stated breaks, nothing blocked, nothing in
# error (scripts/independent_bank.py; the bank gets a virtual environment of its own).
independent: $(STAMP)
	$(BIN)/python scripts/independent_bank.py

# Each fault on the scenarios that reached its switch in the faithful run (docs/guides/self-check.md);
# selfcheck-full runs every fault on every scenario.
selfcheck: $(STAMP)
	$(BIN)/conformance selfcheck --reports reports/selfcheck

selfcheck-full: $(STAMP)
	$(BIN)/conformance selfcheck --full --reports reports/selfcheck

# The self-check under the strictest bank: every server plays the demanding reading.
selfcheck-demanding: $(STAMP)
	$(BIN)/conformance selfcheck --demanding --reports reports/selfcheck-demanding

# The self-check under every example profile (the reference server playing each bank); the
# examples' environment secrets get demonstration values.
selfcheck-examples: $(STAMP)
	for profile in profiles/examples/*.toml; do \
		EXAMPLE_BANK_CLIENT_ID=demo EXAMPLE_BANK_API_KEY=demo \
		$(BIN)/conformance selfcheck --play $$profile \
			--reports reports/selfcheck-$$(basename $$profile .toml) || exit 1; \
	done

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m bench

openapi: $(STAMP)
	$(BIN)/conformance export-openapi

# The generated references: docs/reference/cli.md from the argparse parsers,
# docs/reference/profile.md from the profile model's field descriptions, and the README's exit-code
# table from conformance/errors.py (tests/repo/test_reference_docs.py keeps them in sync).
docs: $(STAMP)
	$(BIN)/python scripts/reference_docs.py

# The release manifest (conformance/_release.json, shipped in the wheel): the suite version, the
# commit, the contract digest and the SHA-256 of every file the wheel installs; a run holds its
# installed files to it (conformance/report/release.py). From a clean checkout of the release commit.
release-manifest: $(STAMP)
	$(BIN)/python scripts/release_manifest.py

# The release gate: the CI steps (.ci/run), the manifest, the sdist and the wheel (`python -m build`,
# into dist/), `twine check --strict` of both, and the wheel held to its manifest.
release-check: $(STAMP)
	.ci/run
	$(MAKE) --no-print-directory release-manifest
	rm -rf dist
	$(BIN)/python -m build --outdir dist
	$(BIN)/python -m twine check --strict dist/*
	$(BIN)/python scripts/release_manifest.py --check-wheel dist/*.whl

clean:
	rm -rf $(VENV) reports/allure-results reports/allure-report reports/selfcheck reports/junit.xml \
		reports/compliance.* reports/reference-server*.log reports/selfcheck-* reports/identity \
		reports/make-run.log \
		dist conformance/_release.json
