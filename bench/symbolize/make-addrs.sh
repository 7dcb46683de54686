#!/usr/bin/env bash
# Make the address sets for every corpus binary (out/corpus/NAME, not .debug):
#   out/addrs/NAME.addrs       N (default 100000) addresses, one 0x... a line
#   out/addrs/NAME.1.addrs     the first of them (startup run)
#   out/addrs/NAME.<SLOW_N>.addrs  the first SLOW_N (default 2000), for eu-addr2line
# Addresses are drawn uniformly, with replacement, from the instruction
# addresses (objdump -d) of .text that lie inside a FUNC symbol's
# [st_value, st_value+st_size). Fixed seed: same corpus -> same addresses.
# Env: N=100000 SEED=20240601 SLOW_N=2000 FORCE=1
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$HERE/out
N=${N:-100000}; SEED=${SEED:-20240601}; SLOW_N=${SLOW_N:-2000}
mkdir -p "$OUT/addrs"
shopt -s nullglob
for bin in "$OUT"/corpus/*; do
    name=$(basename "$bin")
    case "$name" in *.*) continue ;; esac       # skip .debug, .tsv, ...
    dst=$OUT/addrs/$name.addrs
    if [ "${FORCE:-0}" != 1 ] && [ -s "$dst" ] && [ "$dst" -nt "$bin" ]; then
        echo "[make-addrs] $name: exists" >&2; continue
    fi
    tmp=$(mktemp -d)
    # FUNC symbols (with size) in .text: "start size" in hex.
    textndx=$(readelf -SW "$bin" | sed -n 's/^ *\[ *\([0-9]*\)\] \.text .*/\1/p')
    readelf -sW "$bin" | awk -v ndx="$textndx" \
        '$4 == "FUNC" && $7 == ndx && $3 != "0" { print $2, $3 }' > "$tmp/funcs"
    objdump -d --no-show-raw-insn -j .text "$bin" |
        sed -n 's/^ *\([0-9a-f][0-9a-f]*\):\t.*/\1/p' > "$tmp/insns"
    python3 "$HERE/sample_addrs.py" "$tmp/funcs" "$tmp/insns" "$N" "$SEED" > "$dst.tmp" \
        2> "$OUT/addrs/$name.info"
    mv "$dst.tmp" "$dst"
    head -n 1 "$dst" > "$OUT/addrs/$name.1.addrs"
    head -n "$SLOW_N" "$dst" > "$OUT/addrs/$name.$SLOW_N.addrs"
    echo "[make-addrs] $name: $(cat "$OUT/addrs/$name.info")" >&2
    rm -rf "$tmp"
done
