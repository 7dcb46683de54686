#!/usr/bin/env bash
# Symbolization API benchmark: `ember serve`'s POST /api/v1/symbolize and
# POST /api/v1/symbolize/pprof, against a warm llvm-symbolizer coprocess on
# the same binaries and addresses in the same run.  See README.md.
#
#   bench/symbolize-api/run.sh   # REPS=3, about 3 minutes
#
# Env:
#   BUILD=<repo>/build-release   the build directory (Release, no
#                     sanitizers): ember, ember-api-bench and
#                     gen-unsymbolized-profile are brought up to date there
#                     and used (bench/build-dir.sh)
#   REPS=3            repetitions of the warm, cold and pprof measurements
#   BATCHES="1000 10000 100000"   addresses per HTTP request, each reported
#   DURATION=3        seconds of requests per (binary, batch) cell (at least MIN_REQS)
#   MIN_REQS=3        requests per cell at least
#   LLVM_N=20000      addresses fed to llvm-symbolizer per rep and binary
#   WARM_BINS="objdump c_O2_pie c_O2_nopie cxx_O2"
#   COLD_BINS="objdump cxx_O2 c_O2_pie"
#   BIG=              a binary with ~100 MB of DWARF in it, added to the cold
#                     cases as "big" (bench/coldstart/make-big.py builds one)
#   PPROF_N=20        timed pprof requests per rep (after one warm-up)
#   SECTIONS="warm pprof cold"    which parts to run
#   FIXTURES=         directory of Ember's ELF fixtures (default: the first
#                     build*/fixtures holding all of them, $BUILD's first)
#   LLVM_SYMBOLIZER=llvm-symbolizer
# Writes out/raw.tsv (warm), out/pprof.tsv, out/cold.tsv, out/machine.txt,
# out/report.md (also printed), logs in out/log/.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$HERE/out
SYMB=$REPO/bench/symbolize
REPS=${REPS:-3}
BATCHES=${BATCHES:-"1000 10000 100000"}
DURATION=${DURATION:-3}
MIN_REQS=${MIN_REQS:-3}
LLVM_N=${LLVM_N:-20000}
WARM_BINS=${WARM_BINS:-"objdump c_O2_pie c_O2_nopie cxx_O2"}
COLD_BINS=${COLD_BINS:-"objdump cxx_O2 c_O2_pie"}
PPROF_BINS="objdump cxx_O2 c_O2_pie c_O2_nopie libfixture.so"
PPROF_N=${PPROF_N:-20}
SECTIONS=${SECTIONS:-"warm pprof cold"}
LLVM_SYMBOLIZER=${LLVM_SYMBOLIZER:-$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)}
log() { echo "[symbolize-api] $*" >&2; }
die() { log "$*"; exit 1; }
has() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }

unset DEBUGINFOD_URLS   # the server must never ask upstream
for t in curl readelf objdump python3; do
    command -v "$t" >/dev/null || die "$t not found"
done
[ -n "$LLVM_SYMBOLIZER" ] || die "llvm-symbolizer not found (apt-get install llvm)"
mkdir -p "$OUT/corpus" "$OUT/addrs"
rm -rf "$OUT/log" "$OUT"/data-*
mkdir -p "$OUT/log"

# ------------------------------------------------------------ binaries
# shellcheck source=../build-dir.sh
. "$REPO/bench/build-dir.sh"
BENCH_BUILD_LOG=$OUT/log/build.log
bench_build all || die "build failed (see out/log/build.log)"
EMBER=$BUILD/ember
APIBENCH=$BUILD/ember-api-bench

# ------------------------------------------------------------ corpus
# objdump (and its address set) is bench/symbolize's: both scripts are
# no-ops when their outputs exist.
"$SYMB/make-corpus.sh" 2> "$OUT/log/make-corpus.log" || { cat "$OUT/log/make-corpus.log" >&2; exit 1; }
"$SYMB/make-addrs.sh" 2> "$OUT/log/make-addrs.log" || { cat "$OUT/log/make-addrs.log" >&2; exit 1; }
[ -s "$SYMB/out/corpus/objdump" ] && [ -s "$SYMB/out/addrs/objdump.addrs" ] ||
    die "no objdump in bench/symbolize/out/corpus (see out/log/make-corpus.log)"
FIXTURE_NAMES="c_O2_pie c_O2_nopie cxx_O2 libfixture.so"
if [ -z "${FIXTURES:-}" ]; then
    for d in "$BUILD/fixtures" "$REPO"/build*/fixtures; do
        ok=1; for f in $FIXTURE_NAMES; do [ -s "$d/$f" ] || ok=0; done
        if [ $ok = 1 ]; then FIXTURES=$d; break; fi
    done
