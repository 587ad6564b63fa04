"""Measurement: contenders of a workload run interleaved, repeated, summarised by medians.

Within each repetition every contender runs one batch, so machine drift (frequency scaling, a
noisy neighbour, page cache) hits all of them equally and the ratios of medians stay meaningful
on a shared 2-core machine. The orders follow a Williams design (`balanced_orders`, contenders
assigned to its slots by a seeded shuffle): each contender runs right after each other one
equally often, since the batch after NumPy's allocation-heavy loop or BLAS call starts with
cold caches or spinning threads.
"""

from __future__ import annotations

import math
import random
import statistics
import time
import types
from collections.abc import Callable
from dataclasses import dataclass

# Contender names the ratio columns divide by, in this order, when a workload has them.
BASELINES = ("jax", "numpy")
# The contender the summary reports: what this project builds.
SUBJECT = "mjnp"

_MAX_CALLS_PER_BATCH = 1_000_000
_PROBES = 3  # probe batches per calibration step
_NOTE_LENGTH = 120


class Unavailable(Exception):  # noqa: N818  (a state to report, not an error)
    """A contender cannot run yet (a missing feature or module); reported as `n/a (reason)`."""


@dataclass(frozen=True)
class Settings:
    """How much to measure: `repeats` batches per timed contender, `process_repeats` samples
    per self-timed one (those start a subprocess each), batches of at least `min_batch_ns`."""

    repeats: int
    process_repeats: int
    min_batch_ns: int = 1_000_000


QUICK = Settings(repeats=11, process_repeats=3)
# 100 repetitions (a multiple of every Williams design up to five contenders) settle the
# medians of the ~1 ms batches to a few percent on this shared machine; 41 left 10-20%.
FULL = Settings(repeats=100, process_repeats=7)


@dataclass(frozen=True)
class Contender:
    """One way of doing a workload.

    `prepare()` does all set-up (imports, device transfer) and returns the zero-argument call
    to measure, or raises `Unavailable`. In a timed workload its first call is a warm-up
    (compilation, caches) and is not measured.
    """

    name: str
    prepare: Callable[[], Callable[[], object]]


@dataclass(frozen=True)
class Workload:
    """A task measured for several contenders.

    A timed workload reports microseconds per call, from batches of k calls timed with
    `perf_counter_ns`. A self-timed one (`unit` other than µs, e.g. a subprocess's import time
    in ms or its peak RSS in MB) has calls that return their own sample in `unit`.
    `throughput=(amount, unit)` adds a rate column: `amount` per call divided by the median time
    in seconds, e.g. `(2 * n**3 / 1e9, "GFLOP/s")`.

    With `lead_in` (the default) each timed batch follows one untimed call. Interleaving
    leaves a batch's first call with caches its predecessors evicted (for float32[1e6]
    operands, 2-3x a warm call), and contenders get different calls per batch, so without it
    the ratio would mostly say how many warm calls dilute one cold one. A workload whose every
    call is cold by design (a fresh compile) sets it off.
    """

    name: str
    description: str
    contenders: tuple[Contender, ...]
    unit: str = "µs"
    throughput: tuple[float, str] | None = None
    lead_in: bool = True
    # At most this many repetitions, whatever the settings: for workloads whose one call
    # takes tens of milliseconds (the eager-grad programs), so `make bench` stays short.
    max_repeats: int | None = None

    @property
    def self_timed(self) -> bool:
        return self.unit != "µs"


@dataclass(frozen=True)
class ContenderResult:
    """The samples of one contender, or the note saying why there are none."""

    name: str
    samples: tuple[float, ...] = ()
    calls_per_batch: int = 0
    note: str = ""

    @property
    def measured(self) -> bool:
        return bool(self.samples) and not self.note

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def low(self) -> float:
        return min(self.samples)

    @property
    def high(self) -> float:
        return max(self.samples)


@dataclass(frozen=True)
class WorkloadResult:
    workload: Workload
    results: tuple[ContenderResult, ...]

    def get(self, name: str) -> ContenderResult | None:
        for r in self.results:
            if r.name == name:
                return r
        return None

    def ratio(self, name: str, baseline: str) -> float | None:
        """median(name) / median(baseline), or None when either was not measured."""
        a, b = self.get(name), self.get(baseline)
        if a is None or b is None or not a.measured or not b.measured or b.median <= 0:
            return None
        return a.median / b.median

    def baselines(self) -> list[str]:
        """The baseline contenders this workload has (its ratio columns)."""
        names = {c.name for c in self.workload.contenders}
        return [b for b in BASELINES if b in names]


def describe_failure(err: BaseException) -> str:
    """The note for a contender that could not run: `n/a (...)` for a missing feature."""
    if isinstance(err, Unavailable):
        return f"n/a ({err})"
    if isinstance(err, AttributeError) and isinstance(err.obj, types.ModuleType):
        return f"n/a ({err.obj.__name__}.{err.name} missing)"
    if isinstance(err, ModuleNotFoundError):
        return f"n/a (no module {err.name})"
    if isinstance(err, TypeError) and "unsupported operand" in str(err):
        return f"n/a ({err})"
    message = str(err).splitlines()[0] if str(err) else ""
    text = f"error ({type(err).__name__}: {message})"
    return text if len(text) <= _NOTE_LENGTH else text[: _NOTE_LENGTH - 4] + "...)"


