#!/usr/bin/env bash
# Symbolization benchmark: `ember symbolize` against its peers, end to end
# from process start. See README.md in this directory.
#
#   bench/symbolize/run.sh            # REPS=5; report on stdout
#
# Builds what is missing first: make-corpus.sh (objdump: ~15 min the first
# time), make-addrs.sh, build-gimli.sh, and ember and ember-runone in the
# build directory (bench/build-dir.sh).
# Env:
#   BUILD=<repo>/build-release   the build directory (ember, ember-runone)
#   REPS=5             repetitions (each rep runs every tool on every binary)
#   TOOLS="llvm gnu eu gimli ember"   subset/order of tools
#   BINS="objdump cxx_O2 c_O2_pie"    subset of corpus binaries (default: all present)
#   EMBER_BIN="$BUILD/ember symbolize"   ember command (words)
#   LLVM_SYMBOLIZER=llvm-symbolizer   which llvm-symbolizer (ratio baseline)
#   SLOW_N=2000        addresses given to eu-addr2line (it is very slow)
#   TIMEOUT=300        seconds before one run is killed (recorded as "timeout")
#   INSTALL_DEPS=1     let make-corpus.sh / build-gimli.sh apt-get install
# Writes out/results/raw.tsv, out/results/machine.tsv, out/results/report.md
# and the last rep's outputs in out/results/out/.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$HERE/out
RES=$OUT/results
REPS=${REPS:-5}
SLOW_N=${SLOW_N:-2000}
TIMEOUT=${TIMEOUT:-300}
TOOLS=${TOOLS:-"llvm gnu eu gimli ember"}
log() { echo "[run] $*" >&2; }

# ------------------------------------------------------------ prerequisites
mkdir -p "$OUT/bin" "$RES/out"
# shellcheck source=../build-dir.sh
. "$REPO/bench/build-dir.sh"
if [ -n "${EMBER_BIN:-}" ]; then bench_build ember-runone; else bench_build ember-runone ember; fi
EMBER_BIN=${EMBER_BIN:-"$BUILD/ember symbolize"}
RUNONE=$BUILD/ember-runone

