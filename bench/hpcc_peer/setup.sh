#!/usr/bin/env bash
# Build the HPCC RDMA simulator (kwzhao/High-Precision-Congestion-Control, branch
# parsimon-ns3.39: the alibaba-edu RDMA modules ported to ns-3.39 + CMake) as a reference peer.
# Idempotent: every step is skipped when already done; a second run only re-checks the build.
#
#   setup.sh [SOURCE] [DEST]
#     SOURCE  git URL (https://github.com/kwzhao/High-Precision-Congestion-Control) or the path
#             of a clone or bare mirror of the repository (or $HPCC_SRC)
#     DEST    checkout + build folder (default: $HPCC_DIR, else /tmp/hpcc-peer)
#   env: JOBS (default 2) parallel compile jobs; NICE (default 19) niceness of configure/build;
#        PROFILE (default release = -O3, portable; "optimized" adds -march=native, which may
#        change floating-point results from one CPU to another).
#
# Afterwards the simulator is DEST/simulation/build/scratch/ns3.39-third (release) or
# ns3.39-third-optimized; bench/hpcc_fig11/fig11.py runs it (--ns3-dir DEST/simulation).
# The patch beside this script adds two time-series monitors to third.cc (queue lengths, per-flow
# rates), off unless their keys are given; nothing else in the source changes.
set -euo pipefail
SRC=${1:-${HPCC_SRC:-}}
[[ -n $SRC ]] || { echo "setup.sh: give the repository (a git URL or a clone's path, or set HPCC_SRC)" >&2; exit 2; }
DEST=${2:-${HPCC_DIR:-/tmp/hpcc-peer}}
JOBS=${JOBS:-2}
NICE=${NICE:-19}
PROFILE=${PROFILE:-release}
COMMIT=0e2b031c1a384a19f9f9bae5d252a3efbd5b03c6    # head of parsimon-ns3.39 (2024-05-02)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PATCHES=("$HERE/hpcc-peer-third.patch")
MODULES="point-to-point;applications;internet;traffic-control"

# 1. tools (Debian 12: cmake 3.25, gcc 12, python3; ninja optional but faster)
need=()
for t in git cmake g++ python3 ninja; do command -v $t >/dev/null 2>&1 || need+=($t); done
if ((${#need[@]})); then
  echo "installing: ${need[*]}"
  apt-get update -qq
  apt-get install -y -qq git cmake g++ python3 ninja-build >/dev/null
fi

# 2. checkout (sparse: the mirror lacks three LTE fading-trace blobs; LTE is not built anyway)
if [[ ! -e "$DEST/.git" ]]; then
  git clone -q --no-checkout "$SRC" "$DEST"
  git -C "$DEST" sparse-checkout set --no-cone '/*' '!/simulation/src/lte/model/fading-traces/'
  echo "checkout $COMMIT (git prints 'invalid object ... fading_trace_EPA_3kmph.fad' twice here:"
  echo " the mirror lacks that LTE blob; it is outside the sparse checkout and is not needed)"
  git -C "$DEST" checkout -q "$COMMIT"
fi
[[ "$(git -C "$DEST" rev-parse HEAD)" == "$COMMIT" ]] || { echo "$DEST is not at $COMMIT" >&2; exit 1; }

# 3. patches (skipped when already applied)
#    third.cc has CRLF line ends and so does the patch; --ignore-whitespace is the fallback in
#    case a copy of the patch lost its CRs.
for p in "${PATCHES[@]}"; do
  if git -C "$DEST" apply --reverse --check "$p" 2>/dev/null ||
     git -C "$DEST" apply --reverse --check --ignore-whitespace "$p" 2>/dev/null; then
    echo "already applied: $(basename "$p")"
  elif git -C "$DEST" apply "$p" 2>/dev/null; then
    echo "applied: $(basename "$p")"
  else
    git -C "$DEST" apply --ignore-whitespace "$p"
    echo "applied (ignoring whitespace): $(basename "$p")"
  fi
done

# 4. configure (only the modules the RDMA scratch program needs; -w: the 2019-era code warns a lot)
cd "$DEST/simulation"
stamp="cmake-cache/.peer-configured-$PROFILE"
if [[ ! -f "$stamp" ]]; then
  nice -n "$NICE" env CXXFLAGS=-w ./ns3 configure -d "$PROFILE" --disable-examples --disable-tests \
    --disable-python-bindings --disable-werror --enable-modules "$MODULES"
  touch "$stamp"
fi

# 5. build only the scratch program and the libraries it links (a no-op when up to date).
#    `./ns3 build -j N` would cap N at (cores - 1), so cmake is called directly.
start=$(date +%s)
nice -n "$NICE" cmake --build cmake-cache -j "$JOBS" --target scratch_third
echo "build step took $(( $(date +%s) - start )) s"
suffix=""; [[ "$PROFILE" == release ]] || suffix="-$PROFILE"
BIN="$DEST/simulation/build/scratch/ns3.39-third$suffix"
[[ -x "$BIN" ]] || { echo "missing $BIN" >&2; exit 1; }
echo "simulator: $BIN"
