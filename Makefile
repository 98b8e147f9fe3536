# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export MLFLOW_DISABLE_TELEMETRY := true
export TOKENIZERS_PARALLELISM := false

.PHONY: install system-deps demo lint test bench bundled-model clean

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

# The report test opens the demo's HTML in a real headless Chromium (Debian's package).
# apt waits for the package lock (another install, or a second checkout's `make test`) instead of failing.
APT_WAIT = -o DPkg::Lock::Timeout=900
system-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get $(APT_WAIT) update -qq && DEBIAN_FRONTEND=noninteractive apt-get $(APT_WAIT) install -y -qq chromium >/dev/null; \
	  else echo "chromium not found: the report test will be skipped (install Debian's chromium)"; fi; }

lint: install
	$(BIN)/ruff check .

test: install system-deps lint
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/pip install -q -c constraints.txt -e '.[bench]'   # trafilatura, the stage-1 peer
	$(BIN)/python -m benchmarks.run_all

# Rebuild datasets/models/ (pre-training set, LR ranker, code fingerprint) after agent/judge changes.
bundled-model: install
	$(BIN)/python -m howtobench.bundled_model rebuild

clean:
	rm -rf $(VENV) runs mlruns mlflow.db
