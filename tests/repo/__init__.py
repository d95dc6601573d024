"""The repository tier: checks of the checkout's files (README, docs, generated files in sync,
sizes, import borders, packaging; `make test`, the packaging build in `make test-slow`)."""
