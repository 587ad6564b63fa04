"""Multi-device checks of `mjcore.sharding` and sharded jit against JAX (x64), run by
`tests/test_sharding.py` in one subprocess with 8 CPU devices (the test process has one).

Each `check_*` function raises on failure; `main` runs them all and prints one JSON line
{name: null | traceback}. Not collected by pytest itself (no `test_` prefix).
"""

from __future__ import annotations

import json
import os
import re
import sys
import traceback

os.environ["MJCORE_NUM_CPU_DEVICES"] = "8"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402  (the oracle, with the same device count)
import numpy as onp  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax.sharding import NamedSharding as JNamed  # noqa: E402
from jax.sharding import PartitionSpec as JP  # noqa: E402
from jaxlib import xla_client as xc  # noqa: E402

import mjcore  # noqa: E402
import mjnp as np  # noqa: E402
from mjcore.backend import compat  # noqa: E402
from mjcore.sharding import Mesh, NamedSharding, P, SingleDeviceSharding  # noqa: E402

MODES = {"shardy": True, "gspmd": False}  # `jax_use_shardy_partitioner` per run of the checks
MESHES = {
    "2x4": ((2, 4), ("x", "y")),
    "8": ((8,), ("x",)),
    "4x2": ((4, 2), ("a", "b")),
    "2x2x2": ((2, 2, 2), ("x", "y", "z")),
}
SPECS = {
    "2x4": [
        P(),
        P("x"),
        P("y"),
        P("x", "y"),
        P("y", "x"),
        P(None, "y"),
        P(("x", "y")),
        P(("y", "x"), None),
        P(None, ("x", "y")),
    ],
    "8": [P(), P("x"), P(None, "x")],
    "4x2": [P("a"), P("b", "a"), P(None, "b")],
    "2x2x2": [P("x", "z"), P(("z", "x"), "y"), P(None, ("y", "z"))],
}


def _jmesh(shape, axes):
    """JAX's mesh with Auto axes (the kind whose shardings XLA's partitioner propagates)."""
    return jax.make_mesh(shape, axes, axis_types=(jax.sharding.AxisType.Auto,) * len(axes))


def _meshes():
    for name, (shape, axes) in MESHES.items():
        yield name, mjcore.make_mesh(shape, axes), _jmesh(shape, axes)


def _ids_map(m):
    return {d.id: tuple((s.start, s.stop) for s in idx) for d, idx in m.items()}


def check_devices():
    assert mjcore.NamedSharding is NamedSharding and mjcore.P is P  # as jax.NamedSharding, jax.P
    assert mjcore.sharding.Mesh is Mesh and mjcore.make_mesh is mjcore.sharding.make_mesh
    assert mjcore.device_count() == 8 and len(mjcore.devices()) == 8
    assert [d.id for d in mjcore.local_devices()] == list(range(8))
    assert mjcore.process_index() == 0 and mjcore.process_count() == 1


def check_mesh_attributes():
    for _name, m, jm in _meshes():
        assert m.axis_names == jm.axis_names
        assert dict(m.shape) == dict(jm.shape) and list(m.shape) == list(jm.shape)
        assert m.size == jm.size
        onp.testing.assert_array_equal(m.device_ids, jm.device_ids)
        assert m.devices.shape == jm.devices.shape
    devs = mjcore.devices()
    m = Mesh(onp.array(devs).reshape(4, 2), ("a", "b"))
    assert m == Mesh(onp.array(devs).reshape(4, 2), ("a", "b")) and hash(m) == hash(
        Mesh(onp.array(devs).reshape(4, 2), ("a", "b"))
    )
    with m as inner:
        assert mjcore.sharding.current_mesh() is inner
    assert mjcore.sharding.current_mesh() is None


def check_named_sharding_layouts():
    for name, m, jm in _meshes():
        for spec in SPECS[name]:
            ndim = max(2, len(spec))
            shape = (8, 16, 4)[:ndim]
            s, js = NamedSharding(m, spec), JNamed(jm, JP(*spec))
            assert s.shard_shape(shape) == js.shard_shape(shape), (name, spec)
            assert s.is_fully_replicated == js.is_fully_replicated, (name, spec)
            assert _ids_map(s.devices_indices_map(shape)) == _ids_map(
                js.devices_indices_map(shape)
            ), (name, spec)
            assert [d.id for d in s.devices_indices_map(shape)] == [
                d.id for d in js.devices_indices_map(shape)
            ]
            s.devices_indices_map(shape).clear()  # (the maps are cached: each call's own)
            assert _ids_map(s.devices_indices_map(shape)) == _ids_map(js.devices_indices_map(shape))
            assert {d.id for d in s.device_set} == {d.id for d in js.device_set}
            assert s.is_equivalent_to(NamedSharding(m, P(*spec, None, None)), ndim + 2)
            mine = xc.HloSharding.from_string(s._hlo_sharding_text(ndim))
            assert mine == js._to_xla_hlo_sharding(ndim), (name, spec, str(mine))


def check_equivalent_shardings():
    m = mjcore.make_mesh((2, 4), ("x", "y"))
    one = Mesh(onp.array(mjcore.devices()[:1]).reshape(1, 1), ("x", "y"))
    assert NamedSharding(m, P("x")).is_equivalent_to(NamedSharding(m, P("x", None)), 2)
    assert not NamedSharding(m, P("x")).is_equivalent_to(NamedSharding(m, P("y")), 2)
    assert not NamedSharding(m, P("x")).is_equivalent_to(NamedSharding(m, P(None, "x")), 2)
    d0 = SingleDeviceSharding(mjcore.devices()[0])
    assert NamedSharding(one, P("x", "y")).is_equivalent_to(d0, 2)
    assert NamedSharding(m, P("x")) == NamedSharding(m, P("x", None))
    assert hash(NamedSharding(m, P("x"))) == hash(NamedSharding(m, P("x", None)))


