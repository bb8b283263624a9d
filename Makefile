# Two commands for a fresh machine (see README):
#   make quickstart   - install, then a real training run on CPU with embedded defaults
#   make test         - install, then the test suite
# Everything installs from this repo's own files into .venv.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
PYTEST_ARGS ?=

.PHONY: install quickstart test test-slow test-all lint clean

$(VENV)/.installed: pyproject.toml deploy/apt-packages.txt
	bash deploy/install.sh "$(VENV)" "$(PYTHON)"
	touch $@

install: $(VENV)/.installed

quickstart: install
	$(VENV)/bin/slipstream run examples/quickstart.yaml

# The default suite: everything except tests marked slow (CI adds the slow ones it needs).
test: install
	$(PY) -m pytest -m "not slow and not gpu" $(PYTEST_ARGS)

# The slow tests: real vLLM, the learner learning, kill-and-resume, real multi-turn rollouts.
test-slow: install
	$(PY) -m pytest -m "slow and not gpu" $(PYTEST_ARGS)

test-all: install
	$(PY) -m pytest -m "not gpu" $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
