"""Run the benchmarks and write RESULTS.md (and a PNG plot when matplotlib is installed).

python -m benchmarks.run [--quick] [--only NAME ...] [--output PATH] [--no-plot] [--list]
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks import report
from benchmarks.harness import FULL, QUICK, Workload, WorkloadResult, run_workload

HERE = Path(__file__).resolve().parent


def select(workloads: Sequence[Workload], patterns: Sequence[str]) -> list[Workload]:
    """The workloads named by `patterns`: exact names, name prefixes or fnmatch globs."""
    if not patterns:
        return list(workloads)
    chosen = [
        w
        for w in workloads
        if any(w.name.startswith(p) or fnmatch.fnmatchcase(w.name, p) for p in patterns)
    ]
    if not chosen:
        names = ", ".join(w.name for w in workloads)
        raise SystemExit(f"benchmarks.run: no workload matches {list(patterns)}; known: {names}")
    return chosen


def _summary_line(result: WorkloadResult) -> str:
    parts = []
    for r in result.results:
        if r.measured:
            parts.append(f"{r.name} {report.fmt(r.median)} {result.workload.unit}")
        else:
            parts.append(f"{r.name} {r.note}")
    return "  " + "; ".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (< 1 min)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run only workloads with this name, prefix or glob (repeatable)",
    )
    parser.add_argument("--output", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    args = parser.parse_args(argv)

    from benchmarks.workloads import ROOT, WORKLOADS

    if args.list:
        for w in WORKLOADS:
            print(f"{w.name:18} {w.description}")
        return 0
    workloads = select(WORKLOADS, args.only)
    settings = QUICK if args.quick else FULL
    command = "python -m benchmarks.run" + "".join(
        [" --quick" if args.quick else ""] + [f" --only {p}" for p in args.only]
    )

    machine = report.machine_info(ROOT)  # before the run, so the load average is not ours
    start = time.perf_counter()
    results = []
    for w in workloads:
        print(f"{w.name}: {w.description}", flush=True)
        result = run_workload(w, settings)
        print(_summary_line(result), flush=True)
        results.append(result)

    breadth = report.breadth_summary_line(results)
    if breadth is not None:
        print(breadth, flush=True)

    output: Path = args.output
    plot_path = output.with_suffix(".png")
    plot_name = None
    if not args.no_plot:
        skipped = report.write_plot(results, plot_path)
        if skipped is None:
            plot_name = plot_path.name
            print(f"wrote {plot_path}")
        else:
            print(skipped)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(report.render_markdown(results, settings, command, machine, plot_name))
    print(f"wrote {output} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
