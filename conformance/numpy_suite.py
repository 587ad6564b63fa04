"""Run NumPy's own test files against mjnp and compare with NumPy's result on the same files.

    python -m conformance.numpy_suite [--files lib/tests/test_arraypad.py ...] [--quick]
        [--tests NODEID ...] [--failures] [--top N] [--json PATH]

Each file is copied from the installed NumPy package into a temporary directory twice: once
as it is (NumPy's run) and once rewritten so its ``np`` is mjnp (`rewrite_source`). NumPy's
testing helpers (``numpy.testing``, ``np.testing``), NumPy internals the tests import
(``numpy._core...``, ``numpy.lib._*_impl``) and the masked-array/stride-trick helpers stay
NumPy's: they are how a test checks, not what it checks (`conformance._numpy_under_test`).
``numpy.random``, ``numpy.linalg``, ``numpy.fft`` and ``numpy.exceptions`` become mjnp's.
Two adaptations keep the comparison per test (`conformance._numpy_under_test` says why):
module-level code that pytest runs while collecting builds its data with NumPy, and
numpy.testing's value comparisons see mjnp arrays as arrays (``np.asarray``).

Both copies run in their own pytest process with the same plugin
(`conformance._numpy_suite_plugin`): a per-test time limit, a per-file time limit, tests
marked ``slow`` deselected, Hypothesis derandomized without a database. A test counts when
NumPy passes it; it is then *passed* (mjnp passes it too), *xfailed* (it fails and matches an
entry of ``conformance/numpy_suite_xfails.txt``, each with its reason), or *missed* (failed,
errored, skipped, or never ran because the file hit its time limit). The table gives, per
file, passed / counted, the xfailed and missed counts, and mjnp's time against NumPy's.

``--quick`` runs a chosen subset of each file (`QUICK`), for use while developing.
The exit status is 0 when the run completed, whatever the ratio; this is a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy

REPO_ROOT = Path(__file__).resolve().parents[1]
XFAILS_FILE = Path(__file__).with_name("numpy_suite_xfails.txt")
NUMPY_ROOT = Path(numpy.__file__).resolve().parent

#: The files of the issue's measurement, relative to the installed numpy package.
DEFAULT_FILES = (
    "lib/tests/test_function_base.py",
    "lib/tests/test_nanfunctions.py",
    "lib/tests/test_arraypad.py",
    "_core/tests/test_numeric.py",
    "linalg/tests/test_linalg.py",
)

#: ``--quick``: a pytest ``-k`` expression per file, covering the issue's largest causes.
QUICK = {
    "test_function_base.py": "TestPercentile or TestQuantile or TestVectorize or TestWhere",
    "test_nanfunctions.py": "TestNanFunctions_MinMax or TestNanFunctions_ArgminArgmax",
    "test_arraypad.py": "TestConstant",
    "test_numeric.py": "TestBroadcast or TestNonzero or TestArgwhere",
    "test_linalg.py": "TestNormDouble",
}

_MODULE = "conformance._numpy_under_test"

#: (pattern, replacement) applied to each line; first match wins. Order matters: internals
#: (``numpy._core``, ``numpy.lib._x_impl``, ``numpy.linalg._linalg``) and ``numpy.testing`` are
#: matched by none of these and so stay NumPy's.
_REWRITES = (
    (re.compile(r"^(\s*)import numpy as np\b"), rf"\1import {_MODULE} as np"),
    (re.compile(r"^(\s*)import numpy$"), rf"\1import {_MODULE} as numpy"),
    (re.compile(r"^(\s*)from numpy import\b"), rf"\1from {_MODULE} import"),
    (
        re.compile(r"^(\s*)from numpy\.(random|linalg|fft) import\b"),
        rf"\1from {_MODULE}_\2 import",
    ),
    (re.compile(r"^(\s*)from numpy\.exceptions import\b"), r"\1from mjnp.exceptions import"),
    (re.compile(r"^(\s*)from numpy\.testing import\b"), rf"\1from {_MODULE}_testing import"),
    (
        re.compile(r"^(\s*)import numpy\.(linalg|fft|random) as\b"),
        rf"\1import {_MODULE}_\2 as",
    ),
)


def rewrite_source(text: str) -> str:
    """NumPy test source with its namespace under test (``np``, ``from numpy import ...``,
    ``numpy.random``/``linalg``/``fft``/``exceptions``) pointed at mjnp."""
    out = []
    for line in text.splitlines(keepends=True):
        for pattern, replacement in _REWRITES:
            new, n = pattern.subn(replacement, line, count=1)
            if n:
                line = new
                break
        out.append(line)
    return "".join(out)


@dataclass(frozen=True)
class XfailEntry:
    """One line of the xfails file: a test id pattern (``*`` is the only wildcard, so the
    brackets of parametrized ids match literally) and its reason."""

    pattern: str
    reason: str

    def matches(self, nodeid: str) -> bool:
        regex = ".*".join(re.escape(part) for part in self.pattern.split("*"))
        return re.fullmatch(regex, nodeid) is not None


def read_xfails(path: Path) -> list[XfailEntry]:
    """Entries ``<pattern>  # <reason>``; blank and ``#`` lines skipped.

    Raises:
        ValueError: if an entry has no reason after ``#``.
    """
    entries = []
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        pattern, sep, reason = stripped.partition("  #")
        if not sep or not reason.strip():
            raise ValueError(
                f"{path}:{lineno}: xfail entry {pattern.strip()!r} has no reason; "
                "write it as '<test id pattern>  # <one-line reason>'"
            )
        entries.append(XfailEntry(pattern.strip(), reason.strip()))
    return entries


@dataclass(frozen=True)
class TestOutcome:
    """A test's combined outcome over setup/call/teardown, and its failure line."""

    outcome: str  # passed, failed, error, skipped, xfailed, xpassed
    message: str = ""