def check_single_device_sharding():
    d = mjcore.devices()[3]
    s = SingleDeviceSharding(d)
    assert s.device_set == {d} and s.is_fully_replicated and s.shard_shape((3, 5)) == (3, 5)
    assert s.devices_indices_map((3,)) == {d: (slice(None),)}
    assert s._hlo_sharding_text(2) == "{replicated}"


def _raises(exc, match, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as err:
        assert match in str(err), f"{match!r} not in {err}"
        return str(err)
    raise AssertionError(f"{fn} did not raise {exc.__name__}")


def check_bad_specs():
    m = mjcore.make_mesh((2, 4), ("x", "y"))
    _raises(
        ValueError,
        "Resource axis: z of PartitionSpec('z',) is not found in mesh: ('x', 'y')",
        NamedSharding,
        m,
        P("z"),
    )
    _raises(ValueError, "duplicate entries for `x`", NamedSharding, m, P("x", "x"))
    s = NamedSharding(m, P("y"))
    msg = _raises(ValueError, "dimension 0 should be divisible by 4", s.shard_shape, (6, 8))
    assert "'y'" in msg and "(6, 8)" in msg
    _raises(
        ValueError,
        "only valid for values of rank at least 2",
        NamedSharding(m, P("x", "y")).shard_shape,
        (8,),
    )
    _raises(
        ValueError, "multiply to 6, but there are 8 devices", mjcore.make_mesh, (2, 3), ("a", "b")
    )
    _raises(
        ValueError,
        "must equal the number of axis names",
        Mesh,
        onp.array(mjcore.devices()).reshape(2, 4),
        ("x",),
    )
    _raises(TypeError, "PartitionSpec entries", P, 3)


def _spec(s):
    """A sharding's spec without trailing Nones, in mjcore's form (for JAX's too)."""
    from mjcore.sharding import _normalized

    return _normalized(P(*s.spec))


def _same_layout(a, ja):
    """`a` (mjcore) and `ja` (JAX) have the same values, spec and shards."""
    onp.testing.assert_allclose(onp.asarray(a), onp.asarray(ja), rtol=1e-12, atol=1e-12)
    assert a.shape == ja.shape and a.dtype == ja.dtype, (a.shape, a.dtype, ja.shape, ja.dtype)
    assert _spec(a.sharding) == _spec(ja.sharding), (a.sharding.spec, ja.sharding.spec)
    mine = [(s.device.id, s.index, s.replica_id) for s in a.addressable_shards]
    theirs = [(s.device.id, s.index, s.replica_id) for s in ja.addressable_shards]
    assert sorted(mine, key=str) == sorted(theirs, key=str), (mine, theirs)
    for s in a.addressable_shards:
        onp.testing.assert_allclose(onp.asarray(s.data), onp.asarray(ja)[s.index], rtol=1e-12)


def check_device_put_and_shards():
    x = onp.arange(8 * 16 * 4, dtype=onp.float64).reshape(8, 16, 4)
    for name, m, jm in _meshes():
        for spec in SPECS[name]:
            a = mjcore.device_put(x, NamedSharding(m, spec))
            ja = jax.device_put(x, JNamed(jm, JP(*spec)))
            assert isinstance(a, mjcore.Array) and a.sharding == NamedSharding(m, spec)
            _same_layout(a, ja)
            assert str(a) == str(x) and repr(a) == onp.array_repr(x)
            assert a.is_fully_replicated == ja.is_fully_replicated
            assert a.device == a.sharding and {d.id for d in a.devices()} == {
                d.id for d in ja.devices()
            }
    a = mjcore.device_put(
        onp.int32(7) * onp.ones((4, 8), onp.int32),
        NamedSharding(mjcore.make_mesh((2, 4), ("x", "y")), P(None, "y")),
    )
    assert a.dtype == onp.int32 and int(a.sum()) == 7 * 32
    # an ordinary Array reports its one device
    b = mjcore.device_put(x)
    assert b.sharding == SingleDeviceSharding(mjcore.devices()[0])
    assert [s.index for s in b.addressable_shards] == [(slice(None),) * 3]
    d = mjcore.device_put(x, SingleDeviceSharding(mjcore.devices()[5]))
    assert d.sharding.device_set == {mjcore.devices()[5]}


def check_make_array_from_callback():
    x = onp.arange(64.0).reshape(8, 8)
    for name, m, jm in _meshes():
        for spec in SPECS[name][:3]:
            a = mjcore.make_array_from_callback(x.shape, NamedSharding(m, spec), lambda i: x[i])
            ja = jax.make_array_from_callback(x.shape, JNamed(jm, JP(*spec)), lambda i: x[i])
            _same_layout(a, ja)
    m = mjcore.make_mesh((2, 4), ("x", "y"))
    _raises(
        ValueError,
        "returned shape (8, 8)",
        mjcore.make_array_from_callback,
        x.shape,
        NamedSharding(m, P("x")),
        lambda i: x,
    )


def check_eager_ops_on_sharded_arrays():
    m = mjcore.make_mesh((2, 4), ("x", "y"))
    x = onp.linspace(-2, 2, 32).reshape(8, 4)
    a = mjcore.device_put(x, NamedSharding(m, P("x", "y")))
    onp.testing.assert_allclose(onp.asarray(np.sin(a) * 2 + a), onp.sin(x) * 2 + x, rtol=1e-15)
    onp.testing.assert_allclose(onp.asarray(a.sum(axis=0)), x.sum(axis=0), rtol=1e-14)
    onp.testing.assert_allclose(onp.asarray(a @ a.T), x @ x.T, rtol=1e-14)
    onp.testing.assert_array_equal(onp.asarray(a[2:5, 1]), x[2:5, 1])
    g = mjcore.grad(lambda v: (np.sin(v) ** 2).sum())(a)
    onp.testing.assert_allclose(onp.asarray(g), 2 * onp.sin(x) * onp.cos(x), rtol=1e-14)
    assert float(a[1, 2]) == x[1, 2] and a.tolist() == x.tolist()
    # device= of creation functions and to_device accept a sharding, as in JAX
    jm = _jmesh((2, 4), ("x", "y"))
    for make, jmake in [
        (lambda d: np.zeros((8, 4), device=d), lambda d: jnp.zeros((8, 4), device=d)),
        (lambda d: np.arange(32.0, device=d), lambda d: jnp.arange(32.0, device=d)),
        (lambda d: np.asarray(x, device=d), lambda d: jnp.asarray(x, device=d)),
    ]:
        _same_layout(make(NamedSharding(m, P("x"))), jmake(JNamed(jm, JP("x"))))
    _same_layout(
        np.ones((8, 4)).to_device(NamedSharding(m, P(None, "y"))),
        jnp.ones((8, 4)).to_device(JNamed(jm, JP(None, "y"))),
    )
    d0 = mjcore.devices()[0]
    b = a.to_device(d0)
    assert b.sharding == SingleDeviceSharding(d0) and b.tolist() == x.tolist()
    c = mjcore.device_put(a, mjcore.devices()[2])
    assert c.sharding.device_set == {mjcore.devices()[2]} and c.tolist() == x.tolist()


def _shardy():
    """Whether this run of the checks lowers to Shardy (`main` runs them in both modes)."""
    return mjcore.config.jax_use_shardy_partitioner


def _assert_attr(text, sdy, hlo):
    """The lowered `text` carries the argument sharding `sdy` (Shardy's) or `hlo` (GSPMD's),
    as this mode lowers, and nothing of the other mode."""
    if _shardy():
        assert f"sdy.sharding = {sdy}" in text and "mhlo.sharding" not in text, text
    else:
        assert f'mhlo.sharding = "{hlo}"' in text and "sdy." not in text, text


def _both(fn_m, fn_j, *args_pairs):
    return fn_m(*[p[0] for p in args_pairs]), fn_j(*[p[1] for p in args_pairs])


def _put(x, m, jm, spec):
    return (mjcore.device_put(x, NamedSharding(m, spec)), jax.device_put(x, JNamed(jm, JP(*spec))))


def check_jit_takes_shardings_from_arguments():
    m, jm = mjcore.make_mesh((2, 4), ("x", "y")), _jmesh((2, 4), ("x", "y"))
    rng = onp.random.default_rng(0)
    x, w = rng.normal(size=(8, 16)), rng.normal(size=(16, 4))
    cases = [
        (lambda a: np.sin(a) * 2, lambda a: jnp.sin(a) * 2, [(x, P("x", "y"))]),
        (lambda a: a.sum(axis=1), lambda a: a.sum(axis=1), [(x, P("x", "y"))]),
        (lambda a: a.sum(), lambda a: a.sum(), [(x, P("x", "y"))]),
        (lambda a, b: a @ b, lambda a, b: a @ b, [(x, P("x", None)), (w, P(None, "y"))]),
        (lambda a, b: np.tanh(a @ b), lambda a, b: jnp.tanh(a @ b), [(x, P("x", "y")), (w, P())]),
        (lambda a: a.T, lambda a: a.T, [(x, P("x", "y"))]),
    ]
    # closed-over constants (replicated onto the mesh), Python scalars, NumPy arguments
    cases += [
        (lambda a: a * w.sum() + 1.5, lambda a: a * w.sum() + 1.5, [(x, P("x", "y"))]),
        (lambda a: a @ np.asarray(w), lambda a: a @ jnp.asarray(w), [(x, P(None, "y"))]),
    ]
    for f, jf, specs in cases:
        pairs = [_put(v, m, jm, s) for v, s in specs]
        out, jout = _both(mjcore.jit(f), jax.jit(jf), *pairs)
        _same_layout(out, jout)
        _same_layout(mjcore.jit(f)(*[p[0] for p in pairs]), jout)  # the cached program


def check_jit_in_and_out_shardings():
    m, jm = mjcore.make_mesh((2, 4), ("x", "y")), _jmesh((2, 4), ("x", "y"))
    x = onp.arange(64.0).reshape(8, 8)
    for ins, outs in [(P("x"), P("y")), (P(None, "y"), P("x", "y")), (P(("x", "y")), P())]:
        f = mjcore.jit(
            lambda a: a * 3 + 1,
            in_shardings=NamedSharding(m, ins),
            out_shardings=NamedSharding(m, outs),
        )
        jf = jax.jit(
            lambda a: a * 3 + 1,
            in_shardings=JNamed(jm, JP(*ins)),
            out_shardings=JNamed(jm, JP(*outs)),
        )
        _same_layout(f(x), jf(x))
    # tuples per argument / output, None: from the argument / XLA's choice
    f = mjcore.jit(
        lambda a, b: (a + b, a - b),
        in_shardings=(NamedSharding(m, P("x")), None),
        out_shardings=(None, NamedSharding(m, P(None, "x"))),
    )
    jf = jax.jit(
        lambda a, b: (a + b, a - b),
        in_shardings=(JNamed(jm, JP("x")), None),
        out_shardings=(None, JNamed(jm, JP(None, "x"))),
    )
    for o, jo in zip(f(x, x), jf(x, x), strict=True):
        onp.testing.assert_allclose(onp.asarray(o), onp.asarray(jo))
    o = f(x, x)[1]
    assert _spec(o.sharding) == (None, "x")
    text = (
        mjcore.jit(lambda a: a * 2, in_shardings=NamedSharding(m, P("x", "y"))).lower(x).as_text()
    )
    _assert_attr(text, '#sdy.sharding<@mesh, [{"x"}, {"y"}]>', "{devices=[2,4]0,1,2,3,4,5,6,7}")
    assert "mhlo.num_partitions = 8" in text
    compiled = mjcore.jit(lambda a, b: a @ b).lower(*_put(x, m, jm, P("x"))[:1], x).compile()
    assert [_spec(s) for s in compiled.input_shardings] == [("x",), ()]
    assert [_spec(s) for s in compiled.output_shardings] == [("x",)]


def check_with_sharding_constraint():
    m, jm = mjcore.make_mesh((2, 4), ("x", "y")), _jmesh((2, 4), ("x", "y"))
    x = onp.linspace(-1, 1, 64).reshape(8, 8)
    for spec in [P("x", "y"), P(None, "y"), P(("y", "x")), P()]:

        def f(a, spec=spec):
            return mjcore.lax.with_sharding_constraint(np.sin(a), NamedSharding(m, spec)) * 2

        def jf(a, spec=spec):
            return jax.lax.with_sharding_constraint(jnp.sin(a), JNamed(jm, JP(*spec))) * 2

        _same_layout(mjcore.jit(f)(x), jax.jit(jf)(x))
        # eagerly: lays the value out
        _same_layout(
            mjcore.lax.with_sharding_constraint(x, NamedSharding(m, spec)),
            jax.lax.with_sharding_constraint(x, JNamed(jm, JP(*spec))),
        )
        text = mjcore.jit(f).lower(x).as_text()
        if _shardy():
            assert "sdy.sharding_constraint" in text and "mhlo.sharding" not in text, text
        else:
            assert 'call_target_name = "Sharding"' in text and "mhlo.sharding" in text
    # a bare PartitionSpec under `with mesh:`
    with m:
        out = mjcore.jit(lambda a: mjcore.lax.with_sharding_constraint(a + 1, P("y")))(x)
    assert _spec(out.sharding) == ("y",)
    _raises(ValueError, "needs a mesh", mjcore.lax.with_sharding_constraint, x, P("x"))
    # pytrees: one sharding for all leaves, or one per leaf (None: left alone)
    s1, s2 = NamedSharding(m, P("x")), NamedSharding(m, P(None, "y"))
    out = mjcore.jit(lambda t: mjcore.lax.with_sharding_constraint(t, {"a": s1, "b": None}))(
        {"a": x, "b": x}
    )
    assert _spec(out["a"].sharding) == ("x",)
    out = mjcore.jit(lambda t: mjcore.lax.with_sharding_constraint(t, s2))((x, x))
    assert [_spec(o.sharding) for o in out] == [(None, "y")] * 2
    _raises(ValueError, "2 shardings", mjcore.lax.with_sharding_constraint, [x, x, x], [s1, s2])
    # a constraint to one device only: an ordinary one-device program (run on the default device)
    d3 = mjcore.devices()[3]
    out = mjcore.jit(
        lambda a: mjcore.lax.with_sharding_constraint(a * 2, SingleDeviceSharding(d3))
    )(x)
    onp.testing.assert_array_equal(onp.asarray(out), x * 2)
    _raises(
        ValueError,
        "dimension 1 should be divisible by 4",
        mjcore.jit(
            lambda a: mjcore.lax.with_sharding_constraint(a, NamedSharding(m, P(None, "y")))
        ),
        onp.ones((8, 6)),
    )


def check_grad_of_sharded_programs():
    m, jm = mjcore.make_mesh((2, 4), ("x", "y")), _jmesh((2, 4), ("x", "y"))
    rng = onp.random.default_rng(1)
    x, w = rng.normal(size=(8, 16)), rng.normal(size=(16, 4))

    def loss(w, x, wsc=mjcore.lax.with_sharding_constraint, mod=np, sh=NamedSharding, mm=m, p=P):
        h = wsc(mod.tanh(x @ w), sh(mm, p("x")))
        return (h**2).sum()

    def jloss(w, x):
        return loss(w, x, jax.lax.with_sharding_constraint, jnp, JNamed, jm, JP)

    (xs, jxs), (ws, jws) = _put(x, m, jm, P("x", None)), _put(w, m, jm, P())
    g, jg = mjcore.jit(mjcore.grad(loss))(ws, xs), jax.jit(jax.grad(jloss))(jws, jxs)
    _same_layout(g, jg)
    v, jv = (
        mjcore.jit(mjcore.value_and_grad(loss, argnums=1))(ws, xs),
        jax.jit(jax.value_and_grad(jloss, argnums=1))(jws, jxs),
    )
    onp.testing.assert_allclose(float(v[0]), float(jv[0]), rtol=1e-13)
    _same_layout(v[1], jv[1])
    # eager grad through a constraint, and grad of a sharded jit (finite differences too)
    g2 = mjcore.grad(loss)(w, x)
    onp.testing.assert_allclose(onp.asarray(g2), onp.asarray(jg), rtol=1e-12)
    g3 = mjcore.grad(mjcore.jit(loss))(ws, xs)
    onp.testing.assert_allclose(onp.asarray(g3), onp.asarray(jg), rtol=1e-12)
    eps, e = 1e-6, onp.zeros_like(w)
    e[3, 2] = eps
    fd = (float(loss(w + e, x)) - float(loss(w - e, x))) / (2 * eps)
    onp.testing.assert_allclose(onp.asarray(g2)[3, 2], fd, rtol=1e-6)
    # jvp: the tangent keeps the constraint
    t = rng.normal(size=w.shape)
    p, tan = mjcore.jit(lambda w, t: mjcore.jvp(lambda w: loss(w, x), (w,), (t,)))(w, t)
    jp, jtan = jax.jit(lambda w, t: jax.jvp(lambda w: jloss(w, x), (w,), (t,)))(w, t)
    onp.testing.assert_allclose([float(p), float(tan)], [float(jp), float(jtan)], rtol=1e-12)


def check_vmap_of_sharded_programs():
    m, jm = mjcore.make_mesh((2, 4), ("x", "y")), _jmesh((2, 4), ("x", "y"))
    x = onp.linspace(-1, 1, 3 * 8 * 4).reshape(3, 8, 4)

    def f(a):
        return mjcore.lax.with_sharding_constraint(np.cos(a), NamedSharding(m, P("x", "y"))) + a

    def jf(a):
        return jax.lax.with_sharding_constraint(jnp.cos(a), JNamed(jm, JP("x", "y"))) + a

    _same_layout(mjcore.jit(mjcore.vmap(f))(x), jax.jit(jax.vmap(jf))(x))
    y = onp.moveaxis(x, 0, 2)
    _same_layout(
        mjcore.jit(mjcore.vmap(f, in_axes=2, out_axes=1))(y),
        jax.jit(jax.vmap(jf, in_axes=2, out_axes=1))(y),
    )
    onp.testing.assert_allclose(onp.asarray(mjcore.vmap(f)(x)), onp.cos(x) + x, rtol=1e-14)
    xs, jxs = _put(x, m, jm, P(None, "x"))
    _same_layout(
        mjcore.jit(mjcore.vmap(lambda a: a.sum(axis=0)))(xs),
        jax.jit(jax.vmap(lambda a: a.sum(axis=0)))(jxs),
    )
    # the batch dimension is left to XLA (UNCONSTRAINED, as JAX's rule): split over 'y' here
    ys, jys = _put(onp.linspace(-1, 1, 4 * 8 * 4).reshape(4, 8, 4), m, jm, P("y"))
    c, jc = NamedSharding(m, P("x")), JNamed(jm, JP("x"))
    _same_layout(
        mjcore.jit(mjcore.vmap(lambda a: mjcore.lax.with_sharding_constraint(a * 2, c)))(ys),
        jax.jit(jax.vmap(lambda a: jax.lax.with_sharding_constraint(a * 2, jc)))(jys),
    )


def check_mixed_arguments_and_donation():
    m, jm = mjcore.make_mesh((2, 4), ("x", "y")), _jmesh((2, 4), ("x", "y"))
    x = onp.arange(64.0).reshape(8, 8)
    a, ja = _put(x, m, jm, P("x"))
    for f in (lambda a, b: a + b, lambda a, b: a @ b, lambda a, b: (a * b[0]).sum(axis=0)):
        _same_layout(mjcore.jit(f)(a, x), jax.jit(f)(ja, x))  # a NumPy argument: replicated
        _same_layout(mjcore.jit(f)(a, mjcore.device_put(x)), jax.jit(f)(ja, jax.device_put(x)))
    out = mjcore.jit(lambda a, s: a * s + 2.0)(a, 3)
    _same_layout(out, jax.jit(lambda a, s: a * s + 2.0)(ja, 3))
    b = mjcore.device_put(x, NamedSharding(m, P("x")))
    out = mjcore.jit(lambda v: v * 2, donate_argnums=0)(b)
    assert b.is_deleted() and _spec(out.sharding) == ("x",)
    onp.testing.assert_array_equal(onp.asarray(out), x * 2)
    _raises(RuntimeError, "Array has been deleted", lambda: b + 1)


def check_shape_dtype_struct_with_sharding():
    m, jm = mjcore.make_mesh((2, 4), ("x", "y")), _jmesh((2, 4), ("x", "y"))
    s = NamedSharding(m, P("x", "y"))
    sds = mjcore.ShapeDtypeStruct((8, 4), onp.float32, sharding=s)
    assert sds.sharding is s and sds != mjcore.ShapeDtypeStruct((8, 4), onp.float32)
    text = mjcore.jit(lambda a: a * 2).lower(sds).as_text()
    _assert_attr(text, '#sdy.sharding<@mesh, [{"x"}, {"y"}]>', "{devices=[2,4]0,1,2,3,4,5,6,7}")
    a = mjcore.device_put(onp.ones((8, 4)), s)
    assert mjcore.ShapeDtypeStruct.like(a).sharding == s
    assert mjcore.eval_shape(lambda v: v + 1, sds).shape == (8, 4)
    _raises(
        ValueError,
        "dimension 0 should be divisible by 2",
        mjcore.ShapeDtypeStruct,
        (3, 4),
        onp.float32,
        sharding=s,
    )
    jtext = (
        jax.jit(lambda a: a * 2)
        .lower(jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=JNamed(jm, JP("x", "y"))))
        .as_text()
    )
    assert "mhlo.sharding" in jtext or "sdy.sharding" in jtext


