#!/bin/bash
# test_pprof_tools.sh SYMBOLIZER_BIN FIXTURE_ELF PPROF_OUTDIR
#
# End-to-end check that SYMBOLIZER_BIN is a drop-in `llvm-symbolizer` for
# Google's standalone pprof. pprof symbolizes native profiles locally by
# running `$PPROF_TOOLS/llvm-symbolizer --inlining -demangle=false`, one
# long-lived process per mapping, writing `CODE <file> 0x<vaddr>` lines to
# its stdin and reading LLVM-style frames (function line, file:line:col
# line, innermost first) up to a blank line
# (internal/binutils/addr2liner_llvm.go in pprof).
#
# Steps:
#  1. build pprof and addrprofile with build-pprof.sh into PPROF_OUTDIR;
#  2. pick up to 20 addresses inside FUNC symbols of FIXTURE_ELF, favouring
#     ones with inlined frames, and ask the system llvm-symbolizer (the
#     oracle) what they are;
#  3. write an unsymbolized CPU profile with one mapping for the
#     executable PT_LOAD of FIXTURE_ELF placed as a PIE would be at run
#     time, the binary reachable only through PPROF_BINARY_PATH by build ID;
#  4. run pprof -symbolize=local -raw, -traces -lines and -top -addresses
#     with PPROF_TOOLS holding only `llvm-symbolizer`: a logging wrapper
#     that execs SYMBOLIZER_BIN through a symlink, keeping argv[0]
#     `.../llvm-symbolizer`, the name Ember dispatches on;
#  5. compare every frame of every address (name, file:line, inline chain
#     length and order) with what pprof would show given the oracle's
#     answers, and check that the wrapper was really run by every pprof.
#
# Exit status: 0 pass, 1 fail, 77 skipped (no Go, no vendored pprof
# source, no oracle llvm-symbolizer, or no fixture).
# Environment: ORACLE_LLVM_SYMBOLIZER overrides the oracle; KEEP_TMP=1
# keeps the work directory (expected/actual files) for inspection.
set -uo pipefail

prog=test_pprof_tools
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
max_addrs=20
pie_bias=0x555555554000
pprof_timeout=60

skip() { echo "$prog: SKIP: $*" >&2; exit 77; }
fail() { echo "$prog: FAIL: $*" >&2; exit 1; }

if [ $# -ne 3 ]; then
	echo "usage: $0 SYMBOLIZER_BIN FIXTURE_ELF PPROF_OUTDIR" >&2
	exit 2
fi
sym_bin=$1 fixture=$2 pprof_outdir=$3

[ -x "$sym_bin" ] || fail "symbolizer '$sym_bin' is not an executable file"
[ -f "$fixture" ] || skip "fixture '$fixture' not found (is the fixture built?)"
for t in readelf timeout sort diff; do
	command -v "$t" >/dev/null 2>&1 || skip "'$t' not found in PATH (Debian package" \
		"$(awk -v t="$t" '$1 == t { print $2 }' "$here/../packages.txt"))"
done
oracle=${ORACLE_LLVM_SYMBOLIZER:-}
if [ -z "$oracle" ]; then
	for c in /usr/bin/llvm-symbolizer /usr/lib/llvm-*/bin/llvm-symbolizer; do
		[ -x "$c" ] && { oracle=$c; break; }
	done
fi
if [ -z "$oracle" ] || [ ! -x "$oracle" ]; then
	skip "no oracle llvm-symbolizer (apt-get install llvm, or set ORACLE_LLVM_SYMBOLIZER)"
fi
sym_bin=$(cd "$(dirname "$sym_bin")" && pwd)/$(basename "$sym_bin")
fixture=$(cd "$(dirname "$fixture")" && pwd)/$(basename "$fixture")
[ "$(readlink -f "$sym_bin")" != "$(readlink -f "$oracle")" ] ||
	echo "$prog: note: the symbolizer under test is the oracle itself" >&2

# 1. pprof and addrprofile.
"$here/build-pprof.sh" "$pprof_outdir"
rc=$?
[ $rc -eq 77 ] && skip "cannot build pprof (see above)"
[ $rc -eq 0 ] || fail "build-pprof.sh '$pprof_outdir' exited $rc"
pprof=$pprof_outdir/pprof addrprofile=$pprof_outdir/addrprofile

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ember-pprof.XXXXXX") || fail "mktemp failed"
if [ -n "${KEEP_TMP:-}" ]; then
	echo "$prog: keeping '$tmp'" >&2
else
	trap 'rm -rf "$tmp"' EXIT
fi

# 2. The executable segment, the functions in it, candidate addresses.
# (No hex arithmetic in awk: mawk's printf %x stops at 32 bits.)
elf_type=$(readelf -hW "$fixture" | awk '$1 == "Type:" { print $2 }')
case $elf_type in
DYN) bias=$pie_bias ;;
EXEC) bias=0 ;;
*) fail "'$fixture' is not an executable ELF (type '$elf_type')" ;;
esac
# First PT_LOAD with the E flag ("R E", "RWE"): offset, vaddr, memsz.
read -r seg_off seg_vaddr seg_memsz < <(readelf -lW "$fixture" |
	awk '$1 == "LOAD" && $0 ~ / R[W ]E / { print $2, $3, $6; exit }')
