#!/usr/bin/env bash
# bench/ab/scratch-tree.sh DIR [COMMIT...] - a scratch copy of HEAD for an
# A/B (docs/performance-notes.md): `git archive HEAD` unpacked into DIR,
# then each COMMIT reverted in the copy (`git show COMMIT | patch -R`),
# which puts a removed trick back.  Apply any temporary patch to DIR by
# hand, then build what the A/B needs:
#
#   cmake -S DIR -B DIR/build -G Ninja -DCMAKE_BUILD_TYPE=Release
#   cmake --build DIR/build --target ember ember-unwind-bench
#
# Nothing here touches the repository: DIR is outside it, never committed.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 DIR [COMMIT...]" >&2; exit 2; }
dir=$1; shift
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
rm -rf "$dir"
mkdir -p "$dir"
git -C "$repo" archive HEAD | tar -x -C "$dir"
for c in "$@"; do
	git -C "$repo" show "$c" | (cd "$dir" && patch -R -p1 -s)
done
echo "$dir: HEAD $(git -C "$repo" rev-parse --short HEAD)${*:+, reverted: $*}"
