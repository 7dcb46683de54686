#!/usr/bin/env bash
# bench/profile-store/run.sh - the profile store's benchmark (issue 15):
# builds pstore-bench in a Release build directory when it is missing and
# runs it REPS times (default 3), each on a fresh data directory, printing
# every run's figures and then the median of each across runs.
#
#   bench/profile-store/run.sh                 # REPS=3: about 15 minutes on 2 cores
#   REPS=1 QUERY_REPS=3 bench/profile-store/run.sh
#   BUILD=build-release DIR=/var/tmp/pstore-bench bench/profile-store/run.sh
#
# pstore_bench.c describes the stream and what is measured.  The data
# directory (DIR, default /tmp/pstore-bench) must be on the disk the store
# would use: the ingest figures with fsync measure its syncs.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
BUILD=${BUILD:-$ROOT/build-release}
DIR=${DIR:-/tmp/pstore-bench}
REPS=${REPS:-3}
QUERY_REPS=${QUERY_REPS:-7}
OUT=$HERE/out
BIN=$BUILD/pstore-bench

if [ ! -x "$BIN" ]; then
	cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$BUILD" --target pstore-bench
fi
mkdir -p "$OUT"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" \
	| tee "$OUT/runs.txt"
for i in $(seq 1 "$REPS"); do
	echo "## run $i (load $(cut -d' ' -f1 /proc/loadavg))" | tee -a "$OUT/runs.txt"
	"$BIN" -d "$DIR" -r "$QUERY_REPS" | tee -a "$OUT/runs.txt"
done
rm -rf "$DIR"
echo "## medians over $REPS runs" | tee -a "$OUT/runs.txt"
python3 - "$OUT/runs.txt" <<'PY' | tee -a "$OUT/runs.txt"
import re, statistics, sys
vals = {}
for line in open(sys.argv[1]):
    m = re.match(r"^([a-z_0-9]+) ([0-9.]+)( |$)", line)
    if m:
        vals.setdefault(m.group(1), []).append(float(m.group(2)))
for k, v in vals.items():
    print("%s median %.1f (min %.1f, max %.1f, n=%d)" % (k, statistics.median(v), min(v), max(v), len(v)))
PY
