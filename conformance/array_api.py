"""Run a checkout of the Array API test suite (data-apis/array-api-tests) against mjnp.

    python -m conformance.array_api --suite /tmp/array-api-tests [--max-examples 10]
        [--files test_creation_functions.py ...] [--jobs 2] [--failures]

Each test file runs in its own pytest process, so a collection error in one file (a missing
name at import time) costs that file only. Every process uses the same bounded Hypothesis
budget: ``--max-examples`` examples per test (default 10; the suite's own "unvectorized" tests
get a tenth), a fixed ``--hypothesis-seed`` (default 0), no deadline (``--disable-deadline``:
first calls compile XLA executables), the ``too_slow`` health check off for the same reason
(``conformance.hypothesis_profile``) and a fresh, empty Hypothesis database, so two runs with
the same arguments on the same mjnp draw the same examples.

Known failures are listed in ``conformance/xfails.txt``: one suite test id (or id prefix, as
the suite's ``--xfails-file`` matches them) per line, each followed by ``# reason``. The
suite's own parser would read the reason as part of the id, so the runner hands it a copy
with the reasons stripped, and refuses an entry without one.

The exit status is 0 when no test failed or errored (xfails and skips are fine), else 1.
The suite is never copied into this repository; see conformance/README.md for how to get it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

REPO_ROOT = Path(__file__).resolve().parents[1]
XFAILS_FILE = Path(__file__).with_name("xfails.txt")
OUTCOMES = ("passed", "failed", "error", "xfailed", "xpassed", "skipped")


@dataclass(frozen=True)
class FileResult:
    """Outcome counts for one suite test file, and the one-line message of each failure."""

    name: str
    counts: dict[str, int]
    seconds: float
    failures: tuple[tuple[str, str], ...] = field(default=())
    note: str = ""


def read_xfails(path: Path) -> list[str]:
    """Test ids from an xfails file: ``id  # reason`` per line; blank and ``#`` lines skipped.

    Raises:
        ValueError: if an entry has no reason after ``#``.
    """
    ids = []
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        test_id, sep, reason = stripped.partition("#")
        if not sep or not reason.strip():
            raise ValueError(
                f"{path}:{lineno}: xfail entry {test_id.strip()!r} has no reason; "
                "write it as '<test id>  # <one-line reason>'"
            )
        ids.append(test_id.strip())
    return ids


def check_suite(suite: Path) -> None:
    """Fail early, with the fix, when ``suite`` is not a usable checkout."""
    if not (suite / "array_api_tests" / "__init__.py").is_file():
        raise SystemExit(
            f"conformance.array_api: {suite} is not a checkout of data-apis/array-api-tests "
            "(no array_api_tests/__init__.py); see conformance/README.md"
        )
    if not (suite / "array-api" / "src" / "array_api_stubs").is_dir():
        raise SystemExit(
            f"conformance.array_api: {suite}/array-api is empty; the suite reads signatures from "
            "its spec submodule: run 'git submodule update --init' in the suite checkout"
        )


def suite_files(suite: Path, only: Sequence[str]) -> list[str]:
    """The suite's test files, or the requested ones (given as names, with or without .py)."""
    available = sorted(p.name for p in (suite / "array_api_tests").glob("test_*.py"))
    if not only:
        return available
    wanted = [Path(f).name if Path(f).name.endswith(".py") else f"{Path(f).name}.py" for f in only]
    unknown = [f for f in wanted if f not in available]
    if unknown:
        raise SystemExit(f"conformance.array_api: no such suite file(s): {', '.join(unknown)}")
    return wanted


def run_file(
    suite: Path, name: str, args: argparse.Namespace, xfails: Path, workdir: Path
) -> FileResult:
    """Run one suite file in a fresh pytest process and read its JSON report."""
    report = workdir / f"{name}.json"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        f"array_api_tests/{name}",
        "-q",
        "--tb=line",
        "-p",
        "no:cacheprovider",
        "--max-examples",
        str(args.max_examples),
        "--hypothesis-seed",
        str(args.seed),
        "--disable-deadline",
        "-p",
        "conformance.hypothesis_profile",
        "--xfails-file",
        str(xfails),
        "--json-report",
        f"--json-report-file={report}",
        *args.pytest_args,
    ]
    env = dict(os.environ)
    env["ARRAY_API_TESTS_MODULE"] = args.module
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(workdir / f"{name}.hypothesis")
    start = time.monotonic()
    try:
        proc = subprocess.run(
            cmd, cwd=suite, env=env, capture_output=True, text=True, timeout=args.timeout
        )
    except subprocess.TimeoutExpired:
        counts = dict.fromkeys(OUTCOMES, 0) | {"error": 1}
        return FileResult(name, counts, time.monotonic() - start, note="timed out")
    seconds = time.monotonic() - start
    if not report.is_file():
        counts = dict.fromkeys(OUTCOMES, 0) | {"error": 1}
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or ["no output"]
        return FileResult(name, counts, seconds, note=f"pytest crashed: {tail[0]}")
    return parse_report(name, json.loads(report.read_text()), seconds)


