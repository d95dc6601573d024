"""The unit tier: in-process tests of the suite's modules and commands (seconds each; `make
test`)."""
