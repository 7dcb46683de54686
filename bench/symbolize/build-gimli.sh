#!/usr/bin/env bash
# Build out/bin/gimli-a2l (bench/symbolize/gimli-a2l, a small CLI over the
# Rust `addr2line` crate) offline from Debian's packaged crates.
#   needs: apt packages librust-addr2line-dev librust-gimli-dev
#          librust-object-dev librust-memmap2-dev librust-cpp-demangle-dev
#          librust-rustc-demangle-dev (librust-addr2line-dev alone does not
#          pull object, cpp_demangle and rustc-demangle: Debian packages an
#          optional dependency apart, and cargo then finds no object crate)
#          and a Rust toolchain: Debian's cargo + rustc (1.65 / 1.63) are
#          used when installed, else whatever `cargo` is on PATH.
#   INSTALL_DEPS=1 apt-get installs the crates and Debian's cargo.
#   CARGO=..., RUSTC=... override the toolchain.
# The crate's own examples/addr2line.rs is not used: it needs clap 3
# and backtrace/findshlibs dev-dependencies, while Debian 12 ships clap 4.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$HERE/out
REG=/usr/share/cargo/registry
CRATE_PKGS="librust-addr2line-dev librust-gimli-dev librust-object-dev librust-memmap2-dev
    librust-cpp-demangle-dev librust-rustc-demangle-dev"
log() { echo "[build-gimli] $*" >&2; }

if [ "${INSTALL_DEPS:-0}" = 1 ]; then
    pkgs="$CRATE_PKGS cargo"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs >&2
fi
if [ -z "${CARGO:-}" ] && [ -x /usr/bin/cargo ] && [ -x /usr/bin/rustc ]; then
    CARGO=/usr/bin/cargo; RUSTC=${RUSTC:-/usr/bin/rustc}
fi
CARGO=${CARGO:-cargo}
[ -n "${RUSTC:-}" ] && export RUSTC
command -v "$CARGO" >/dev/null || { log "SKIP: no cargo (apt-get install cargo, or INSTALL_DEPS=1)"; exit 1; }
for crate in addr2line:librust-addr2line-dev gimli:librust-gimli-dev object:librust-object-dev \
        memmap2:librust-memmap2-dev cpp_demangle:librust-cpp-demangle-dev \
        rustc-demangle:librust-rustc-demangle-dev; do
    ls -d "$REG/${crate%%:*}"-[0-9]* >/dev/null 2>&1 ||
        { log "SKIP: no ${crate%%:*} crate in $REG (apt-get install ${crate#*:}, or INSTALL_DEPS=1)"; exit 1; }
done

# Build from a copy so that Cargo.lock and target/ stay in out/.
mkdir -p "$OUT/gimli-a2l-src" "$OUT/cargo-home" "$OUT/bin"
cp "$HERE/gimli-a2l/Cargo.toml" "$OUT/gimli-a2l-src/"
rm -rf "$OUT/gimli-a2l-src/src" "$OUT/gimli-a2l-src/Cargo.lock"   # re-resolve: one version per crate
cp -r "$HERE/gimli-a2l/src" "$OUT/gimli-a2l-src/"
cat > "$OUT/cargo-home/config.toml" <<CFG
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "$REG"
[net]
offline = true
CFG
export CARGO_HOME=$OUT/cargo-home
# rustup's cargo proxy may need the user's RUSTUP_HOME; keep it as is.
(cd "$OUT/gimli-a2l-src" && "$CARGO" build --release --offline --quiet \
    --target-dir "$OUT/gimli-target") >&2
cp "$OUT/gimli-target/release/gimli-a2l" "$OUT/bin/gimli-a2l"
ver="$("$CARGO" --version), $(${RUSTC:-rustc} --version 2>/dev/null || true)"
echo "$ver" > "$OUT/bin/gimli-a2l.toolchain"
log "built out/bin/gimli-a2l with $ver"
