"""Smoke test of the benchmark harness on a synthetic workload (no JAX, no timing asserts)."""

from pathlib import Path

import pytest

from benchmarks import report
from benchmarks.harness import (
    QUICK,
    Contender,
    ContenderResult,
    Settings,
    Unavailable,
    Workload,
    WorkloadResult,
    describe_failure,
    run_workload,
)
from benchmarks.run import select

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "RESULTS.md"


def _trivial(value: int) -> Contender:
    # `numpy` is a baseline name, so the report gets a `÷ numpy` ratio column.
    return Contender("mjnp" if value else "numpy", lambda: lambda: sum(range(value)))


def _missing() -> None:
    raise Unavailable("needs mjcore.jit")


def _broken() -> None:
    raise ValueError("bad input\nsecond line")


SYNTHETIC = Workload(
    "synthetic",
    "two trivial contenders and two that cannot run",
    (
        _trivial(30),
        _trivial(0),
        Contender("jax", _missing),
        Contender("autograd", _broken),
    ),
)


def test_quick_run_reports_medians_and_ratio(tmp_path):
    before = RESULTS.stat().st_mtime_ns if RESULTS.exists() else None
    settings = Settings(QUICK.repeats, QUICK.process_repeats, min_batch_ns=100_000)
    result = run_workload(SYNTHETIC, settings)

    mjnp, numpy = result.get("mjnp"), result.get("numpy")
    assert mjnp is not None and numpy is not None
    assert mjnp.measured and numpy.measured
    assert len(mjnp.samples) == settings.repeats and mjnp.calls_per_batch >= 1
    assert mjnp.low <= mjnp.median <= mjnp.high
    ratio = result.ratio("mjnp", "numpy")
    assert ratio is not None and ratio > 0
    assert result.ratio("mjnp", "jax") is None
    assert result.get("jax").note == "n/a (needs mjcore.jit)"
    assert result.get("autograd").note == "error (ValueError: bad input)"

    out = tmp_path / "RESULTS.md"
    machine = {"cpu": "test"}
    out.write_text(report.render_markdown([result], settings, "pytest", machine, plot=None))
    text = out.read_text()
    assert f"| mjnp | {report.fmt(mjnp.median)} |" in text
    assert f"| {report.fmt_ratio(ratio)} |" in text
    assert "n/a (needs mjcore.jit)" in text
    if before is not None:
        assert RESULTS.stat().st_mtime_ns == before


@pytest.mark.parametrize(
    "err, note",
    [
        (Unavailable("needs mjcore.grad"), "n/a (needs mjcore.grad)"),
        (AttributeError("no sin", name="sin", obj=pytest), "n/a (pytest.sin missing)"),
        (ModuleNotFoundError("no mjnp", name="mjnp"), "n/a (no module mjnp)"),
        (RuntimeError("boom"), "error (RuntimeError: boom)"),
    ],
    ids=["unavailable", "missing-attribute", "missing-module", "error"],
)
def test_describe_failure(err, note):
    assert describe_failure(err) == note


def test_select_by_name_prefix_and_glob():
    names = [w.name for w in select([SYNTHETIC], ["synth"])]
    assert names == ["synthetic"]
    assert [w.name for w in select([SYNTHETIC], ["*etic"])] == ["synthetic"]
    with pytest.raises(SystemExit, match="no workload matches"):
        select([SYNTHETIC], ["nothing"])