def check_dtypes_and_output_structures():
    m, jm = mjcore.make_mesh((2, 4), ("x", "y")), _jmesh((2, 4), ("x", "y"))
    x = onp.arange(64).reshape(8, 8)
    for v in (x, x.astype(onp.int8), x > 10, x + 1j * x, x.astype(onp.float32)):
        a, ja = _put(v, m, jm, P("x", "y"))
        for f in (lambda a: a, lambda a: a.sum(), lambda a: (a.T, a * 2)):
            o, jo = mjcore.jit(f)(a), jax.jit(f)(ja)
            for p, q in zip(*((o, jo) if isinstance(o, tuple) else ((o,), (jo,))), strict=True):
                _same_layout(p, q)
    assert mjcore.jit(lambda a: ())(a) == ()
    o = mjcore.jit(lambda: np.ones(8), out_shardings=NamedSharding(m, P("y")))()
    assert _spec(o.sharding) == ("y",) and o.tolist() == [1.0] * 8
    o = mjcore.jit(lambda a: {"k": a * 2}, out_shardings={"k": NamedSharding(m, P())})(a)
    assert o["k"].is_fully_replicated
    onp.testing.assert_array_equal(onp.asarray(o["k"]), onp.asarray(v) * 2)


def check_layouts_no_spec_describes():
    """XLA's GSPMD propagation may split an output over part of a mesh axis (here a row of a
    P('x', 'y') array, tiled 4 ways over consecutive device pairs): it comes back as a
    GSPMDSharding with the right shards. (JAX's default Shardy propagation picks P('y') here;
    JAX with GSPMD cannot name this layout at all.)"""
    m = mjcore.make_mesh((2, 4), ("x", "y"))
    x = onp.arange(64.0).reshape(8, 8)
    a = mjcore.device_put(x, NamedSharding(m, P("x", "y")))
    o = mjcore.jit(lambda a: a[0])(a)
    onp.testing.assert_array_equal(onp.asarray(o), x[0])
    assert isinstance(o.sharding, mjcore.sharding.Sharding)
    for shard in o.addressable_shards:
        onp.testing.assert_array_equal(onp.asarray(shard.data), x[0][shard.index])
    # it can be passed on to another sharded program
    onp.testing.assert_array_equal(onp.asarray(mjcore.jit(lambda v: v * 2)(o)), x[0] * 2)
    if isinstance(o.sharding, mjcore.sharding.GSPMDSharding):  # (GSPMD's choice)
        # A layout with no Shardy form: with Shardy on, its programs fall back to GSPMD's
        # attributes (and partitioner), and still compute.
        here = _shardy()
        mjcore.config.update("jax_use_shardy_partitioner", True)
        try:
            text = mjcore.jit(lambda v: v * 3).lower(o).as_text()
            assert "mhlo.sharding" in text and "sdy." not in text, text
            onp.testing.assert_array_equal(onp.asarray(mjcore.jit(lambda v: v * 3)(o)), x[0] * 3)
        finally:
            mjcore.config.update("jax_use_shardy_partitioner", here)


