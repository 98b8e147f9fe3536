# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export MLFLOW_DISABLE_TELEMETRY := true
export TOKENIZERS_PARALLELISM := false

.PHONY: install demo test bench clean

$(BIN)/verirank: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	# allRank 1.4.3 pins torch<=1.8; its code runs on torch 2, so it is installed without its pins.
	$(BIN)/pip install -q --no-deps allrank==1.4.3
	touch $(BIN)/verirank

install: $(BIN)/verirank

demo: install
	$(BIN)/verirank demo

test: install
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python -m benchmarks.run_all

clean:
	rm -rf $(VENV) runs mlruns mlflow.db