def test_targets_section_lists_misses_with_their_reason(monkeypatch):
    from benchmarks import targets

    settings = Settings(QUICK.repeats, QUICK.process_repeats, min_batch_ns=100_000)
    slow = Workload("slow", "mjnp slower than numpy", (_trivial(3000), _trivial(0)))
    result = run_workload(slow, settings)
    ratio = result.ratio("mjnp", "numpy")
    assert ratio is not None and ratio > 1  # summing 3000 numbers takes longer than 0
    monkeypatch.setitem(targets.TARGETS, "slow", targets.Target("numpy", 1.0, "speed"))
    monkeypatch.setitem(targets.MISS_REASONS, "slow", "it sums 3000 numbers.")
    lines = report.targets_section([result])
    assert f"| slow | speed | ≤ 1× numpy | {report.fmt_ratio(ratio)} | **missed** |" in lines
    assert any(line.startswith("- **slow**") and "it sums 3000 numbers." in line for line in lines)
    monkeypatch.setitem(targets.TARGETS, "slow", targets.Target("numpy", 1e9, "speed"))
    lines = report.targets_section([result])
    assert f"| slow | speed | ≤ 1e+09× numpy | {report.fmt_ratio(ratio)} | met |" in lines
    assert not any(line.startswith("- **slow**") for line in lines)


def test_every_registered_workload_has_a_target():
    from benchmarks.targets import TARGETS
    from benchmarks.workloads import WORKLOADS

    untargeted = {w.name for w in WORKLOADS if not w.name.startswith("floor_")} - set(TARGETS)
    assert not untargeted


@pytest.mark.parametrize("lead_in", [True, False])
def test_timed_batches_follow_a_call_of_their_own_contender(monkeypatch, lead_in):
    """With `lead_in`, no timed batch starts right after another contender's call (with caches
    that call evicted); without it, batches of interleaved contenders do."""
    from benchmarks import harness

    log: list[str] = []
    batch_starts: list[int] = []  # len(log) when each timed batch began

    def contender(name: str) -> Contender:
        return Contender(name, lambda: lambda: log.append(name))

    real_time_batch = harness.time_batch

    def recording_time_batch(fn, k):
        batch_starts.append(len(log))
        return real_time_batch(fn, k)

    monkeypatch.setattr(harness, "time_batch", recording_time_batch)
    names = ("mjnp", "jax", "numpy")
    workload = Workload("w", "three contenders", tuple(map(contender, names)), lead_in=lead_in)
    repeats = 7
    run_workload(workload, Settings(repeats=repeats, process_repeats=1))
    measured = batch_starts[-repeats * len(names) :]
    # The batch's own first call is log[start]; the call before it must be the same contender's.
    followers = [log[start - 1] == log[start] for start in measured]
    assert all(followers) if lead_in else not all(followers)


@pytest.mark.parametrize("n", range(1, 8))
def test_balanced_orders_put_each_contender_after_each_other_equally_often(n):
    from collections import Counter

    from benchmarks.harness import balanced_orders

    orders = balanced_orders(n)
    assert all(sorted(order) == list(range(n)) for order in orders)
    follows = Counter((a, b) for order in orders for a, b in zip(order, order[1:], strict=False))
    assert set(follows) == {(a, b) for a in range(n) for b in range(n) if a != b}
    assert len(set(follows.values())) <= 1


def _fixed(name: str, op: str, medians: dict[str, float]) -> WorkloadResult:
    workload = Workload(f"breadth_{op}", op, tuple(Contender(n, _missing) for n in medians))
    return WorkloadResult(
        workload, tuple(ContenderResult(n, (m, m, m), 1) for n, m in medians.items())
    )


def test_breadth_summary_floors_numpy_and_names_the_worst_op():
    results = [
        # NumPy's 0.1 µs view counts as 0.3 µs: 0.6 / 0.3 = 2
        _fixed("mjnp", "slice", {"mjnp": 0.6, "jax": 3.0, "numpy": 0.1}),
        _fixed("mjnp", "exp", {"mjnp": 8.0, "jax": 8.0, "numpy": 2.0}),  # 4x NumPy, 1x JAX
        _fixed("mjnp", "sum", {"mjnp": 1.0, "jax": 10.0, "numpy": 2.0}),  # 0.5x, 0.1x
    ]
    n, gm_numpy, (worst_op, worst), gm_jax = report.breadth_summary(results)
    assert n == 3 and worst_op == "exp" and worst == pytest.approx(4.0)
    assert gm_numpy == pytest.approx((2.0 * 4.0 * 0.5) ** (1 / 3))
    assert gm_jax == pytest.approx((0.2 * 1.0 * 0.1) ** (1 / 3))
    lines = report.targets_section(results)
    assert "| breadth_slice | eager breadth op | ≤ 5× numpy | 2.00× | met |" in lines
    worst_row = "| eager breadth | max op (exp) | ≤ 5× numpy | 4.00× | met"
    assert any(line.startswith(worst_row) for line in lines)
    assert any("≤ 0.5× jax" in line and "| met |" in line for line in lines)
    assert not any(line.startswith("| geometric mean") for line in lines)  # breadth rows are apart
    assert "max 4.00× (exp" in report.breadth_summary_line(results)
    assert report.breadth_summary(results[:0]) is None


