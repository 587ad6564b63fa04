"""Where the time of one eager mjcore op goes: `mjcore.lax.add(x, y)` peeled layer by layer.

    python -m benchmarks.profile_eager [--quick] [--size N] [--cprofile]

Each layer is a contender of one workload, so the layers are measured interleaved and their
differences are meaningful. It reaches into mjcore internals (`dispatch`, `core.bind`,
`Array._buf`) on purpose; a layer whose internals moved is reported as an error, not a crash.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benchmarks import frameworks, report
from benchmarks.harness import QUICK, Contender, Settings, Workload, WorkloadResult, run_workload

# (layer, the layer it wraps, what it adds over that one)
LAYERS = (
    ("execute_sharded", "", "PJRT execute of the cached executable; outputs not unpacked"),
    (
        "Program.run",
        "execute_sharded",
        "outputs unpacked by jaxlib's C++ array_result_handler (mjcore's backend.Program)",
    ),
    (
        "+ run + block",
        "Program.run",
        "waiting for the result: the floor of any eager op dispatched through PJRT",
    ),
    (
        "apply_primitive",
        "Program.run",
        "args to buffers and avals, executable cache key and lookup, wrap outputs in Array",
    ),
    ("core.bind", "apply_primitive", "trace-stack check (eager fast path), Primitive.impl"),
    ("lax.add", "core.bind", "the public wrapper and bind1"),
    ("+ block_until_ready", "lax.add", "waiting for the result: what the eager benchmarks time"),
)


def _layers(n: int) -> list[Contender]:
    import mjcore
    from mjcore import core, dispatch
    from mjcore.lax.arithmetic import add_p

    x = mjcore.device_put(np.ones(n, np.float32))
    y = mjcore.device_put(np.ones(n, np.float32))
    args, params = (x, y), {}
    program, _ = dispatch.compiled_primitive(add_p, (x.aval, y.aval), params)
    bufs = [x._buf, y._buf]
    exe = program.executable

    makers: dict[str, Callable[[], Callable[[], Any]]] = {
        "execute_sharded": lambda: lambda: exe.execute_sharded(bufs),
        "Program.run": lambda: lambda: program.run(bufs),
        "+ run + block": lambda: lambda: program.run(bufs)[0].block_until_ready(),
        "apply_primitive": lambda: lambda: dispatch.apply_primitive(add_p, args, params),
        "core.bind": lambda: lambda: core.bind(add_p, args, params),
        "lax.add": lambda: lambda: mjcore.lax.add(x, y),
        "+ block_until_ready": lambda: lambda: mjcore.lax.add(x, y).block_until_ready(),
    }
    return [Contender(name, makers[name]) for name, _, _ in LAYERS]


def _jax_references(n: int) -> list[Contender]:
    def prepare(kind: str) -> Callable[[], Any]:
        fw = frameworks.load("jax")
        x, y = fw.put(np.ones(n, np.float32)), fw.put(np.ones(n, np.float32))
        if kind == "jit":
            f = fw.jit(lambda a, b: a + b)  # type: ignore[misc]
            return lambda: f(x, y).block_until_ready()
        return lambda: (x + y).block_until_ready()

    return [
        Contender("jax jit + block", lambda: prepare("jit")),
        Contender("jax eager x + y + block", lambda: prepare("eager")),
    ]


def render(result: WorkloadResult) -> str:
    """A table of each layer's median and min, and its increment over the layer it wraps (on a
    busy machine the min is the better estimate of the cost itself)."""
    parents = {name: (parent, what) for name, parent, what in LAYERS}
    rows = [
        "| layer | median (µs) | min – max | + median | + min | what it adds |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in result.results:
        if not r.measured:
            rows.append(f"| {r.name} | {r.note} | | | | |")
            continue
        parent, what = parents.get(r.name, ("", "reference"))
        inner = result.get(parent) if parent else None
        deltas = ["", ""]
        if inner is not None and inner.measured:
            deltas = [f"{r.median - inner.median:+.2f}", f"{r.low - inner.low:+.2f}"]
        cells = [r.name, report.fmt(r.median), f"{report.fmt(r.low)} – {report.fmt(r.high)}"]
        rows.append("| " + " | ".join([*cells, *deltas, what]) + " |")
    return "\n".join(rows)


def _cprofile(n: int, calls: int = 50_000) -> None:
    import mjcore

    x = mjcore.device_put(np.ones(n, np.float32))
    y = mjcore.device_put(np.ones(n, np.float32))
    add = mjcore.lax.add
    add(x, y).block_until_ready()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        add(x, y).block_until_ready()
    profiler.disable()
    print(f"\ncProfile of {calls} calls of lax.add(x, y).block_until_ready(), by own time:")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(12)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_eager", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, help="interleaved repetitions (default: 101)")
    parser.add_argument("--size", type=int, default=100, help="elements per float32 operand")
    parser.add_argument("--cprofile", action="store_true", help="also print a cProfile listing")
    args = parser.parse_args(argv)
    workload = Workload(
        "eager_add_layers",
        f"mjcore.lax.add on float32[{args.size}], layer by layer",
        tuple(_layers(args.size) + _jax_references(args.size)),
    )
    settings = QUICK if args.quick else Settings(args.repeats or 101, 0)
    result = run_workload(workload, settings)
    print(f"{workload.description}\n\n{render(result)}")
    if args.cprofile:
        _cprofile(args.size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
