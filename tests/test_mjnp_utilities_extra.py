"""mjnp's asfortranarray (values, dtype, ndmin 1, jit; mjnp/_creation.py), isnat (NumPy's
TypeError for every mjnp dtype; _logic.py), show_runtime (_utilities.py) and fromregex (_io.py)
against NumPy."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given

import mjcore
import mjnp
from mjcore.array import Array
from tests.differential_registry import differential
from tests.mjnp_testing import ALL_DTYPES, SETTINGS, arrays, assert_matches, shapes


@differential("asfortranarray")
@SETTINGS
@given(x=arrays(shape=shapes(max_dims=3)))
def test_asfortranarray_matches_numpy(x):
    assert_matches(mjnp.asfortranarray(x), np.asfortranarray(x))
    assert_matches(mjnp.asfortranarray(mjnp.asarray(x), "float32"), np.asfortranarray(x, "float32"))


def test_asfortranarray_under_jit_and_of_python_scalars():
    assert_matches(
        mjcore.jit(mjnp.asfortranarray)(np.float32(2.0)), np.asfortranarray(np.float32(2))
    )
    assert_matches(mjnp.asfortranarray(3), np.asfortranarray(3))
    assert_matches(mjnp.asfortranarray([[1, 2]], dtype=float), np.asfortranarray([[1, 2]], float))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_isnat_raises_numpys_type_error_for_every_dtype(dtype):
    x = np.zeros(2, dtype)
    with pytest.raises(TypeError, match="only defined for np.datetime64"):
        np.isnat(x)
    with pytest.raises(
        TypeError, match="mjnp.isnat: ufunc 'isnat' is only defined for np.datetime64"
    ):
        mjnp.isnat(mjnp.asarray(x))


def test_show_runtime_reports_versions_and_devices(capsys):
    assert mjnp.show_runtime() is None
    out = capsys.readouterr().out
    for needle in ("numpy_version", np.__version__, "jaxlib_version", "python", "devices"):
        assert needle in out


_TEXT = "1312 foo\n1534  bar\n444   qux\n"


@pytest.mark.parametrize("dtype", [[("num", np.int64)], [("num", np.float32)], "i8,"])
def test_fromregex_single_field_is_numpys_field(tmp_path, dtype):
    path = tmp_path / "data.txt"
    path.write_text(_TEXT)
    expected = np.fromregex(path, r"(\d+)\s+...", dtype)
    name = expected.dtype.names[0]
    for source in (path, str(path), io.StringIO(_TEXT)):
        out = mjnp.fromregex(source, r"(\d+)\s+...", dtype)
        assert isinstance(out, Array)
        assert_matches(out, expected[name])


@pytest.mark.parametrize(
    ("dtype", "match"),
    [
        (np.int64, "structured"),  # NumPy's own TypeError
        ([("num", np.int64), ("key", "S3")], "single field"),
        ([("key", "U3")], "U3"),
        ([("pair", np.int64, (2,))], "cannot hold"),
    ],
)
def test_fromregex_raises_for_what_mjnp_cannot_hold(dtype, match):
    with pytest.raises(TypeError, match=match):
        mjnp.fromregex(io.StringIO(_TEXT), r"(\d+)\s+(...)", dtype)
    if np.dtype(dtype).names is None:
        with pytest.raises(TypeError):
            np.fromregex(io.StringIO(_TEXT), r"(\d+)\s+(...)", dtype)