def check_bad_jit_shardings():
    m = mjcore.make_mesh((2, 4), ("x", "y"))
    m2 = Mesh(onp.array(mjcore.devices()[::-1]).reshape(2, 4), ("x", "y"))
    f = mjcore.jit(lambda a: a + 1, in_shardings=NamedSharding(m, P("y")))
    msg = _raises(ValueError, "dimension 0 should be divisible by 4", f, onp.ones((6, 2)))
    assert "(6, 2)" in msg
    a = mjcore.device_put(onp.ones(8), NamedSharding(m, P("x")))
    b = mjcore.device_put(onp.ones(8), NamedSharding(m2, P("x")))
    _raises(ValueError, "incompatible devices", mjcore.jit(lambda a, b: a + b), a, b)
    msg = _raises(
        ValueError,
        "does not match the sharding on the respective arg",
        mjcore.jit(lambda v: v * 2, in_shardings=NamedSharding(m, P("y"))),
        a,
    )
    assert "PartitionSpec('y',)" in msg and "PartitionSpec('x',)" in msg
    # an equivalent layout is accepted
    a2 = mjcore.device_put(onp.ones((8, 4)), NamedSharding(m, P("x")))
    out = mjcore.jit(lambda v: v * 2, in_shardings=NamedSharding(m, P("x", None)))(a2)
    assert _spec(out.sharding) == ("x",)
    _raises(TypeError, "wrap a PartitionSpec", mjcore.jit, lambda a: a, in_shardings=P("x"))