@dataclass
class RunResult:
    """One pytest process over one file: outcome per test id, wall time, a note if cut short."""

    outcomes: dict[str, TestOutcome]
    seconds: float
    note: str = ""
    collect_errors: list[str] = field(default_factory=list)


def combine_record(lines: Sequence[str]) -> tuple[dict[str, TestOutcome], list[str]]:
    """Per-test outcomes from the plugin's JSON lines (phase reports), and collection errors."""
    outcomes: dict[str, TestOutcome] = {}
    collect_errors = []
    for line in lines:
        if not line.strip():
            continue
        entry = json.loads(line)
        nodeid, when, outcome = entry["nodeid"], entry["when"], entry["outcome"]
        message = entry.get("message", "")
        if when == "collect":
            collect_errors.append(f"{nodeid}: {message}")
            continue
        previous = outcomes.get(nodeid)
        if when == "setup":
            if outcome == "failed":
                outcomes[nodeid] = TestOutcome("error", message)
            elif outcome == "skipped":
                kind = "xfailed" if entry.get("xfail") else "skipped"
                outcomes[nodeid] = TestOutcome(kind, message)
        elif when == "call":
            if entry.get("xfail"):
                kind = "xfailed" if outcome == "skipped" else "xpassed"
            else:
                kind = outcome
            outcomes[nodeid] = TestOutcome(kind, message)
        elif when == "teardown" and outcome == "failed":
            if previous is None or previous.outcome == "passed":
                outcomes[nodeid] = TestOutcome("error", message)
    return outcomes, collect_errors


def run_copy(
    source: Path, under_test: str, workdir: Path, args: argparse.Namespace, select: Sequence[str]
) -> RunResult:
    """Copy ``source`` into ``workdir/under_test`` (rewritten for mjnp), run it, read the record."""
    dest_dir = workdir / under_test
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / source.name
    text = source.read_text()
    dest.write_text(rewrite_source(text) if under_test == "mjnp" else text)
    record = dest_dir / (source.stem + ".record.jsonl")
    record.unlink(missing_ok=True)
    targets = list(select) or [source.name]
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        *targets,
        "-q",
        # Python's own traceback text: pytest's styles parse each frame's source file (about a
        # second a failure in NumPy's 4000-line files), which would charge failures as time.
        "--tb=native",
        "-p",
        "no:cacheprovider",
        "-p",
        "conformance._numpy_suite_plugin",
        "--npsuite-record",
        str(record),
        "--npsuite-test-timeout",
        str(args.test_timeout),
        "-m",
        "not slow",
        "--rootdir",
        str(dest_dir),
        "-c",
        os.devnull,
        "--hypothesis-profile",
        "npsuite",
        "-W",
        "ignore::pytest.PytestUnknownMarkWarning",
    ]
    if args.quick and not select:
        cmd += ["-k", QUICK.get(source.name, "")]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    (dest_dir / "conftest.py").write_text(_CONFTEST)
    start = time.monotonic()
    note = ""
    try:
        subprocess.run(
            cmd,
            cwd=dest_dir,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=args.file_timeout,
        )
    except subprocess.TimeoutExpired:
        note = f"stopped at the {args.file_timeout:.0f} s file limit"
    seconds = time.monotonic() - start
    record.with_suffix(".run.json").write_text(json.dumps({"seconds": seconds, "note": note}))
    return read_run(record)


