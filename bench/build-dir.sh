# bench/build-dir.sh - sourced by the run scripts: which build directory a
# benchmark takes Ember and its own tools from, and bringing them up to date.
#
#   BUILD  the CMake build directory (default <repo>/build-release, what
#          `make build-release` makes; else the directory of $EMBER when
#          that is set).  Configured Release without sanitizers when it
#          does not exist yet.
#
# bench_build TARGET...  builds the targets in $BUILD (a no-op when they
# are up to date; the log goes to $BENCH_BUILD_LOG, default /dev/null) and
# warns when $BUILD is not a Release build without sanitizers: figures
# from such a build measure the instrumentation.
BENCH_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
if [ -z "${BUILD:-}" ]; then
    if [ -n "${EMBER:-}" ]; then BUILD=$(dirname "$EMBER"); else BUILD=$BENCH_REPO/build-release; fi
fi
mkdir -p "$BUILD" && BUILD=$(cd "$BUILD" && pwd -P)

bench_build() {
    local log=${BENCH_BUILD_LOG:-/dev/null} cache=$BUILD/CMakeCache.txt
    if [ ! -f "$cache" ]; then
        echo "bench: configuring $BUILD (Release, no sanitizers)" >&2
        cmake -S "$BENCH_REPO" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
            -DEMBER_SANITIZE=OFF >>"$log" 2>&1 ||
            { echo "bench: cmake -S $BENCH_REPO -B $BUILD failed" >&2; return 1; }
    fi
    grep -q '^CMAKE_BUILD_TYPE:[A-Z]*=Release$' "$cache" && ! grep -q '^EMBER_SANITIZE:BOOL=ON$' "$cache" ||
        echo "bench: warning: $BUILD is not a Release build without sanitizers" >&2
    cmake --build "$BUILD" --target "$@" >>"$log" 2>&1 ||
        { echo "bench: cmake --build $BUILD --target $* failed (BENCH_BUILD_LOG=FILE for the log)" >&2; return 1; }
}