# --- Shardy and GSPMD: what is emitted, what XLA prints, and that both agree with JAX ------


def _stderr_of(fn):
    """What `fn()` writes to file descriptor 2 (XLA's C++ logging goes there, not through
    `sys.stderr`)."""
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            fn()
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode(errors="replace")


def check_meshes_of_one_program():
    """Device order and axis names reach XLA: a mesh over the devices reversed, with an axis
    name that needs quoting, lays its results out as JAX's; a constraint over another mesh
    of the same devices adds a second mesh declaration."""
    x = onp.arange(64.0).reshape(8, 8)
    axes = ('we"ird', "b")
    m = Mesh(onp.array(mjcore.devices()[::-1]).reshape(4, 2), axes)
    jm = jax.sharding.Mesh(onp.array(jax.devices()[::-1]).reshape(4, 2), axes)
    a, ja = _put(x, m, jm, P('we"ird'))
    _same_layout(mjcore.jit(lambda v: v @ v.T)(a), jax.jit(lambda v: v @ v.T)(ja))
    m2, m8 = mjcore.make_mesh((2, 4), ("x", "y")), mjcore.make_mesh((8,), ("a",))
    b = mjcore.device_put(x, NamedSharding(m2, P("x", "y")))
    f = mjcore.jit(lambda v: mjcore.lax.with_sharding_constraint(v * 2, NamedSharding(m8, P("a"))))
    text = f.lower(b).as_text()
    if _shardy():
        assert '#sdy.mesh<["x"=2, "y"=4]>, sym_name = "mesh"}' in text, text
        assert '#sdy.mesh<["a"=8]>, sym_name = "mesh_1"}' in text, text
        assert '#sdy.sharding<@mesh_1, [{"a"}, {}]>' in text, text
        assert (
            '#sdy.sharding<@mesh, [{"we\\"ird"}, {}]>' in mjcore.jit(lambda v: v).lower(a).as_text()
        )
    o = f(b)
    onp.testing.assert_array_equal(onp.asarray(o), x * 2)
    assert o.sharding.is_equivalent_to(NamedSharding(m8, P("a")), 2), o.sharding