def read_run(record: Path) -> RunResult:
    """A finished run from its record (and the wall time and note saved beside it)."""
    lines = record.read_text().splitlines() if record.is_file() else []
    outcomes, collect_errors = combine_record(lines)
    info_file = record.with_suffix(".run.json")
    info = json.loads(info_file.read_text()) if info_file.is_file() else {}
    return RunResult(outcomes, info.get("seconds", 0.0), info.get("note", ""), collect_errors)


#: Written beside each copy: NumPy's Hypothesis settings for ``np.test()`` (derandomized,
#: no database, no deadline), so both runs draw the same examples. No shrink phase: a failing
#: property test fails at its first failing example rather than spending up to the per-test
#: limit minimizing it (the outcome is the same; only the reported example is not minimal).
_CONFTEST = """\
import hypothesis

hypothesis.settings.register_profile(
    "npsuite", deadline=None, database=None, derandomize=True,
    suppress_health_check=list(hypothesis.HealthCheck),
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.reuse, hypothesis.Phase.generate],
)
"""


@dataclass(frozen=True)
class FileComparison:
    """mjnp against NumPy on one file, counting only the tests NumPy passes."""

    name: str
    counted: int
    passed: int
    xfailed: int
    missed: dict[str, tuple[str, str]]  # nodeid -> (kind, message)
    xfail_reasons: Counter
    mjnp_seconds: float
    numpy_seconds: float
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.passed / self.counted if self.counted else 1.0


def compare(
    name: str, mj: RunResult, ref: RunResult, xfails: Sequence[XfailEntry]
) -> FileComparison:
    """Classify each test NumPy passed by what mjnp did with it."""
    passed = xfailed = 0
    missed: dict[str, tuple[str, str]] = {}
    reasons: Counter = Counter()
    for nodeid, ref_outcome in sorted(ref.outcomes.items()):
        if ref_outcome.outcome != "passed":
            continue
        got = mj.outcomes.get(nodeid)
        if got is not None and got.outcome == "passed":
            passed += 1
            continue
        entry = next((e for e in xfails if e.matches(nodeid)), None)
        if entry is not None:
            xfailed += 1
            reasons[entry.reason] += 1
            continue
        if got is None:
            kind = "collection error" if mj.collect_errors else "not run"
            message = mj.collect_errors[0] if mj.collect_errors else mj.note
            missed[nodeid] = (kind, message)
        else:
            missed[nodeid] = (got.outcome, got.message)
    counted = sum(o.outcome == "passed" for o in ref.outcomes.values())
    note = "; ".join(
        filter(None, [mj.note and f"mjnp {mj.note}", ref.note and f"NumPy {ref.note}"])
    )
    return FileComparison(
        name, counted, passed, xfailed, missed, reasons, mj.seconds, ref.seconds, note
    )


