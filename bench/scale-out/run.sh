#!/usr/bin/env bash
# Scale-out benchmark (issue 18): `ember serve --storage s3://` on a real
# single-node Ceph radosgw (tests/objstore/ceph_cluster.sh) against the
# local backend (`--data` only), in the same run, interleaved rep by rep.
#
#   bench/scale-out/run.sh
#
# Env: REPS=3, UPLOAD_MB=64, COLD=200 (distinct build IDs fetched cold),
#      PROFILES=720, PROF_SERIES=4, PROF_SAMPLES=300, PROF_REPEATS=5 (the
#      one-hour merged query, and the pushes' rate and latency),
#      ONLY_PROFILES=1 (the profile figures alone),
#      WRK_CONNS=16, WRK_SECONDS=5, BUILD (bench/build-dir.sh).
# Writes out/results.md, out/raw.tsv, out/log/.  What each figure is:
# bench.py's opening comment.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$HERE/out
log() { echo "[scale-out] $*" >&2; }
die() { log "$*"; exit 1; }

unset DEBUGINFOD_URLS
for t in wrk python3 gcc objcopy ceph-mon radosgw; do
    command -v "$t" >/dev/null || die "$t not found (make deps)"
done
rm -rf "$OUT"; mkdir -p "$OUT/log"
# shellcheck source=../build-dir.sh
. "$REPO/bench/build-dir.sh"
BENCH_BUILD_LOG=$OUT/log/build.log
bench_build ember ember-server fixtures || die "build failed (see out/log/build.log)"
ulimit -n "$(ulimit -Hn)"

ENV_FILE=$OUT/cluster.env
trap 'bash "$REPO/tests/objstore/ceph_cluster.sh" stop "$ENV_FILE"' EXIT
bash "$REPO/tests/objstore/ceph_cluster.sh" start "$ENV_FILE" > "$OUT/log/ceph.log" 2>&1 ||
    die "the Ceph cluster did not start (out/log/ceph.log)"
python3 "$HERE/bench.py" "$BUILD/ember" "$BUILD/fixtures" "$ENV_FILE" "$OUT"