def check_no_gspmd_deprecation_warning():
    """A sharded compile (arguments, a constraint, a shard_map) prints no GSPMD deprecation
    warning with Shardy; with GSPMD it does (so the capture sees XLA's logging)."""
    m = mjcore.make_mesh((2, 4), ("x", "y"))
    a = mjcore.device_put(onp.ones((8, 8)), NamedSharding(m, P("x", "y")))
    body = mjcore.shard_map(
        lambda v: mjcore.lax.psum(v, "x"), mesh=m, in_specs=P("x", "y"), out_specs=P(None, "y")
    )

    def fresh_programs():  # (new functions: compiled here, not found in a cache)
        onp.asarray(mjcore.jit(lambda v: np.tanh(v @ v.T))(a))
        c = NamedSharding(m, P("y", P.UNCONSTRAINED))
        onp.asarray(mjcore.jit(lambda v: mjcore.lax.with_sharding_constraint(v + 1, c))(a))
        onp.asarray(mjcore.jit(lambda v: body(v * 3))(a))

    err = _stderr_of(fresh_programs)
    warned = "GSPMD sharding propagation is going to be deprecated" in err
    if _shardy():
        assert not warned, err
    elif compat.JAXLIB < (0, 12):  # (jaxlib 0.12's XLA warns once per process: maybe before)
        assert warned, err


