# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test fuzz bench bench-quick lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) demo.py

test: $(STAMP)
	$(PY) -m pytest tests

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

lint: $(STAMP)
	$(VENV)/bin/ruff check mjcore mjnp tests benchmarks conformance
	$(VENV)/bin/ruff format --check mjcore mjnp tests benchmarks conformance

clean:
	rm -rf $(VENV)