def parse_report(name: str, data: dict, seconds: float) -> FileResult:
    """Counts and failure messages from a pytest-json-report document."""
    counts = dict.fromkeys(OUTCOMES, 0)
    failures = []
    for test in data.get("tests", []):
        outcome = test["outcome"]
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome in ("failed", "error"):
            failures.append((test["nodeid"], _crash_message(test)))
    note = ""
    for collector in data.get("collectors", []):
        if collector.get("outcome") == "failed":
            counts["error"] += 1
            message = collector.get("longrepr", "").strip().splitlines()[-1:] or [""]
            failures.append((collector["nodeid"] or name, message[0]))
            note = "collection error"
    return FileResult(name, counts, seconds, tuple(failures), note)


def _crash_message(test: dict) -> str:
    for stage in ("setup", "call", "teardown"):
        crash = test.get(stage, {}).get("crash")
        if test.get(stage, {}).get("outcome") in ("failed", "error") and crash:
            return crash.get("message", "").strip().splitlines()[0] if crash["message"] else ""
    return ""


def suite_commit(suite: Path) -> str:
    """The checked-out commit of the suite, for the report."""
    proc = subprocess.run(
        ["git", "-C", str(suite), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    return proc.stdout.strip() or "unknown"


def print_table(results: Sequence[FileResult], out: TextIO = sys.stdout) -> dict[str, int]:
    """Print one row per file and a totals row; return the totals."""
    width = max([len(r.name) for r in results] + [len("TOTAL")])
    header = f"{'file':<{width}}  " + "  ".join(f"{o:>7}" for o in OUTCOMES) + "  seconds"
    print(header, file=out)
    print("-" * len(header), file=out)
    totals = dict.fromkeys(OUTCOMES, 0)
    for r in results:
        for o in OUTCOMES:
            totals[o] += r.counts.get(o, 0)
        cells = "  ".join(f"{r.counts.get(o, 0):>7}" for o in OUTCOMES)
        note = f"  ({r.note})" if r.note else ""
        print(f"{r.name:<{width}}  {cells}  {r.seconds:7.1f}{note}", file=out)
    print("-" * len(header), file=out)
    cells = "  ".join(f"{totals[o]:>7}" for o in OUTCOMES)
    print(f"{'TOTAL':<{width}}  {cells}  {sum(r.seconds for r in results):7.1f}", file=out)
    return totals


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.array_api",
        description="Run data-apis/array-api-tests against mjnp, one process per test file.",
    )
    parser.add_argument("--suite", required=True, type=Path, help="array-api-tests checkout")
    parser.add_argument("--max-examples", type=int, default=10, help="Hypothesis examples/test")
    parser.add_argument("--seed", type=int, default=0, help="--hypothesis-seed for every file")
    parser.add_argument("--files", nargs="+", default=[], help="suite files to run (default all)")
    parser.add_argument("--jobs", type=int, default=1, help="files run in parallel")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per file")
    parser.add_argument("--module", default="mjnp", help="ARRAY_API_TESTS_MODULE")
    parser.add_argument("--xfails", type=Path, default=XFAILS_FILE, help="xfails file")
    parser.add_argument("--failures", action="store_true", help="list each failure's message")
    parser.add_argument("--json", type=Path, help="write per-file counts and failures here")
    parser.add_argument(
        "pytest_args", nargs="*", help="extra pytest arguments, after '--' (e.g. -k sum)"
    )
    args = parser.parse_args(argv)

    suite = args.suite.resolve()
    check_suite(suite)
    try:
        xfail_ids = read_xfails(args.xfails)
    except ValueError as err:
        raise SystemExit(f"conformance.array_api: {err}") from err
    files = suite_files(suite, args.files)
    commit = suite_commit(suite)
    print(
        f"array-api-tests {commit[:12]} against {args.module}: {len(files)} file(s), "
        f"max_examples={args.max_examples}, seed={args.seed}, deadline disabled",
        flush=True,
    )

    with tempfile.TemporaryDirectory(prefix="mjnp-array-api-") as tmp:
        workdir = Path(tmp)
        xfails = workdir / "xfails.txt"
        xfails.write_text("".join(f"{test_id}\n" for test_id in xfail_ids))
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(run_file, suite, f, args, xfails, workdir) for f in files]
            results = []
            for future in futures:
                result = future.result()
                results.append(result)
                print(f"  {result.name}: {_summary(result.counts)}", flush=True)

    print()
    totals = print_table(results)
    if args.failures:
        print()
        for r in results:
            for nodeid, message in r.failures:
                print(f"{nodeid}: {message}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "suite_commit": commit,
                    "max_examples": args.max_examples,
                    "seed": args.seed,
                    "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                    "totals": totals,
                    "files": [
                        {
                            "name": r.name,
                            "counts": r.counts,
                            "seconds": round(r.seconds, 1),
                            "note": r.note,
                            "failures": [list(f) for f in r.failures],
                        }
                        for r in results
                    ],
                },
                indent=1,
            )
        )
    return 1 if totals["failed"] or totals["error"] else 0


def _summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts.get(o))


if __name__ == "__main__":
    sys.exit(main())
