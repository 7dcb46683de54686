#!/usr/bin/env bash
# Object store benchmark: Ember's S3 client (object-store/) against curl's
# own upload and GET, both to the same single-node Ceph radosgw on
# loopback (tests/objstore/ceph_cluster.sh) in the same run, interleaved.
#
#   bench/object-store/run.sh
#
# Env:
#   REPS=5          repetitions; the order of the tools alternates by rep
#   UPLOAD_MB=64    size of the uploaded file (random bytes), MiB
#   GETS=300        GETs per tool per rep for the latency figures
#   GET_KB=4        size of the object those GETs read, KiB
#   BENCH=<repo>/build-release/ember-objstore-bench  (built when missing)
# Writes out/upload.tsv, out/get.tsv, out/machine.txt and out/results.md.
#
# What each side does: `ember single` is objstore_put_fd as one PUT (one
# pread pass computing sha256 and MD5, then the body with both checked by
# radosgw); `ember multipart` is the same file in 8 MiB parts (each part
# checked), two parts at a time (`ember-multipart-1`: one at a time); `curl` is `curl -T` with --aws-sigv4 and UNSIGNED-PAYLOAD: the
# bytes alone, no checksum, the transfer's ceiling; `curl-checked` is curl
# with the sha256 and Content-MD5 computed beforehand (not timed), so that
# radosgw checks both as it does for Ember: the store's share of the cost.
# `ember digest` times the client's hashing pass alone.  GETs: Ember's
# objstore_get_mem on one handle, verified against the stored sha256;
# curl's transfers of one process (one connection, keep-alive), to
# /dev/null, unverified.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$HERE/out
REPS=${REPS:-5}
UPLOAD_MB=${UPLOAD_MB:-64}
GETS=${GETS:-300}
GET_KB=${GET_KB:-4}
BENCH=${BENCH:-$REPO/build-release/ember-objstore-bench}
log() { echo "[objstore-bench] $*" >&2; }
die() { log "$*"; exit 1; }

for t in curl python3 ceph-mon radosgw; do
    command -v "$t" >/dev/null || die "$t not found (make deps)"
done
mkdir -p "$OUT"
if [ ! -x "$BENCH" ]; then
    log "building $BENCH"
    cmake -S "$REPO" -B "$REPO/build-release" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DEMBER_SANITIZE=OFF > "$OUT/build.log" 2>&1 &&
        cmake --build "$REPO/build-release" --target ember-objstore-bench >> "$OUT/build.log" 2>&1 ||
        die "build failed (out/build.log)"
fi

ENV_FILE=$OUT/cluster.env
trap 'bash "$REPO/tests/objstore/ceph_cluster.sh" stop "$ENV_FILE"' EXIT
bash "$REPO/tests/objstore/ceph_cluster.sh" start "$ENV_FILE" > /dev/null ||
    die "the Ceph cluster did not start"
set -a
. "$ENV_FILE"
set +a
EP=$OBJSTORE_TEST_ENDPOINT/$OBJSTORE_TEST_BUCKET
CURL_S3=(--aws-sigv4 "aws:amz:$OBJSTORE_TEST_REGION:s3"
         --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY")
UNSIGNED=(-H "x-amz-content-sha256: UNSIGNED-PAYLOAD")

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "ceph: $(ceph --version | cut -d' ' -f3-5)"
    echo "curl: $(curl --version | head -1 | cut -d' ' -f1-2)"
} > "$OUT/machine.txt"

FILE=$OUT/upload.bin
head -c $((UPLOAD_MB << 20)) /dev/urandom > "$FILE"
head -c $((GET_KB << 10)) /dev/urandom > "$OUT/small.bin"
FILE_SHA256=$(sha256sum "$FILE" | cut -d' ' -f1)
FILE_MD5=$(python3 -c 'import base64, hashlib, sys; print(base64.b64encode(hashlib.md5(open(sys.argv[1], "rb").read()).digest()).decode())' "$FILE")

curl_delete() {
    curl -sS -o /dev/null -X DELETE "${CURL_S3[@]}" "${UNSIGNED[@]}" "$EP/$1"
}

