#!/usr/bin/env bash
# Profile-guided build of the engine (`make pgo`): the same code, laid out
# and inlined for the paths the papers' runs take. The outputs cannot move
# (PGO changes no arithmetic; the last step checks the golden corpus with
# the optimised build), so a record made with it is checked like any other
# build (record/README.md).
#
# 1. Build the golden corpus's runner instrumented (-Cprofile-generate).
# 2. Run the corpus with it: every scheme's configs and every figure's quick
#    points (tests/golden/), a few minutes on 2 cores. That is the training
#    set, so no path a figure takes is left cold.
# 3. Merge the counts (llvm-profdata of rustc's own LLVM: `rustup component
#    add llvm-tools`) into target/pgo/ecnlab.profdata.
# 4. Build the Python engine, ecnlab-bench and ecnlab-golden with the
#    profile into target/pgo/use, install the engine into .venv, and check
#    the golden corpus with the optimised runner.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
root=$PWD/target/pgo
profdata=$(ls "$(rustc --print sysroot)"/lib/rustlib/*/bin/llvm-profdata 2>/dev/null | head -n 1 || true)
if [ -z "$profdata" ]; then
    echo "pgo: llvm-profdata (matching rustc's LLVM) is missing: run \`rustup component add llvm-tools\`" >&2
    exit 2
fi

rm -rf "$root/raw" "$root/ecnlab.profdata"
echo "pgo: 1/4 instrumented build"
RUSTFLAGS="-Cprofile-generate=$root/raw" CARGO_TARGET_DIR="$root/gen" \
    cargo build --release --quiet -p ecnlab --bin ecnlab-golden
echo "pgo: 2/4 training on the golden corpus"
"$root/gen/release/ecnlab-golden" check
echo "pgo: 3/4 merging the profile"
"$profdata" merge -o "$root/ecnlab.profdata" "$root/raw"

echo "pgo: 4/4 optimised build (engine into $VENV, ecnlab-bench and ecnlab-golden into target/pgo/use/release)"
use="-Cprofile-use=$root/ecnlab.profdata"
RUSTFLAGS="$use" CARGO_TARGET_DIR="$root/use" \
    cargo build --release --quiet -p ecnlab --bin ecnlab-bench --bin ecnlab-golden
RUSTFLAGS="$use" CARGO_TARGET_DIR="$root/use" VIRTUAL_ENV="$PWD/$VENV" PATH="$PWD/$VENV/bin:$PATH" \
    "$VENV/bin/maturin" develop --release --quiet
"$root/use/release/ecnlab-golden" check
echo "pgo: done; \`make build\` after a source change goes back to the plain build"
