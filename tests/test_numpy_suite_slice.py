"""A slice of NumPy's own test suite, run by `conformance.numpy_suite` as `make conformance`
runs the whole (issue 23): the runner's pieces, and a few dozen chosen tests of NumPy's
``test_numeric.py`` that NumPy passes and mjnp must pass too (``np.broadcast``, ``nonzero``,
``count_nonzero``), run through the real rewrite, plugin and comparison."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from conformance import numpy_suite as ns

SLICE = (
    "TestBroadcast::test_broadcast_in_args",
    "TestBroadcast::test_broadcast_single_arg",
    "TestBroadcast::test_number_of_arguments",
    "TestBroadcast::test_broadcast_error_kwargs",
    "TestBroadcast::test_shape_mismatch_error_message",
    "TestBroadcast::test_signatures",
    "TestNonzero::test_nonzero_trivial",
    "TestNonzero::test_sparse",
    "TestNonzero::test_array_method",
    "TestNonzero::test_count_nonzero_axis",
    "TestNonzero::test_countnonzero_axis_empty",
    "TestNonzero::test_countnonzero_keepdims",
    "TestNonzero::test_nonzero_float_dtypes",
    "TestNonzero::test_nonzero_integer_dtypes",
)


def test_rewrite_points_the_namespace_under_test_at_mjnp():
    source = (
        "import numpy as np\n"
        "from numpy import (array, dot)\n"
        "import numpy.lib._function_base_impl as nfb\n"
        "from numpy._core.numeric import normalize_axis_tuple\n"
        "from numpy.random import rand\n"
        "from numpy.linalg import norm\n"
        "from numpy.testing import assert_equal\n"
        "    import numpy as np\n"
    )
    rewritten = ns.rewrite_source(source).splitlines()
    assert rewritten == [
        "import conformance._numpy_under_test as np",
        "from conformance._numpy_under_test import (array, dot)",
        "import numpy.lib._function_base_impl as nfb",  # NumPy's internals stay NumPy's
        "from numpy._core.numeric import normalize_axis_tuple",
        "from conformance._numpy_under_test_random import rand",
        "from conformance._numpy_under_test_linalg import norm",
        "from conformance._numpy_under_test_testing import assert_equal",
        "    import conformance._numpy_under_test as np",
    ]


def test_xfail_file_parses_and_needs_reasons(tmp_path: Path):
    entries = ns.read_xfails(ns.XFAILS_FILE)
    assert all(e.reason for e in entries)
    bad = tmp_path / "x.txt"
    bad.write_text("test_numeric.py::TestX::test_y\n")
    with pytest.raises(ValueError, match="has no reason"):
        ns.read_xfails(bad)
    entry = ns.XfailEntry("test_a.py::TestB::test_c[*]", "why")
    assert entry.matches("test_a.py::TestB::test_c[float64-x]")
    assert not entry.matches("test_a.py::TestB::test_cd[f]")
    assert ns.XfailEntry("test_a.py::t[1]", "brackets are literal").matches("test_a.py::t[1]")
    assert not ns.XfailEntry("test_a.py::t[12]", "why").matches("test_a.py::t1")


def test_records_combine_and_compare():
    lines = [
        '{"nodeid": "f.py::a", "when": "setup", "outcome": "passed"}',
        '{"nodeid": "f.py::a", "when": "call", "outcome": "passed"}',
        '{"nodeid": "f.py::a", "when": "teardown", "outcome": "passed"}',
        '{"nodeid": "f.py::b", "when": "setup", "outcome": "passed"}',
        '{"nodeid": "f.py::b", "when": "call", "outcome": "failed", "message": "E"}',
        '{"nodeid": "f.py::c", "when": "setup", "outcome": "failed", "message": "S"}',
        '{"nodeid": "f.py::d", "when": "setup", "outcome": "skipped"}',
    ]
    outcomes, collect_errors = ns.combine_record(lines)
    assert {k: v.outcome for k, v in outcomes.items()} == {
        "f.py::a": "passed",
        "f.py::b": "failed",
        "f.py::c": "error",
        "f.py::d": "skipped",
    }
    assert collect_errors == []
    ref = ns.RunResult({k: ns.TestOutcome("passed") for k in [*outcomes, "f.py::e"]}, 1.0)
    mj = ns.RunResult(outcomes, 3.0, note="stopped at the 1 s file limit")
    row = ns.compare("f.py", mj, ref, [ns.XfailEntry("f.py::b", "a reason")])
    assert (row.counted, row.passed, row.xfailed) == (5, 1, 1)
    assert set(row.missed) == {"f.py::c", "f.py::d", "f.py::e"}
    assert row.missed["f.py::e"][0] == "not run"


def test_slice_of_numpys_test_numeric_passes(tmp_path: Path):
    args = argparse.Namespace(test_timeout=30.0, file_timeout=150.0, quick=False)
    source = ns.NUMPY_ROOT / "_core/tests/test_numeric.py"
    select = [f"test_numeric.py::{t}" for t in SLICE]
    ref = ns.run_copy(source, "numpy", tmp_path, args, select)
    mj = ns.run_copy(source, "mjnp", tmp_path, args, select)
    row = ns.compare(source.name, mj, ref, ns.read_xfails(ns.XFAILS_FILE))
    assert row.counted >= 20, ref.outcomes  # the slice: a few dozen tests NumPy passes
    assert row.missed == {}, row.missed
    assert row.passed == row.counted


@pytest.mark.parametrize(
    "kind, message, cause",
    [
        ("not run", "", "never ran (file time limit)"),
        (
            "failed",
            "TypeError: mjnp.zeros: dtype dtype('O') (from <class 'object'>) is not",
            "object/",
        ),
        ("failed", "TypeError: mjnp.eye: dtype dtype('float128') (from 'g') is not", "longdouble"),
        (
            "failed",
            "AssertionError: Regex pattern did not match. | Expected regex: 'x'",
            "exception",
        ),
        ("failed", "Failed: DID NOT WARN. No warnings of type", "missing warning"),
        ("failed", "AssertionError: | Arrays are not equal", "other"),
    ],
)
def test_missed_tests_are_grouped_by_cause(kind, message, cause):
    assert ns.cause_of(kind, message).startswith(cause)
