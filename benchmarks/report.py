"""The report: machine description, a Markdown table per workload, and an optional PNG plot."""

from __future__ import annotations

import datetime
import importlib
import math
import os
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness import SUBJECT, ContenderResult, Settings, WorkloadResult
from benchmarks.targets import (
    BREADTH_GEOMEAN_JAX,
    BREADTH_GEOMEAN_NUMPY,
    BREADTH_MAX_NUMPY,
    BREADTH_PREFIX,
    GEOMEAN_TARGET,
    MISS_REASONS,
    NAMESPACE_GEOMEAN_NUMPY,
    NAMESPACE_MAX_NUMPY,
    NAMESPACE_PREFIX,
    NUMPY_FLOOR_US,
    TARGETS,
)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(module: str) -> str:
    try:
        return str(importlib.import_module(module).__version__)
    except Exception:  # a missing or half-built module is reported, not fatal
        return "n/a"


def _git_revision(root: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "n/a"
    return out.stdout.strip()


def machine_info(root: Path) -> dict[str, str]:
    """What the numbers depend on: CPU, core count and library versions."""
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "nproc": f"{len(os.sched_getaffinity(0))} (of {os.cpu_count()} online)",
        "os": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "jax": f"{_version('jax')} (CPU, x64 off)",
        "jaxlib": _version("jaxlib"),
        "mjnp": _version("mjnp"),
        "git": _git_revision(root),
        "load average": " / ".join(f"{x:.1f}" for x in os.getloadavg()) + " (1 / 5 / 15 min)",
    }


def fmt(value: float) -> str:
    """Three significant digits, no exponent for the magnitudes we see."""
    if value == 0 or not math.isfinite(value):
        return str(value)
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def fmt_ratio(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio:.2f}×"


_SECONDS = {"µs": 1e-6, "ms": 1e-3}


def _header(result: WorkloadResult) -> list[str]:
    w = result.workload
    header = ["contender", f"median ({w.unit})", "min – max"]
    header += [f"÷ {b}" for b in result.baselines()]
    if w.throughput is not None:
        header.append(w.throughput[1])
    header.append("samples" if w.self_timed else "batches × calls")
    return header


def _row(result: WorkloadResult, r: ContenderResult, width: int) -> list[str]:
    if not r.measured:
        return [r.name, r.note or "n/a"] + [""] * (width - 2)
    w = result.workload
    cells = [r.name, fmt(r.median), f"{fmt(r.low)} – {fmt(r.high)}"]
    cells += [fmt_ratio(result.ratio(r.name, b)) for b in result.baselines()]
    if w.throughput is not None:
        cells.append(fmt(w.throughput[0] / (r.median * _SECONDS[w.unit])))
    runs = len(r.samples)
    cells.append(f"{runs} runs" if w.self_timed else f"{runs} × {r.calls_per_batch}")
    return cells


def workload_table(result: WorkloadResult) -> str:
    header = _header(result)
    rows = [header, ["---"] * len(header)]
    rows += [_row(result, r, len(header)) for r in result.results]
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def _subject_cells(result: WorkloadResult) -> list[str]:
    r = result.get(SUBJECT)
    if r is None:
        return ["–", "–", "–"]
    if not r.measured:
        return [r.note, "", ""]
    return [
        f"{fmt(r.median)} {result.workload.unit}",
        fmt_ratio(result.ratio(SUBJECT, "jax")),
        fmt_ratio(result.ratio(SUBJECT, "numpy")),
    ]


