#!/usr/bin/env bash
# bench/ab/cold.sh SERVER DATA BUILD_ID ADDR - one cold start for an A/B:
# `apibench cold` (bench/symbolize-api/apibench.c) spawns `SERVER serve`
# on the data directory DATA and a free loopback port, and times it to
# the first answer for one address of BUILD_ID (fields first_answer_ms,
# listening_ms, faults_first_answer, ...).  ember-api-bench comes from
# BUILD (default build-release/).  For ab.py:
#
#   bench/ab/ab.py -n 61 --field first_answer_ms -- \
#       bench/ab/cold.sh A/ember-server DATA ID 0x692bee -- bench/ab/cold.sh B/ember-server DATA ID 0x692bee
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 SERVER DATA BUILD_ID ADDR" >&2; exit 2; }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
build=${BUILD:-$repo/build-release}
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
exec "$build/ember-api-bench" cold "$1" "$2" "$port" "$3" "$4" "${TMPDIR:-/tmp}/ember-ab-cold.log" 60