def print_table(rows: Sequence[FileComparison]) -> None:
    """One row per file and a total: passed/counted, xfailed, missed, times."""
    width = max(len(r.name) for r in rows + [FileComparison("TOTAL", 0, 0, 0, {}, Counter(), 0, 0)])
    head = (
        f"{'file':<{width}}  {'NumPy ok':>8}  {'mjnp ok':>7}  {'ratio':>6}  {'xfail':>5}  "
        f"{'missed':>6}  {'mjnp s':>7}  {'NumPy s':>7}  {'time x':>6}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        _print_row(r, width)
    total = FileComparison(
        "TOTAL",
        sum(r.counted for r in rows),
        sum(r.passed for r in rows),
        sum(r.xfailed for r in rows),
        {k: v for r in rows for k, v in r.missed.items()},
        sum((r.xfail_reasons for r in rows), Counter()),
        sum(r.mjnp_seconds for r in rows),
        sum(r.numpy_seconds for r in rows),
    )
    print("-" * len(head))
    _print_row(total, width)
    ratio_xf = (total.passed + total.xfailed) / total.counted if total.counted else 1.0
    print(f"\npassed or xfailed-with-reason: {ratio_xf:.1%} of the tests NumPy passes")
    if total.xfail_reasons:
        print("\nxfailed, by reason:")
        for reason, n in total.xfail_reasons.most_common():
            print(f"  {n:5d}  {reason}")


def _print_row(r: FileComparison, width: int) -> None:
    times = r.mjnp_seconds / r.numpy_seconds if r.numpy_seconds else float("nan")
    note = f"  ({r.note})" if r.note else ""
    print(
        f"{r.name:<{width}}  {r.counted:>8}  {r.passed:>7}  {r.ratio:>6.1%}  {r.xfailed:>5}  "
        f"{len(r.missed):>6}  {r.mjnp_seconds:>7.1f}  {r.numpy_seconds:>7.1f}  {times:>5.1f}x"
        f"{note}"
    )


#: Broad causes of a missed test, by its failure line (first match wins), for the summary.
_CAUSES = (
    ("never ran (file time limit)", r"^not run$"),
    ("file failed to collect", r"^collection error$"),
    ("longdouble", r"float128|complex256|longdouble|\(from '[gG]'\)"),
    (
        "object/str/bytes/datetime/structured dtype",
        r"dtype\(\[|dtype\('(O|[<>|]?[USVMm]\w*|[<>]?[Mm]8\[?\w*\]?)'\)",
    ),
    ("exception message differs", r"Regex pattern did not match|does not match"),
    ("missing warning", r"DID NOT WARN|No warnings of type"),
    ("no exception where NumPy raises", r"DID NOT RAISE"),
    ("missing function, method or keyword", r"has no attribute|unexpected keyword|no attribute"),
    ("test ran past the per-test limit", r"TestTimeout|--npsuite-test-timeout"),
    ("array flags, strides or memory views", r"flags|strides|OWNDATA|WRITEABLE|may_share_memory"),
)


def cause_of(kind: str, message: str) -> str:
    """The broad cause (`_CAUSES`) of a missed test, else 'other'."""
    text = message if kind not in ("not run", "collection error") else kind
    for cause, pattern in _CAUSES:
        if re.search(pattern, text):
            return cause
    return "other (wrong values, dtypes or errors on valid input)"


def _message_key(kind: str, message: str) -> str:
    """A failure message with numbers and quoted values blurred, to group alike failures."""
    message = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", message)
    message = re.sub(r"\d+(\.\d+)?", "N", message)
    return f"{kind}: {message[:140]}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.numpy_suite", description=__doc__)
    parser.add_argument(
        "--files",
        nargs="*",
        default=list(DEFAULT_FILES),
        help="paths relative to the numpy package (default: the issue's five)",
    )
    parser.add_argument(
        "--tests",
        nargs="*",
        default=[],
        help="run only these ids within each file (e.g. 'TestWhere::test_basic')",
    )
    parser.add_argument("--quick", action="store_true", help="a chosen subset of each file")
    parser.add_argument("--test-timeout", type=float, default=60.0, help="seconds per test")
    parser.add_argument("--file-timeout", type=float, default=1200.0, help="seconds per file")
    parser.add_argument("--xfails", type=Path, default=XFAILS_FILE)
    parser.add_argument("--failures", action="store_true", help="list every missed test")
    parser.add_argument("--top", type=int, default=15, help="most common failure messages")
    parser.add_argument("--json", type=Path, default=None, help="write the comparison here")
    parser.add_argument("--keep", type=Path, default=None, help="work here and keep the copies")
    parser.add_argument(
        "--from-records",
        type=Path,
        default=None,
        help="do not run: compare the records a '--keep DIR' run left in DIR",
    )
    args = parser.parse_args(argv)
    xfails = read_xfails(args.xfails)
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="npsuite-"))
    rows = []
    try:
        for rel in args.files:
            source = NUMPY_ROOT / rel
            if not source.is_file():
                raise SystemExit(f"conformance.numpy_suite: no such NumPy test file: {source}")
            select = [t for t in args.tests if t.split("::")[0] == source.name]
            if args.tests and not select:
                continue
            if args.from_records:  # compare an earlier run again (after editing xfails)
                record = f"{source.stem}.record.jsonl"
                ref = read_run(args.from_records / "numpy" / record)
                mj = read_run(args.from_records / "mjnp" / record)
            else:
                ref = run_copy(source, "numpy", workdir, args, select)
                mj = run_copy(source, "mjnp", workdir, args, select)
            rows.append(compare(source.name, mj, ref, xfails))
            print(f"ran {rel}", file=sys.stderr, flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print_table(rows)
    all_missed = {k: v for r in rows for k, v in r.missed.items()}
    if all_missed:
        print(f"\nthe {len(all_missed)} missed tests by cause:")
        causes = Counter(cause_of(*v) for v in all_missed.values())
        for cause, n in causes.most_common():
            print(f"  {n:5d}  {n / len(all_missed):6.1%}  {cause}")
    if args.top and all_missed:
        print(f"\nmost common causes of the {len(all_missed)} missed tests:")
        for key, n in Counter(_message_key(*v) for v in all_missed.values()).most_common(args.top):
            print(f"  {n:5d}  {key}")
    if args.failures:
        print("\nmissed:")
        for nodeid, (kind, message) in sorted(all_missed.items()):
            print(f"  {nodeid}  [{kind}] {message}")
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "file": r.name,
                        "numpy_passed": r.counted,
                        "mjnp_passed": r.passed,
                        "xfailed": r.xfailed,
                        "missed": r.missed,
                        "mjnp_seconds": r.mjnp_seconds,
                        "numpy_seconds": r.numpy_seconds,
                        "note": r.note,
                    }
                    for r in rows
                ],
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
