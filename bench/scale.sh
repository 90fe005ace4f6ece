#!/usr/bin/env bash
# The scale table (issue 27): the same fat-tree experiment at k = 8, 16, 32
# (128, 1,024 and 8,192 hosts; bench/scale/fattree_k*.toml, about 285 M
# events each), one process per point so that peak memory is its own.
# Usage: [THREADS="0 1 2"] bench/scale.sh [BINARY] [K ...]
#   (default: target/release/ecnlab-bench, k = 8 16 32 32_k8rate, the last
#   k = 32 carrying k = 8's flows a second; THREADS="0": the
#   sequential engine; each N in THREADS runs every k with run.threads = N;
#   PARTS=P sets run.partitions too, PARTS=threads sets it to each N: the
#   thread-scaling curve on a many-core machine is
#   THREADS="1 2 4 8 16" PARTS=threads bench/scale.sh)
# Prints k, hosts, switches, then ecnlab-bench's columns (the last two: the
# threads and the parts it ran on). Run it with the other core idle:
# events/s on a shared core says little.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/ecnlab-bench}
shift || true
ks=("$@")
[ ${#ks[@]} -eq 0 ] && ks=(8 16 32 32_k8rate)
printf '%-10s %8s %9s ' k hosts switches
"$bin" --header-only
for k in "${ks[@]}"; do
  f=bench/scale/fattree_k$k.toml
  [ -f "$f" ] || { echo "bench/scale.sh: no $f" >&2; exit 2; }
  for n in ${THREADS:-0}; do
    n_k=${k%%_*}
    printf '%-10s %8s %9s ' "$k" $((n_k * n_k * n_k / 4)) $((5 * n_k * n_k / 4))
    parts=()
    if [ "${PARTS:-}" = threads ]; then parts=(--parts "$n"); elif [ -n "${PARTS:-}" ]; then parts=(--parts "$PARTS"); fi
    ECNLAB_BENCH_NO_HEADER=1 "$bin" --threads "$n" "${parts[@]}" "$f"
  done
done
