"""Known gaps in the always-on Array API checks (tests/test_array_api_names.py).

Each entry is a qualified name as in ``conformance.signatures`` (``sum``, ``linalg.svd``,
``Array.device``, ``info.devices``), or for ``VALUES`` a sample's test id, and the reason it
fails today. The test marks those cases ``xfail(strict=True)``, so fixing a gap turns the test
red until its entry is deleted: keep this list honest and short. Suite failures live in
``conformance/xfails.txt`` instead.
"""

from __future__ import annotations

_NOT_YET = "not implemented in mjnp yet"
_INFO = "mjnp has no __array_namespace_info__ yet"

# Names the standard requires that mjnp does not have.
MISSING: dict[str, str] = {
    "__array_api_version__": _NOT_YET,
    "__array_namespace_info__": _INFO,
    "info.capabilities": _INFO,
    "info.default_device": _INFO,
    "info.default_dtypes": _INFO,
    "info.devices": _INFO,
    "info.dtypes": _INFO,
    "Array.device": "Array has no .device attribute yet",
    "Array.to_device": "Array has no .to_device method yet",
}

_NUMPY_SORT = "follows NumPy 2.4, whose sort/argsort have no `descending` keyword"
_NUMPY_FREQ = "follows NumPy 2.4, whose fftfreq/rfftfreq have no `dtype` keyword"

# Names mjnp has, whose signature does not accept every call the standard allows.
SIGNATURES: dict[str, str] = {
    "argsort": _NUMPY_SORT,
    "sort": _NUMPY_SORT,
    "fft.fftfreq": _NUMPY_FREQ,
    "fft.rfftfreq": _NUMPY_FREQ,
}

# Differential samples (by test id: `<name>` or `<name>-<tag>`) that fail although the name
# exists.
VALUES: dict[str, str] = {
    "argsort-descending": _NUMPY_SORT,
    "sort-descending": _NUMPY_SORT,
}