upload_one() { # tool rep -> a line of upload.tsv
    local tool=$1 rep=$2 key=bench/up-$1-$2 line
    case $tool in
    curl)
        line=$(curl -sS -o /dev/null -w '%{time_total} %{http_code}' -T "$FILE" \
            "${CURL_S3[@]}" "${UNSIGNED[@]}" "$EP/$key")
        [ "${line#* }" = 200 ] || die "curl upload: HTTP ${line#* }"
        line=${line% *}
        ;;
    curl-checked)
        line=$(curl -sS -o /dev/null -w '%{time_total} %{http_code}' -T "$FILE" \
            "${CURL_S3[@]}" -H "x-amz-content-sha256: $FILE_SHA256" \
            -H "Content-MD5: $FILE_MD5" "$EP/$key")
        [ "${line#* }" = 200 ] || die "curl upload: HTTP ${line#* }"
        line=${line% *}
        ;;
    ember-digest) line=$("$BENCH" digest "$FILE" | cut -d' ' -f1) ;;
    ember-single) line=$("$BENCH" upload "$FILE" "$key" single | cut -d' ' -f1) ;;
    ember-multipart) line=$("$BENCH" upload "$FILE" "$key" multipart | cut -d' ' -f1) ;;
    ember-multipart-1) line=$("$BENCH" upload "$FILE" "$key" multipart1 | cut -d' ' -f1) ;;
    esac
    printf '%s\t%s\t%s\t%s\n' "$rep" "$tool" "$line" $((UPLOAD_MB << 20)) >> "$OUT/upload.tsv"
    [ "$tool" = ember-digest ] || curl_delete "$key"
}

get_curl() { # rep -> lines of get.tsv
    local cfg=$OUT/get.curl
    : > "$cfg"
    for _ in $(seq "$GETS"); do
        printf 'url = "%s"\noutput = /dev/null\n' "$EP/bench/small" >> "$cfg"
    done
    curl -sS -K "$cfg" "${CURL_S3[@]}" "${UNSIGNED[@]}" -w '%{time_total}\n' |
        sed "s/^/$1\tcurl\t/" >> "$OUT/get.tsv"
}

get_ember() {
    "$BENCH" get bench/small "$GETS" | sed "s/^/$1\tember\t/" >> "$OUT/get.tsv"
}

printf 'rep\ttool\tseconds\tbytes\n' > "$OUT/upload.tsv"
printf 'rep\ttool\tseconds\n' > "$OUT/get.tsv"
"$BENCH" upload "$OUT/small.bin" bench/small single > /dev/null
log "warm-up (not counted)"
for tool in ember-single ember-multipart curl curl-checked; do
    upload_one "$tool" 0
done
printf 'rep\ttool\tseconds\tbytes\n' > "$OUT/upload.tsv"
for rep in $(seq "$REPS"); do
    if [ $((rep % 2)) = 1 ]; then order="ember-digest ember-single ember-multipart ember-multipart-1 curl curl-checked"
    else order="curl-checked curl ember-multipart-1 ember-multipart ember-single ember-digest"; fi
    for tool in $order; do
        log "rep $rep: upload $tool"
        upload_one "$tool" "$rep"
    done
    if [ $((rep % 2)) = 1 ]; then get_ember "$rep"; get_curl "$rep"
    else get_curl "$rep"; get_ember "$rep"; fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"

python3 - "$OUT" "$UPLOAD_MB" "$GET_KB" "$GETS" "$REPS" <<'EOF' > "$OUT/results.md"
import csv, statistics, sys
out, mb, kb, gets, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
up = list(csv.DictReader(open(out + "/upload.tsv"), delimiter="\t"))
tools = ["ember-single", "ember-multipart", "ember-multipart-1", "curl", "curl-checked",
         "ember-digest"]
rate = {t: {r["rep"]: int(r["bytes"]) / float(r["seconds"]) / 1e6 for r in up if r["tool"] == t}
        for t in tools}
print(open(out + "/machine.txt").read().strip().replace("\n", "  \n"))
print()
print("Upload of %d MiB (ember-digest: the hashing pass alone) (MB/s, MB = 10^6 bytes; median of %s, min-max; ratio to curl within each rep)" % (mb, reps))
print()
print("| client | MB/s | ratio to curl |")
print("|---|---|---|")
for t in tools:
    v = sorted(rate[t].values())
    ratios = sorted(rate[t][r] / rate["curl"][r] for r in rate[t])
    print("| %s | %.0f (%.0f-%.0f) | %.2f (%.2f-%.2f) |" % (t, statistics.median(v), v[0], v[-1],
          statistics.median(ratios), ratios[0], ratios[-1]))
g = list(csv.DictReader(open(out + "/get.tsv"), delimiter="\t"))
print()
print("GET of a %d KiB object, %s requests per tool per rep on one connection (ms; all reps pooled)" % (kb, gets))
print()
print("| client | p50 | p99 | p50 per rep (min-max) |")
print("|---|---|---|---|")
for t in ["ember", "curl"]:
    v = sorted(float(r["seconds"]) * 1e3 for r in g if r["tool"] == t)
    per = sorted(statistics.median(float(r["seconds"]) * 1e3 for r in g
                 if r["tool"] == t and r["rep"] == rep) for rep in {r["rep"] for r in g})
    print("| %s | %.2f | %.2f | %.2f-%.2f |" % (t, statistics.median(v),
          v[min(len(v) - 1, int(len(v) * 0.99))], per[0], per[-1]))
EOF
rm -f "$FILE" "$OUT/small.bin" "$OUT/get.curl"
cat "$OUT/results.md"
