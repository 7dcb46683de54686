#!/usr/bin/env bash
# Profile queries over HTTP on a replica with `--storage s3://` (issue 27):
# a writer pushed two days of profiles of 20 series and left to compact and
# roll them up into a single-node Ceph radosgw (tests/objstore/ceph_cluster.sh),
# then the merged flame graph, the series line and the diff over 1 h, the
# last 24 h, the whole range and unaligned ranges, each on a fresh replica (an empty data
# directory: cold) and again (warm).
#
#   bench/replica-query/run.sh
#
# Env: HOURS=48, INTERVAL=60 (seconds between a series' profiles), CONNS=4
#      (push connections), REPS=3, WARM=5 (warm repeats per replica),
#      BUILD (bench/build-dir.sh).
# Writes out/results.md, out/raw.tsv, out/log/.  What each figure is:
# bench.py's opening comment.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$HERE/out
log() { echo "[replica-query] $*" >&2; }
die() { log "$*"; exit 1; }

for t in python3 ceph-mon radosgw; do
    command -v "$t" >/dev/null || die "$t not found (make deps)"
done
rm -rf "$OUT"; mkdir -p "$OUT/log"
# shellcheck source=../build-dir.sh
. "$REPO/bench/build-dir.sh"
BENCH_BUILD_LOG=$OUT/log/build.log
bench_build ember ember-server || die "build failed (see out/log/build.log)"
ulimit -n "$(ulimit -Hn)"

ENV_FILE=$OUT/cluster.env
trap 'bash "$REPO/tests/objstore/ceph_cluster.sh" stop "$ENV_FILE"' EXIT
bash "$REPO/tests/objstore/ceph_cluster.sh" start "$ENV_FILE" > "$OUT/log/ceph.log" 2>&1 ||
    die "the Ceph cluster did not start (out/log/ceph.log)"
log "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$HERE/bench.py" "$BUILD/ember" "$ENV_FILE" "$OUT"
log "$(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