def _sdy_shardings(text):
    """The `<@mesh, [dims]>` tensor shardings of a module, in order (arguments, results,
    constraints, manual computations), and its mesh declarations' axes."""
    shardings = re.findall(r"<@(\w+), \[([^\]]*)\]>", text)
    meshes = re.findall(r"(?:sdy\.mesh @\w+ = <|#sdy\.mesh<)(\[[^\]]*\])>", text)
    return shardings, meshes


def _lowering_cases(m, jm):
    """(name, mjcore function, JAX function, argument specs): a sharded matmul, replicated
    and partially replicated arguments, constraints (with an UNCONSTRAINED dimension) and a
    shard_map with psum/all_gather/ppermute inside."""

    def S(spec):
        return NamedSharding(m, spec)

    def JS(spec):  # (mjcore's UNCONSTRAINED as JAX's)
        return JNamed(jm, JP(*[JP.UNCONSTRAINED if p is P.UNCONSTRAINED else p for p in spec]))

    wsc, jwsc = mjcore.lax.with_sharding_constraint, jax.lax.with_sharding_constraint
    U = P.UNCONSTRAINED

    def sm_body(lax):
        def body(a):
            perm = [(i, (i + 1) % 2) for i in range(2)]
            s = lax.psum(a, "x")
            g = lax.all_gather(a, "y", axis=1, tiled=True)
            return s, g, lax.ppermute(a, "x", perm)

        return body

    sm_specs = dict(in_specs=P("x", "y"), out_specs=(P(None, "y"), P("x"), P("x", "y")))
    sm = mjcore.shard_map(sm_body(mjcore.lax), mesh=m, **sm_specs)
    jsm_specs = dict(
        in_specs=JP("x", "y"), out_specs=(JP(None, "y"), JP("x"), JP("x", "y")), check_vma=False
    )
    return [
        (
            "matmul",
            mjcore.jit(lambda a, b: a @ b, out_shardings=S(P("x", "y"))),
            jax.jit(lambda a, b: a @ b, out_shardings=JS(P("x", "y"))),
            [P("x", None), P(None, "y")],
        ),
        (
            "replicated",
            mjcore.jit(lambda a, b: a * b + 1),
            jax.jit(lambda a, b: a * b + 1),
            [P(), P("x")],  # replicated, and split over x while replicated over y
        ),
        (
            "constraint",
            mjcore.jit(lambda a, b: wsc(np.sin(a) @ b, S(P("y", U))) * 2),
            jax.jit(lambda a, b: jwsc(jnp.sin(a) @ b, JS(P("y", U))) * 2),
            [P("x"), P()],
        ),
        (
            "partial_constraint",
            mjcore.jit(lambda a, b: wsc(a + b, S(P(None, ("y", "x")))) - 1),
            jax.jit(lambda a, b: jwsc(a + b, JS(P(None, ("y", "x")))) - 1),
            [P("x", "y"), P("y")],
        ),
        (
            "shard_map",
            mjcore.jit(lambda a, b: sm(a + b)),
            jax.jit(lambda a, b: jax.shard_map(sm_body(jax.lax), mesh=jm, **jsm_specs)(a + b)),
            [P("x", "y"), P("x", "y")],
        ),
    ]


