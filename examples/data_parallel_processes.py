"""Train a small MLP data-parallel over two processes (two CPU devices each, one 4-device
mesh), and check that it prints the same losses as training on one device.

    python examples/data_parallel_processes.py            # launches the 2 processes itself
    python examples/data_parallel_processes.py --processes 3 --devices-per-process 1

Each process joins the others with `mjcore.distributed.initialize`, loads only its own rows of
every batch (`make_array_from_process_local_data`), and runs the same jitted SGD step: XLA's
SPMD partitioner splits the step over the mesh, and the gradient all-reduce crosses the
processes over gloo. The parameters are replicated, so every process holds the whole model.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as onp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from a checkout: mjcore is beside examples/
LAYERS = (16, 32, 32, 4)
BATCH = 64  # the global batch; each process loads BATCH // processes rows of it
STEPS = 8
LEARNING_RATE = 0.5


def init_params() -> list[tuple[onp.ndarray, onp.ndarray]]:
    rng = onp.random.default_rng(0)
    return [
        (
            (rng.standard_normal((m, n)) / onp.sqrt(m)).astype(onp.float32),
            onp.zeros(n, onp.float32),
        )
        for m, n in zip(LAYERS[:-1], LAYERS[1:], strict=True)
    ]


def batch(step: int) -> tuple[onp.ndarray, onp.ndarray]:
    """The global batch of step `step` (inputs, one-hot labels): a fixed synthetic task."""
    rng = onp.random.default_rng(100 + step)
    x = rng.standard_normal((BATCH, LAYERS[0])).astype(onp.float32)
    labels = (x[:, :4].sum(axis=1) > 0).astype(int) + 2 * (x[:, 4] > 0)
    return x, onp.eye(LAYERS[-1], dtype=onp.float32)[labels]


def make_step():  # type: ignore[no-untyped-def]
    import mjcore
    import mjnp as np

    def loss(params, x, onehot):  # type: ignore[no-untyped-def]
        h = x
        for w, b in params[:-1]:
            h = np.tanh(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
        return -np.mean(np.sum(logp * onehot, axis=1))

    @mjcore.jit
    def step(params, x, onehot):  # type: ignore[no-untyped-def]
        value, grads = mjcore.value_and_grad(loss)(params, x, onehot)
        new = [
            (w - LEARNING_RATE * gw, b - LEARNING_RATE * gb)
            for (w, b), (gw, gb) in zip(params, grads, strict=True)
        ]
        return new, value

    return step


def train_one_device() -> list[float]:
    """The reference: the whole batch on one device."""
    step = make_step()
    params = init_params()
    losses = []
    for i in range(STEPS):
        params, value = step(params, *batch(i))
        losses.append(float(value))
    return losses


def train_in_process(process_id: int, processes: int, port: int, devices: int) -> list[float]:
    """This process's part of the data-parallel run."""
    from mjcore.backend import client

    client.set_cpu_device_count(devices)
    import mjcore
    from mjcore.sharding import NamedSharding
    from mjcore.sharding import PartitionSpec as P

    mjcore.distributed.initialize(f"localhost:{port}", processes, process_id)
    mesh = mjcore.make_mesh((mjcore.device_count(),), ("data",))
    rows, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    params = mjcore.tree_util.tree_map(lambda a: mjcore.device_put(a, replicated), init_params())
    per_process = BATCH // processes
    mine = slice(process_id * per_process, (process_id + 1) * per_process)
    step = make_step()
    losses = []
    for i in range(STEPS):
        x, onehot = batch(i)  # (a real input pipeline would load only its own rows)
        x = mjcore.make_array_from_process_local_data(rows, x[mine])
        onehot = mjcore.make_array_from_process_local_data(rows, onehot[mine])
        params, value = step(params, x, onehot)
        losses.append(float(value))  # replicated: every process holds the loss
    mjcore.distributed.shutdown()
    return losses


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


def main(processes: int = 2, devices_per_process: int = 2, timeout: float = 300) -> int:
    """Launch the processes, train on one device here, and compare the losses."""
    if BATCH % (processes * devices_per_process):
        raise SystemExit(f"the batch of {BATCH} must split evenly over the devices")
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--process-id",
                str(p),
                "--processes",
                str(processes),
                "--devices-per-process",
                str(devices_per_process),
                "--port",
                str(port),
            ],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for p in range(processes)
    ]
    reference = train_one_device()
    runs = []
    for p, proc in enumerate(procs):
        out, _ = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            raise SystemExit(f"process {p} failed (exit status {proc.returncode})")
        runs.append([float(v) for v in out.split("LOSSES ", 1)[1].split()])
    print(
        f"{'step':>4}  {'one device':>12}  "
        + "  ".join(f"{f'process {p}':>12}" for p in range(processes))
    )
    for i, ref in enumerate(reference):
        print(f"{i:>4}  {ref:12.7f}  " + "  ".join(f"{r[i]:12.7f}" for r in runs))
    worst = max(abs(r[i] - ref) / abs(ref) for r in runs for i, ref in enumerate(reference))
    same = worst < 1e-5
    print(
        f"largest relative difference from one device: {worst:.1e} -> "
        + ("same losses" if same else "DIFFERENT LOSSES")
    )
    return 0 if same else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--devices-per-process", type=int, default=2)
    parser.add_argument("--process-id", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.process_id is None:
        sys.exit(main(args.processes, args.devices_per_process))
    losses = train_in_process(args.process_id, args.processes, args.port, args.devices_per_process)
    print("LOSSES " + " ".join(repr(v) for v in losses), flush=True)
