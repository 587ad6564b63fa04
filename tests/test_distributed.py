"""Many processes (issue 22): `mjcore.distributed` joins two processes on localhost, with two
CPU devices each, into one 4-device program; XLA's collectives run over gloo between them.

The two processes (and one that finds no coordinator) run as subprocesses, started together;
each reports its observations as one JSON line, checked here against NumPy. The processes that
start backends are fresh ones: this test process has long started its own.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as onp
import pytest

import mjcore
from mjcore import distributed

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120  # seconds per subprocess; together they normally take a few seconds


# Global arrays from process-local data over several meshes and specs, in mjcore or in JAX
# (`fw`, `fnp`, `Mesh`, `NamedSharding`, `P` and `devices` are set by the caller): per case,
# the global shape, this process's shards (device id, index, values) and a jitted total.
_CASES = """
    def cases(pid):
        grid = (onp.arange(64, dtype=onp.float32).reshape(8, 8) - 7) / 8
        d = onp.empty(4, dtype=object)
        d[:] = devices
        line, square = Mesh(d, ("x",)), Mesh(d.reshape(2, 2), ("p", "d"))
        crossed = Mesh(d.reshape(2, 2).T, ("a", "b"))  # axis 'b' across the processes
        found = []
        for mesh, spec, local, global_shape in [
            (line, P("x"), grid[4 * pid : 4 * pid + 4], None),
            (line, P("x"), grid[4 * pid : 4 * pid + 4], (8, 8)),
            (line, P(None, "x"), grid[:, 4 * pid : 4 * pid + 4], None),
            (line, P(), grid, None),
            (square, P("p", "d"), grid[4 * pid : 4 * pid + 4], None),
            (square, P(None, "p"), grid[:, 4 * pid : 4 * pid + 4], None),
            (square, P("d"), grid, None),
            (square, P(("p", "d")), grid[4 * pid : 4 * pid + 4], None),
            (square, P("d", "p"), grid[:4, 4 * pid : 4 * pid + 4], (4, 8)),
            (crossed, P("b", "a"), grid[4 * pid : 4 * pid + 4], None),
            (crossed, P("a"), grid, None),
        ]:
            x = fw.make_array_from_process_local_data(NamedSharding(mesh, spec), local,
                                                      global_shape)
            shards = sorted(
                [s.device.id, [[i.start, i.stop] for i in s.index],
                 onp.asarray(s.data).tolist()] for s in x.addressable_shards)
            total = float(onp.asarray(fw.jit(lambda t: fnp.sum(t * t))(x)))
            found.append([list(x.shape), shards, total])
        x = fw.make_array_from_process_local_data(NamedSharding(line, P("x")), grid[:4])
        found.append([repr(x), str(x)])  # other processes hold the rest: a summary
        # multihost_utils: gathers, a broadcast, a barrier, an equality check
        def show(a):
            return [onp.asarray(a).tolist(), str(onp.asarray(a).dtype)]
        mine = onp.array([pid, 10 * pid], dtype=onp.int32)
        found.append([
            show(mh.process_allgather(mine)),
            show(mh.process_allgather(mine, tiled=True)),
            show(mh.process_allgather(onp.float32(pid) / 4)),
            show(mh.process_allgather({"a": onp.ones((2, 2)) * pid})["a"]),
            show(mh.process_allgather(x, tiled=True)),
            show(mh.broadcast_one_to_all(onp.arange(3.0) + pid)),
            show(mh.broadcast_one_to_all(onp.arange(3) + pid, is_source=pid == 1)),
        ])
        mh.sync_global_devices("cases")
        try:
            mh.assert_equal(onp.array([pid]), "processes differ")
            found.append(None)
        except AssertionError as err:
            found.append(str(err).split(".")[0])
        try:
            mh.process_allgather(x)
            found.append(None)
        except ValueError as err:
            found.append(type(err).__name__)
        try:
            fw.make_array_from_process_local_data(NamedSharding(line, P("x")), grid[:3], (8, 8))
            found.append(None)
        except ValueError as err:
            found.append(type(err).__name__)
        return found
