"""Which mjnp functions have a Hypothesis differential test against NumPy.

A test declares the functions it covers with `@differential(...)`, written above its other
decorators:

    @differential("sum", "prod", "linalg.norm")
    @SETTINGS
    @given(...)
    def test_reductions_match_numpy(...): ...

Names are NumPy's public names, qualified by namespace for the submodules (`"linalg.solve"`,
`"fft.rfft"`), as `conformance.coverage` counts them. Declare a name only when the test draws
random inputs for that function and checks mjnp's dtype, shape and values against NumPy's (or
NumPy's exception type): `tests/test_differential_coverage.py` trusts the declaration, and
fails for every implemented function that nobody declares.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

Test = TypeVar("Test", bound=Callable[..., Any])

# qualified function name -> ids ("module::test") of the tests that declare it
COVERED: dict[str, set[str]] = {}


def differential(*names: str) -> Callable[[Test], Test]:
    """Declare that the decorated Hypothesis test checks `names` against NumPy."""
    if not names:
        raise ValueError("differential: name at least one function the test covers")

    def register(test: Test) -> Test:
        if not getattr(test, "is_hypothesis_test", False):
            raise TypeError(
                f"differential: {test.__name__} is not a Hypothesis test; put "
                "@differential(...) above @given(...)"
            )
        for name in names:
            COVERED.setdefault(name, set()).add(f"{test.__module__}::{test.__name__}")
        return test

    return register
