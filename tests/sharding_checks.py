"""Multi-device checks of `mjcore.sharding` and sharded jit against JAX (x64), run by
`tests/test_sharding.py` in one subprocess with 8 CPU devices (the test process has one).

Each `check_*` function raises on failure; `main` runs them all and prints one JSON line
{name: null | traceback}. Not collected by pytest itself (no `test_` prefix).
"""

from __future__ import annotations

import json
import os
import sys
import traceback

os.environ["MJCORE_NUM_CPU_DEVICES"] = "8"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402  (the oracle, with the same device count)
import numpy as onp  # noqa: E402

jax.config.update("jax_enable_x64", True)
from jax.sharding import NamedSharding as JNamed  # noqa: E402
from jax.sharding import PartitionSpec as JP  # noqa: E402
from jaxlib import xla_client as xc  # noqa: E402

import mjcore  # noqa: E402
from mjcore.sharding import Mesh, NamedSharding, P, SingleDeviceSharding  # noqa: E402

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


def _meshes():
    for name, (shape, axes) in MESHES.items():
        yield name, mjcore.make_mesh(shape, axes), jax.make_mesh(shape, axes)


def _ids_map(m):
    return {d.id: tuple((s.start, s.stop) for s in idx) for d, idx in m.items()}


def check_devices():
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
            assert {d.id for d in s.device_set} == {d.id for d in js.device_set}
            mine = xc.HloSharding.from_string(s._hlo_sharding_text(ndim))
            assert mine == js._to_xla_hlo_sharding(ndim), (name, spec, str(mine))


def check_single_device_sharding():
    d = mjcore.devices()[3]
    s = SingleDeviceSharding(d)
    assert s.device_set == {d} and s.is_fully_replicated and s.shard_shape((3, 5)) == (3, 5)
    assert s.devices_indices_map((3,)) == {d: (slice(None),)}
    assert s._hlo_sharding_text(2) == "{replicated}"


def _raises(exc, match, fn, *args):
    try:
        fn(*args)
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


def main(names: list[str]) -> None:
    results = {}
    checks = {n: f for n, f in globals().items() if n.startswith("check_")}
    for name in names or list(checks):
        try:
            checks[name]()
            results[name] = None
        except Exception:  # noqa: BLE001  (reported to the test process)
            results[name] = traceback.format_exc()
    print("RESULTS " + json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