def targets_section(results: Sequence[WorkloadResult]) -> list[str]:
    """RESULTS.md's "Targets" table, the geometric mean, and each miss with its reason."""
    lines = [
        "## Targets",
        "",
        "Goals from the benchmark issue (see [targets.py](targets.py)); a miss is listed below "
        "with the reason profiling found.",
        "",
        f"| workload | goal | target | {SUBJECT} ratio | |",
        "| --- | --- | --- | --- | --- |",
    ]
    misses = []
    for r in results:
        target = TARGETS.get(r.workload.name)
        if target is None or r.workload.name.startswith(NAMESPACE_PREFIX):
            continue
        ratio = floored_ratio(r, SUBJECT, target.peer, target.peer_floor)
        verdict = "–" if ratio is None else ("met" if ratio <= target.max_ratio else "**missed**")
        lines.append(
            f"| {r.workload.name} | {target.what} | ≤ {target.max_ratio:g}× {target.peer} | "
            f"{fmt_ratio(ratio)} | {verdict} |"
        )
        if ratio is not None and ratio > target.max_ratio:
            misses.append((r.workload.name, ratio, target))
    # The breadth rows have their own summary below (float64, JAX with x64 on).
    ratios = [
        x
        for x in (r.ratio(SUBJECT, "jax") for r in results if not _is_breadth(r))
        if x is not None and x > 0
    ]
    if ratios:
        geomean = _geomean(ratios)
        verdict = "met" if geomean <= GEOMEAN_TARGET else "**missed**"
        lines.append(
            f"| geometric mean ({len(ratios)} workloads) | all but breadth_* and ns_* | "
            f"≤ {GEOMEAN_TARGET:g}× jax | {fmt_ratio(geomean)} | {verdict} |"
        )
    summary = breadth_summary(results)
    if summary is not None:
        n, gm_numpy, (worst_op, worst), gm_jax = summary
        for what, limit, peer, value in (
            (f"geomean over {n} ops", BREADTH_GEOMEAN_NUMPY, "numpy", gm_numpy),
            (f"max op ({worst_op})", BREADTH_MAX_NUMPY, "numpy", worst),
            (f"geomean over {n} ops", BREADTH_GEOMEAN_JAX, "jax", gm_jax),
        ):
            verdict = "–" if value is None else ("met" if value <= limit else "**missed**")
            lines.append(
                f"| eager breadth | {what} | ≤ {limit:g}× {peer} | {fmt_ratio(value)} | {verdict} |"
            )
    summary = breadth_summary(results, NAMESPACE_PREFIX)
    if summary is not None:
        n, gm_numpy, (worst_op, worst), _ = summary
        above = namespace_above(results)
        for what, limit, value in (
            (f"geomean over {n} functions", NAMESPACE_GEOMEAN_NUMPY, gm_numpy),
            (f"max function ({worst_op})", NAMESPACE_MAX_NUMPY, worst),
        ):
            verdict = "–" if value is None else ("met" if value <= limit else "**missed**")
            lines.append(
                f"| eager namespace sweep | {what} | ≤ {limit:g}× numpy | {fmt_ratio(value)} | "
                f"{verdict} |"
            )
        lines.append(
            f"| eager namespace sweep | functions above {NAMESPACE_MAX_NUMPY:g}× | 0 | "
            f"{len(above)} | {'met' if not above else '**missed**'} |"
        )
    if misses:
        lines += ["", "### Missed targets and why", ""]
        for name, ratio, target in misses:
            reason = MISS_REASONS.get(name, "not profiled yet.")
            lines.append(
                f"- **{name}** ({fmt_ratio(ratio)} {target.peer}, target ≤ "
                f"{target.max_ratio:g}×): {reason}"
            )
    return lines


def floored_ratio(result: WorkloadResult, name: str, peer: str, floor: float = 0.0) -> float | None:
    """median(name) / max(median(peer), floor), or None when either was not measured."""
    a, b = result.get(name), result.get(peer)
    if a is None or b is None or not a.measured or not b.measured:
        return None
    denominator = max(b.median, floor)
    return a.median / denominator if denominator > 0 else None


