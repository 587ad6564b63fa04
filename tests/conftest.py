"""Suite-wide hooks.

JAX, the oracle of many tests, keeps every executable it compiles (~3 memory mappings each).
Over the whole suite its code and mjcore's together came near Linux's vm.max_map_count, past
which code can no longer be linked in (the process crashed in XLA's compiler at 96%). mjcore
bounds its own executables (`mjcore/backend/client.py`); JAX's are dropped after each module.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# CI (`CI=true`) draws the same Hypothesis examples on every run, so that a red run names a
# change, not a lucky draw; locally each run explores new examples (`make fuzz` goes further).
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True, scope="module")
def _drop_jax_executables_after_each_module() -> Iterator[None]:
    yield
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.clear_caches()


# A check script's results by path: a module-scoped fixture set up again in this worker (xdist
# may hand it the module's tests in several runs) finds them here.
_CHECK_RESULTS: dict[Path, dict[str, str | None]] = {}


def _run_check_script(script: Path) -> dict[str, str | None]:
    """Run `script` (its `main` runs every `check_*` and prints one line
    `RESULTS {name: null | traceback}`) in a fresh Python process and return that mapping."""
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=540,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULTS "):
            return json.loads(line[len("RESULTS ") :])  # type: ignore[no-any-return]
    raise AssertionError(
        f"{script.name}: the checks did not finish (rc {proc.returncode}):\n{proc.stderr[-4000:]}"
    )


@pytest.fixture(scope="session")
def check_script_results(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[Path], dict[str, str | None]]:
    """`results(script)`: the checks of a script that needs its own process (e.g. 8 CPU
    devices), run once per test session. A subprocess of 8 devices costs ~10-25 s; under
    pytest-xdist (`--dist worksteal` splits a module's tests between the workers) the first
    worker to ask runs it and the others wait for its results, through a file lock in the
    directory that this session's workers share; a failed run is not shared (each reports it)."""

    def results(script: Path) -> dict[str, str | None]:
        if script in _CHECK_RESULTS:
            return _CHECK_RESULTS[script]
        if "PYTEST_XDIST_WORKER" not in os.environ:  # one process: nothing to share
            found = _run_check_script(script)
        else:
            shared = tmp_path_factory.getbasetemp().parent  # this session's, common to workers
            path = shared / f"{script.stem}.results.json"
            with open(shared / f"{script.stem}.results.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not path.exists():
                    path.write_text(json.dumps(_run_check_script(script)))
                found = json.loads(path.read_text())
        _CHECK_RESULTS[script] = found
        return found

    return results


# Modules whose table tests compile the same one-primitive programs, the first module's
# before the second's within each `PrimCase`: test_host_rules runs every equation of a table
# row through its executable, which test_primitives' eager/jit checks of that row then find in
# `compile_text`'s bounded cache (~87% of them, sampled), in the same worker.
_TABLE_MODULES = ("test_host_rules.py", "test_primitives.py")


# Modules with a long fixed cost in one test (a subprocess of 8 devices, two processes joined
# by the distributed runtime, mypy over the packages: ~5-15 s each) run first: at the end of a
# run, one of them would keep one pytest-xdist worker busy while the other has nothing left.
_FIRST_MODULES = (
    "test_collectives.py",
    "test_distributed.py",
    "test_typecheck.py",
    "test_sharding.py",
    "test_executable_budget.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The primitive table case by case (`_table_case_by_case`), then the modules with long
    fixed costs first (`_FIRST_MODULES`, in collection order). Only the order changes."""
    _table_case_by_case(items)
    first = [item for item in items if item.path.name in _FIRST_MODULES]
    if first:
        moved = {id(item) for item in first}
        items[:] = first + [item for item in items if id(item) not in moved]


def _table_case_by_case(items: list[pytest.Item]) -> None:
    """Run the primitive table case by case: every test of one `PrimCase` (host rule, eager,
    abstract, jit, jvp, vmap, ...) one after another, so that the programs they share are
    compiled once and found in `compile_text`'s bounded cache, also when pytest-xdist hands
    contiguous runs of tests to each worker. Only the order changes: the table modules' tests
    move together to where test_primitives' first test was; nothing else moves."""
    blocks = []
    for name in _TABLE_MODULES:
        positions = [i for i, item in enumerate(items) if item.path.name == name]
        if positions and positions[-1] - positions[0] + 1 != len(positions):
            return  # not one contiguous run (e.g. -k picked across): leave the order alone
        blocks.append(positions)
    if not blocks[-1]:
        return
    table = [items[i] for positions in blocks for i in positions]
    first_seen: dict[int, int] = {}

    def case_of(item: pytest.Item) -> object | None:
        callspec = getattr(item, "callspec", None)
        return callspec.params.get("case") if callspec is not None else None

    # Cases are numbered in test_primitives' order; tests without a `case` (corners, checks
    # over the whole table) come after all cases, each module's in its collection order.
    for item in items[blocks[-1][0] : blocks[-1][-1] + 1]:
        case = case_of(item)
        if case is not None:
            first_seen.setdefault(id(case), len(first_seen))
    module_rank = {name: rank for rank, name in enumerate(_TABLE_MODULES)}

    def key(item: pytest.Item) -> tuple[int, int]:
        case = case_of(item)
        index = first_seen.get(id(case), len(first_seen)) if case is not None else len(first_seen)
        return index, module_rank[item.path.name]

    ordered = sorted(table, key=key)  # stable: within a case and module, collection order
    moved = {id(item) for item in table}
    rest = [item for item in items if id(item) not in moved]
    at = sum(1 for item in items[: blocks[-1][0]] if id(item) not in moved)
    items[:] = rest[:at] + ordered + rest[at:]


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of XLA compilations so far (a list holding one count)."""
    from mjcore.backend import compat

    count = [0]
    real = compat.compile_and_load

    def counting(*args: object, **kwargs: object) -> object:
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(compat, "compile_and_load", counting)
    return count
