"""Abstract values (`mjcore.core.ShapedArray`): interned, so equal avals are one object and
compare and hash by identity; every way of making one normalises its fields."""

from __future__ import annotations

import copy
import pickle
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.core import ShapedArray

_DTYPES = ("bool", "int8", "int64", "uint16", "float16", "float32", "float64", "complex128")


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(0, 5), max_size=4),
    dtype=st.sampled_from(_DTYPES),
    weak=st.booleans(),
)
def test_equal_fields_give_one_object_whatever_their_spelling(shape, dtype, weak):
    a = ShapedArray(tuple(shape), np.dtype(dtype), weak)
    spellings = [
        ShapedArray(list(shape), dtype, weak),
        ShapedArray(tuple(np.int64(d) for d in shape), getattr(np, dtype), np.bool_(weak)),
        ShapedArray(np.array(shape, dtype=np.int64), np.dtype(dtype).str, int(weak)),
        a.update(),
        pickle.loads(pickle.dumps(a)),
        copy.copy(a),
        copy.deepcopy(a),
    ]
    for b in spellings:
        assert b is a and b == a and hash(b) == hash(a)
    assert all(type(d) is int for d in a.shape)
    assert a.dtype == np.dtype(dtype) and a.weak_type is weak


def test_different_fields_give_different_avals():
    base = ShapedArray((2, 3), np.float32)
    others = [
        ShapedArray((3, 2), np.float32),
        ShapedArray((2, 3), np.float64),
        ShapedArray((2, 3), np.float32, True),
        ShapedArray((2, 3, 1), np.float32),
    ]
    for other in others:
        assert other is not base and other != base
    assert len({base, *others}) == 5


def test_arrays_tracers_and_jaxprs_share_the_interned_avals():
    x = mjnp.ones((2, 3), dtype=mjnp.float32)
    assert x.aval is ShapedArray((2, 3), np.float32)
    jaxpr = mjcore.make_jaxpr(lambda a: mjnp.sin(a) * 2)(x).jaxpr
    assert jaxpr.invars[0].aval is x.aval
    assert jaxpr.eqns[-1].out_binders[0].aval is x.aval


def test_threads_creating_one_new_aval_together_get_the_same_object():
    shape = (7, 11, 13, 17)  # not made anywhere else
    barrier = threading.Barrier(8)
    made: list[ShapedArray] = []

    def make() -> None:
        barrier.wait()
        made.append(ShapedArray(shape, np.complex64, True))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 8 and all(m is made[0] for m in made)


def test_a_shape_that_is_not_integers_is_a_type_error():
    with pytest.raises(TypeError):
        ShapedArray((2.5,), np.float32)