# Cheap when everything exists: make-corpus.sh only builds objdump if it is
# missing, and picks up Ember's fixtures once the project has built them.
"$HERE/make-corpus.sh" 2> "$OUT/make-corpus.log" || { cat "$OUT/make-corpus.log" >&2; exit 1; }
grep -E 'SKIP|fail|built in|copied' "$OUT/make-corpus.log" >&2 || true
ls "$OUT"/corpus/*.debug >/dev/null 2>&1 ||
    { log "no corpus binaries in out/corpus (see make-corpus.sh, out/make-corpus.log)"; exit 1; }
"$HERE/make-addrs.sh" 2> "$OUT/make-addrs.log" || { cat "$OUT/make-addrs.log" >&2; exit 1; }
grep -v ': exists$' "$OUT/make-addrs.log" >&2 || true     # make-addrs is a no-op when up to date

if [ -z "${BINS:-}" ]; then
    BINS=$(for f in "$OUT"/corpus/*.debug; do basename "${f%.debug}"; done | tr '\n' ' ')
fi

# ------------------------------------------------------------ tools
LLVM_SYMBOLIZER=${LLVM_SYMBOLIZER:-$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)}
ACTIVE=""
SKIPPED=""
skip() { log "SKIP $1: $2"; SKIPPED="$SKIPPED$1: $2; "; }
for t in $TOOLS; do
    case $t in
    llvm)  [ -n "$LLVM_SYMBOLIZER" ] && ACTIVE="$ACTIVE llvm" ||
               skip llvm "llvm-symbolizer not found (apt-get install llvm-14)" ;;
    gnu)   command -v addr2line >/dev/null && ACTIVE="$ACTIVE gnu" ||
               skip gnu "addr2line not found (binutils)" ;;
    eu)    command -v eu-addr2line >/dev/null && ACTIVE="$ACTIVE eu" ||
               skip eu "eu-addr2line not found (elfutils)" ;;
    gimli) if [ ! -x "$OUT/bin/gimli-a2l" ] || [ "$HERE/gimli-a2l/src/main.rs" -nt "$OUT/bin/gimli-a2l" ] ||
              [ "$HERE/gimli-a2l/Cargo.toml" -nt "$OUT/bin/gimli-a2l" ]; then
               "$HERE/build-gimli.sh" || true
           fi
           [ -x "$OUT/bin/gimli-a2l" ] && ACTIVE="$ACTIVE gimli" ||
               skip gimli "out/bin/gimli-a2l could not be built (see build-gimli.sh)" ;;
    ember) read -r -a ember_cmd <<< "$EMBER_BIN"
           if [ ! -x "${ember_cmd[0]}" ] && ! command -v "${ember_cmd[0]}" >/dev/null; then
               skip ember "${ember_cmd[0]#"$REPO/"} not built (make build-release)"
           else
               # Smoke test: one address from the first binary must give output.
               b1=$(set -- $BINS; echo "$1")
               if "${ember_cmd[@]}" --inlines --demangle --obj="$OUT/corpus/$b1" \
                      < "$OUT/addrs/$b1.1.addrs" > "$RES/ember.smoke" 2>&1 && [ -s "$RES/ember.smoke" ]; then
                   ACTIVE="$ACTIVE ember"
               else
                   skip ember "'${EMBER_BIN#"$REPO/"} --inlines --demangle --obj=...' failed on 1 address; see out/results/ember.smoke"
               fi
           fi ;;
    *) skip "$t" "unknown tool" ;;
    esac
done
log "tools:$ACTIVE; binaries: $BINS; REPS=$REPS"

# cmd_for TOOL BIN -> prints the argv (one word a line)
cmd_for() {
    local bin=$2
    case $1 in
    llvm)  printf '%s\n' "$LLVM_SYMBOLIZER" --inlines --demangle "--obj=$bin" ;;
    gnu)   printf '%s\n' addr2line -a -f -i -C -e "$bin" ;;
    eu)    printf '%s\n' eu-addr2line -a -f -i -C -e "$bin" ;;
    gimli) printf '%s\n' "$OUT/bin/gimli-a2l" "$bin" ;;
    ember) printf '%s\n' "${ember_cmd[@]}" --inlines --demangle "--obj=$bin" ;;
    esac
}

# ------------------------------------------------------------ machine
{
    printf 'key\tvalue\n'
    printf 'date\t%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf 'host_os\t%s\n' "$(. /etc/os-release; echo "$PRETTY_NAME") / $(uname -r)"
    printf 'nproc\t%s\n' "$(nproc)"
    printf 'cpu\t%s\n' "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
    printf 'mem\t%s\n' "$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
    printf 'loadavg_start\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
    printf 'reps\t%s\n' "$REPS"
    printf 'slow_n\t%s\n' "$SLOW_N"
    for b in $BINS; do     # the address sets are fixed (make-addrs.sh): name them
        printf 'addrs_%s\t%s\n' "$b" "$(sha256sum < "$OUT/addrs/$b.addrs" | cut -c1-16)"
    done
    printf 'tools\t%s\n' "$ACTIVE"
    printf 'skipped\t%s\n' "$SKIPPED"
    for t in $ACTIVE; do
        case $t in
        llvm)  v=$("$LLVM_SYMBOLIZER" --version 2>&1 | sed -n 's/.*LLVM version //p' | head -n1)
               printf 'version_llvm\t%s (%s)\n' "llvm-symbolizer $v" "$(basename "$LLVM_SYMBOLIZER")" ;;
        gnu)   printf 'version_gnu\t%s\n' "$(addr2line --version | head -n1)" ;;
        eu)    printf 'version_eu\t%s\n' "$(eu-addr2line --version | head -n1)" ;;
        gimli) printf 'version_gimli\t%s\n' "gimli-a2l over $(grep -A1 'name = "addr2line"' "$OUT/gimli-a2l-src/Cargo.lock" 2>/dev/null | sed -n 's/version = "\(.*\)"/addr2line \1/p') crate, built with $(cat "$OUT/bin/gimli-a2l.toolchain" 2>/dev/null || echo '?')" ;;
        ember) printf 'version_ember\t%s\n' "${EMBER_BIN#"$REPO/"}" ;;
        esac
    done
} > "$RES/machine.tsv"

# ------------------------------------------------------------ runs
RAW=$RES/raw.tsv
printf 'rep\tbinary\ttool\tkind\tn_addrs\twall_s\tuser_s\tsys_s\tmaxrss_kb\trc\tminflt\tmajflt\tout_bytes\tblocks\tload1\n' > "$RAW"

# Count answered addresses: llvm-style output ends each address with an
# empty line; the addr2line-style tools (-a) print a 0x... line per address.
count_blocks() {
    case $1 in
    llvm|ember) grep -c '^$' "$2" || true ;;
    *)          grep -c '^0x' "$2" || true ;;
    esac
}

one_run() {  # rep tool bin kind addrs-file
    local rep=$1 tool=$2 bin=$3 kind=$4 addrs=$5 o n m
    o=$RES/out/$bin.$tool.$kind.txt
    n=$(wc -l < "$addrs")
    mapfile -t cmd < <(cmd_for "$tool" "$OUT/corpus/$bin")
    m=$("$RUNONE" "$addrs" "$o" "$TIMEOUT" "${cmd[@]}")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$bin" "$tool" "$kind" "$n" "$m" \
        "$(stat -c %s "$o")" "$(count_blocks "$tool" "$o")" "$(cut -d' ' -f1 /proc/loadavg)" >> "$RAW"
    if [ "$(cut -f5 <<< "$m")" != 0 ]; then
        log "WARN $tool on $bin ($kind): rc=$(cut -f5 <<< "$m"); see ${o#"$HERE/"}.err"
    fi
}

T0=$(date +%s)
read -r -a tools_arr <<< "$ACTIVE"
nt=${#tools_arr[@]}
for rep in $(seq 1 "$REPS"); do
    for bin in $BINS; do
        # The page cache warm for everyone, the same way: the binary and each
        # tool's executable read whole first (then each tool's 1-address run
        # precedes its timed full run).  report.py lists any major fault.
        cat "$OUT/corpus/$bin" > /dev/null
        for t in $ACTIVE; do
            exe=$(cmd_for "$t" "$OUT/corpus/$bin")
            exe=${exe%%$'\n'*}          # the first word (no pipe: pipefail and SIGPIPE)
            exe=$(command -v "$exe" || echo "$exe")
            cat "$(readlink -f "$exe")" > /dev/null 2>&1 || true
        done
        # Rotate the tool order each rep so no tool always runs first.
        for i in $(seq 0 $((nt - 1))); do
            tool=${tools_arr[$(((i + rep - 1) % nt))]}
            full=$OUT/addrs/$bin.addrs
            [ "$tool" = eu ] && full=$OUT/addrs/$bin.$SLOW_N.addrs
            [ -f "$full" ] || head -n "$SLOW_N" "$OUT/addrs/$bin.addrs" > "$full"
            one_run "$rep" "$tool" "$bin" startup "$OUT/addrs/$bin.1.addrs"
            one_run "$rep" "$tool" "$bin" full "$full"
        done
        log "rep $rep/$REPS $bin done ($(( $(date +%s) - T0 )) s)"
    done
done
printf 'loadavg_end\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" >> "$RES/machine.tsv"
printf 'bench_wall_s\t%s\n' "$(( $(date +%s) - T0 ))" >> "$RES/machine.tsv"

python3 "$HERE/report.py" "$OUT" | tee "$RES/report.md"