fi
[ -n "${FIXTURES:-}" ] || die "no build*/fixtures with $FIXTURE_NAMES (build the project first)"
cp -f "$SYMB/out/corpus/objdump" "$SYMB/out/corpus/objdump.debug" "$OUT/corpus/" 2>/dev/null ||
    die "cannot copy objdump"
cp -f "$SYMB/out/addrs/objdump.addrs" "$OUT/addrs/objdump.addrs"
for f in $FIXTURE_NAMES; do cp -f "$FIXTURES/$f" "$OUT/corpus/$f"; done
if [ -n "${BIG:-}" ]; then
    cp -f "$BIG" "$OUT/corpus/big"
    readelf -sW "$BIG" | awk '$4 == "FUNC" && $8 == "main" && !n++ { print "0x" $2 }' > "$OUT/addrs/big.addrs"
    COLD_BINS="$COLD_BINS big"
fi
# Address sets of the fixtures: bench/symbolize/make-addrs.sh's method
# (instructions of .text inside FUNC symbols, 100,000 drawn with
# replacement, seed 20240601), through its sample_addrs.py.
for f in $FIXTURE_NAMES; do
    dst=$OUT/addrs/$f.addrs bin=$OUT/corpus/$f
    [ -s "$dst" ] && [ "$dst" -nt "$bin" ] && continue
    tmp=$(mktemp -d)
    textndx=$(readelf -SW "$bin" | sed -n 's/^ *\[ *\([0-9]*\)\] \.text .*/\1/p')
    readelf -sW "$bin" | awk -v ndx="$textndx" '$4 == "FUNC" && $7 == ndx && $3 != "0" { print $2, $3 }' > "$tmp/funcs"
    objdump -d --no-show-raw-insn -j .text "$bin" | sed -n 's/^ *\([0-9a-f][0-9a-f]*\):\t.*/\1/p' > "$tmp/insns"
    python3 "$SYMB/sample_addrs.py" "$tmp/funcs" "$tmp/insns" 100000 20240601 > "$dst.tmp" 2> "$OUT/addrs/$f.info"
    mv "$dst.tmp" "$dst"; rm -rf "$tmp"