"""

# One process of two: joins, reports its devices, runs programs over all four devices.
_WORKER = (
    _CASES
    + """
    import json, sys
    import numpy as onp
    pid, port = int(sys.argv[1]), sys.argv[2]
    from mjcore.backend import client
    client.set_cpu_device_count(2)
    import mjcore
    import mjnp
    from mjcore import distributed
    from mjcore.backend import compat

    distributed.initialize(f"localhost:{port}", 2, pid, initialization_timeout=60)
    out = {"initialized": distributed.is_initialized()}
    try:
        distributed.initialize(f"localhost:{port}", 2, pid)
    except RuntimeError as err:
        out["twice"] = str(err)
    out["process_index"] = mjcore.process_index()
    out["process_count"] = mjcore.process_count()
    out["device_count"] = mjcore.device_count()
    out["local_device_count"] = mjcore.local_device_count()
    devices = mjcore.devices()
    out["devices"] = [[d.id, d.process_index] for d in devices]
    out["local"] = [d.id for d in mjcore.local_devices()]
    out["local_of"] = [[d.id for d in mjcore.local_devices(p)] for p in range(2)]
    out["eager_sum"] = float(mjcore.jit(mjnp.sum)(mjnp.arange(5.0)))

    b = client.get_backend()
    b_devices = b.devices
    mine = [devices.index(d) for d in b.devices]  # this process's partitions

    def put(host):
        return [client.device_put(onp.ascontiguousarray(host[i]), d)
                for i, d in zip(mine, b.devices)]

    # SPMD: a global f32[8,3] split by rows over the 4 devices; XLA partitions the sum (and
    # adds the all-reduce that gloo carries between the processes).
    text = '''module @spmd attributes {mhlo.num_partitions = 4 : i32,
                                  mhlo.num_replicas = 1 : i32} {
      func.func public @main(%x: tensor<8x3xf32> {mhlo.sharding = "{devices=[4,1]0,1,2,3}"})
          -> (tensor<f32> {mhlo.sharding = "{replicated}"},
              tensor<8x3xf32> {mhlo.sharding = "{devices=[4,1]0,1,2,3}"}) {
        %zero = stablehlo.constant dense<0.0> : tensor<f32>
        %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0, 1]
            : (tensor<8x3xf32>, tensor<f32>) -> tensor<f32>
        %y = stablehlo.multiply %x, %x : tensor<8x3xf32>
        return %s, %y : tensor<f32>, tensor<8x3xf32>
      }
    }'''
    data = (onp.arange(24, dtype=onp.float32).reshape(8, 3) - 5) / 4
    assignment = onp.array([devices], dtype=object)
    exe = compat.compile_for_devices(b.client, text, assignment, spmd=True)
    aval = client._HostAval((8, 3), onp.dtype(onp.float32))
    arg = compat.multi_device_array(
        aval, devices, "{devices=[4,1]0,1,2,3}", put(data.reshape(4, 2, 3)))
    totals, squares = compat.execute_for_devices(exe, [arg])
    out["spmd_totals"] = [float(client.to_numpy(t)) for t in totals]
    out["spmd_squares"] = [client.to_numpy(s).tolist() for s in squares]
    out["spmd_devices"] = [client.buffer_device(t).id for t in totals]

    # Replicas: one value per device, summed over all four by an explicit all-reduce.
    text = '''module @replicas attributes {mhlo.num_partitions = 1 : i32,
                                      mhlo.num_replicas = 4 : i32} {
      func.func public @main(%x: tensor<2xi32>) -> tensor<2xi32> {
        %r = "stablehlo.all_reduce"(%x) ({
          ^bb0(%a: tensor<i32>, %b: tensor<i32>):
            %c = stablehlo.add %a, %b : tensor<i32>
            stablehlo.return %c : tensor<i32>
        }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}
          : (tensor<2xi32>) -> tensor<2xi32>
        return %r : tensor<2xi32>
      }
    }'''
    per_device = onp.array([[1, 10], [2, 20], [3, 30], [4, 40]], dtype=onp.int32) ** 2
    exe = compat.compile_for_devices(b.client, text, assignment.T, spmd=False)
    aval = client._HostAval((8,), onp.dtype(onp.int32))
    arg = compat.multi_device_array(aval, devices, "{devices=[4]0,1,2,3}", put(per_device))
    (sums,) = compat.execute_for_devices(exe, [arg])
    out["allreduce"] = [client.to_numpy(s).tolist() for s in sums]

    # Global arrays from process-local data, and jit over them (XLA's SPMD partitioner).
    from mjcore.sharding import NamedSharding, PartitionSpec as P

    mesh = mjcore.make_mesh((4,), ("x",))
    rows = NamedSharding(mesh, P("x"))
    x = mjcore.make_array_from_process_local_data(rows, data[4 * pid : 4 * pid + 4])
    x2 = mjcore.make_array_from_process_local_data(rows, data[4 * pid : 4 * pid + 4], (8, 3))
    out["global_shape"] = [list(x.shape), list(x2.shape), str(x.dtype)]
    out["fully_addressable"] = [x.is_fully_addressable, x.sharding.is_fully_addressable]
    out["shards"] = [[sh.device.id, [[i.start, i.stop] for i in sh.index],
                      onp.asarray(sh.data).tolist()] for sh in x.addressable_shards]
    total = mjcore.jit(mjnp.sum)(x)
    out["jit_total"] = [float(onp.asarray(total)), str(total.sharding.spec)]
    out["jit_total2"] = float(onp.asarray(mjcore.jit(mjnp.sum)(x2)))
    g = mjcore.jit(mjcore.grad(lambda x: mjnp.sum(mjnp.sin(x) * x)))(x)
    out["grad_shards"] = [onp.asarray(sh.data).tolist() for sh in g.addressable_shards]
    try:
        onp.asarray(g)
    except RuntimeError as err:
        out["gather_error"] = str(err)
    whole = mjcore.jit(lambda x: x * 2, out_shardings=NamedSharding(mesh, P()))(x)
    out["replicated_whole"] = onp.asarray(whole).tolist()
    try:
        mjcore.make_array_from_process_local_data(rows, data[:3], (8, 3))
    except ValueError as err:
        out["bad_local_shape"] = str(err)
    try:
        mjcore.make_array_from_process_local_data(rows, data[:3])  # global (6, 3): 4 ∤ 6
    except ValueError as err:
        out["bad_inferred_shape"] = str(err)
    try:
        mjcore.device_put(onp.ones(2), devices[2 - 2 * pid])
    except ValueError as err:
        out["put_elsewhere"] = str(err)

    # A 2-d mesh: axis 'p' across the processes, axis 'd' within each.
    mesh2 = mjcore.make_mesh((2, 2), ("p", "d"))
    grid = onp.arange(24, dtype=onp.float32).reshape(4, 6) ** 2
    a = mjcore.make_array_from_process_local_data(
        NamedSharding(mesh2, P("p", "d")), grid[2 * pid : 2 * pid + 2])
    b = mjcore.make_array_from_process_local_data(
        NamedSharding(mesh2, P(None, "p")), grid[:, 3 * pid : 3 * pid + 3])
    c = mjcore.make_array_from_process_local_data(NamedSharding(mesh2, P("d")), grid)
    out["grid"] = [[list(t.shape), float(onp.asarray(mjcore.jit(mjnp.sum)(t))),
                    onp.asarray(mjcore.jit(lambda t: mjnp.max(t, axis=0))(t)).tolist()
                    if t.sharding.spec == P("d") else None]
                   for t in (a, b, c)]
    cols = mjcore.jit(lambda a, b: mjnp.sum(a * b, axis=0),
                      out_shardings=NamedSharding(mesh2, P()))(a, b)
    out["grid_cols"] = onp.asarray(cols).tolist()

    # From this process's single-device arrays.
    local = [mjcore.device_put(data[2 * k : 2 * k + 2], d)
             for k, d in enumerate(devices) if d in b_devices]
    z = mjcore.make_array_from_single_device_arrays((8, 3), rows, local)
    out["single_device_total"] = float(onp.asarray(mjcore.jit(lambda z: mjnp.sum(z * z))(z)))
    try:
        mjcore.make_array_from_single_device_arrays((8, 3), rows, local[:1])
    except ValueError as err:
        out["too_few_arrays"] = str(err)

    fw, fnp, Mesh = mjcore, mjnp, mjcore.sharding.Mesh
    from mjcore import multihost_utils as mh
    out["cases"] = cases(pid)

    distributed.shutdown()
    out["after_shutdown"] = [distributed.is_initialized(), mjcore.process_count(),
                             mjcore.device_count()]
    print("RESULT " + json.dumps(out), flush=True)
