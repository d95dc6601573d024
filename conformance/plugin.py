"""The pytest plugin: options, markers, fixtures and scenario generation (filled in by the suite)."""
