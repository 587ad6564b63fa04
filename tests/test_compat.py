"""The jaxlib compat layer (`mjcore/backend/compat.py`): every private jaxlib name mjcore uses
exists in the installed jaxlib and behaves as the layer expects. Run on each supported jaxlib
(`make test` on 0.10.2, `make test-compat` on the newest 0.12.x)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import jaxlib.version
import numpy as onp
import pytest

import mjnp as np
from mjcore.backend import client, compat

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "text, want",
    [("0.10.2", (0, 10, 2)), ("0.12.0.1", (0, 12, 0, 1)), ("0.13.0rc1", (0, 13, 0)), ("1", (1,))],
)
def test_parse_version(text, want):
    assert compat.parse_version(text) == want


def test_parse_version_rejects_garbage():
    with pytest.raises(ValueError, match="cannot parse the version string 'dev'"):
        compat.parse_version("dev")


def test_installed_jaxlib_is_in_the_supported_range_declared_in_pyproject():
    assert compat.JAXLIB_VERSION == jaxlib.version.__version__
    assert (0, 10, 2) <= compat.JAXLIB < (0, 13)
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"jaxlib{compat.SUPPORTED}" in deps
    # jax is an oracle for the tests, never a runtime dependency
    assert not any(re.match(r"jax\b(?!lib)", d) for d in deps)


@pytest.mark.parametrize(
    "owner, name",
    [
        (compat.xla, "array_result_handler"),
        (compat.xla, "batched_device_put"),
        (compat.xla, "buffer_to_dlpack_managed_tensor"),
        (compat.xla, "SingleDeviceSharding"),
        (compat.xla, "GSPMDSharding"),
        (compat.xla, "ArrayImpl"),
        (compat.xla, "JaxRuntimeError"),
        (compat.xc, "DeviceAssignment"),
        (compat.xc, "DeviceList"),
        (compat.xc, "CompileOptions"),
        (compat.xc, "HloSharding"),
        (compat.xc, "make_cpu_client"),
        (compat.xc, "register_custom_call_target"),
        # several processes (mjcore.distributed)
        (compat.xla, "get_distributed_runtime_service"),
        (compat.xla, "get_distributed_runtime_client"),
        (compat.xla, "make_gloo_tcp_collectives"),
        # the GPU path (checked here, run on a GPU only)
        (compat.xc, "pjrt_plugin_loaded"),
        (compat.xc, "pjrt_plugin_initialized"),
        (compat.xc, "load_pjrt_plugin_dynamically"),
        (compat.xc, "initialize_pjrt_plugin"),
        (compat.xc, "make_c_api_client"),
        (compat.xc, "generate_pjrt_gpu_plugin_options"),
        (compat.xc, "register_custom_call_handler"),
        (compat.xc, "register_custom_type_handler"),
        (compat.xc, "register_custom_type"),
    ],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_private_names_exist(owner, name):
    assert hasattr(owner, name), f"jaxlib {compat.JAXLIB_VERSION} lacks {owner.__name__}.{name}"


def test_result_handler_signature_is_detected():
    doc = compat.xla.array_result_handler.__doc__ or ""
    assert compat._RESULT_HANDLER_SKIPS_CHECKS == ("_skip_checks" in doc)
    # jaxlib 0.11 removed the keyword
    assert compat._RESULT_HANDLER_SKIPS_CHECKS == (compat.JAXLIB < (0, 11))


@pytest.mark.parametrize("committed", [False, True])
def test_batched_device_put_and_result_handler_round_trip(committed):
    host = onp.arange(6, dtype=onp.float32).reshape(2, 3)
    dev = client.device()
    buf = compat.batched_device_put(
        client._HostAval(host.shape, host.dtype), client._Sharding(dev), host, dev, committed
    )
    assert client.is_committed(buf) is committed
    assert client.buffer_device(buf) == dev
    onp.testing.assert_array_equal(client.to_numpy(buf), host)
    handler = compat.result_handler(buf.aval, client.sharding(dev), committed)
    assert handler is not None


def test_compile_options_assign_the_device():
    opts = compat.compile_options(0)
    assert compat.compile_options(0) is opts  # cached
    assert opts.executable_build_options.device_assignment is not None


def test_lapack_registrations_and_mlir_context():
    regs = compat.lapack_registrations()
    assert "lapack_dgetrf_ffi" in regs and "lapack_zgesdd_ffi" in regs
    ctx = compat.mlir_context()
    module = compat.parse_mlir(ctx, "module {\n  func.func @main() {\n    return\n  }\n}\n")
    assert "func.func @main" in str(module)


def test_dlpack_device_of_a_cpu_buffer():
    x = np.arange(3.0)
    assert client.dlpack_device(x._buf) == (1, 0)
    assert x.__dlpack_device__() == (1, 0)
    onp.testing.assert_array_equal(onp.from_dlpack(x), [0.0, 1.0, 2.0])


@pytest.mark.parametrize(
    "host",
    [onp.arange(12.0).reshape(3, 4), onp.array([True, False]), onp.int8(7), onp.zeros((0, 2))],
    ids=["f64", "bool", "i8-scalar", "empty"],
)
def test_host_copy_through_a_callback_program(host):
    """The host-copy path non-CPU buffers take (a program handing its operand to a host
    callback), run here with the CPU callback target."""
    buf = client.device_put(onp.asarray(host))
    out = client._copy_to_host(buf)
    assert out.dtype == onp.asarray(host).dtype and not out.flags.writeable
    onp.testing.assert_array_equal(out, host)
    assert client._copy_to_host(buf) is not out  # a fresh copy each time


def test_preloading_nvidia_libraries_without_the_wheels_is_harmless():
    compat.preload_nvidia_libraries()


def test_spmd_compile_options_and_multi_device_arrays():
    """The several-devices path (`client.SpmdProgram`, `compat.assemble_array`), on the one
    device this process has: a one-partition SPMD program over a sharded argument."""
    from mjcore.core import ShapedArray
    from mjcore.sharding import Mesh, NamedSharding, P

    opts = compat.spmd_compile_options((0,), [True])
    build = opts.executable_build_options
    assert build.num_partitions == 1 and build.use_spmd_partitioning
    mesh = Mesh(onp.array(client.devices()[:1]), ("x",))
    s = NamedSharding(mesh, P("x"))
    aval = ShapedArray((4,), onp.dtype(onp.float32))
    buf = client.put_sharded(onp.arange(4, dtype=onp.float32), s, aval)
    assert len(client.shards_of(buf)) == 1
    text = (
        "module @m {\n  func.func public @main(%a: tensor<4xf32> "
        '{mhlo.sharding = "{replicated}"}) -> (tensor<4xf32>) {\n'
        "    %0 = stablehlo.add %a, %a : tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n"
    )
    program = client.SpmdProgram(text, (client.devices()[0],), [aval], [None], lambda h, n: s)
    (out,) = program.run([buf])
    onp.testing.assert_array_equal(client.gather_to_numpy(out, s, (4,), onp.float32), [0, 2, 4, 6])
    assert isinstance(compat.output_hlo_shardings(program.executable), list)


@pytest.mark.parametrize(
    "fn, keywords",
    [
        (compat.xla.get_distributed_runtime_service, ("heartbeat_timeout", "shutdown_timeout")),
        (
            compat.xla.get_distributed_runtime_client,
            ("init_timeout", "heartbeat_timeout", "shutdown_timeout", "use_compression"),
        ),
        (compat.xla.make_gloo_tcp_collectives, ("distributed_client",)),
        (
            compat.xc.make_cpu_client,
            ("asynchronous", "distributed_client", "node_id", "num_nodes", "collectives"),
        ),
    ],
    ids=lambda v: getattr(v, "__name__", "keywords"),
)
def test_distributed_runtime_keywords_exist(fn, keywords):
    # the keywords mjcore.distributed passes (compat.distributed_client, make_cpu_client, ...)
    text = compat.signature_text(fn)
    for keyword in keywords:
        assert keyword in text, f"jaxlib {compat.JAXLIB_VERSION}: {text}"