"""
)

# The oracle: the same cases in JAX (x64), two processes with two CPU devices each.
_JAX_WORKER = (
    """
    import json, sys
    import numpy as onp
    pid, port = int(sys.argv[1]), sys.argv[2]
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_num_cpu_devices", 2)
    jax.config.update("jax_platforms", "cpu")
    jax.distributed.initialize(f"localhost:{port}", 2, pid, initialization_timeout=60)
    import jax.numpy as fnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from jax.experimental import multihost_utils as mh
    fw, devices = jax, jax.devices()
"""
    + _CASES
    + """
    out = {"cases": cases(pid), "devices": [[d.id, d.process_index] for d in devices]}
    print("RESULT " + json.dumps(out), flush=True)
"""
)

# A process whose coordinator never comes: a bounded wait, then a clear error.
_ORPHAN = """
    import json, socket, sys, time
    from mjcore import distributed

    taken = socket.socket(socket.AF_INET6)  # a coordinator port someone else listens on
    taken.bind(("::", 0))
    taken.listen()
    try:
        distributed.initialize(f"localhost:{taken.getsockname()[1]}", 2, 0)
        busy = None
    except RuntimeError as err:
        busy = str(err)
    taken.close()
    t0 = time.monotonic()
    try:
        distributed.initialize(f"localhost:{sys.argv[1]}", 2, 1, initialization_timeout=2)
        out = {"error": None}
    except TimeoutError as err:
        out = {"error": str(err)}
    out["seconds"] = time.monotonic() - t0
    out["busy"] = busy
    out["initialized"] = distributed.is_initialized()
    import mjcore
    out["process_count"] = mjcore.process_count()  # one process still works
    print("RESULT " + json.dumps(out), flush=True)
