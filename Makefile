# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench bench-quick lint clean conformance

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) demo.py

test: $(STAMP)
	$(PY) -m pytest tests

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

lint: $(STAMP)
	$(VENV)/bin/ruff check mjcore mjnp tests benchmarks conformance
	$(VENV)/bin/ruff format --check mjcore mjnp tests benchmarks conformance

clean:
	rm -rf $(VENV)
