# ecnlab: one entry point. `make run` and `make test` work on a fresh
# machine with only the Rust and Python toolchains installed.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.deps-stamp
RUST_SRC := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml

.PHONY: all run test test-rust test-python test-install switch wheel bench bench-scale bench-htsim pgo stability crosscheck lint fmt build clean golden golden-update reference docs

all: build

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "maturin>=1.12.1,<2" "numpy>=1.24" "pyarrow>=14" "matplotlib>=3.7" "tqdm>=4.60" "dask[distributed]>=2023.1" "pytest>=7" "ruff>=0.4" "hypothesis>=6.100" "dpkt>=1.9" "pandas>=2" "duckdb>=0.9" "polars>=0.20" "mkdocs>=1.6,<2" "mkdocs-material>=9.5,<10"
	touch $(STAMP)

$(VENV)/.engine-stamp: $(STAMP) $(RUST_SRC) pyproject.toml
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release --quiet
	touch $@

# Build the engine and install the Python package (editable) into .venv.
build: $(VENV)/.engine-stamp

# The default experiment: MQ-ECN's motivating pair, three marking schemes.
run: build
	$(VENV)/bin/ecnlab demo --out results/demo

# The whole suite: the documentation site (strict), Rust unit tests, then
# Python scenario and CLI tests.
test: build docs test-rust test-python

# The documentation site (mkdocs.yml, docs/) into site/. --strict fails on
# any warning: a broken link or anchor, a page missing from the nav. The
# gallery's pages are made from experiments/ during the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

test-rust:
	cargo test --release -p ecnlab

test-python: build
	$(PY) -m pytest -q tests

# The testbed's switch as a binary of its own (target/release/ecnlab-switch;
# ECNLAB_SWITCH=that path makes `ecnlab testbed` run it). The package does
# not need it: the engine's extension module has the switch built in
# (`python -m ecnlab.switch`).
switch:
	cargo build --release -p ecnlab --bin ecnlab-switch

# An installable wheel in WHEELS: the engine (the testbed's switch built
# in), the Python package, the figure folders and the tutorial's files
# (through the python/ecnlab/figures and python/ecnlab/tutorial symlinks;
# pyproject.toml's [tool.maturin] include names both). `pip install .`
# builds the same wheel on the way.
WHEELS  ?= target/wheels
MATURIN ?= $(VENV)/bin/maturin
wheel: $(STAMP)
	rm -f $(WHEELS)/ecnlab-*.whl
	$(MATURIN) build --release --out $(WHEELS)

# The install check alone (it is also part of `make test`): `pip install .`
# and the wheel above, each into a fresh virtualenv, run from an empty
# folder outside the checkout (the tutorial's commands included).
test-install: wheel
	ECNLAB_WHEEL="$$(ls $(WHEELS)/ecnlab-*.whl)" $(PY) -m pytest -q tests/python/test_install.py

# Engine speed on the reference scenarios (not a test: prints numbers).
# Every bench/*.toml: a scheme's bench point joins by its file alone.
BENCH ?= $(sort $(wildcard bench/*.toml))
bench:
	cargo build --release -p ecnlab --bin ecnlab-bench
	@./target/release/ecnlab-bench --header-only
	@for f in $(BENCH); do ECNLAB_BENCH_NO_HEADER=1 ./target/release/ecnlab-bench $$f || exit 1; done
	@echo
	@echo "scale (bench/scale.sh: the same fat-tree experiment as k grows):"
	@THREADS="0 1 2" bench/scale.sh
	@echo
	@echo "sparse (bench/scale/sparse_k*.toml: long-horizon timers on 320 Kbps links):"
	@for f in bench/scale/sparse_k16.toml bench/scale/sparse_k32.toml; do \
	  ECNLAB_BENCH_NO_HEADER=1 ./target/release/ecnlab-bench $$f || exit 1; done

# A profile-guided engine (bench/pgo.sh): trained on the golden corpus,
# installed into .venv, its outputs checked against the plain build's
# (docs/performance.md has what it gains). Needs
# `rustup component add llvm-tools`. `make build` after a source change
# goes back to the plain build.
pgo: $(STAMP)
	VENV=$(VENV) bench/pgo.sh
	touch $(VENV)/.engine-stamp

# The scale table alone (fat-tree k = 8, 16, 32; about 3 min on one core).
bench-scale:
	cargo build --release -p ecnlab --bin ecnlab-bench
	@THREADS="0 1 2" bench/scale.sh

# The golden corpus (tests/golden/): `golden` checks every config's outputs
# against the recorded fingerprints (`cargo test` does too); `golden-update`
# collects the corpus anew (bench points, figures' quick points, small
# configs) and re-records every fingerprint at the current MODEL_VERSION,
# which a change that moves outputs bumps (crates/ecnlab/src/lib.rs).
# The experiment-file reference and the scheme pages' generated blocks,
# from the engine's declarations (tests fail when docs/reference.md or a
# docs/schemes/ page and the code disagree).
reference: build
	$(VENV)/bin/ecnlab keys --markdown > docs/reference.md
	$(PY) docs/tools/schemes.py

golden:
	cargo build --release -p ecnlab --bin ecnlab-golden
	./target/release/ecnlab-golden check

golden-update: build
	cargo build --release -p ecnlab --bin ecnlab-golden
	$(PY) tests/golden/collect.py
	./target/release/ecnlab-golden write

# Memory over a long run (10^8 events, outputs streaming): at 10% and 100%.
stability: build
	$(PY) bench/stability.py

# The same DCTCP permutation in ecnlab and in htsim (goodput and speed side
# by side): HTSIM is a built htsim sim/ folder; bench/htsim_permutation.py
# says how to build one.
bench-htsim: build
	@test -n "$(HTSIM)" || { echo "usage: make bench-htsim HTSIM=/path/to/csg-htsim/sim"; exit 2; }
	$(PY) bench/htsim_permutation.py --htsim $(HTSIM)

# The MQ-ECN authors' ns-2 against ecnlab on MQ-ECN §5.2's points (not part
# of `make test`: it needs an ns-2 build, crosscheck/build_ns2.sh, and takes
# about an hour; cached points are not run again). CROSSCHECK_ARGS passes
# options, e.g. CROSSCHECK_ARGS="--loads 0.6 --flows 2000".
NS2_BUILD ?= /tmp/ns2build
crosscheck: build
	$(PY) crosscheck/crosscheck.py --ns2-build $(NS2_BUILD) $(CROSSCHECK_ARGS)

# cargo fmt follows only plain `mod` lines; the files a registry macro
# declares (host/cc/, host/recovery/, switch/) are named to rustfmt too.
RUST_FILES = $$(git ls-files 'crates/*.rs') $$(git ls-files --others --exclude-standard 'crates/*.rs')

lint: $(STAMP)
	cargo fmt --all -- --check
	rustfmt --edition 2021 --check $(RUST_FILES)
	cargo clippy --release --all-targets -p ecnlab -- -D warnings
	$(VENV)/bin/ruff check python tests bench crosscheck docs/tools
	$(VENV)/bin/ruff format --check python tests bench crosscheck docs/tools

fmt: $(STAMP)
	cargo fmt --all
	rustfmt --edition 2021 $(RUST_FILES)
	$(VENV)/bin/ruff format python tests bench crosscheck docs/tools

clean:
	rm -rf $(VENV) target results site