"""


# An example script of examples/ run as `python examples/NAME ARGS...` would run it.
_EXAMPLE = """
    import runpy, sys
    sys.argv = [f"examples/{sys.argv[1]}", *sys.argv[2:]]
    runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


def _start(script: str, *args: object) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "2"}
    for name in ("MJCORE_NUM_CPU_DEVICES", "JAX_NUM_CPU_DEVICES", "XLA_FLAGS"):
        env.pop(name, None)
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *map(str, args)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen) -> dict:
    """What a subprocess printed, once it ends (killed past TIMEOUT)."""
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
        timed_out = False
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        timed_out = True
    return {"rc": proc.returncode, "out": stdout, "err": stderr[-3000:], "timed_out": timed_out}


def _run_all() -> dict[str, list[dict]]:
    """Every subprocess of this module, started together so that their waits overlap: the
    two mjcore processes, the two JAX ones (the oracle), the orphan and the example."""
    port, jax_port, dead_port = _free_port(), _free_port(), _free_port()
    procs = {"mjcore": [_start(_WORKER, pid, port) for pid in (1, 0)]}  # coordinator last
    procs["orphan"] = [_start(_ORPHAN, dead_port)]
    procs["example"] = [_start(_EXAMPLE, "data_parallel_processes.py")]
    argv = ("--processes", "2", "--devices", "4", "--steps", "3")
    procs["pmap_example"] = [_start(_EXAMPLE, "data_parallel.py", *argv)]
    if importlib.util.find_spec("jax") is not None:
        procs["jax"] = [_start(_JAX_WORKER, pid, jax_port) for pid in (1, 0)]
    try:
        return {k: [_finish(p) for p in ps] for k, ps in procs.items()}
    finally:
        for ps in procs.values():
            for p in ps:
                if p.poll() is None:
                    p.kill()
                    p.communicate()


