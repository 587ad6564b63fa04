"""Known gaps in the always-on Array API checks (tests/test_array_api_names.py).

Each entry is a qualified name as in ``conformance.signatures`` (``sum``, ``linalg.svd``,
``Array.device``, ``info.devices``), or for ``VALUES`` a sample's test id, and the reason it
fails today. The test marks those cases ``xfail(strict=True)``, so fixing a gap turns the test
red until its entry is deleted: keep this list honest and short. Suite failures live in
``conformance/xfails.txt`` instead.
"""

from __future__ import annotations

# Names the standard requires that mjnp does not have.
MISSING: dict[str, str] = {}

# Names mjnp has, whose signature does not accept every call the standard allows.
SIGNATURES: dict[str, str] = {}

# Differential samples (by test id: `<name>` or `<name>-<tag>`) that fail although the name
# exists.
VALUES: dict[str, str] = {}
