#!/usr/bin/env bash
# Paired benchmark of two builds: bench/pair.sh BASE_BIN NEW_BIN BENCH_TOML [ROUNDS]
# Runs both ecnlab-bench binaries at once, one pinned to each of the first
# two cores, swapping the cores every round, and prints each round's wall
# seconds, events and the new/base ratio. This machine's speed drifts, so
# compare builds side by side, never against an old number. Build the base
# with e.g. `git worktree add /tmp/base REV && cargo build --release
# --manifest-path /tmp/base/Cargo.toml -p ecnlab --bin ecnlab-bench`.
#
# PAIR_MODE=serial runs them one after the other instead, both on core 0
# (the other core should be idle), base first in odd rounds and new first
# in even ones: for points whose working set nears the shared L3 cache
# (fat-tree k = 32), where two runs at once slow each other unevenly
# (paired ratios of one build against itself spread 0.81-1.00 there).
set -u
base=$1; new=$2; toml=$3; rounds=${4:-3}
mode=${PAIR_MODE:-together}
out=$(mktemp -d)
for r in $(seq 1 "$rounds"); do
  if (( r % 2 )); then cb=0; cn=1; else cb=1; cn=0; fi
  if [ "$mode" = serial ]; then
    if (( r % 2 )); then order="base new"; else order="new base"; fi
    for which in $order; do
      bin=$base; [ "$which" = new ] && bin=$new
      ECNLAB_BENCH_NO_HEADER=1 taskset -c 0 "$bin" "$toml" > "$out/$which" 2>&1
    done
  else
    ECNLAB_BENCH_NO_HEADER=1 taskset -c $cb "$base" "$toml" > "$out/base" 2>&1 &
    pb=$!
    ECNLAB_BENCH_NO_HEADER=1 taskset -c $cn "$new" "$toml" > "$out/new" 2>&1 &
    pn=$!
    wait $pb $pn
  fi
  read -r bw be < <(awk '{print $3, $2}' "$out/base")
  read -r nw ne < <(awk '{print $3, $2}' "$out/new")
  echo "round $r: base ${bw}s ${be} events  new ${nw}s ${ne} events  ratio $(python3 -c "print(round($nw/$bw, 4))")"
done
rm -rf "$out"
