"""Make the conformance plugin active for pytest runs from a checkout.

An installed distribution registers the plugin through its ``pytest11`` entry point under the
name ``conformance.plugin``; pytest skips a ``pytest_plugins`` entry already registered under that
name, so a checkout that is also installed loads the plugin exactly once.
"""

pytest_plugins = ["conformance.plugin"]