@pytest.fixture(scope="session")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    """`_run_all()`'s results, made once per test session: under pytest-xdist the first
    worker to ask runs the subprocesses, the others wait for its results (a file lock in the
    directory the workers share)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:  # one process: nothing to share
        return _run_all()
    shared = tmp_path_factory.getbasetemp().parent  # this session's, common to its workers
    path = shared / "test_distributed_outcomes.json"
    with open(shared / "test_distributed_outcomes.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            path.write_text(json.dumps(_run_all()))
        return json.loads(path.read_text())  # type: ignore[no-any-return]


def _result(done: dict) -> dict:
    if done["timed_out"]:
        pytest.fail(f"a process ran past {TIMEOUT} s:\n{done['out']}\n{done['err']}")
    lines = [ln for ln in done["out"].splitlines() if ln.startswith("RESULT ")]
    assert done["rc"] == 0 and lines, f"rc={done['rc']}\n{done['out']}\n{done['err']}"
    return json.loads(lines[-1].removeprefix("RESULT "))  # type: ignore[no-any-return]


@pytest.fixture
def runs(outcomes) -> tuple[list[dict], dict]:
    results = [_result(d) for d in outcomes["mjcore"]]
    return results[::-1], _result(outcomes["orphan"][0])


@pytest.fixture
def jax_runs(outcomes) -> list[dict]:
    if "jax" not in outcomes:
        pytest.skip("jax (the oracle) is not installed")
    return [_result(d) for d in outcomes["jax"]][::-1]


@pytest.fixture
def example(outcomes) -> dict:
    return outcomes["example"][0]  # type: ignore[no-any-return]


def test_two_processes_form_one_four_device_system(runs):
    workers, _ = runs
    for pid, out in enumerate(workers):
        assert out["initialized"]
        assert out["process_index"] == pid and out["process_count"] == 2
        assert out["device_count"] == 4 and out["local_device_count"] == 2
        assert [p for _, p in out["devices"]] == [0, 0, 1, 1]
        ids = [i for i, _ in out["devices"]]
        assert out["local"] == ids[2 * pid : 2 * pid + 2]
        assert out["local_of"] == [ids[:2], ids[2:]]
        assert out["eager_sum"] == 10.0  # one-device programs run locally, as before
        assert out["after_shutdown"] == [False, 1, 2]  # shutdown leaves one process behind
    # Both processes name the same global devices in the same order.
    assert workers[0]["devices"] == workers[1]["devices"]


def test_initialize_twice_is_an_error(runs):
    workers, _ = runs
    for out in workers:
        assert "should only be called once" in out["twice"]


def test_a_program_over_both_processes_gives_each_the_right_total(runs):
    workers, _ = runs
    data = (onp.arange(24, dtype=onp.float32).reshape(8, 3) - 5) / 4
    rows = data.reshape(4, 2, 3)
    for pid, out in enumerate(workers):
        # the replicated total on each of this process's devices (exact in float32 here)
        assert out["spmd_totals"] == [float(data.sum())] * 2
        ids = [i for i, _ in out["devices"]]
        assert out["spmd_devices"] == ids[2 * pid : 2 * pid + 2]
        # the sharded output: this process's rows, squared
        for k, got in enumerate(out["spmd_squares"]):
            onp.testing.assert_array_equal(got, rows[2 * pid + k] ** 2)


def test_an_all_reduce_sums_over_the_devices_of_both_processes(runs):
    workers, _ = runs
    per_device = onp.array([[1, 10], [2, 20], [3, 30], [4, 40]], dtype=onp.int32) ** 2
    for out in workers:
        assert out["allreduce"] == [per_device.sum(axis=0).tolist()] * 2


def test_global_arrays_from_process_local_data(runs):
    workers, _ = runs
    data = (onp.arange(24, dtype=onp.float32).reshape(8, 3) - 5) / 4
    for pid, out in enumerate(workers):
        assert out["global_shape"] == [[8, 3], [8, 3], "float32"]
        assert out["fully_addressable"] == [False, False]
        ids = [i for i, _ in out["devices"]]
        # each local device holds its rows of the global array: rows 2k..2k+2 on device k
        want = [
            [ids[k], [[2 * k, 2 * k + 2], [None, None]], data[2 * k : 2 * k + 2].tolist()]
            for k in (2 * pid, 2 * pid + 1)
        ]
        assert out["shards"] == want


def test_jit_over_a_global_array_gives_each_process_the_total(runs):
    workers, _ = runs
    data = (onp.arange(24, dtype=onp.float32).reshape(8, 3) - 5) / 4
    grad = onp.sin(data) + data * onp.cos(data)  # d/dx sum(sin(x) x)
    for pid, out in enumerate(workers):
        assert out["jit_total"] == [float(data.sum()), "PartitionSpec()"]
        assert out["jit_total2"] == float(data.sum())
        for k, got in enumerate(out["grad_shards"]):
            r = 2 * (2 * pid + k)
            onp.testing.assert_allclose(got, grad[r : r + 2], rtol=1e-6)
        assert "spans devices of other processes" in out["gather_error"]
        assert out["replicated_whole"] == (data * 2).tolist()
        z = data * data
        assert out["single_device_total"] == pytest.approx(float(z.sum()), rel=1e-6)


def test_global_arrays_match_jax_over_two_processes(runs, jax_runs):
    workers, _ = runs
    for pid, (ours, theirs) in enumerate(zip(workers, jax_runs, strict=True)):
        assert ours["devices"] == theirs["devices"]
        assert len(ours["cases"]) == len(theirs["cases"]) == 16
        assert ours["cases"][11] == ["Array(shape=(8, 8), dtype=float32)"] * 2
        gathered = ours["cases"][12]
        assert gathered[0] == [[[0, 0], [1, 10]], "int32"]
        assert gathered[5] == [[0.0, 1.0, 2.0], "float64"]
        assert ours["cases"][13] == "processes differ"
        for k, (got, want) in enumerate(zip(ours["cases"], theirs["cases"], strict=True)):
            assert got == want, f"process {pid}, case {k}"


def test_global_arrays_over_a_two_dimensional_mesh(runs):
    workers, _ = runs
    grid = onp.arange(24, dtype=onp.float32).reshape(4, 6) ** 2
    for out in workers:
        (a_shape, a_sum, _), (b_shape, b_sum, _), (c_shape, c_sum, c_max) = out["grid"]
        assert a_shape == b_shape == c_shape == [4, 6]
        assert a_sum == b_sum == c_sum == float(grid.sum())
        assert c_max == grid.max(axis=0).tolist()
        assert out["grid_cols"] == (grid * grid).sum(axis=0).tolist()


def test_global_array_bad_input(runs):
    workers, _ = runs
    for pid, out in enumerate(workers):
        assert out["bad_local_shape"] == (
            "make_array_from_process_local_data: local_data has shape (3, 3), but along "
            "dimension 0 it must hold either the global extent 8 (global_shape=(8, 3)) or "
            "this process's part, 4; got 3. Every process must give data of the shape its "
            "devices' shards add up to."
        )
        assert "dimension 0 should be divisible by 4" in out["bad_inferred_shape"]
        assert "(full shape: (6, 3))" in out["bad_inferred_shape"]
        assert "expected 2 arrays, one per device" in out["too_few_arrays"]
        assert f"belongs to process {1 - pid}, not to this one ({pid})" in out["put_elsewhere"]


def test_a_dead_coordinator_times_out_with_a_clear_error(runs):
    _, out = runs
    assert out["error"] is not None and "no coordinator answered at localhost:" in out["error"]
    assert "initialization_timeout=2 s" in out["error"]
    assert out["seconds"] < 30  # bounded: the 2 s asked for, plus start-up
    assert not out["initialized"] and out["process_count"] == 1


def test_a_taken_coordinator_port_is_a_clear_error(runs):
    _, out = runs
    assert out["busy"] is not None
    assert "process 0 cannot start the coordinator on [::]:" in out["busy"]
    assert "Address already in use. Choose a free port" in out["busy"]


# In this process, whose backends started long ago: the checks that come before any joining.


def test_initialize_after_the_first_operation_is_an_error():
    mjcore.devices()  # the backends are started
    with pytest.raises(RuntimeError, match="must be called before any mjcore operation"):
        distributed.initialize("localhost:1234", 2, 0)
    assert not distributed.is_initialized()
    distributed.shutdown()  # not initialized: nothing to do


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"process_id": 2}, ValueError, r"process_id must be in 0\.\.1 \(num_processes=2\), got 2"),
        ({"process_id": -1}, ValueError, "process_id must be in"),
        ({"num_processes": 0, "process_id": 0}, ValueError, "num_processes must be positive"),
        ({"num_processes": "2"}, TypeError, "num_processes must be an int, got '2' of type str"),
        ({"process_id": 1.0}, TypeError, "process_id must be an int"),
        ({"coordinator_address": "localhost"}, ValueError, "must be 'host:port'"),
        ({"coordinator_address": 1234}, TypeError, "must be a 'host:port' string"),
        ({"initialization_timeout": 0}, ValueError, "initialization_timeout must be at least 1"),
        ({"heartbeat_timeout_seconds": 2.5}, TypeError, "heartbeat_timeout_seconds must be an"),
    ],
)
def test_initialize_bad_arguments(kwargs, error, match):
    args = {"coordinator_address": "localhost:1234", "num_processes": 2, "process_id": 0}
    with pytest.raises(error, match=match):
        distributed.initialize(**{**args, **kwargs})


def test_global_arrays_in_one_process():
    from mjcore.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding

    mesh = mjcore.make_mesh((1,), ("x",))
    s = NamedSharding(mesh, PartitionSpec("x"))
    data = onp.arange(12.0).reshape(4, 3)
    x = mjcore.make_array_from_process_local_data(s, data)
    assert x.shape == (4, 3) and x.sharding == s and x.is_fully_addressable
    onp.testing.assert_array_equal(onp.asarray(x), data)
    assert onp.asarray(mjcore.make_array_from_process_local_data(s, data, (4, 3))).shape == (4, 3)
    with pytest.raises(ValueError, match=r"global_shape must be None or local_data.shape; got "):
        mjcore.make_array_from_process_local_data(s, data, (8, 3))

    (dev,) = mjcore.local_devices()
    part = mjcore.device_put(data, dev)
    y = mjcore.make_array_from_single_device_arrays((4, 3), s, [part])
    assert y.sharding == s
    onp.testing.assert_array_equal(onp.asarray(y), data)
    z = mjcore.make_array_from_single_device_arrays((4, 3), SingleDeviceSharding(dev), [part])
    onp.testing.assert_array_equal(onp.asarray(z), data)
    with pytest.raises(ValueError, match=r"arrays\[0\] has shape \(2, 3\), but the shard shape"):
        mjcore.make_array_from_single_device_arrays((4, 3), s, [mjcore.device_put(data[:2], dev)])
    with pytest.raises(ValueError, match="expected 1 arrays, one per device"):
        mjcore.make_array_from_single_device_arrays((4, 3), s, [part, part])
    with pytest.raises(TypeError, match=r"arrays\[0\] must be a concrete single-device Array"):
        mjcore.make_array_from_single_device_arrays((4, 3), s, [data])
    with pytest.raises(TypeError, match="expected a Sharding"):
        mjcore.make_array_from_process_local_data(PartitionSpec("x"), data)


def test_example_trains_data_parallel_over_two_processes_with_one_devices_losses(example):
    assert not example["timed_out"], f"examples/data_parallel_processes.py ran past {TIMEOUT} s"
    assert example["rc"] == 0, f"{example['out']}\n{example['err']}"
    lines = example["out"].splitlines()
    assert lines[0].split() == ["step", "one", "device", "process", "0", "process", "1"]
    rows = [[float(v) for v in ln.split()[1:]] for ln in lines[1:9]]
    assert len(rows) == 8 and rows[-1][0] < rows[0][0]  # it trains
    for ref, *others in rows:
        assert others == pytest.approx([ref, ref], rel=1e-5)
    assert lines[-1].endswith("-> same losses")


def test_pmap_example_over_two_processes_prints_one_devices_losses(outcomes):
    (done,) = outcomes["pmap_example"]
    assert not done["timed_out"], f"examples/data_parallel.py ran past {TIMEOUT} s"
    assert done["rc"] == 0, f"{done['out']}\n{done['err']}"  # (1: losses differ)
    lines = done["out"].splitlines()
    many = [ln.split()[-2:] for ln in lines if ln.startswith("4 devices in 2 processes")]
    one = [ln.split()[-1] for ln in lines if ln.startswith("1 device(s)")]
    assert len(many) == len(one) == 3
    for (a, b), ref in zip(many, one, strict=True):
        assert a == b  # both processes print the same loss
        assert float(a) == pytest.approx(float(ref), rel=1e-12, abs=0)
    assert lines[-1].startswith("largest difference from one device: ")


def test_one_process_reports_itself():
    assert mjcore.process_index() == 0 and mjcore.process_count() == 1
    assert mjcore.local_devices(0) == mjcore.local_devices() == mjcore.devices()
    with pytest.raises(ValueError, match=r"unknown process_index 1; the processes are 0 to 0"):
        mjcore.local_devices(1)
