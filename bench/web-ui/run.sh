#!/usr/bin/env bash
# bench/web-ui/run.sh - the web UI's benchmark (issue 17): one hour of
# 10-second profiles from 20 series pushed to a real `ember serve`, then
# the flame graph shown in headless Chromium, REPS runs (default 3) of
# bench_web.py, each on a fresh server, with the median of each figure
# across runs.  bench_web.py says what is measured.
#
#   bench/web-ui/run.sh                  # REPS=3, about 5 minutes on 2 cores
#   REPS=1 CLICKS=3 bench/web-ui/run.sh
#   BUILD=build-release bench/web-ui/run.sh
#
# Needs chromium, chromium-driver and python3-selenium (`make deps`).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
BUILD=${BUILD:-$ROOT/build-release}
REPS=${REPS:-3}
CLICKS=${CLICKS:-7}
OUT=$HERE/out

if [ ! -x "$BUILD/ember" ]; then
	cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$BUILD" --target ember ember-server
fi
mkdir -p "$OUT"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(/usr/bin/chromium --version 2>/dev/null)" \
	| tee "$OUT/runs.txt"
for i in $(seq 1 "$REPS"); do
	echo "## run $i (load $(cut -d' ' -f1 /proc/loadavg))" | tee -a "$OUT/runs.txt"
	/usr/bin/python3 "$HERE/bench_web.py" "$BUILD/ember" -r "$CLICKS" | tee -a "$OUT/runs.txt"
done
echo "## medians over $REPS runs" | tee -a "$OUT/runs.txt"
/usr/bin/python3 - "$OUT/runs.txt" <<'PY' | tee -a "$OUT/runs.txt"
import re, statistics, sys
vals = {}
for line in open(sys.argv[1]):
    m = re.match(r"^([a-z_0-9]+) ([0-9.]+)( |$)", line)
    if m:
        vals.setdefault(m.group(1), []).append(float(m.group(2)))
for k, v in vals.items():
    print("%s median %.2f (min %.2f, max %.2f, n=%d)" % (k, statistics.median(v), min(v), max(v), len(v)))
PY
