#!/bin/bash
# build-pprof.sh OUTDIR: build the standalone `pprof` and `addrprofile`
# binaries into OUTDIR, offline.
#
# Google's standalone pprof is not packaged by Debian, and `go tool pprof`
# ignores PPROF_TOOLS, so we build pprof from the copy of
# github.com/google/pprof that the Go distribution vendors for its own
# cmd/ tree ($GOROOT/src/cmd/vendor, Debian package golang-<ver>-src).
# We make a throwaway module in OUTDIR/src whose vendor/ holds copies of
# the two vendored modules pprof needs (github.com/google/pprof and
# github.com/ianlancetaylor/demangle), with a vendor/modules.txt cut from
# the Go distribution's own, and build it with -mod=vendor and
# GOPROXY=off: nothing is fetched.
#
# Exit status: 0 built (or already up to date), 77 prerequisites missing
# (no `go`, or no vendored pprof source), 1 build failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=build-pprof

if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
mkdir -p "$1"
outdir=$(cd "$1" && pwd)

# Up to date: both binaries newer than this script and the Go sources.
up_to_date() {
	local b s
	for b in "$outdir/pprof" "$outdir/addrprofile"; do
		[ -x "$b" ] || return 1
		for s in "$here/build-pprof.sh" "$here/pprof/main.go" "$here/addrprofile/main.go"; do
			[ "$b" -nt "$s" ] || return 1
		done
	done
}
if up_to_date; then
	exit 0
fi

if ! command -v go >/dev/null 2>&1; then
	echo "$prog: 'go' not found in PATH (apt-get install golang-go)" >&2
	exit 77
fi

export GOTOOLCHAIN=local GOPROXY=off GOSUMDB=off GOFLAGS=-mod=vendor \
	GO111MODULE=on GOWORK=off GOENV=off CGO_ENABLED=0 \
	GOCACHE="$outdir/gocache" GOPATH="$outdir/gopath" HOME="$outdir/home"
mkdir -p "$GOCACHE" "$GOPATH" "$HOME"

vendor=${PPROF_VENDOR_DIR:-$(go env GOROOT)/src/cmd/vendor}
for d in github.com/google/pprof/driver github.com/google/pprof/profile \
	github.com/ianlancetaylor/demangle; do
	if [ ! -d "$vendor/$d" ] || [ ! -f "$vendor/modules.txt" ]; then
		echo "$prog: vendored source '$vendor/$d' not found" \
			"(apt-get install golang-$(go env GOVERSION | sed -E 's/^go([0-9]+[.][0-9]+).*/\1/')-src)" >&2
		exit 77
	fi
done

# Fresh module tree every build: what is in it comes only from here and
# from $vendor.
src="$outdir/src"
rm -rf "$src"
mkdir -p "$src/vendor/github.com/google" "$src/vendor/github.com/ianlancetaylor" \
	"$src/cmd/pprof" "$src/cmd/addrprofile"
cp -R "$vendor/github.com/google/pprof" "$src/vendor/github.com/google/"
cp -R "$vendor/github.com/ianlancetaylor/demangle" "$src/vendor/github.com/ianlancetaylor/"
cp "$here/pprof/main.go" "$src/cmd/pprof/main.go"
cp "$here/addrprofile/main.go" "$src/cmd/addrprofile/main.go"

# Keep only the two modules' sections of the distribution's modules.txt;
# their "# path version" headers give the versions go.mod must require.
awk '/^# / { keep = ($2 == "github.com/google/pprof" || $2 == "github.com/ianlancetaylor/demangle") }
     keep' "$vendor/modules.txt" >"$src/vendor/modules.txt"
if [ "$(grep -c '^# ' "$src/vendor/modules.txt")" -ne 2 ]; then
	echo "$prog: '$vendor/modules.txt' does not list both pprof and demangle" >&2
	exit 77
fi
{
	echo "module ember.invalid/pprof-tools"
	echo
	echo "go 1.17"
	echo
	echo "require ("
	awk '/^# / { print "\t" $2 " " $3 }' "$src/vendor/modules.txt"
	echo ")"
} >"$src/go.mod"

start=$(date +%s)
(
	cd "$src"
	go build -trimpath -o "$outdir/pprof.tmp" ./cmd/pprof
	go build -trimpath -o "$outdir/addrprofile.tmp" ./cmd/addrprofile
) || {
	echo "$prog: go build failed in '$src'" >&2
	exit 1
}
mv -f "$outdir/pprof.tmp" "$outdir/pprof"
mv -f "$outdir/addrprofile.tmp" "$outdir/addrprofile"
echo "$prog: built pprof and addrprofile in $(($(date +%s) - start))s ($(go env GOVERSION)," \
	"$(awk '/^# github.com\/google\/pprof / { print $3 }' "$src/vendor/modules.txt"))" >&2