WARM_UP_CALLS = 5
_ORDER_SEED = 0
WARM_UP_NS = 1_000_000_000


def warm_up(fn: Callable[[], object]) -> None:
    """Call `fn` a few times (at most about a second's worth) before calibrating.

    The first calls compile, fill caches and fault in pages; some libraries also specialise
    after a few calls. Calibrating on a call that still pays for that would size the batches
    too small.
    """
    start = time.perf_counter_ns()
    for _ in range(WARM_UP_CALLS):
        fn()
        if time.perf_counter_ns() - start > WARM_UP_NS:
            break


def time_batch(fn: Callable[[], object], k: int) -> int:
    """Nanoseconds for k back-to-back calls of `fn`."""
    start = time.perf_counter_ns()
    for _ in range(k):
        fn()
    return time.perf_counter_ns() - start


def calibrate(fn: Callable[[], object], min_batch_ns: int) -> int:
    """The number of calls for a batch to take `min_batch_ns` when the machine is undisturbed.

    The per-call cost is the least of a few probe batches of at least a tenth of that, so a
    preempted probe cannot inflate it. Every contender then gets batches of about the same
    undisturbed length, and so the same chance of being hit by a busy neighbour: on a shared
    machine a contender with longer batches would otherwise be hit more often.
    """
    k = 1
    while True:
        per_call_ns = min(time_batch(fn, k) for _ in range(_PROBES)) / k
        if per_call_ns * k >= min_batch_ns / 10 or k >= _MAX_CALLS_PER_BATCH:
            break
        k = min(_MAX_CALLS_PER_BATCH, max(2 * k, math.ceil(min_batch_ns / 10 / per_call_ns)))
    return max(1, min(_MAX_CALLS_PER_BATCH, math.ceil(min_batch_ns / max(per_call_ns, 1))))


def run_workload(workload: Workload, settings: Settings) -> WorkloadResult:
    """Prepare, warm up and calibrate every contender, then measure them interleaved."""
    calls: dict[str, Callable[[], object]] = {}
    batch: dict[str, int] = {}
    notes: dict[str, str] = {}
    samples: dict[str, list[float]] = {}
    for contender in workload.contenders:
        try:
            fn = contender.prepare()
            if not workload.self_timed:  # a self-timed sample is a fresh process: no warm-up
                warm_up(fn)
        except Exception as err:  # a contender's failure is reported, never fatal to the run
            notes[contender.name] = describe_failure(err)
            continue
        calls[contender.name] = fn
        samples[contender.name] = []
    # Calibrated only once every contender is warm: the first one calibrated right after its
    # own warm-up could still pay for process-wide first-use costs (the allocator's first large
    # blocks, page faults) that the others never see, and get batches too short to amortise
    # the first call of a batch.
    for name, fn in list(calls.items()):
        try:
            batch[name] = 1 if workload.self_timed else calibrate(fn, settings.min_batch_ns)
        except Exception as err:  # as above: reported, never fatal
            notes[name] = describe_failure(err)
            del calls[name], samples[name]

    repeats = settings.process_repeats if workload.self_timed else settings.repeats
    if workload.max_repeats is not None:
        repeats = min(repeats, workload.max_repeats)
    names = list(calls)
    random.Random(_ORDER_SEED).shuffle(names)
    orders = balanced_orders(len(names))
    for rep in range(repeats):
        for name in (names[i] for i in orders[rep % len(orders)]):
            if name in notes:
                continue
            try:
                samples[name].append(_sample(workload, calls[name], batch[name]))
            except Exception as err:
                notes[name] = describe_failure(err)

    results = tuple(
        ContenderResult(
            c.name,
            tuple(samples.get(c.name, ())),
            batch.get(c.name, 0),
            notes.get(c.name, ""),
        )
        for c in workload.contenders
    )
    return WorkloadResult(workload, results)


def balanced_orders(n: int) -> list[list[int]]:
    """Orders of n contenders in which each one runs right after each other one equally often
    (a Williams design: n orders for even n, 2n for odd n).

    What runs just before a batch matters on this machine: NumPy's BLAS threads keep spinning
    for a while after a matmul, and a large-array contender evicts the caches. With random
    orders, 41 repetitions can put one contender after NumPy several times more often than
    another (a 1024x1024 matmul measured 1.19x JAX's time that way, 1.03x in alternation).
    """
    first = [0]
    low, high = 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    orders = [[(i + shift) % n for i in first] for shift in range(n)]
    if n % 2:
        orders += [list(reversed(order)) for order in orders]
    return orders


def _sample(workload: Workload, fn: Callable[[], object], k: int) -> float:
    if workload.self_timed:
        return float(fn())  # type: ignore[arg-type]
    if workload.lead_in:
        fn()
    return time_batch(fn, k) / k / 1e3
