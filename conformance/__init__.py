"""The project's own always-on conformance checks (run as `python -m conformance.<check>`)."""
