#!/usr/bin/env bash
# bench/profile-store/run-ingest.sh - the profile store's ingest with
# symbolization included (issue 15, phase 2): in-process (pstore-ingest-bench:
# the route's core against already symbolized profiles, interleaved) and
# through HTTP (ingest_http.py: a real `ember serve`, its CPU per profile,
# 1 and 4 connections).  REPS runs of each, medians at the end.
#
#   bench/profile-store/run-ingest.sh            # REPS=3
#   BINARY=build/ember-server REPS=1 bench/profile-store/run-ingest.sh
#
# BINARY is what the profiles' frames point into (default: the Debug
# build's ember-server, 7,000 functions with DWARF; its symbol index is built
# once, before the clock starts).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
BUILD=${BUILD:-$ROOT/build-release}
BINARY=${BINARY:-$ROOT/build/ember-server}
REPS=${REPS:-3}
N=${N:-600}
OUT=$HERE/out
PDIR=$(mktemp -d /tmp/pstore-ingest-profiles.XXXXXX)

for t in pstore-ingest-bench ember ember-server; do
	[ -x "$BUILD/$t" ] || cmake --build "$BUILD" --target "$t"
done
mkdir -p "$OUT"
"$BUILD/pstore-ingest-bench" -b "$BINARY" -w "$PDIR"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" \
	| tee "$OUT/ingest.txt"
for i in $(seq 1 "$REPS"); do
	echo "## run $i (load $(cut -d' ' -f1 /proc/loadavg))" | tee -a "$OUT/ingest.txt"
	"$BUILD/pstore-ingest-bench" -b "$BINARY" -n "$N" -r 3 -d /tmp/pstore-ingest-bench \
		| tee -a "$OUT/ingest.txt"
	for c in 1 4; do
		python3 "$HERE/ingest_http.py" "$BUILD/ember" "$BINARY" "$PDIR" "$N" "$c" \
			| sed "s/^http_/http${c}_/" | tee -a "$OUT/ingest.txt"
	done
done
rm -rf "$PDIR" /tmp/pstore-ingest-bench
echo "## medians over $REPS runs" | tee -a "$OUT/ingest.txt"
python3 - "$OUT/ingest.txt" <<'PY' | tee -a "$OUT/ingest.txt"
import re, statistics, sys
vals = {}
for line in open(sys.argv[1]):
    m = re.match(r"^([a-z_0-9]+) ([0-9.]+)$", line)
    if m:
        vals.setdefault(m.group(1), []).append(float(m.group(2)))
for k, v in vals.items():
    print("%s median %.1f (min %.1f, max %.1f, n=%d)" % (k, statistics.median(v), min(v), max(v), len(v)))
PY
