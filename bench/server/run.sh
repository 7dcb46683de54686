#!/usr/bin/env bash
# Debuginfo server benchmark: `ember serve` against elfutils `debuginfod`,
# both serving the same files on loopback in the same run.  See README.md.
#
#   bench/server/run.sh          # REPS=3, about 4 minutes once the corpus exists
#
# Env:
#   REPS=3            repetitions; each rep runs every case on both servers
#   DURATION=10s      wrk -d per run
#   WRK_THREADS=2 WRK_CONNS=4   wrk -t / -c
#   CASES="small big 404"       subset/order of the GET cases
#   SERVERS="ember debuginfod"  subset of servers (rep r starts with the
#                               first one when r is odd, the other when even)
#   DEBUGINFOD_THREADS=         debuginfod -C N (empty: its default, 2 x CPUs)
#   UPLOAD=1          run the 100 MB upload test (0: skip)
#   UPLOAD_MB=100     size of the upload file's padding, in MiB
#   RESTART=1         at the end, restart Ember on the same data and record its
#                     memory when it only serves (0: skip)
#   KEEP_DATA=0       1 keeps out/ember-data (with the uploaded blobs) at the end
#   BUILD=<repo>/build-release   the build directory whose ember is used,
#                     brought up to date first (bench/build-dir.sh)
# Writes out/raw.tsv, out/upload.tsv, out/machine.txt, out/results.md, and
# the wrk outputs and server logs of the run in out/wrk/ and out/log/.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$HERE/out
CORPUS=$OUT/corpus
REPS=${REPS:-3}
DURATION=${DURATION:-10s}
WRK_THREADS=${WRK_THREADS:-2}
WRK_CONNS=${WRK_CONNS:-4}
CASES=${CASES:-"small big 404"}
SERVERS=${SERVERS:-"ember debuginfod"}
DEBUGINFOD_THREADS=${DEBUGINFOD_THREADS:-}
UPLOAD=${UPLOAD:-1}
UPLOAD_MB=${UPLOAD_MB:-100}
UNKNOWN_ID=0123456789abcdef0123456789abcdef01234567   # well-formed, never stored
log() { echo "[server-bench] $*" >&2; }
die() { log "$*"; exit 1; }

unset DEBUGINFOD_URLS   # neither server may ask upstream on a miss
for t in wrk debuginfod curl gcc objcopy objdump python3; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install wrk debuginfod curl gcc binutils python3)"
done
mkdir -p "$OUT" "$CORPUS"
rm -rf "$OUT/wrk" "$OUT/log" "$OUT/ember-data" "$OUT/debuginfod.sqlite"* "$OUT/upload-work"
mkdir -p "$OUT/wrk" "$OUT/log" "$OUT/upload-work"

# ------------------------------------------------------------ ember binary
# shellcheck source=../build-dir.sh
. "$REPO/bench/build-dir.sh"
BENCH_BUILD_LOG=$OUT/log/build.log
bench_build ember || die "ember build failed (see out/log/build.log)"
EMBER=$BUILD/ember

