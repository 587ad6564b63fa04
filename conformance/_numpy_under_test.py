"""The ``np`` that `conformance.numpy_suite` gives NumPy's rewritten test files: mjnp, plus
NumPy's test infrastructure.

An attribute mjnp has comes from mjnp: that is the namespace under test. The few listed in
`INFRASTRUCTURE` (``np.testing``, NumPy internals, the masked-array and stride-trick helpers
the tests use to *build* inputs or check results) and private names come from NumPy, because
they are how the tests check, not what they check. Anything else mjnp lacks raises
AttributeError, so a test that needs a missing public name fails rather than testing NumPy.
"""

from __future__ import annotations

import numpy as _numpy

import mjnp as _mjnp

#: Public names taken from NumPy itself: test helpers and subclass machinery, not API under test.
INFRASTRUCTURE = frozenset({"testing", "core", "ma", "lib", "typing", "f2py", "ctypeslib"})


def __getattr__(name: str) -> object:
    if hasattr(_mjnp, name):
        return getattr(_mjnp, name)
    if name in INFRASTRUCTURE or name.startswith("_"):
        return getattr(_numpy, name)
    raise AttributeError(f"module 'mjnp' has no attribute {name!r} (NumPy's test asked for it)")


def __dir__() -> list[str]:
    return sorted(set(dir(_mjnp)) | INFRASTRUCTURE)
