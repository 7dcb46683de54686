#!/usr/bin/env bash
# bench/unwind/run.sh [-n RUNS] [BINARY...] - the unwind compiler against
# GNU readelf on the same binaries, in the same run.
#
# For each binary: `ember unwind compile BINARY -o OUT --stats` and
# `readelf --debug-dump=frames-interp BINARY >/dev/null` (the decoder
# every CFI tool is compared with), alternated RUNS times (default 5),
# wall clock of the whole process each; then the compiler alone, in a
# lean process (ember-unwind-bench): once per fresh process (cold) and
# RUNS times in one process (warm).  Prints the medians and
# ratios, the table size, rows (as `ember unwind dump` prints them), stored
# rows, rules and bytes per row.  Everything reads the file from the page
# cache (one warm-up run each first).
#
# Default binaries: /usr/bin/bash, libc.so.6, libLLVM-14 (the anchor of
# ../shared/reference/unwind-anchors.md) when installed, and the largest
# x86-64 shared library with .eh_frame under /usr/lib, /usr/local, /opt.
# BUILD: the build directory whose ember, ember-unwind-bench and
# ember-runone are used, brought up to date first (default build-release/;
# bench/build-dir.sh).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../build-dir.sh
. "$HERE/../build-dir.sh"
bench_build ember ember-unwind-bench ember-runone
EMBER=$BUILD/ember
BENCH=$BUILD/ember-unwind-bench
RUNONE=$BUILD/ember-runone
READELF=${READELF:-readelf}
RUNS=5

if [ "${1:-}" = "-n" ]; then
	RUNS=$2
	shift 2
fi

largest_so() {
	find /usr/lib /usr/local /opt -xdev -type f -name '*.so*' -size +20M \
		-printf '%s %p\n' 2>/dev/null | sort -rn | while read -r _ p; do
		if "$READELF" -hSW "$p" 2>/dev/null | grep -q 'X86-64' &&
			"$READELF" -SW "$p" 2>/dev/null | grep -q ' \.eh_frame '; then
			echo "$p"
			return
		fi
	done
}

if [ $# -eq 0 ]; then
	set -- /usr/bin/bash
	for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu; do
		[ -e "$d/libc.so.6" ] && { set -- "$@" "$(readlink -f "$d/libc.so.6")"; break; }
	done
	for p in /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1 /usr/lib/llvm-14/lib/libLLVM-14.so.1; do
		[ -e "$p" ] && { set -- "$@" "$(readlink -f "$p")"; break; }
	done
	big=$(largest_so)
	[ -n "$big" ] && set -- "$@" "$big"
fi

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# wall SECONDS of one run of "$@", output discarded, from just before
# fork() to the child's exit, measured by ember-runone (bench/runone.c, a
# small C parent): bash's own fork and wait added 6-9 ms to every run
# here, which flattened the ratio of the faster tool.
walltime() {
	"$RUNONE" /dev/null "$OUT/out" 600 "$@" | cut -f1
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

printf '%-20s %8s %6s %7s %7s %5s %5s %9s %5s %7s %7s %7s %9s %5s %6s %5s\n' binary eh_frame fdes rows stored rules pages blob_B B/row cli_s cold_s lib_s readelf_s x_cli x_cold x_lib
for bin in "$@"; do
	name=$(basename "$bin")
	"$EMBER" unwind compile "$bin" -o "$OUT/table" --stats 2>"$OUT/stats"
	"$READELF" --debug-dump=no-follow-links --debug-dump=frames-interp "$bin" >/dev/null 2>&1 || true
	: >"$OUT/e"
	: >"$OUT/r"
	for _ in $(seq "$RUNS"); do
		walltime "$EMBER" unwind compile "$bin" -o "$OUT/table" >>"$OUT/e"
		walltime "$READELF" --debug-dump=no-follow-links --debug-dump=frames-interp "$bin" >>"$OUT/r"
	done
	st() { awk -v k="$1" '$1 == k { print $2 }' "$OUT/stats"; }
	eh=$("$READELF" -SW "$bin" | awk '$2 == ".eh_frame" { print $6 }')
	eh=$((16#${eh:-0}))
	e=$(median <"$OUT/e")
	r=$(median <"$OUT/r")
	l=$("$BENCH" -n "$RUNS" "$bin" | awk '{ print $3 }')
	c=$(for _ in $(seq "$RUNS"); do "$BENCH" -n 1 "$bin" | awk '{ print $5 }'; done | median)
	printf '%-20s %8s %6s %7s %7s %5s %5s %9s %5.2f %7.4f %7.4f %7.4f %9.4f %4.1fx %5.1fx %4.1fx\n' \
		"$name" "$eh" "$(st fdes)" "$(st rows)" "$(st rows_stored)" "$(st rules)" \
		"$(st pages)" "$(st bytes)" "$(st bytes_per_row)" "$e" "$c" "$l" "$r" \
		"$(echo "$r / $e" | bc -l)" "$(echo "$r / $c" | bc -l)" "$(echo "$r / $l" | bc -l)"
done
: >"$OUT/h"
for _ in $(seq "$RUNS"); do
	walltime "$EMBER" help >>"$OUT/h"
done
echo "cli_s: ember unwind compile, whole process (ember help alone: $(median <"$OUT/h") s);"
echo "cold_s: unwind_table_compile once in a fresh process (ember-unwind-bench -n 1), median;"
echo "lib_s: unwind_table_compile in-process, median of $RUNS runs in one process (warm memory);"
echo "readelf_s: readelf --debug-dump=frames-interp >/dev/null; x_*: readelf_s / *_s"
echo "($RUNS runs each, medians of the wall clock; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC'))"
