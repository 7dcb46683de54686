#!/usr/bin/env bash
# Build the symbolization benchmark corpus into out/corpus/.
#
#   objdump          binutils 2.40 objdump, --enable-targets=all, -O2 -g
#                    (from Debian's binutils-source package)
#   cxx_O2, c_O2_pie Ember's own fixtures, copied from <repo>/build/fixtures/
#                    when the project has built them (skipped otherwise)
#
# For every NAME it also writes NAME.debug (objcopy --only-keep-debug) and a
# line in out/corpus/stats.tsv (file size, .text size, DWARF size).
# The benchmark itself runs on the unstripped NAME.
#
# Env: INSTALL_DEPS=1  apt-get install binutils-source if it is missing
#      JOBS=N          make -j (default: nproc)
#      FORCE=1         rebuild objdump even if it exists
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=$HERE/out
CORPUS=$OUT/corpus
BUILD=$OUT/build
JOBS=${JOBS:-$(nproc)}
mkdir -p "$CORPUS" "$BUILD"

log() { echo "[make-corpus] $*" >&2; }

# ---------------------------------------------------------------- objdump
build_objdump() {
    local tarball
    tarball=$(ls /usr/src/binutils/binutils-*.tar.* 2>/dev/null | head -n1 || true)
    if [ -z "$tarball" ] && [ "${INSTALL_DEPS:-0}" = 1 ]; then
        log "installing binutils-source"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            binutils-source build-essential >&2
        tarball=$(ls /usr/src/binutils/binutils-*.tar.* 2>/dev/null | head -n1 || true)
    fi
    if [ -z "$tarball" ]; then
        log "SKIP objdump: no /usr/src/binutils/binutils-*.tar.* (apt-get install binutils-source, or INSTALL_DEPS=1)"
        return 0
    fi
    local ver src obj t0 t1
    ver=$(basename "$tarball"); ver=${ver%.tar.*}          # binutils-2.40
    src=$BUILD/$ver
    obj=$BUILD/$ver-obj
    if [ ! -d "$src" ]; then
        log "extracting $tarball"
        rm -rf "$BUILD/extract.tmp"; mkdir -p "$BUILD/extract.tmp"
        tar -C "$BUILD/extract.tmp" -xf "$tarball"
        mv "$BUILD/extract.tmp/$ver" "$src"; rmdir "$BUILD/extract.tmp"
    fi
    t0=$(date +%s)
    # -ffile-prefix-map makes the DWARF (and __FILE__) independent of where
    # the repository is checked out: paths read /ember-bench/binutils-2.40/...
    local flags="-O2 -g -ffile-prefix-map=$BUILD=/ember-bench"
    local args=(--enable-targets=all --disable-gdb --disable-gdbserver
        --disable-gprof --disable-gold --disable-ld --disable-gas --disable-sim
        --disable-nls --disable-werror "CFLAGS=$flags" "CXXFLAGS=$flags")
    if [ "$(cat "$obj/bench-configure-args" 2>/dev/null)" != "${args[*]}" ]; then
        rm -rf "$obj"
    fi
    mkdir -p "$obj"
    if [ ! -f "$obj/config.status" ]; then
        log "configuring $ver (targets=all, -O2 -g)"
        (cd "$obj" && "$src/configure" "${args[@]}" > "$BUILD/configure.log" 2>&1) ||
            { log "configure failed, see $BUILD/configure.log"; return 1; }
        echo "${args[*]}" > "$obj/bench-configure-args"
    fi
    log "building objdump with -j$JOBS (log: out/build/make.log)"
    # Only the libraries objdump links, then objdump itself (no docs, no
    # other binutils programs).  Fall back to all-binutils if that fails.
    if ! (cd "$obj" && make -j"$JOBS" configure-binutils all-bfd all-opcodes all-libiberty \
              all-libctf all-libsframe all-zlib > "$BUILD/make.log" 2>&1 &&
          make -j"$JOBS" -C binutils objdump >> "$BUILD/make.log" 2>&1); then
        log "minimal build failed, trying make all-binutils"
        (cd "$obj" && make -j"$JOBS" all-binutils >> "$BUILD/make.log" 2>&1) ||
            { log "build failed, see $BUILD/make.log"; return 1; }
    fi
    t1=$(date +%s)
    cp "$obj/binutils/objdump" "$CORPUS/objdump"
    echo "$((t1 - t0))" > "$CORPUS/objdump.buildtime"
    log "objdump built in $((t1 - t0)) s"
}

if [ "${FORCE:-0}" = 1 ] || [ ! -x "$CORPUS/objdump" ]; then
    build_objdump || log "objdump not built; continuing"
else
    log "objdump exists (FORCE=1 rebuilds)"
fi

# ---------------------------------------------------------------- fixtures
# The project builds them with fixtures/elf/build.sh into its build tree;
# the first of these directories that has the file wins.
for f in cxx_O2 c_O2_pie; do
    src=""
    for d in build/fixtures build/fixtures/elf build-release/fixtures build-release/fixtures/elf; do
        if [ -f "$REPO/$d/$f" ]; then src=$REPO/$d/$f; break; fi
    done
    if [ -n "$src" ]; then
        if ! cmp -s "$src" "$CORPUS/$f" 2>/dev/null; then
            cp "$src" "$CORPUS/$f"
            log "copied fixture $f from ${src#"$REPO/"}"
        fi
    else
        log "SKIP fixture $f: not built yet (build/fixtures/$f; make build)"
    fi
done

# ---------------------------------------------------------------- .debug + stats
sect_sum() {  # sum of sizes of sections whose name matches $2 (ERE)
    local s=0 h
    for h in $(readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] *//p' |
               awk -v re="$2" '$1 ~ re { print $5 }'); do
        s=$((s + 16#$h))
    done
    echo "$s"
}

printf 'name\tfile_bytes\ttext_bytes\tdwarf_bytes\tdebug_file_bytes\tbuild_s\n' > "$CORPUS/stats.tsv"
for bin in "$CORPUS"/*; do
    name=$(basename "$bin")
    case "$name" in *.debug|*.tsv|*.buildtime|*.md) continue ;; esac
    [ -f "$bin" ] || continue
    if [ ! -f "$bin.debug" ] || [ "$bin" -nt "$bin.debug" ]; then
        objcopy --only-keep-debug "$bin" "$bin.debug"
    fi
    bt=-; [ -f "$bin.buildtime" ] && bt=$(cat "$bin.buildtime")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(stat -c %s "$bin")" \
        "$(sect_sum "$bin" '^\.text$')" "$(sect_sum "$bin" '^\.debug_')" \
        "$(stat -c %s "$bin.debug")" "$bt" >> "$CORPUS/stats.tsv"
done
column -t "$CORPUS/stats.tsv" >&2