# ------------------------------------------------------------ corpus (cached)
# small.debug: 50 functions, -g -O2, split: ~21 KB (the reference's 21,152 B).
gen_small() {   # $1 = variant number (changes the build ID)
    echo '#include <stdio.h>'
    echo "struct rec { const char *name; int id; double score; struct rec *next; };"
    echo "static const int variant = $1;"
    for i in $(seq 1 50); do
        echo "__attribute__((noinline)) int f$i(struct rec *r, int x) { int s = x * $i; for (; r; r = r->next) s += r->id ^ (int)r->score + $i; return s; }"
    done
    echo 'int main(int argc, char **argv) { struct rec r = { argv[0], argc, 1.5, 0 }; long s = variant;'
    for i in $(seq 1 50); do echo " s += f$i(&r, argc);"; done
    echo ' printf("%ld\n", s); return 0; }'
}
# big.debug: 2 units x 3,300 functions, each with its own struct and three
# macros, -g3 -O0: ~4 MB of DWARF (the reference's is 4.28 MB).
gen_big() {     # $1 = unit number
    local u=$1 n=3300
    echo '#include <stdio.h>'
    echo '#include <string.h>'
    for i in $(seq 1 $n); do
        printf '#define K%d_%d (%d * 3 + %d)\n#define NAME_OF_RECORD_%d_%d "record_%d_%d_with_a_longer_name"\n#define SCALE_%d_%d(v) ((v) * %d.5 + K%d_%d)\n' \
            "$u" "$i" "$i" "$u" "$u" "$i" "$u" "$i" "$u" "$i" "$i" "$u" "$i"
        echo "struct t${u}_$i { const char *name$i; int id$i; double score$i; unsigned char tag$i[8]; struct t${u}_$i *next$i; };"
        echo "int f${u}_$i(struct t${u}_$i *r, int x, const char *label$i) { int s$i = x * K${u}_$i; long acc$i = 0; double d$i = SCALE_${u}_$i(x); unsigned u$i = (unsigned)x; for (; r; r = r->next$i) { s$i += r->id$i ^ (int)r->score$i; acc$i += s$i + r->tag$i[u$i & 7]; } return s$i + (int)acc$i + (int)d$i + (label$i ? (int)strlen(label$i) : 0); }"
    done
    if [ "$u" = 1 ]; then
        echo "struct t2_1;"
        echo "int f2_1(struct t2_1 *r, int x, const char *label);"
        echo 'int main(int argc, char **argv) { struct t1_1 r = { argv[0], argc, 1.5, {0}, 0 };'
        echo ' printf("%d\n", f1_1(&r, argc, NAME_OF_RECORD_1_1) + f2_1(0, argc, 0)); return 0; }'
    fi
}
build_id_of() { readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'; }

if [ ! -s "$CORPUS/serve/small.debug" ] || [ ! -s "$CORPUS/serve/big.debug" ] ||
   [ ! -s "$CORPUS/up.debug" ] || [ "$(cat "$CORPUS/up.mb" 2>/dev/null)" != "$UPLOAD_MB" ]; then
    log "building the corpus in out/corpus (about 30 s the first time)"
    rm -rf "$CORPUS"; mkdir -p "$CORPUS/src" "$CORPUS/serve"
    gen_small 0 > "$CORPUS/src/small.c"
    gen_small 1 > "$CORPUS/src/up.c"
    gen_big 1 > "$CORPUS/src/big1.c"
    gen_big 2 > "$CORPUS/src/big2.c"
    gcc -g -O2 -Wl,--build-id -o "$CORPUS/src/small" "$CORPUS/src/small.c"
    gcc -g -O2 -Wl,--build-id -o "$CORPUS/src/up" "$CORPUS/src/up.c"
    gcc -g3 -O0 -c -o "$CORPUS/src/big1.o" "$CORPUS/src/big1.c" & p1=$!
    gcc -g3 -O0 -c -o "$CORPUS/src/big2.o" "$CORPUS/src/big2.c" & p2=$!
    wait "$p1"; wait "$p2"
    gcc -Wl,--build-id -o "$CORPUS/src/big" "$CORPUS/src/big1.o" "$CORPUS/src/big2.o"
    objcopy --only-keep-debug "$CORPUS/src/small" "$CORPUS/serve/small.debug"
    objcopy --only-keep-debug "$CORPUS/src/big" "$CORPUS/serve/big.debug"
    # The upload file: its own build ID (a 100 MB candidate under small's ID
    # would become the "best" file served for it), a debug-only ELF with a
    # .pad section of random bytes appended; the build-ID note is untouched.
    objcopy --only-keep-debug "$CORPUS/src/up" "$CORPUS/src/up.debug"
    head -c $((UPLOAD_MB << 20)) /dev/urandom > "$CORPUS/src/pad.bin"
    objcopy --add-section .pad="$CORPUS/src/pad.bin" --set-section-flags .pad=readonly \
        "$CORPUS/src/up.debug" "$CORPUS/up.debug"
    rm -f "$CORPUS/src/pad.bin" "$CORPUS/src"/*.o
    echo "$UPLOAD_MB" > "$CORPUS/up.mb"
fi
SMALL=$CORPUS/serve/small.debug
BIG=$CORPUS/serve/big.debug
UPF=$CORPUS/up.debug
SMALL_ID=$(build_id_of "$SMALL")
BIG_ID=$(build_id_of "$BIG")
UP_ID=$(build_id_of "$UPF")
[ -n "$SMALL_ID" ] && [ -n "$BIG_ID" ] && [ -n "$UP_ID" ] || die "corpus files without a build ID"
SMALL_SIZE=$(stat -c %s "$SMALL"); BIG_SIZE=$(stat -c %s "$BIG"); UP_SIZE=$(stat -c %s "$UPF")
log "corpus: small.debug $SMALL_SIZE B ($SMALL_ID), big.debug $BIG_SIZE B ($BIG_ID), up.debug $UP_SIZE B ($UP_ID)"

# ------------------------------------------------------------ servers
EMBER_PID=""; DEBUGINFOD_PID=""
cleanup() {
    for p in $EMBER_PID $DEBUGINFOD_PID; do kill "$p" 2>/dev/null || true; done
    for p in $EMBER_PID $DEBUGINFOD_PID; do wait "$p" 2>/dev/null || true; done
    # The uploads leave 2 x REPS blobs of 100 MB behind.
    [ "${KEEP_DATA:-0}" = 1 ] || rm -rf "$OUT/ember-data" "$OUT/upload-work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
http_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$1" || true; }
wait_200() {    # url, seconds, what
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        [ "$(http_code "$1")" = 200 ] && return 0
        sleep 0.1
    done
    die "$3 did not answer 200 on $1 within $2 s"
}

EMBER_URL=""; DEBUGINFOD_URL=""
case " $SERVERS " in *" ember "*)
    "$EMBER" serve --listen 127.0.0.1:0 --data "$OUT/ember-data" \
        > "$OUT/log/ember.stdout" 2> "$OUT/log/ember.log" &
    EMBER_PID=$!
    for ((i = 0; i < 100; i++)); do
        EMBER_URL=$(sed -n 's/^.*listening on \(http:[^ ]*\).*$/\1/p' "$OUT/log/ember.stdout")
        [ -n "$EMBER_URL" ] && break
        kill -0 "$EMBER_PID" 2>/dev/null || { cat "$OUT/log/ember.log" >&2; die "ember serve exited"; }
        sleep 0.1
    done
    [ -n "$EMBER_URL" ] || die "ember serve printed no address"
    wait_200 "$EMBER_URL/healthz" 10 "ember serve"
    TOKEN=$(cat "$OUT/ember-data/token")
    EMBER_SERVER=$EMBER_URL EMBER_TOKEN=$TOKEN "$EMBER" upload --quiet "$SMALL" "$BIG" ||
        die "ember upload of the corpus failed"
    ;; esac
case " $SERVERS " in *" debuginfod "*)
    DPORT=$(free_port)
    t0=$(date +%s%N)
    debuginfod -F -t0 -g0 ${DEBUGINFOD_THREADS:+-C "$DEBUGINFOD_THREADS"} -p "$DPORT" \
        -d "$OUT/debuginfod.sqlite" "$CORPUS/serve" > "$OUT/log/debuginfod.log" 2>&1 &
    DEBUGINFOD_PID=$!
    DEBUGINFOD_URL=http://127.0.0.1:$DPORT
    wait_200 "$DEBUGINFOD_URL/buildid/$SMALL_ID/debuginfo" 30 debuginfod
    wait_200 "$DEBUGINFOD_URL/buildid/$BIG_ID/debuginfo" 30 debuginfod
    log "debuginfod indexed and serving after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    ;; esac

url_of() {      # server case
    local base id
    [ "$1" = ember ] && base=$EMBER_URL || base=$DEBUGINFOD_URL
    case $2 in small) id=$SMALL_ID ;; big) id=$BIG_ID ;; 404) id=$UNKNOWN_ID ;; esac
    echo "$base/buildid/$id/debuginfo"
}
pid_of() { [ "$1" = ember ] && echo "$EMBER_PID" || echo "$DEBUGINFOD_PID"; }

# Both must serve the same bytes, and 404 the unknown ID.
for s in $SERVERS; do
    curl -sf -o "$OUT/wrk/check.small" "$(url_of "$s" small)" && cmp -s "$OUT/wrk/check.small" "$SMALL" ||
        die "$s does not serve small.debug byte for byte"
    curl -sf -o "$OUT/wrk/check.big" "$(url_of "$s" big)" && cmp -s "$OUT/wrk/check.big" "$BIG" ||
        die "$s does not serve big.debug byte for byte"
    [ "$(http_code "$(url_of "$s" 404)")" = 404 ] || die "$s does not answer 404 for an unknown build ID"
done
rm -f "$OUT/wrk/check."*

status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
nthreads() { awk '$1 == "Threads:" { print $2 }' "/proc/$1/status"; }
HZ=$(getconf CLK_TCK)

{
    echo "date	$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpu	$(nproc) x $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
    echo "mem	$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
    echo "kernel	$(uname -r)"
    echo "wrk	$(wrk -v 2>&1 | head -1 | awk '{ print $2 }')"
    echo "debuginfod	$(debuginfod --version 2>&1 | head -1)"
    echo "libmicrohttpd	$(dpkg-query -W -f '${Version}' libmicrohttpd12 2>/dev/null || echo '?')"
    echo "ember	$EMBER"
    echo "wrk_args	-t$WRK_THREADS -c$WRK_CONNS -d$DURATION --latency"
    echo "reps	$REPS"
    echo "sizes	small $SMALL_SIZE, big $BIG_SIZE, upload $UP_SIZE"
    echo "load_before	$(cut -d' ' -f1-3 /proc/loadavg)"
    for s in $SERVERS; do
        p=$(pid_of "$s")
        echo "idle_$s	VmRSS $(status_kb "$p" VmRSS) kB, VmHWM $(status_kb "$p" VmHWM) kB, $(nthreads "$p") threads"
    done
} > "$OUT/machine.txt"

# ------------------------------------------------------------ GET load
to_ms() {  # wrk latency "512.00us" / "1.23ms" / "1.02s" -> ms
    awk -v v="$1" 'BEGIN { n = v + 0; u = v; sub(/^[0-9.]+/, "", u);
        if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000;
        printf "%.3f", n }'
}
printf 'rep\tcase\tserver\treq_s\tp50_ms\tp90_ms\tp99_ms\tcpu_pct\tcpu_us_per_req\tvmrss_kb\tvmhwm_kb\tnon2xx\tsock_err\ttransfer_s\tload1\n' > "$OUT/raw.tsv"
run_wrk() {     # rep case server
    local rep=$1 c=$2 s=$3 p f c0 c1 t0 t1 rps l50 l90 l99 n2 se tr nreq
    p=$(pid_of "$s"); f=$OUT/wrk/$c.$s.$rep.txt
    c0=$(cpu_ticks "$p"); t0=$(date +%s%N)
    wrk -t"$WRK_THREADS" -c"$WRK_CONNS" -d"$DURATION" --latency "$(url_of "$s" "$c")" > "$f" 2>&1 ||
        die "wrk failed: $(cat "$f")"
    c1=$(cpu_ticks "$p"); t1=$(date +%s%N)
    kill -0 "$p" 2>/dev/null || die "$s died under load"
    rps=$(awk '/^Requests\/sec:/ { print $2 }' "$f")
    l50=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$f")")
    l90=$(to_ms "$(awk '$1 == "90%" { print $2 }' "$f")")
    l99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$f")")
    n2=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$f"); n2=${n2:-0}
    se=$(awk '/Socket errors:/ { gsub(/,/, ""); print $4 + $6 + $8 + $10 }' "$f"); se=${se:-0}
    tr=$(awk '/^Transfer\/sec:/ { print $2 }' "$f")
    nreq=$(awk '/ requests in / { print $1 }' "$f")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$c" "$s" "$rps" "$l50" "$l90" "$l99" \
        "$(awk -v d=$((c1 - c0)) -v hz="$HZ" -v ns=$((t1 - t0)) 'BEGIN { printf "%.0f", 100 * d / hz / (ns / 1e9) }')" \
        "$(awk -v d=$((c1 - c0)) -v hz="$HZ" -v n="$nreq" 'BEGIN { printf "%.1f", (n > 0 ? 1e6 * d / hz / n : 0) }')" \
        "$(status_kb "$p" VmRSS)" "$(status_kb "$p" VmHWM)" "$n2" "$se" "$tr" "$(cut -d' ' -f1 /proc/loadavg)" >> "$OUT/raw.tsv"
    log "rep $rep $c $s: $rps req/s, p50 $l50 ms, p99 $l99 ms, non-2xx $n2, socket errors $se"
}

# A short warm-up of each server and case (page cache, first connections).
for s in $SERVERS; do for c in $CASES; do
    wrk -t1 -c2 -d1s "$(url_of "$s" "$c")" > /dev/null 2>&1 || true
done; done

read -r -a SRV <<< "$SERVERS"
for ((rep = 1; rep <= REPS; rep++)); do
    for c in $CASES; do
        if ((rep % 2)); then order="${SRV[*]}"; else order=$(printf '%s\n' "${SRV[@]}" | tac | tr '\n' ' '); fi
        for s in $order; do run_wrk "$rep" "$c" "$s"; done
    done
done
{
    echo "load_after_get	$(cut -d' ' -f1-3 /proc/loadavg)"
    for s in $SERVERS; do
        p=$(pid_of "$s")
        echo "after_get_$s	VmRSS $(status_kb "$p" VmRSS) kB, VmHWM $(status_kb "$p" VmHWM) kB, $(nthreads "$p") threads"
    done
} >> "$OUT/machine.txt"

# ------------------------------------------------------------ upload (ember only)
printf 'rep\tmethod\tbytes\tseconds\tmb_s\tresult\n' > "$OUT/upload.tsv"
if [ "$UPLOAD" = 1 ] && [ -n "$EMBER_PID" ]; then
    PAD_OFF=$(objdump -h "$UPF" | awk '$2 == ".pad" { print $6 }')
    [ -n "$PAD_OFF" ] || die "no .pad section in $UPF"
    PAD_OFF=$((16#$PAD_OFF))
    cp "$UPF" "$OUT/upload-work/up.debug"
    UW=$OUT/upload-work/up.debug
    cat "$UW" > /dev/null   # in the page cache, like a CI artefact just written
    bump() {  # new content (so a new blob), same build ID: overwrite 32 bytes of .pad
        printf '%032d' "$1" | dd of="$UW" bs=1 seek="$PAD_OFF" conv=notrunc status=none
    }
    now() { date +%s%N; }
    rec() {   # rep method t0 t1 result
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$UP_SIZE" \
            "$(awk -v d=$(($4 - $3)) 'BEGIN { printf "%.3f", d / 1e9 }')" \
            "$(awk -v d=$(($4 - $3)) -v b="$UP_SIZE" 'BEGIN { printf "%.1f", b / 1e6 / (d / 1e9) }')" \
            "$5" >> "$OUT/upload.tsv"
    }
    n=0
    for ((rep = 1; rep <= REPS; rep++)); do
        # The disk itself: write and fsync the same bytes with dd.
        t0=$(now); dd if="$UW" of="$OUT/upload-work/dd.out" bs=1M conv=fsync status=none; t1=$(now)
        rec "$rep" "dd+fsync (disk baseline)" "$t0" "$t1" ok
        rm -f "$OUT/upload-work/dd.out"
        n=$((n + 1)); bump "$n"
        t0=$(now)
        EMBER_SERVER=$EMBER_URL EMBER_TOKEN=$TOKEN "$EMBER" upload "$UW" > "$OUT/log/upload.$rep.txt" 2>&1 ||
            die "ember upload failed: $(cat "$OUT/log/upload.$rep.txt")"
        t1=$(now)
        grep -q uploaded "$OUT/log/upload.$rep.txt" || die "ember upload sent nothing: $(cat "$OUT/log/upload.$rep.txt")"
        rec "$rep" "ember upload" "$t0" "$t1" ok
        t0=$(now)
        EMBER_SERVER=$EMBER_URL EMBER_TOKEN=$TOKEN "$EMBER" upload "$UW" > "$OUT/log/upload-noop.$rep.txt" 2>&1 ||
            die "ember upload (re-run) failed"
        t1=$(now)
        grep -q "already stored" "$OUT/log/upload-noop.$rep.txt" || die "ember upload re-run was not a no-op"
        rec "$rep" "ember upload re-run (no-op)" "$t0" "$t1" ok
        n=$((n + 1)); bump "$n"
        t0=$(now)
        code=$(curl -sS -o "$OUT/log/curl.$rep.txt" -w '%{http_code}' -X PUT -H "Authorization: Bearer $TOKEN" \
            -T "$UW" "$EMBER_URL/api/v1/artifacts/$UP_ID/debuginfo")
        t1=$(now)
        [ "$code" = 201 ] || die "curl PUT answered $code: $(cat "$OUT/log/curl.$rep.txt")"
        rec "$rep" "curl PUT" "$t0" "$t1" ok
    done
    echo "after_upload_ember	VmRSS $(status_kb "$EMBER_PID" VmRSS) kB, VmHWM $(status_kb "$EMBER_PID" VmHWM) kB" >> "$OUT/machine.txt"
    rm -f "$UW"
fi
# Ember's memory when it only serves: a fresh process on the same data
# directory (no ingest in its lifetime), after a short small-file and 404 load.
if [ "${RESTART:-1}" = 1 ] && [ -n "$EMBER_PID" ]; then
    kill "$EMBER_PID"; wait "$EMBER_PID" 2>/dev/null || true
    "$EMBER" serve --listen 127.0.0.1:0 --data "$OUT/ember-data" \
        > "$OUT/log/ember2.stdout" 2> "$OUT/log/ember2.log" &
    EMBER_PID=$!
    EMBER_URL=""
    for ((i = 0; i < 100 && ${#EMBER_URL} == 0; i++)); do
        sleep 0.1
        EMBER_URL=$(sed -n 's/^.*listening on \(http:[^ ]*\).*$/\1/p' "$OUT/log/ember2.stdout")
    done
    [ -n "$EMBER_URL" ] || die "restarted ember serve printed no address"
    wait_200 "$EMBER_URL/healthz" 10 "restarted ember serve"
    echo "restart_idle_ember	VmRSS $(status_kb "$EMBER_PID" VmRSS) kB, VmHWM $(status_kb "$EMBER_PID" VmHWM) kB" >> "$OUT/machine.txt"
    for c in small 404; do
        wrk -t"$WRK_THREADS" -c"$WRK_CONNS" -d3s "$(url_of ember "$c")" > "$OUT/wrk/$c.ember-restarted.txt" 2>&1 || true
    done
    echo "restart_loaded_ember	VmRSS $(status_kb "$EMBER_PID" VmRSS) kB, VmHWM $(status_kb "$EMBER_PID" VmHWM) kB" >> "$OUT/machine.txt"
fi
echo "load_after	$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"

# ------------------------------------------------------------ report
python3 - "$OUT" <<'PY' | tee "$OUT/results.md"
import csv, statistics as st, sys
out = sys.argv[1]
med = st.median
machine = dict(l.rstrip("\n").split("\t", 1) for l in open(f"{out}/machine.txt") if "\t" in l)
rows = list(csv.DictReader(open(f"{out}/raw.tsv"), delimiter="\t"))
up = list(csv.DictReader(open(f"{out}/upload.tsv"), delimiter="\t"))
cases = [c for c in ("small", "big", "404") if any(r["case"] == c for r in rows)]
servers = [s for s in ("ember", "debuginfod") if any(r["server"] == s for r in rows)]
def cell(c, s, k):
    v = [float(r[k]) for r in rows if r["case"] == c and r["server"] == s]
    return v
def fmt(x, d=2):
    return f"{x:,.{d}f}" if x < 100 else f"{x:,.0f}"
name = {"small": "small debuginfo", "big": "big debuginfo", "404": "404 unknown ID"}
print("# Debuginfo server benchmark: ember serve vs elfutils debuginfod\n")
print(f"{machine['date']}; {machine['cpu']}, {machine['mem']}; {machine['debuginfod']}, wrk {machine['wrk']}, libmicrohttpd {machine['libmicrohttpd']}.")
print(f"wrk {machine['wrk_args']}, {machine['reps']} reps, servers alternated; files: {machine['sizes']} bytes.")
print(f"Load average (1/5/15 min): before {machine['load_before']}, after the GET runs {machine.get('load_after_get', '?')}, at the end {machine.get('load_after', '?')}.\n")
print("## GET load: medians over reps (min-max req/s)\n")
print("| case | server | req/s | p50 ms | p90 ms | p99 ms | server CPU % of a core | server CPU µs/request | non-2xx | socket errors |")
print("|---|---|---|---|---|---|---|---|---|---|")
for c in cases:
    for s in servers:
        rps = cell(c, s, "req_s")
        if not rps: continue
        print(f"| {name[c]} | {s} | {fmt(med(rps))} ({fmt(min(rps))}-{fmt(max(rps))}) | {med(cell(c, s, 'p50_ms')):.3f} | "
              f"{med(cell(c, s, 'p90_ms')):.3f} | {med(cell(c, s, 'p99_ms')):.3f} | {med(cell(c, s, 'cpu_pct')):.0f} | {med(cell(c, s, 'cpu_us_per_req')):.0f} | "
              f"{int(med(cell(c, s, 'non2xx')))} | {int(sum(cell(c, s, 'sock_err')))} |")
if len(servers) == 2:
    print("\n## Ratios ember / debuginfod\n")
    print("Paired: the ratio within each rep, median (min-max); above 1 for req/s and below 1 for latency favour Ember.\n")
    print("| case | req/s ratio | p50 ratio | p99 ratio | goal |")
    print("|---|---|---|---|---|")
    reps = sorted({r["rep"] for r in rows})
    for c in cases:
        def paired(k):
            v = []
            for rp in reps:
                e = [float(r[k]) for r in rows if r["case"] == c and r["server"] == "ember" and r["rep"] == rp]
                d = [float(r[k]) for r in rows if r["case"] == c and r["server"] == "debuginfod" and r["rep"] == rp]
                if e and d and d[0] > 0: v.append(e[0] / d[0])
            return v
        rr, r50, r99 = paired("req_s"), paired("p50_ms"), paired("p99_ms")
        if not rr: continue
        goal = []
        if c in ("small", "404"):
            goal.append(f"2x req/s: {'met' if med(rr) >= 2 else 'NOT met'}")
        goal.append(f"lower p99: {'met' if max(r99) < 1 else ('median only' if med(r99) < 1 else 'NOT met')}")
        print(f"| {name[c]} | {med(rr):.2f} ({min(rr):.2f}-{max(rr):.2f}) | {med(r50):.2f} ({min(r50):.2f}-{max(r50):.2f}) | "
              f"{med(r99):.2f} ({min(r99):.2f}-{max(r99):.2f}) | {'; '.join(goal)} |")
print("\n## Server memory (kB from /proc/PID/status)\n")
print("| server | idle after setup | after the GET load | after the uploads |")
print("|---|---|---|---|")
for s in servers:
    print(f"| {s} | {machine.get('idle_' + s, '-')} | {machine.get('after_get_' + s, '-')} | {machine.get('after_upload_' + s, '-')} |")
if "restart_idle_ember" in machine:
    print(f"| ember, restarted on the same data (serving only) | {machine['restart_idle_ember']} | "
          f"{machine.get('restart_loaded_ember', '-')} (after 3 s small + 3 s 404) | - |")
print("\nIdle after setup: Ember after ingesting the two files by upload, debuginfod after indexing them.")
def kb(s, k, key):
    import re
    m = re.search(k + r" (\d+) kB", machine.get(key + s, ""))
    return int(m.group(1)) if m else None
if len(servers) == 2:
    e, d = kb("ember", "VmHWM", "after_get_"), kb("debuginfod", "VmHWM", "after_get_")
    er, dr = kb("ember", "VmRSS", "after_get_"), kb("debuginfod", "VmRSS", "after_get_")
    if e and d:
        print(f"\nPeak RSS (VmHWM) through the GET load: ember {e / 1024:.1f} MB, debuginfod {d / 1024:.1f} MB "
              f"(ratio {e / d:.2f}); RSS after it: {er / 1024:.1f} vs {dr / 1024:.1f} MB (ratio {er / dr:.2f}). "
              f"No more memory: {'met' if e <= d and er <= dr else 'NOT met'}.")
if up:
    print("\n## Upload into Ember (MB = 10^6 bytes; wall time from process start to the server's answer, fsync included)\n")
    print("| method | median s (min-max) | median MB/s |")
    print("|---|---|---|")
    for m in dict.fromkeys(r["method"] for r in up):
        s = [float(r["seconds"]) for r in up if r["method"] == m]
        b = int(up[0]["bytes"])
        rate = "-" if "no-op" in m else f"{b / 1e6 / med(s):,.0f}"
        print(f"| {m} | {med(s):.3f} ({min(s):.3f}-{max(s):.3f}) | {rate} |")
    print(f"\nFile: {int(up[0]['bytes']):,} bytes, a new sha256 each time (same build ID).")
PY
log "done: out/results.md, out/raw.tsv, out/upload.tsv, out/machine.txt"
