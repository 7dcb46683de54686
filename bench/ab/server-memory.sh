#!/usr/bin/env bash
# bench/ab/server-memory.sh SERVER FILE... - a server's memory after an
# ingest, and after index builds, for an A/B (docs/performance-notes.md).
#
# Starts `SERVER serve` on a fresh data directory, uploads FILEs with the
# `ember` next to SERVER, then, if BUILD_IDS is set (space-separated), asks
# for one address of each in turn (each an index build; with
# --symbol-cache-mb 8 each is evicted before the next), and prints
#   rss_kb N hwm_kb N anon_kb N builds_s T... last_build_s T
# (VmRSS, VmHWM and RssAnon of the server at the end).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: [BUILD_IDS='ID...'] $0 SERVER FILE..." >&2; exit 2; }
server=$1; shift
ember=$(dirname "$server")/ember
d=$(mktemp -d "${TMPDIR:-/tmp}/ember-ab-mem.XXXXXX")
"$server" serve --listen 127.0.0.1:0 --data "$d/data" --symbol-cache-mb 8 >"$d/out" 2>"$d/err" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$d"' EXIT
url=
for _ in $(seq 200); do
	url=$(sed -n 's/^.*listening on \(http:[^ ]*\).*$/\1/p' "$d/out")
	[ -n "$url" ] && break
	sleep 0.05
done
[ -n "$url" ] || { echo "$0: the server did not start: $(cat "$d/err")" >&2; exit 1; }
EMBER_SERVER=$url EMBER_TOKEN=$(cat "$d/data/token") "$ember" upload --quiet "$@" >/dev/null
times=
for id in ${BUILD_IDS:-}; do
	times="$times $(curl -s -o /dev/null -w '%{time_total}' -X POST \
		-d "{\"modules\":[{\"build_id\":\"$id\",\"addresses\":[\"${ADDR:-0x1000}\"]}]}" \
		"$url/api/v1/symbolize")"
done
kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$pid/status"; }
echo "rss_kb $(kb VmRSS) hwm_kb $(kb VmHWM) anon_kb $(kb RssAnon) builds_s${times:- -} last_build_s ${times##* }"
