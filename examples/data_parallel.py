"""Data-parallel training of the MLP over several CPU devices with `mjcore.pmap`.

Each device holds a copy of the parameters and one slice of the batch; the gradients are
averaged across devices with `lax.pmean`, so every step equals the one-device step on the
whole batch, and the losses printed match those of one device.

    python examples/data_parallel.py            # 8 devices, then 1, losses side by side
    python examples/data_parallel.py --devices 4 --steps 20
    python examples/data_parallel.py --processes 2    # 8 devices as 2 processes x 4

With `--processes N` the script starts N copies of itself, each with devices / N CPU devices,
joined into one system by `mjcore.distributed` (jaxlib's distributed runtime; the gradient
mean crosses the processes over gloo); each passes the whole batch to `pmap` (mjcore's pmap
takes the global view) and prints the same losses. See also
examples/data_parallel_processes.py, where each process loads only its own rows.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

# The CPU device count is fixed when the backend starts: ask for 8 before importing mjcore.
os.environ.setdefault("MJCORE_NUM_CPU_DEVICES", "8")

import numpy as onp  # noqa: E402

import mjcore  # noqa: E402
import mjnp as np  # noqa: E402
from mjcore import lax  # noqa: E402

LAYERS = (64, 32, 32, 10)
BATCH = 64  # global batch, split evenly over the devices
LEARNING_RATE = 0.1


def init_params(seed: int = 0) -> list[tuple[Any, Any]]:
    rng = onp.random.default_rng(seed)
    return [
        (rng.standard_normal((m, n)) / onp.sqrt(m), onp.zeros(n))
        for m, n in zip(LAYERS[:-1], LAYERS[1:], strict=True)
    ]


def data(seed: int = 1) -> tuple[onp.ndarray, onp.ndarray]:
    rng = onp.random.default_rng(seed)
    x = rng.standard_normal((BATCH, LAYERS[0]))
    labels = rng.integers(0, LAYERS[-1], BATCH)
    return x, onp.eye(LAYERS[-1])[labels]


def loss(params: list[tuple[Any, Any]], x: Any, onehot: Any) -> Any:
    """Mean cross-entropy of the tanh MLP (the one of demo.py and the benchmarks)."""
    h = x
    for w, b in params[:-1]:
        h = np.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    logits = logits - np.max(logits, axis=1, keepdims=True)
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(np.sum(logp * onehot, axis=1))


def sgd(params: Any, grads: Any) -> Any:
    return mjcore.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)


def one_device_step(params: Any, x: Any, onehot: Any) -> tuple[Any, Any]:
    value, grads = mjcore.value_and_grad(loss)(params, x, onehot)
    return sgd(params, grads), value


def parallel_step(params: Any, x: Any, onehot: Any) -> tuple[Any, Any]:
    """Runs on each device on its slice of the batch; gradients averaged over 'batch'."""
    value, grads = mjcore.value_and_grad(loss)(params, x, onehot)
    grads = lax.pmean(grads, "batch")
    return sgd(params, grads), lax.pmean(value, "batch")


def make_step(num_devices: int) -> Any:
    if num_devices == 1:
        return mjcore.jit(one_device_step)
    pstep = mjcore.pmap(
        parallel_step,
        axis_name="batch",
        in_axes=(None, 0, 0),
        out_axes=(None, None),  # parameters and loss are the same on every device
        devices=mjcore.devices()[:num_devices],
    )

    def step(params: Any, x: Any, onehot: Any) -> tuple[Any, Any]:
        shards = (num_devices, BATCH // num_devices)
        return pstep(params, x.reshape(shards + x.shape[1:]), onehot.reshape(shards + (-1,)))

    return step


def main(num_devices: int = 8, steps: int = 10, verbose: bool = True) -> list[float]:
    """Train for `steps` steps on `num_devices` devices; returns the losses."""
    if BATCH % num_devices:
        raise ValueError(f"the batch of {BATCH} does not split over {num_devices} devices")
    if num_devices > mjcore.device_count():
        raise ValueError(
            f"{num_devices} devices requested, {mjcore.device_count()} available (set "
            "MJCORE_NUM_CPU_DEVICES before mjcore starts)"
        )
    step = make_step(num_devices)
    params: Any = init_params()
    x, onehot = data()
    losses = []
    for i in range(steps):
        params, value = step(params, x, onehot)
        losses.append(float(value))
        if verbose:
            print(f"{num_devices} device(s)  step {i:3d}  loss {losses[-1]:.12f}")
    return losses


def run_processes(processes: int, num_devices: int, steps: int) -> list[list[float]]:
    """Train on `num_devices` devices spread over `processes` copies of this script (on this
    machine, ports chosen free); returns each process's losses."""
    import socket
    import subprocess

    if num_devices % processes:
        raise ValueError(f"{num_devices} devices do not split over {processes} processes")
    with socket.socket() as s:
        s.bind(("localhost", 0))
        port = s.getsockname()[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "MJCORE_NUM_CPU_DEVICES": str(num_devices // processes)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    args = ["--devices", str(num_devices), "--steps", str(steps), "--processes", str(processes)]
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, *args, "--process-id", str(p), "--port", str(port)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for p in range(processes)
    ]
    runs = []
    for p, proc in enumerate(procs):
        out, _ = proc.communicate(timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"process {p} failed (exit status {proc.returncode})")
        runs.append([float(v) for v in out.split("LOSSES ", 1)[1].split()])
    return runs


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--process-id", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.process_id is not None:  # one of the processes `--processes` started
        mjcore.distributed.initialize(f"localhost:{args.port}", args.processes, args.process_id)
        losses = main(args.devices, args.steps, verbose=False)
        print("LOSSES " + " ".join(repr(v) for v in losses), flush=True)
        sys.exit(0)
    if args.processes > 1:
        runs = run_processes(args.processes, args.devices, args.steps)
        for i, values in enumerate(zip(*runs, strict=True)):
            shown = "  ".join(f"{v:.12f}" for v in values)
            print(f"{args.devices} devices in {args.processes} processes  step {i:3d}  {shown}")
        parallel = runs[0]
        if any(r != parallel for r in runs):
            sys.exit("the processes printed different losses")
    else:
        parallel = main(args.devices, args.steps)
    single = main(1, args.steps)
    worst = max(abs(a - b) for a, b in zip(parallel, single, strict=True))
    print(f"largest difference from one device: {worst:.3g}")
    sys.exit(0 if worst < 1e-9 else 1)
