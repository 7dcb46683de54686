#!/usr/bin/env bash
# bench/otlp/run.sh - OTLP ingest (protobuf, JSON, gRPC: whichever the
# server takes) against pprof ingest of the same content, symbolization
# included, on one real `ember serve` (ingest_ab.py says how).
#
#   bench/otlp/run.sh                  # N=200 profiles a way a round, ROUNDS=5
#   N=400 ROUNDS=7 bench/otlp/run.sh
#
# The profiles are pstore-ingest-bench's (bench/profile-store): raw
# addresses into BINARY (default: the Debug build's ember-server, 7,000
# functions with DWARF), uploaded before the clock starts.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
BUILD=${BUILD:-$ROOT/build-release}
BINARY=${BINARY:-$ROOT/build/ember-server}
N=${N:-200}
ROUNDS=${ROUNDS:-5}
PDIR=$(mktemp -d /tmp/otlp-ingest-profiles.XXXXXX)
trap 'rm -rf "$PDIR"' EXIT

for t in pstore-ingest-bench ember; do
	[ -x "$BUILD/$t" ] || cmake --build "$BUILD" --target "$t"
done
"$BUILD/pstore-ingest-bench" -b "$BINARY" -w "$PDIR"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 "$HERE/ingest_ab.py" "$BUILD/ember" "$BINARY" "$PDIR" "$N" "$ROUNDS"