def _geomean(xs: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _is_breadth(result: WorkloadResult) -> bool:
    """A one-op eager row (breadth or namespace sweep): summarised apart, not plotted."""
    return result.workload.name.startswith((BREADTH_PREFIX, NAMESPACE_PREFIX))


def breadth_summary(
    results: Sequence[WorkloadResult], prefix: str = BREADTH_PREFIX
) -> tuple[int, float | None, tuple[str, float | None], float | None] | None:
    """Over the eager rows named `prefix`...: (ops, geomean mjnp ÷ NumPy with NumPy's time
    counted as at least `NUMPY_FLOOR_US`, (op, ratio) of the largest such ratio, geomean
    mjnp ÷ JAX); None when no such row ran."""
    rows = [r for r in results if r.workload.name.startswith(prefix)]
    if not rows:
        return None
    by_numpy = {
        r.workload.name[len(prefix) :]: floored_ratio(r, SUBJECT, "numpy", NUMPY_FLOOR_US)
        for r in rows
    }
    numpy_ratios = [x for x in by_numpy.values() if x is not None and x > 0]
    jax_ratios = [x for x in (r.ratio(SUBJECT, "jax") for r in rows) if x is not None and x > 0]
    worst: tuple[str, float | None] = ("–", None)
    if numpy_ratios:
        worst = max(
            ((op, x) for op, x in by_numpy.items() if x is not None), key=lambda item: item[1]
        )
    return (
        len(rows),
        _geomean(numpy_ratios) if numpy_ratios else None,
        worst,
        _geomean(jax_ratios) if jax_ratios else None,
    )


def breadth_summary_line(results: Sequence[WorkloadResult]) -> str | None:
    """The one-line summary of the eager breadth rows (and one of the namespace sweep's), or
    None when neither ran."""
    lines = []
    summary = breadth_summary(results)
    if summary is not None:
        n, gm_numpy, (worst_op, worst), gm_jax = summary
        lines.append(
            f"eager breadth ({n} ops, float64[40,60]): geomean mjnp/NumPy {fmt_ratio(gm_numpy)} "
            f"(NumPy counted as >= {NUMPY_FLOOR_US:g} µs; target <= "
            f"{BREADTH_GEOMEAN_NUMPY:g}x), max {fmt_ratio(worst)} ({worst_op}; target <= "
            f"{BREADTH_MAX_NUMPY:g}x), geomean mjnp/JAX {fmt_ratio(gm_jax)} (target <= "
            f"{BREADTH_GEOMEAN_JAX:g}x)"
        )
    summary = breadth_summary(results, NAMESPACE_PREFIX)
    if summary is not None:
        n, gm_numpy, (worst_op, worst), _ = summary
        above = namespace_above(results)
        lines.append(
            f"eager namespace sweep ({n} functions): geomean mjnp/NumPy {fmt_ratio(gm_numpy)} "
            f"(target <= {NAMESPACE_GEOMEAN_NUMPY:g}x), max {fmt_ratio(worst)} ({worst_op}), "
            f"{len(above)} above {NAMESPACE_MAX_NUMPY:g}x"
        )
    return "\n".join(lines) if lines else None


def namespace_above(results: Sequence[WorkloadResult]) -> list[str]:
    """The namespace-sweep functions above `NAMESPACE_MAX_NUMPY` x NumPy's time."""
    out = []
    for r in results:
        if r.workload.name.startswith(NAMESPACE_PREFIX):
            ratio = floored_ratio(r, SUBJECT, "numpy", NUMPY_FLOOR_US)
            if ratio is not None and ratio > NAMESPACE_MAX_NUMPY:
                out.append(r.workload.name[len(NAMESPACE_PREFIX) :])
    return out


def render_markdown(
    results: Sequence[WorkloadResult],
    settings: Settings,
    command: str,
    machine: dict[str, str],
    plot: str | None,
) -> str:
    lines = [
        "# Benchmark results",
        "",
        f"Written by `{command}`. Targets and floors: [README.md](README.md).",
        "",
        "| | |",
        "| --- | --- |",
        *[f"| {k} | {v} |" for k, v in machine.items()],
        f"| repetitions | {settings.repeats} interleaved batches of ≥ "
        f"{settings.min_batch_ns / 1e6:g} ms per contender; {settings.process_repeats} runs per "
        "subprocess contender |",
        "",
        "Ratios divide medians: `÷ jax` is this contender's median over JAX's (below 1 is "
        "faster). Times are per call.",
        "",
        "## Summary",
        "",
        f"| workload | {SUBJECT} | {SUBJECT} ÷ jax | {SUBJECT} ÷ numpy |",
        "| --- | --- | --- | --- |",
    ]
    # The namespace sweep's ~100 rows have one compact table of their own (below).
    table_rows = [r for r in results if not r.workload.name.startswith(NAMESPACE_PREFIX)]
    lines += [f"| {r.workload.name} | " + " | ".join(_subject_cells(r)) + " |" for r in table_rows]
    lines += ["", *targets_section(results)]
    if plot is not None:
        lines += ["", f"![medians with min–max]({plot})"]
    lines += namespace_section(results)
    for r in table_rows:
        lines += ["", f"## {r.workload.name}", "", r.workload.description, "", workload_table(r)]
    return "\n".join(lines) + "\n"


def namespace_section(results: Sequence[WorkloadResult]) -> list[str]:
    """The namespace sweep, one line per function, slowest relative to NumPy first."""
    rows = []
    for r in results:
        if not r.workload.name.startswith(NAMESPACE_PREFIX):
            continue
        a, b = r.get(SUBJECT), r.get("numpy")
        ratio = floored_ratio(r, SUBJECT, "numpy", NUMPY_FLOOR_US)
        if a is None or b is None or ratio is None:
            note = (a.note if a is not None else "") or "not measured"
            rows.append((math.inf, f"| {r.workload.description} | {note} | | |"))
            continue
        rows.append(
            (
                ratio,
                f"| {r.workload.description} | {fmt(a.median)} | {fmt(b.median)} | "
                f"{fmt_ratio(ratio)} |",
            )
        )
    if not rows:
        return []
    rows.sort(key=lambda item: -item[0])
    return [
        "",
        "## Eager namespace sweep",
        "",
        f"Medians per call (µs), {SUBJECT} against NumPy in one run; the ratio counts NumPy's "
        f"time as at least {NUMPY_FLOOR_US:g} µs. Operands: float64[40,60], int64[40,60], "
        "float64[60], 8x8 matrices (`benchmarks/namespace_ops.py`).",
        "",
        f"| call | {SUBJECT} (µs) | numpy (µs) | ÷ numpy |",
        "| --- | --- | --- | --- |",
        *[line for _, line in rows],
    ]


def write_plot(results: Sequence[WorkloadResult], path: Path) -> str | None:
    """Bars of the medians with min–max whiskers, one panel per workload, mjnp in red.

    Returns why the plot was skipped, or None when it was written. The axis ends a little past
    the largest median, so a far outlier clips its whisker instead of flattening every bar.
    """
    try:
        import matplotlib
    except ImportError:
        return "matplotlib is not installed; skipping the plot (pip install matplotlib)"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # The breadth rows (one op each) are in the tables and the summary; 24 panels would drown
    # the plot.
    shown = [r for r in results if any(c.measured for c in r.results) and not _is_breadth(r)]
    if not shown:
        return "nothing was measured; skipping the plot"
    cols = min(3, len(shown))
    rows = math.ceil(len(shown) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 2.2 * rows), squeeze=False)
    for ax in axes.flat[len(shown) :]:
        ax.axis("off")
    for ax, result in zip(axes.flat, shown, strict=False):
        measured = [c for c in result.results if c.measured]
        medians = [c.median for c in measured]
        whiskers = [[c.median - c.low for c in measured], [c.high - c.median for c in measured]]
        colors = ["tab:red" if c.name == SUBJECT else "tab:blue" for c in measured]
        ys = range(len(measured))
        ax.barh(ys, medians, xerr=whiskers, color=colors, capsize=3, ecolor="0.4")
        ax.set_xlim(0, 1.35 * max(medians))
        ax.set_yticks(list(ys), [f"{c.name}  {fmt(c.median)}" for c in measured], fontsize=8)
        ax.invert_yaxis()
        ax.set_title(
            f"{result.workload.name} ({result.workload.unit}, shorter is better)", fontsize=9
        )
        ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return None
