#!/usr/bin/env bash
# The GPU device check: on a machine with an NVIDIA GPU, jaxlib and the matching
# jax-cuda12/13-plugin installed (no network needed), run the GPU test subset and a short
# GPU benchmark against JAX on the same GPU, printing ratios. About 2-3 minutes.
#
#   scripts/gpu_check.sh                  # uses $PYTHON, else python3
#   PYTHON=.venv/bin/python scripts/gpu_check.sh
#
# Exits 0 when the tests pass (the benchmark's ratios are printed, not asserted: timings
# belong in benchmarks/); 2 when there is no usable GPU.
set -u
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
# Two clients share the GPU in the benchmark (JAX's and mjcore's): neither may take 75% of
# its memory up front.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

echo "== environment"
"$PY" - <<'PY' || exit 2
import sys, importlib.util
import jaxlib.version
print("python", sys.version.split()[0], "jaxlib", jaxlib.version.__version__)
for pkg in ("jax_cuda13_plugin", "jax_cuda12_plugin"):
    if importlib.util.find_spec(pkg):
        mod = __import__(pkg + ".version", fromlist=["__version__"])
        print(pkg, mod.__version__)
import mjcore
print("mjcore backend:", mjcore.default_backend(), mjcore.devices())
if mjcore.default_backend() != "gpu":
    print("no GPU backend: install the CUDA plugin of jaxlib's version "
          "(pip install 'jax-cuda13-plugin==<jaxlib version>') on a machine with a GPU")
    sys.exit(2)
PY
status=$?

echo "== GPU tests (pytest -m gpu)"
timeout 150 "$PY" -m pytest -m gpu tests/test_gpu.py -p no:cacheprovider -o addopts="" -rs -q
tests=$?

echo "== GPU benchmark: mjnp vs JAX on the same GPU"
timeout 120 "$PY" -m benchmarks.gpu --repeats 7
bench=$?

echo "== summary: environment $status, tests $tests, benchmark $bench"
[ "$tests" -eq 0 ] && [ "$bench" -eq 0 ]