def test_breadth_and_grad_program_workloads_are_registered_last_and_float64():
    from benchmarks import eager_programs
    from benchmarks.workloads import WORKLOADS

    names = [w.name for w in WORKLOADS]
    breadth = [n for n in names if n.startswith("breadth_")]
    assert len(breadth) == 24 == len(eager_programs.BREADTH_OPS)
    # Their JAX contender turns x64 on for the rest of the process: nothing float32 after.
    assert names[-len(breadth) :] == breadth
    assert {"grad_rnn", "grad_em", "grad_fluid"} <= set(names)
    x, _ = eager_programs.breadth_data(lambda a: a)
    assert x.dtype.name == "float64" and x.shape == (40, 60)


def _ns(op: str, medians: dict[str, float]) -> WorkloadResult:
    workload = Workload(f"ns_{op}", f"`{op}(x)`", tuple(Contender(n, _missing) for n in medians))
    return WorkloadResult(
        workload, tuple(ContenderResult(n, (m, m, m), 1) for n, m in medians.items())
    )


def test_namespace_sweep_is_summarised_in_one_sorted_table():
    results = [
        _ns("abs", {"mjnp": 0.6, "numpy": 0.1}),  # NumPy counted as 0.3 µs: 2x
        _ns("inv", {"mjnp": 60.0, "numpy": 5.0}),  # 12x: above 5x
        _ns("sum", {"mjnp": 1.0, "numpy": 2.0}),  # 0.5x
        _fixed("mjnp", "exp", {"mjnp": 8.0, "jax": 8.0, "numpy": 2.0}),
    ]
    n, gm_numpy, (worst_op, worst), _ = report.breadth_summary(results, "ns_")
    assert n == 3 and worst_op == "inv" and worst == pytest.approx(12.0)
    assert gm_numpy == pytest.approx((2.0 * 12.0 * 0.5) ** (1 / 3))
    assert report.namespace_above(results) == ["inv"]
    lines = report.targets_section(results)
    assert not any(line.startswith("| ns_") for line in lines)  # summarised, not listed
    assert "| eager namespace sweep | functions above 5× | 0 | 1 | **missed** |" in lines
    assert any(line.startswith("| eager namespace sweep | max function (inv)") for line in lines)
    table = report.namespace_section(results)
    rows = [line for line in table if line.startswith("| `")]
    assert [r.split("|")[1].strip() for r in rows] == ["`inv(x)`", "`abs(x)`", "`sum(x)`"]
    assert "1 above 5x" in report.breadth_summary_line(results)


def test_namespace_sweep_ops_run_on_numpy_and_are_registered():
    import numpy as onp

    from benchmarks import namespace_ops
    from benchmarks.workloads import WORKLOADS

    data = namespace_ops.namespace_data(lambda a: a)
    for _, fn in namespace_ops.NAMESPACE_OPS.values():
        fn(onp, data)  # every call is valid NumPy on these operands
    names = {w.name for w in WORKLOADS}
    assert {f"ns_{op}" for op in namespace_ops.NAMESPACE_OPS} <= names
    assert len(namespace_ops.NAMESPACE_OPS) >= 100
