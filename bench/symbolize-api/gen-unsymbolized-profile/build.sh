#!/usr/bin/env bash
# build.sh OUT WORKDIR: build gen-unsymbolized-profile (main.go) into OUT,
# offline, in GOPATH mode over a copy of github.com/google/pprof/profile:
# Debian's golang-github-google-pprof-dev, or else the copy Go vendors for
# its own cmd/ tree (golang-1.19-src).  WORKDIR holds the GOPATH and the
# build cache.  Run by CMake (bench/CMakeLists.txt, target
# gen-unsymbolized-profile); OUT.src records which profile source it used.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OUT WORKDIR" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$1 GOW=$2
src=""
for d in /usr/share/gocode/src/github.com/google/pprof/profile \
         "$(go env GOROOT)/src/cmd/vendor/github.com/google/pprof/profile"; do
    [ -f "$d/profile.go" ] && { src=$d; break; }
done
[ -n "$src" ] || { echo "$0: no github.com/google/pprof/profile source" \
    "(apt-get install golang-github-google-pprof-dev)" >&2; exit 1; }
rm -rf "$GOW/src"
mkdir -p "$GOW/src/github.com/google/pprof/profile" "$GOW/src/gen-unsymbolized-profile"
find "$src" -maxdepth 1 -name '*.go' ! -name '*_test.go' \
    -exec cp {} "$GOW/src/github.com/google/pprof/profile/" \;
cp "$HERE/main.go" "$GOW/src/gen-unsymbolized-profile/"
(cd "$GOW/src/gen-unsymbolized-profile" &&
    GO111MODULE=off GOPATH=$GOW GOCACHE=$GOW/cache GOPROXY=off GOFLAGS='' \
    CGO_ENABLED=0 HOME=$GOW go build -o "$OUT.tmp" .)
mv -f "$OUT.tmp" "$OUT"
echo "$src" > "$OUT.src"
