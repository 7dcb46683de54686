#!/usr/bin/env bash
# Load test of `ember serve` at its connection limits: wrk on loopback with
# mixed debuginfod, symbolization and unwind requests, bounded in time;
# reports throughput, latency, errors and the server's peak RSS, and that
# /healthz from another loopback address is answered meanwhile.  See
# README.md.
#
#   bench/load/run.sh                 # CONNS=512, DURATION=20s, REPS=3
#
# Env: CONNS (wrk -c, also the server's --max-connections and per-client
# limit, so wrk runs at the limit), WRK_THREADS=2, DURATION=20s, REPS=3,
# MEMORY_MB=1024 (--memory-limit-mb), BUILD (bench/build-dir.sh).
# Writes out/results.md, out/raw.tsv, out/wrk/, out/log/.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$HERE/out
CONNS=${CONNS:-512}
WRK_THREADS=${WRK_THREADS:-2}
DURATION=${DURATION:-20s}
REPS=${REPS:-3}
MEMORY_MB=${MEMORY_MB:-1024}
log() { echo "[load] $*" >&2; }
die() { log "$*"; exit 1; }

unset DEBUGINFOD_URLS
for t in wrk curl readelf python3; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install wrk curl binutils python3)"
done
rm -rf "$OUT"; mkdir -p "$OUT/wrk" "$OUT/log"
# shellcheck source=../build-dir.sh
. "$REPO/bench/build-dir.sh"
BENCH_BUILD_LOG=$OUT/log/build.log
bench_build ember fixtures || die "build failed (see out/log/build.log)"
EMBER=$BUILD/ember
FIX=$BUILD/fixtures
ulimit -n "$(ulimit -Hn)"

PID=""
cleanup() { [ -z "$PID" ] || { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; } || true; }
trap cleanup EXIT
# wrk sends from one address: it may hold CONNS connections, the server
# CONNS + 16, so that another address still finds room.
"$EMBER" serve --listen 127.0.0.1:0 --data "$OUT/data" --memory-limit-mb "$MEMORY_MB" \
    --max-connections $((CONNS + 16)) --max-connections-per-client "$CONNS" \
    > "$OUT/log/ember.stdout" 2> "$OUT/log/ember.log" &
PID=$!
for _ in $(seq 100); do
    PORT=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$OUT/log/ember.stdout")
    [ -n "$PORT" ] && break; sleep 0.1
done
[ -n "$PORT" ] || die "the server printed no address"
URL=http://127.0.0.1:$PORT
for _ in $(seq 100); do [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/healthz")" = 200 ] && break; sleep 0.1; done
TOKEN=$(cat "$OUT/data/token")

# What the load asks for: the C fixture (DWARF, .eh_frame), 64 addresses.
EXE=$FIX/c_O2_pie
ID=$(readelf -n "$EXE" | awk '/Build ID:/ { print $3; exit }')
curl -sf -o /dev/null -X PUT -H "Authorization: Bearer $TOKEN" --data-binary "@$EXE" \
    "$URL/api/v1/artifacts/$ID/executable?name=c_O2_pie" || die "upload failed"
ADDRS=$(readelf -sW "$EXE" | awk '$4 == "FUNC" && $2 != "0000000000000000" { printf "%s\"0x%s\"", n++ ? "," : "", $2 } n == 64 { exit }')
export LOAD_BUILD_ID=$ID
export LOAD_SYMBOLIZE_BODY="{\"modules\":[{\"build_id\":\"$ID\",\"addresses\":[$ADDRS]}]}"
for path in "/buildid/$ID/debuginfo" "/api/v1/unwind/$ID"; do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL$path")" = 200 ] || die "warm-up of $path failed"
done
[ "$(curl -s -o /dev/null -w '%{http_code}' -d "$LOAD_SYMBOLIZE_BODY" "$URL/api/v1/symbolize")" = 200 ] ||
    die "warm-up symbolization failed"

printf 'rep\treq_s\tp50_ms\tp90_ms\tp99_ms\tmax_ms\tnon2xx\tsocket_errors\thealthz_other_addr_ms\tvmhwm_kb\n' > "$OUT/raw.tsv"
for rep in $(seq "$REPS"); do
    log "rep $rep: wrk -t$WRK_THREADS -c$CONNS -d$DURATION (mixed: debuginfo, symbolize, unwind)"
    wrk -t"$WRK_THREADS" -c"$CONNS" -d"$DURATION" --timeout 10s --latency -s "$HERE/mixed.lua" \
        "$URL" > "$OUT/wrk/rep$rep.txt" 2>&1 &
    WRK=$!
    sleep 5   # in the middle of the load: health from another loopback address
    HEALTH_MS=$(curl -s -o /dev/null --interface 127.0.0.2 --max-time 10 \
        -w '%{http_code} %{time_total}' "$URL/healthz" |
        awk '$1 == 200 { printf "%.1f", $2 * 1000; next } { print "failed" }') || HEALTH_MS=failed
    wait "$WRK"
    curl -s "$URL/metrics" > "$OUT/log/metrics.rep$rep.txt" || true
    python3 - "$OUT/wrk/rep$rep.txt" "$rep" "$HEALTH_MS" "$PID" >> "$OUT/raw.tsv" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def ms(v):
    n, u = re.match(r"([\d.]+)(us|ms|s)", v).groups()
    return float(n) * {"us": 1e-3, "ms": 1, "s": 1e3}[u]
lat = dict(re.findall(r"^\s+(50|90|99)%\s+(\S+)", text, re.M))
mx = re.search(r"Latency\s+\S+\s+\S+\s+(\S+)", text).group(1)
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
non2 = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
hwm = [l.split()[1] for l in open("/proc/%s/status" % sys.argv[4]) if l.startswith("VmHWM:")][0]
print("\t".join([sys.argv[2], "%.0f" % rps, "%.2f" % ms(lat["50"]), "%.2f" % ms(lat["90"]),
                 "%.2f" % ms(lat["99"]), "%.2f" % ms(mx), non2.group(1) if non2 else "0",
                 str(sum(map(int, sock.groups()))) if sock else "0", sys.argv[3], hwm]))
PY
done
python3 "$HERE/report.py" "$OUT/raw.tsv" "$CONNS" "$WRK_THREADS" "$DURATION" "$MEMORY_MB" \
    | tee "$OUT/results.md"
