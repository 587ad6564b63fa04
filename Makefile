# Entry points for a fresh machine: `make demo`, `make test` (the pinned CI set:
# constraints-ci.txt, jaxlib 0.10.2) and `make test-compat` (Python 3.12 with the newest
# jaxlib 0.12.x, on a representative slice of the suite).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-compat gpu-check fuzz bench bench-quick lint clean conformance

$(STAMP): pyproject.toml constraints-ci.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints-ci.txt -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) demo.py

# worksteal: each worker starts on one contiguous half of the suite (so tests that share
# compiled programs, e.g. one primitive's eager and jit checks, meet in one process's compile
# cache) and an idle worker takes tests from the other's queue, so both finish together.
# --durations: the 30 slowest tests in the log, where the next saving is.
# PYTHONDONTWRITEBYTECODE (set in some CI images) off: the ~30 Python processes the tests start
# (8-device checks, distributed runs, import checks) then load mjcore and mjnp from the .pyc
# files the workers wrote instead of compiling ~56k lines of source each (~0.45 CPU-s apiece).
test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest tests -n auto --dist worksteal --durations=30

# The newest supported jaxlib line on Python 3.12 (PyPI's Python 3.11 wheels stop at 0.10.2).
COMPAT_PYTHON ?= python3.12
COMPAT_VENV := .venv-compat
COMPAT_PY := $(COMPAT_VENV)/bin/python
COMPAT_JAXLIB ?= jaxlib>=0.12,<0.13
COMPAT_JAX ?= jax>=0.12,<0.13
# Every layer that touches jaxlib: dispatch, jit, control flow, host callbacks, donation, the
# LAPACK and FFT custom calls, random, devices and the compat checks themselves.
COMPAT_SLICE ?= tests/test_compat.py tests/test_platforms.py tests/test_gpu.py tests/test_autodidax.py \
	tests/test_no_jax_import.py tests/test_device.py tests/test_jit.py tests/test_callbacks.py \
	tests/test_control_flow.py tests/test_donation.py tests/test_mjnp_linalg.py \
	tests/test_mjnp_fft.py tests/test_mjnp_random.py tests/test_config.py
# Meshes, Arrays of shards and sharded jit on 8 CPU devices (issue 22).
COMPAT_SLICE += tests/test_sharding.py
# Two processes joined by jaxlib's distributed runtime, gloo collectives (issue 22).
COMPAT_SLICE += tests/test_distributed.py

$(COMPAT_VENV)/.installed: pyproject.toml
	test -x $(COMPAT_PY) || $(COMPAT_PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_PY) -m pip install --quiet --upgrade pip
	$(COMPAT_PY) -m pip install --quiet '$(COMPAT_JAXLIB)' '$(COMPAT_JAX)' -e '.[test]'
	touch $@

test-compat: $(COMPAT_VENV)/.installed
	$(COMPAT_PY) -c "import jaxlib.version as v, sys; print('jaxlib', v.__version__, 'python', sys.version.split()[0])"
	$(COMPAT_PY) -m pytest $(COMPAT_SLICE)

# On a machine with an NVIDIA GPU and jaxlib's CUDA plugin: the GPU tests and benchmark.
gpu-check:
	PYTHON=$(PY) scripts/gpu_check.sh

# The differential fuzzer with a large budget of random programs (CI runs a small fixed one).
FUZZ_EXAMPLES ?= 5000
fuzz: $(STAMP)
	MJNP_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) MJNP_FUZZ_RANDOM=1 $(PY) -m pytest tests/test_fuzz.py -x -q

# The plot needs matplotlib and autograd is a peer: installed for benchmarks only, never runtime
# dependencies.
$(VENV)/.bench-installed: $(STAMP)
	$(PY) -m pip install --quiet matplotlib autograd
	touch $@

bench: $(VENV)/.bench-installed
	$(PY) -m benchmarks.run

bench-quick: $(VENV)/.bench-installed
	$(PY) -m benchmarks.run --quick

# NumPy's own test files against mjnp, compared per test with NumPy's run (conformance/README.md).
conformance: $(STAMP)
	$(PY) -m conformance.numpy_suite

# mypy reads its settings and packages (mjcore, mjnp) from pyproject.toml.
lint: $(STAMP)
	$(VENV)/bin/ruff check mjcore mjnp tests benchmarks conformance
	$(VENV)/bin/ruff format --check mjcore mjnp tests benchmarks conformance
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) $(COMPAT_VENV)