[ -n "${seg_vaddr:-}" ] || fail "'$fixture' has no executable PT_LOAD segment"
seg_end=$((seg_vaddr + seg_memsz))
map_start=$((bias + (seg_vaddr & ~0xfff)))
map_limit=$((bias + ((seg_end + 0xfff) & ~0xfff)))
map_offset=$((seg_off & ~0xfff))
build_id=$(readelf -nW "$fixture" | awk '/Build ID:/ { sub(/.*Build ID: */, ""); print $1; exit }')

# Sized FUNC symbols inside the segment ("vaddr size", decimal, by
# address); more than max_addrs of them: keep max_addrs evenly spread.
readelf -sW "$fixture" |
	awk -v lo=$((seg_vaddr)) -v hi=$((seg_end)) '
	function num(s,   v, i) {
		if (s !~ /^0x/) return s + 0
		s = tolower(substr(s, 3)); v = 0
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	$4 == "FUNC" && $3 ~ /^(0x)?[0-9a-f]+$/ {
		v = num("0x" $2); sz = num($3)
		if (sz > 0 && v >= lo && v < hi && !(v in seen)) { seen[v] = 1; printf "%.0f %.0f\n", v, sz }
	}' | sort -n >"$tmp/funcs"
nfuncs=$(wc -l <"$tmp/funcs")
[ "$nfuncs" -gt 0 ] || fail "'$fixture' has no sized FUNC symbols in its executable segment"
if [ "$nfuncs" -gt "$max_addrs" ]; then
	awk -v n="$nfuncs" -v m="$max_addrs" 'int((NR - 1) * m / n) != int(NR * m / n)' "$tmp/funcs" >"$tmp/funcs.picked"
else
	cp "$tmp/funcs" "$tmp/funcs.picked"
fi
# Candidates "func_index pref vaddr": offsets k*size/8, k = 0..7, distinct;
# pref breaks ties in favour of the middle and leaves the entry point last.
awk 'BEGIN { split("4 2 6 1 3 5 7 0", ks, " ") }
	{ for (j = 1; j <= 8; j++) { o = int($2 * ks[j] / 8); if (!((NR, o) in s)) { s[NR, o] = 1; printf "%d %d %.0f\n", NR, j, $1 + o } } }' \
	"$tmp/funcs.picked" | while read -r i k v; do printf '%d %d 0x%x\n' "$i" "$k" "$v"; done >"$tmp/candidates"

# The oracle answers all candidates in one run; answers end with a blank line.
awk '{ print $3 }' "$tmp/candidates" |
	"$oracle" --inlining -demangle=false --obj="$fixture" >"$tmp/oracle.out" ||
	fail "oracle '$oracle' failed on '$fixture'"
# "depth usable F1 L1 F2 L2 ..." per candidate, same order. Usable: every
# frame named, names and paths without blanks, and no _Z/_R names (pprof
# demangles those itself, which is not what this test is about).
awk 'BEGIN { n = 0 }
	NF == 0 { print_block(); next }
	{ line[n++] = $0 }
	function print_block(   i, ok, s) {
		if (n == 0) return
		ok = (n % 2 == 0)
		s = ""
		for (i = 0; i < n; i += 2) {
			if (line[i] == "??" || line[i] ~ /^_[ZR]/ || line[i] ~ /[ \t]/ || line[i+1] ~ /[ \t]/) ok = 0
			s = s " " line[i] " " line[i+1]
		}
		print int(n / 2), ok s
		n = 0
	}
	END { print_block() }' "$tmp/oracle.out" >"$tmp/oracle.blocks"
[ "$(wc -l <"$tmp/oracle.blocks")" -eq "$(wc -l <"$tmp/candidates")" ] ||
	fail "oracle gave $(wc -l <"$tmp/oracle.blocks") answers for $(wc -l <"$tmp/candidates") addresses"

# Rank each function's usable candidates by inline depth (deepest first,
# then pref) and take them round-robin over functions, max_addrs in all.
paste -d' ' "$tmp/candidates" "$tmp/oracle.blocks" |
	awk '$5 == 1 { print $1, $4, $2, $3 }' | sort -k1,1n -k2,2nr -k3,3n |
	awk '{ r = ($1 == f) ? r + 1 : 0; f = $1; print r, $1, $4 }' | sort -k1,1n -k2,2n |
	awk -v m="$max_addrs" 'NR <= m { print $3 }' >"$tmp/vaddrs"
naddrs=$(wc -l <"$tmp/vaddrs")
[ "$naddrs" -gt 0 ] || fail "no address in '$fixture' has frames this test can compare (named by the oracle, not mangled)"

# "vaddr runtime runtime16 depth usable F1 L1 ..." per chosen address, in order.
paste -d' ' "$tmp/candidates" "$tmp/oracle.blocks" | cut -d' ' -f3- |
	awk 'NR == FNR { a[$1] = $0; next } { print a[$1] }' - "$tmp/vaddrs" |
	while read -r v rest; do
		printf '%s 0x%x %016x %s\n' "$v" $((bias + v)) $((bias + v)) "$rest"
	done >"$tmp/expected.frames"
ninline=$(awk '$4 > 1' "$tmp/expected.frames" | wc -l)
runtime_addrs=$(cut -d' ' -f2 "$tmp/expected.frames")

# 3. The profile, and the binary where PPROF_BINARY_PATH finds it.
base=$(basename "$fixture")
remote_path=/opt/ember-profiled-host/bin/$base # where it "ran"; does not exist here
mkdir -p "$tmp/binaries" "$tmp/home"
if [ -n "$build_id" ]; then
	mkdir -p "$tmp/binaries/$build_id"
	cp "$fixture" "$tmp/binaries/$build_id/$base"
	located=$tmp/binaries/$build_id/$base
else
	cp "$fixture" "$tmp/binaries/$base"
	located=$tmp/binaries/$base
fi
# shellcheck disable=SC2086 # runtime_addrs is a list
"$addrprofile" -o "$tmp/cpu.pb.gz" -bin "$remote_path" -buildid "$build_id" \
	-start "$(printf '0x%x' $map_start)" -limit "$(printf '0x%x' $map_limit)" \
	-offset "$(printf '0x%x' $map_offset)" $runtime_addrs ||
	fail "addrprofile failed"

# 4. The tools dir: llvm-symbolizer only. pprof execs the found path, so
# argv[0] is "<tools>/llvm-symbolizer"; the wrapper passes that argv[0] on
# to a symlink to the binary under test.
mkdir -p "$tmp/tools" "$tmp/real"
ln -s "$sym_bin" "$tmp/real/llvm-symbolizer"
cat >"$tmp/tools/llvm-symbolizer" <<EOF
#!/bin/bash
printf '%s\n' "\$*" >>'$tmp/invocations.log'
exec -a "\$0" '$tmp/real/llvm-symbolizer' "\$@"
EOF
chmod +x "$tmp/tools/llvm-symbolizer"
: >"$tmp/invocations.log"

run_pprof() { # name, pprof flags...
	local name=$1
	shift
	local rc=0
	HOME=$tmp/home PPROF_TMPDIR=$tmp/home PPROF_TOOLS=$tmp/tools \
		PPROF_BINARY_PATH=$tmp/binaries timeout "$pprof_timeout" \
		"$pprof" -symbolize=local "$@" "$tmp/cpu.pb.gz" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
	cat "$tmp/$name.err" >&2
	# pprof reads each answer up to its blank line before sending the next
	# query: an answer left in a stdio buffer hangs it.
	[ $rc -ne 124 ] || fail "pprof $* timed out after ${pprof_timeout}s: did the symbolizer" \
		"end each answer with a blank line and flush it?"
	[ $rc -eq 0 ] || fail "pprof $* exited $rc"
}
run_pprof raw -raw
run_pprof traces -traces -lines
run_pprof top -top -addresses -nodecount=0 -nodefraction=0 -edgefraction=0

# 5. Compare. Each oracle frame becomes what pprof stores, following
# llvmSymbolizer.readFrame: "??" name -> "", "??:0[:0]" -> no file/line,
# "file:line[:col]" -> file, line; a frame with nothing left is dropped.
# -raw prints "name file:line"; -traces/-top print name, then
# Clean(file):line, or Clean(file) when line is 0.
render() { # mode: raw | traces | top
	awk -v mode="$1" '
	function clean(p,   abs, n, i, seg, d, st, out) {
		if (p == "") return "."
		abs = (substr(p, 1, 1) == "/")
		n = split(p, seg, "/"); d = 0
		for (i = 1; i <= n; i++) {
			if (seg[i] == "" || seg[i] == ".") continue
			if (seg[i] == "..") {
				if (d > 0 && st[d] != "..") d--
				else if (!abs) st[++d] = ".."
				continue
			}
			st[++d] = seg[i]
		}
		out = abs ? "/" : ""
		for (i = 1; i <= d; i++) out = out (i > 1 ? "/" : "") st[i]
		return out == "" ? "." : out
	}
	{
		nf = 0
		for (i = 6; i < NF; i += 2) {
			fn = $i; fl = $(i + 1); file = ""; line = 0
			if (fn == "??") fn = ""
			if (fl != "??:0" && fl != "??:0:0") {
				k = split(fl, p, ":")
				if (k == 1) file = p[1]
				else if (k == 2 || k == 3) { file = p[1]; if (p[2] ~ /^[0-9]+$/) line = p[2] + 0 }
				else file = fl
			}
			if (fn == "" && file == "" && line == 0) continue
			if (mode == "raw") s = fn " " file ":" line
			else {
				s = fn
				if (line != 0) s = s " " clean(file) ":" line
				else if (file != "") s = s " " clean(file)
			}
			f[++nf] = s
		}
		if (mode == "raw") {
			print $2
			for (i = 1; i <= nf; i++) print "  " f[i]
		} else {
			for (i = 1; i <= nf; i++) {
				s = f[i] (i < nf ? " (inline)" : "")
				if (mode == "top") print $3 " " s
				else print s
			}
		}
	}' "$tmp/expected.frames"
}

status=0
report_diff() { # what, expected file, actual file
	if ! diff -u --label "expected ($1, from oracle)" --label "actual ($1, from pprof)" "$2" "$3" >"$tmp/$1.diff"; then
		echo "$prog: FAIL: pprof $1 output differs from the oracle:" >&2
		cat "$tmp/$1.diff" >&2
		status=1
	fi
}

# -raw: every location's full frame list, exact, looked up by address.
render raw >"$tmp/raw.expected"
awk '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 }
	on && /^ *[0-9]+: 0x/ { a = $2; got[a] = 1; sub(/^ *[0-9]+: 0x[0-9a-f]+ M=[0-9]+ (\[F\] )?/, "")
		if ($0 != "") fr[a] = fr[a] "  " $0 "\n"; next }
	on && /^             / { sub(/^ +/, ""); fr[a] = fr[a] "  " $0 "\n" }
	END { for (a in got) printf "%s\n%s", a, fr[a] }' "$tmp/raw.out" |
	sed -E 's/ s=[0-9]+(\(.*\))?$//' >"$tmp/raw.frames"
grep '^0x' "$tmp/raw.expected" |
	awk 'NR == FNR { if ($0 ~ /^0x/) { a = $0; got[a] = 1 } else fr[a] = fr[a] $0 "\n"; next }
		{ printf "%s\n%s", $0, (($0 in got) ? fr[$0] : "  (no such location)\n") }' "$tmp/raw.frames" - \
	>"$tmp/raw.actual"
report_diff raw "$tmp/raw.expected" "$tmp/raw.actual"
# pprof found the binary through PPROF_BINARY_PATH (by build ID if any).
mapped=$(awk '/^Mappings/ { on = 1; next } on && /^[0-9]+: / { print $3; exit }' "$tmp/raw.out")
if [ "$mapped" != "$located" ]; then
	echo "$prog: FAIL: pprof mapped the profile to '$mapped', not '$located'" >&2
	status=1
fi

# -traces -lines: sample i is address i alone; the last sample stacks the
# first min(5, n) addresses, leaf first.
render traces >"$tmp/traces.lines"
render raw | awk '/^0x/ { n++ } !/^0x/ { c[n]++ } END { for (i = 1; i <= n; i++) print c[i] + 0 }' >"$tmp/traces.counts"
awk 'NR == FNR { cnt[++n] = $1; next }
	{ l[++m] = $0 }
	END {
		p = 0
		for (i = 1; i <= n; i++) { print "sample " i; for (j = 0; j < cnt[i]; j++) print "  " l[++p]; stop[i] = p }
		if (n > 1) {
			d = n < 5 ? n : 5
			print "sample " (n + 1)
			for (j = 1; j <= stop[d]; j++) print "  " l[j]
		}
	}' "$tmp/traces.counts" "$tmp/traces.lines" >"$tmp/traces.expected"
awk '/^-----------\+/ { blk++; next }
	blk { if (!(blk in hdr)) { hdr[blk] = 1; print "sample " blk } print "  " substr($0, 14) }' \
	"$tmp/traces.out" >"$tmp/traces.actual"
report_diff traces "$tmp/traces.expected" "$tmp/traces.actual"

# -top -addresses: one node per (address, frame); each expected node is listed.
render top | sort -u >"$tmp/top.expected"
sed -nE 's/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+  ([0-9a-f]{16} .*)$/\1/p' "$tmp/top.out" | sort -u >"$tmp/top.nodes"
comm -23 "$tmp/top.expected" "$tmp/top.nodes" >"$tmp/top.missing"
if [ -s "$tmp/top.missing" ]; then
	echo "$prog: FAIL: pprof -top lacks these nodes (address, frame) the oracle implies:" >&2
	sed 's/^/  /' "$tmp/top.missing" >&2
	echo "$prog: pprof -top printed:" >&2
	cat "$tmp/top.out" >&2
	status=1
fi

# The symbolizer under test answered: every pprof run started it (pprof
# falls back to llvm-symbolizer from PATH if PPROF_TOOLS has none).
nruns=3
ninv=$(wc -l <"$tmp/invocations.log")
if [ "$ninv" -lt "$nruns" ]; then
	echo "$prog: FAIL: '$sym_bin' was started $ninv times by $nruns pprof runs" \
		"(PPROF_TOOLS not honoured?)" >&2
	status=1
fi

if [ $status -ne 0 ]; then
	echo "$prog: FAIL: $naddrs addresses in '$fixture', symbolizer '$sym_bin'" >&2
	exit 1
fi
echo "$prog: PASS: $naddrs addresses ($ninline with inlined frames) in $base symbolized" \
	"by pprof through '$sym_bin' (started $ninv times as: $(sort -u "$tmp/invocations.log" | paste -sd'|'))"
exit 0
