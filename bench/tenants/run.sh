#!/usr/bin/env bash
# Tenants, the noisy neighbour (issue 27): `ember serve --multitenancy
# --limits FILE`, tenant b pushing at a steady rate and querying while
# tenant a is idle or pushes at ten times its ingest limit (refused 429
# with Retry-After), rounds alternating; b's push latency p50/p99 and
# query time, and their ratios flood / idle within each round.
#
#   bench/tenants/run.sh
#
# Env: ROUNDS=6, PHASE=20 (seconds), B_RATE=10 (b's pushes a second),
#      QUERY_EVERY=1, A_LIMIT=262144 (a's ingest_rate, bytes a second),
#      FLOOD=10, A_CONNS=4, PHASES=idle,flood (idle,flood,ping: a control
#      phase, as many GET /healthz as the flood pushes), BUILD (bench/build-dir.sh).
# Writes out/results.md, out/raw.tsv, out/log/.  What each figure is:
# bench.py's opening comment.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$HERE/out
log() { echo "[tenants] $*" >&2; }
die() { log "$*"; exit 1; }

command -v python3 >/dev/null || die "python3 not found (make deps)"
rm -rf "$OUT"; mkdir -p "$OUT/log"
# shellcheck source=../build-dir.sh
. "$REPO/bench/build-dir.sh"
BENCH_BUILD_LOG=$OUT/log/build.log
bench_build ember ember-server || die "build failed (see out/log/build.log)"
log "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$HERE/bench.py" "$BUILD/ember" "$OUT"
log "$(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