done
build_id_of() { readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'; }
dwarf_bytes() {   # sum of the .debug_* section sizes (as bench/symbolize/make-corpus.sh)
    local s=0 h
    for h in $(readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] *//p' | awk '$1 ~ /^\.debug_/ { print $5 }'); do
        s=$((s + 16#$h))
    done
    echo "$s"
}
{
    printf 'binary\tbuild_id\tfile_bytes\tdwarf_bytes\n'
    for f in objdump $FIXTURE_NAMES ${BIG:+big}; do
        printf '%s\t%s\t%s\t%s\n' "$f" "$(build_id_of "$OUT/corpus/$f")" "$(stat -c %s "$OUT/corpus/$f")" \
            "$(dwarf_bytes "$OUT/corpus/$f")"
    done
} > "$OUT/stats.tsv"
id_of() { awk -v b="$1" '$1 == b { print $2 }' "$OUT/stats.tsv"; }

# ------------------------------------------------------------ machine
busy() { ps -eo comm= | grep -cE '^(cc1|cc1plus|ld|collect2|as|rustc|compile|ninja|make)$' || true; }
{
    echo "date	$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpu	$(nproc) x $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
    echo "mem	$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
    echo "kernel	$(uname -r)"
    echo "ember	$EMBER"
    echo "llvm	$("$LLVM_SYMBOLIZER" --version 2>&1 | sed -n 's/.*LLVM version //p' | head -1) ($LLVM_SYMBOLIZER)"
    echo "curl	$(curl-config --version 2>/dev/null || echo '?')"
    echo "fixtures	$FIXTURES"
    echo "reps	$REPS"
    echo "batches	$BATCHES"
    echo "duration	$DURATION"
    echo "llvm_n	$LLVM_N"
    echo "load_before	$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "compilers_before	$(busy)"
} > "$OUT/machine.txt"
[ "$(busy)" = 0 ] || log "warning: $(busy) compiler/linker processes are running (figures will be noisy)"

# ------------------------------------------------------------ server helpers
SERVER_PID="" URL="" TOKEN=""
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}
trap stop_server EXIT
start_server() {   # data-dir log-name
    local i
    "$EMBER" serve --listen 127.0.0.1:0 --data "$1" > "$OUT/log/$2.stdout" 2> "$OUT/log/$2.log" &
    SERVER_PID=$!
    URL=""
    for ((i = 0; i < 300 && ${#URL} == 0; i++)); do
        sleep 0.05
        kill -0 "$SERVER_PID" 2>/dev/null || die "ember serve exited: $(cat "$OUT/log/$2.log")"
        URL=$(sed -n 's/^.*listening on \(http:[^ ]*\).*$/\1/p' "$OUT/log/$2.stdout")
    done
    [ -n "$URL" ] || die "ember serve printed no address (see out/log/$2.stdout)"
    for ((i = 0; i < 100; i++)); do
        curl -sf -o /dev/null "$URL/healthz" && break
        sleep 0.05
    done
    TOKEN=$(cat "$1/token")
}
upload() {   # files...
    EMBER_SERVER=$URL EMBER_TOKEN=$TOKEN "$EMBER" upload --quiet "$@" >> "$OUT/log/upload.log" 2>&1 ||
        die "ember upload failed: $(tail -5 "$OUT/log/upload.log")"
}
corpus_files() {   # binaries -> files to upload (objdump with its .debug)
    for b in "$@"; do
        echo "$OUT/corpus/$b"
        [ "$b" = objdump ] && echo "$OUT/corpus/objdump.debug"
    done
    return 0
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# ------------------------------------------------------------ warm
printf 'rep\tbinary\ttool\tload1\tfields\n' > "$OUT/raw.tsv"
printf 'rep\tload1\tfields\n' > "$OUT/pprof.tsv"
if has warm || has pprof; then
    start_server "$OUT/data-warm" warm
    # shellcheck disable=SC2046
    upload $(corpus_files objdump $FIXTURE_NAMES)
    log "server $URL (pid $SERVER_PID), corpus uploaded"
    echo "server_idle	VmRSS $(awk '/VmRSS/ { print $2 }' /proc/$SERVER_PID/status) kB" >> "$OUT/machine.txt"
fi
if has warm; then
    # Each index is built by one untimed 1-address request (its time is
    # logged: the cold figures below measure it properly).
    for b in $WARM_BINS; do
        r=$("$APIBENCH" http "$URL/api/v1/symbolize" "$(id_of "$b")" "$OUT/addrs/$b.addrs" 1 0 1 "$SERVER_PID")
        echo "first_request_$b	$r" >> "$OUT/machine.txt"
    done
    for ((rep = 1; rep <= REPS; rep++)); do
        for b in $WARM_BINS; do
            cat "$OUT/corpus/$b" > /dev/null
            order="llvm ember"; ((rep % 2)) || order="ember llvm"
            for tool in $order; do
                if [ "$tool" = llvm ]; then
                    r=$("$APIBENCH" llvm "$LLVM_SYMBOLIZER" "$OUT/corpus/$b" "$OUT/addrs/$b.addrs" "$LLVM_N")
                    printf '%s\t%s\tllvm\t%s\t%s\n' "$rep" "$b" "$(load1)" "$r" >> "$OUT/raw.tsv"
                    log "rep $rep $b llvm-symbolizer: $r"
                else
                    for n in $BATCHES; do
                        r=$("$APIBENCH" http "$URL/api/v1/symbolize" "$(id_of "$b")" "$OUT/addrs/$b.addrs" \
                            "$n" "$DURATION" "$MIN_REQS" "$SERVER_PID")
                        printf '%s\t%s\tember\t%s\t%s\n' "$rep" "$b" "$(load1)" "$r" >> "$OUT/raw.tsv"
                        log "rep $rep $b ember: $r"
                    done
                fi
            done
        done
    done
    echo "load_after_warm	$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"
fi

# ------------------------------------------------------------ pprof
if has pprof; then
    if ! command -v go >/dev/null; then
        log "SKIP pprof: 'go' not found (apt-get install golang-go)"
        echo "pprof_skipped	go not found" >> "$OUT/machine.txt"
    else
        bench_build gen-unsymbolized-profile || die "gen-unsymbolized-profile: build failed (see out/log/build.log)"
        GENPROF=$BUILD/gen-unsymbolized-profile
        args=()
        for b in $PPROF_BINS; do args+=("$OUT/corpus/$b=$OUT/addrs/$b.addrs"); done
        "$GENPROF" -o "$OUT/profile.pb.gz" -samples 10000 -locations 2000 "${args[@]}" \
            2> "$OUT/log/gen-unsymbolized-profile.log" ||
            die "gen-unsymbolized-profile failed: $(cat "$OUT/log/gen-unsymbolized-profile.log")"
        echo "pprof_profile	$(stat -c %s "$OUT/profile.pb.gz") bytes gzip; gen-unsymbolized-profile over $(cat "$GENPROF.src")" >> "$OUT/machine.txt"
        for ((rep = 1; rep <= REPS; rep++)); do
            "$APIBENCH" pprof "$URL/api/v1/symbolize/pprof" "$OUT/profile.pb.gz" "$PPROF_N" \
                "$OUT/answer.pb.gz" "$SERVER_PID" > "$OUT/log/pprof.$rep.txt"
            while read -r line; do
                printf '%s\t%s\t%s\n' "$rep" "$(load1)" "$line" >> "$OUT/pprof.tsv"
            done < "$OUT/log/pprof.$rep.txt"
            log "rep $rep pprof: $(grep '^summary' "$OUT/log/pprof.$rep.txt")"
        done
        # Sanity, not timed: go tool pprof reads the answer and shows names.
        GOTMP=$OUT/go/home; mkdir -p "$GOTMP"
        if HOME=$GOTMP PPROF_TMPDIR=$GOTMP go tool pprof -top -symbolize=none "$OUT/answer.pb.gz" \
                > "$OUT/log/pprof-top.txt" 2> "$OUT/log/pprof-top.err"; then
            rows=$(awk 'f && NF >= 6 { n++ } /flat%/ { f = 1 } END { print n + 0 }' "$OUT/log/pprof-top.txt")
            hex=$(awk 'f && NF >= 6 && $6 ~ /^0x[0-9a-f]+$/ { n++ } /flat%/ { f = 1 } END { print n + 0 }' "$OUT/log/pprof-top.txt")
            echo "pprof_top	ok: $rows rows, $hex of them bare addresses; first: $(awk 'f && NF >= 6 { $1=$2=$3=$4=$5=""; sub(/^ +/, ""); print; exit } /flat%/ { f = 1 }' "$OUT/log/pprof-top.txt")" >> "$OUT/machine.txt"
        else
            echo "pprof_top	FAILED: $(head -3 "$OUT/log/pprof-top.err" | tr '\n' ' ')" >> "$OUT/machine.txt"
        fi
    fi
fi
if has warm || has pprof; then
    echo "server_after	VmRSS $(awk '/VmRSS/ { print $2 }' /proc/$SERVER_PID/status) kB, VmHWM $(awk '/VmHWM/ { print $2 }' /proc/$SERVER_PID/status) kB" >> "$OUT/machine.txt"
    stop_server
    rm -rf "$OUT/data-warm"
fi

# ------------------------------------------------------------ cold
# Per rep: a fresh data directory holding the uploaded binaries (the
# uploading server stopped), then per binary (a) a server started on it
# answering the build ID (an index built from DWARF), (b) a server
# restarted on the same directory answering it again, (c) the same with
# the server binary spawned directly (ember-server serve).  The files the
# first answer added outside db/ and tmp/ are the store's derived
# artifacts (an on-disk index, when there is one).
snapshot() { (cd "$1" && find . -path ./db -prune -o -path ./tmp -prune -o -type f -printf '%P\t%s\n' | sort); }
dir_bytes() { du -sb "$1" 2>/dev/null | cut -f1; }
printf 'rep\tbinary\tcase\tload1\tfields\n' > "$OUT/cold.tsv"
if has cold; then
    for ((rep = 1; rep <= REPS; rep++)); do
        D=$OUT/data-cold
        rm -rf "$D"
        start_server "$D" cold-upload
        # shellcheck disable=SC2046
        upload $(corpus_files $COLD_BINS)
        stop_server
        for b in $COLD_BINS; do
            cat "$D"/blobs/*/* > /dev/null     # the stored files in the page cache
            first=$(head -1 "$OUT/addrs/$b.addrs")
            before=$(snapshot "$D"); db0=$(dir_bytes "$D/db")
            for c in a b c; do
                srv=$EMBER
                [ "$c" = c ] && srv=$(dirname "$EMBER")/ember-server
                r=$("$APIBENCH" cold "$srv" "$D" "$(free_port)" "$(id_of "$b")" "$first" \
                    "$OUT/log/cold.$rep.$b.$c.log" 60)
                if [ "$c" = a ]; then
                    new=$(comm -13 <(echo "$before") <(snapshot "$D"))
                    idx_bytes=$(awk -F'\t' '{ s += $2 } END { print s + 0 }' <<< "$new")
                    idx_files=$(awk -F'\t' 'NF { printf "%s%s", (n++ ? "," : ""), $1 }' <<< "$new")
                    r="$r index_bytes=$idx_bytes index_files=${idx_files:-none} db_delta_bytes=$(( $(dir_bytes "$D/db") - db0 ))"
                fi
                printf '%s\t%s\t%s\t%s\t%s\n' "$rep" "$b" "$c" "$(load1)" "$r" >> "$OUT/cold.tsv"
                log "rep $rep cold ($c) $b: $r"
            done
        done
    done
    rm -rf "$OUT/data-cold"
fi
echo "load_after	$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"
echo "compilers_after	$(busy)" >> "$OUT/machine.txt"

python3 "$HERE/report.py" "$OUT" | tee "$OUT/report.md"