def check_lowered_sharding_attributes():
    """Shardy: the module declares the mesh (`sdy.mesh`) and carries JAX's tensor shardings
    (`sdy.sharding`, constraints, `sdy.manual_computation` with manual axes), no GSPMD
    attribute; GSPMD: `mhlo.sharding` attributes and no `sdy` op."""
    m, jm = mjcore.make_mesh((2, 4), ("x", "y")), _jmesh((2, 4), ("x", "y"))
    x = onp.linspace(-1, 1, 64).reshape(8, 8)
    for name, f, jf, specs in _lowering_cases(m, jm):
        args = [_put(x, m, jm, spec) for spec in specs]
        text = f.lower(*[a for a, _ in args]).as_text()
        jtext = jf.lower(*[ja for _, ja in args]).as_text()
        if not _shardy():
            assert "mhlo.sharding" in text and "sdy." not in text, (name, text)
            continue
        assert "mhlo.sharding" not in text and "custom_call" not in text, (name, text)
        assert '"sdy.mesh"() {mesh = #sdy.mesh<["x"=2, "y"=4]>, sym_name = "mesh"}' in text
        assert text.count("sdy.sharding = #sdy.sharding<@mesh") == len(specs) + (name == "matmul")
        mine, meshes = _sdy_shardings(text)
        theirs, jmeshes = _sdy_shardings(jtext)
        # (JAX may declare one mesh twice, under two names, as jax 0.12 does for shard_map)
        assert meshes == ['["x"=2, "y"=4]'] and set(jmeshes) == set(meshes), (meshes, jmeshes)
        mine, theirs = [d for _, d in mine], [d for _, d in theirs]
        if name == "shard_map":  # (ours adds the jit's constraints around it: compare it alone)
            line = next(ln for ln in text.splitlines() if "manual_axes" in ln)
            jline = next(ln for ln in jtext.splitlines() if "sdy.manual_computation" in ln)
            dims = [[d for _, d in _sdy_shardings(t)[0]] for t in (line, jline)]
            assert dims[0] == dims[1], (line, jline)
            assert 'manual_axes = #sdy<manual_axes{"x", "y"}>' in line
            assert 'manual_axes={"x", "y"}' in jline
            assert "sdy.manual_computation" in text and "SPMDFullToShardShape" not in text
        else:
            assert mine == theirs, (name, mine, theirs, text, jtext)
        if "constraint" in name:
            assert "sdy.sharding_constraint" in text, text
        if name == "constraint":  # the UNCONSTRAINED dimension is open
            assert '#sdy.sharding<@mesh, [{"y"}, {?}]>' in text, text


def check_partitioners_agree():
    """The cases above give the same values, shards and output shardings with Shardy and
    with GSPMD, and as JAX's (Shardy)."""
    m, jm = mjcore.make_mesh((2, 4), ("x", "y")), _jmesh((2, 4), ("x", "y"))
    x = onp.linspace(-1, 1, 64).reshape(8, 8)
    here = _shardy()
    got = {}
    try:
        for on in (True, False):
            mjcore.config.update("jax_use_shardy_partitioner", on)
            got[on] = []
            for _name, f, _, specs in _lowering_cases(m, jm):
                out = f(*[_put(x, m, jm, spec)[0] for spec in specs])
                got[on].append(out if isinstance(out, tuple) else (out,))
    finally:
        mjcore.config.update("jax_use_shardy_partitioner", here)
    for i, (name, _, jf, specs) in enumerate(_lowering_cases(m, jm)):
        jout = jf(*[_put(x, m, jm, spec)[1] for spec in specs])
        jout = jout if isinstance(jout, tuple) else (jout,)
        for o, g, jo in zip(got[True][i], got[False][i], jout, strict=True):
            _same_layout(o, jo)
            _same_layout(g, jo)
            assert o.sharding == g.sharding, (name, o.sharding, g.sharding)
    # a one-device constraint inside a partitioned program: replicated over its mesh
    d0 = SingleDeviceSharding(mjcore.devices()[0])
    f = mjcore.jit(lambda a: mjcore.lax.with_sharding_constraint(a * 2, d0) + 1)
    a = _put(x, m, jm, P("x", "y"))[0]
    outs = []
    try:
        for on in (True, False):
            mjcore.config.update("jax_use_shardy_partitioner", on)
            text = f.lower(a).as_text()
            assert ("[{}, {}]>" if on else "{replicated}") in text, text
            outs.append(f(a))
    finally:
        mjcore.config.update("jax_use_shardy_partitioner", here)
    for o in outs:
        onp.testing.assert_array_equal(onp.asarray(o), x * 2 + 1)
    assert outs[0].sharding == outs[1].sharding, (outs[0].sharding, outs[1].sharding)
    # eagerly an UNCONSTRAINED dimension stays whole, as in JAX
    for spec in [P("y", P.UNCONSTRAINED), P(P.UNCONSTRAINED, "x")]:
        jspec = JP(*[JP.UNCONSTRAINED if p is P.UNCONSTRAINED else p for p in spec])
        a, ja = _put(x, m, jm, P("x", "y"))
        _same_layout(
            mjcore.lax.with_sharding_constraint(a, NamedSharding(m, spec)),
            jax.lax.with_sharding_constraint(ja, JNamed(jm, jspec)),
        )
    # UNCONSTRAINED is for constraints: jit's own shardings fix a layout
    _raises(
        ValueError,
        "cannot leave a dimension UNCONSTRAINED",
        mjcore.jit(lambda a: a, out_shardings=NamedSharding(m, P(P.UNCONSTRAINED))),
        x,
    )
    assert repr(P("x", P.UNCONSTRAINED)) == "PartitionSpec('x', UNCONSTRAINED)"


def main(names: list[str]) -> None:
    """Run the checks once per partitioner (results `check_x[shardy]`, `check_x[gspmd]`)."""
    results = {}
    checks = {n: f for n, f in globals().items() if n.startswith("check_")}
    for mode, on in MODES.items():
        mjcore.config.update("jax_use_shardy_partitioner", on)
        for name in names or list(checks):
            try:
                checks[name]()
                results[f"{name}[{mode}]"] = None
            except Exception:  # noqa: BLE001  (reported to the test process)
                results[f"{name}[{mode}]"] = traceback.format_exc()
    print("RESULTS " + json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
