"""The conformance suite as pytest collects it: one test module, parametrised by the plugin."""
