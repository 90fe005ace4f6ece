#!/usr/bin/env bash
# Profile-guided build of the engine (`make pgo`): the same code, laid out
# and inlined for the paths the papers' runs take. The outputs cannot move
# (PGO changes no arithmetic; the last step checks it on every scheme), and
# a record made with it is checked like any other build (record/README.md).
# PGO_TRAIN_FILTER=TEXT trains on the corpus's configs named with TEXT only
# (a quick try of the script; the profile is then poorer).
#
# 1. Install the plain engine (as `make build` does), run the corpus's
#    small configs (every scheme once) and keep their summaries.
# 2. Build the Python engine instrumented (-Cprofile-generate) into .venv.
# 3. Train: every config of the golden corpus (tests/golden/: the small
#    configs, every figure's quick points, the bench points) through it
#    (bench/pgo_train.py, which says why through Python).
# 4. Merge the counts (llvm-profdata of rustc's own LLVM: `rustup component
#    add llvm-tools`) into target/pgo/ecnlab.profdata.
# 5. Build the engine with the profile into .venv, run step 1's configs
#    again and require every summary to be identical.
# A failure at any step puts the plain build back, so that .venv is never
# left with the instrumented engine.
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
mkdir -p "$root"
py="$VENV/bin/python"
maturin() {
    CARGO_TARGET_DIR="$1" VIRTUAL_ENV="$PWD/$VENV" PATH="$PWD/$VENV/bin:$PATH" \
        RUSTFLAGS="$2" "$VENV/bin/maturin" develop --release --quiet
}
finished=0
trap '[ "$finished" = 1 ] || { echo "pgo: failed: putting the plain build back" >&2; maturin target ""; }' EXIT
echo "pgo: 1/5 the plain engine's summaries"
maturin target ""
"$py" bench/pgo_train.py --filter small- --summaries "$root/plain.json"
echo "pgo: 2/5 instrumented build"
maturin "$root/gen" "-Cprofile-generate=$root/raw"
echo "pgo: 3/5 training on the golden corpus"
"$py" bench/pgo_train.py --filter "${PGO_TRAIN_FILTER:-}"
echo "pgo: 4/5 merging the profile"
"$profdata" merge -o "$root/ecnlab.profdata" "$root/raw"
echo "pgo: 5/5 optimised build into $VENV, checked against the plain one"
maturin "$root/use" "-Cprofile-use=$root/ecnlab.profdata"
"$py" bench/pgo_train.py --filter small- --summaries "$root/pgo.json"
"$py" bench/pgo_train.py --compare "$root/plain.json" "$root/pgo.json"
finished=1
echo "pgo: done; \`make build\` after a source change goes back to the plain build"
