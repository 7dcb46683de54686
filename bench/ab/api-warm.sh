#!/usr/bin/env bash
# bench/ab/api-warm.sh EMBER_A EMBER_B [PAIRS] [BINARY] [BATCH] - an
# interleaved A/B of the warm symbolization API (POST /api/v1/symbolize):
# two `ember serve` at once (EMBER_A and EMBER_B, each with the helper
# programs next to it), each given BINARY (default cxx_O2) from
# bench/symbolize-api/out/corpus, then PAIRS (default 10) pairs of
# `apibench http` runs of 3 s at BATCH addresses a request (default
# 10000), the order flipping every pair.  Prints each run's fields, then
# the addresses per server CPU second of each side (medians) and the
# median and range of the paired ratios B/A: a difference is stable when
# that range stays on one side of 1.  Run bench/symbolize-api/run.sh once
# first (it makes the corpus and address sets); ember-api-bench comes
# from BUILD (default build-release/).  Output in OUT (default
# /tmp/ember-ab-api).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 EMBER_A EMBER_B [PAIRS] [BINARY] [BATCH]" >&2; exit 2; }
A=$1 B=$2 PAIRS=${3:-10} BIN=${4:-cxx_O2} BATCH=${5:-10000}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
apibench=${BUILD:-$repo/build-release}/ember-api-bench
corpus=$repo/bench/symbolize-api/out/corpus addrs=$repo/bench/symbolize-api/out/addrs/$BIN.addrs
OUT=${OUT:-${TMPDIR:-/tmp}/ember-ab-api}
[ -s "$corpus/$BIN" ] && [ -s "$addrs" ] || { echo "$0: no $BIN corpus (run bench/symbolize-api/run.sh once)" >&2; exit 1; }
rm -rf "$OUT"; mkdir -p "$OUT"
id=$(readelf -n "$corpus/$BIN" | awk '/Build ID:/ { print $3; exit }')
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT

start() {   # NAME EMBER: prints "URL PID"
    local url="" i
    "$2" serve --listen 127.0.0.1:0 --data "$OUT/data-$1" > "$OUT/$1.out" 2> "$OUT/$1.log" &
    local pid=$!
    for ((i = 0; i < 300 && ${#url} == 0; i++)); do
        sleep 0.05
        url=$(sed -n 's/^.*listening on \(http:[^ ]*\).*$/\1/p' "$OUT/$1.out")
    done
    [ -n "$url" ] || { echo "$0: $2 serve printed no address ($OUT/$1.log)" >&2; kill $pid; exit 1; }
    EMBER_SERVER=$url EMBER_TOKEN=$(cat "$OUT/data-$1/token") "$2" upload --quiet "$corpus/$BIN" > /dev/null
    "$apibench" http "$url/api/v1/symbolize" "$id" "$addrs" 1 0 1 $pid > /dev/null   # builds the index
    echo "$url $pid"
}
read -r url_a pid_a < <(start a "$A")
read -r url_b pid_b < <(start b "$B")
pids=("$pid_a" "$pid_b")
for ((i = 1; i <= PAIRS; i++)); do
    order="a b"; ((i % 2)) || order="b a"
    for side in $order; do
        if [ "$side" = a ]; then url=$url_a pid=$pid_a; else url=$url_b pid=$pid_b; fi
        r=$("$apibench" http "$url/api/v1/symbolize" "$id" "$addrs" "$BATCH" 3 3 "$pid")
        echo "$i $side $(cut -d' ' -f1 /proc/loadavg) $r" | tee -a "$OUT/raw.txt"
    done
done
python3 - "$OUT/raw.txt" <<'EOF'
import statistics, sys
rate = {"a": {}, "b": {}}
load = []
for line in open(sys.argv[1]):
    pair, side, load1, *fields = line.split()
    f = dict(x.split("=", 1) for x in fields if "=" in x)
    rate[side][pair] = int(f["addrs"]) / float(f["server_cpu_s"])
    load.append(float(load1))
paired = [rate["b"][p] / rate["a"][p] for p in rate["a"]]
print("addresses per server CPU s: A %.0f, B %.0f (medians); paired B/A median %.3f [%.3f, %.3f]; "
      "load %.1f-%.1f" % (statistics.median(rate["a"].values()), statistics.median(rate["b"].values()),
                          statistics.median(paired), min(paired), max(paired), min(load), max(load)))
EOF
