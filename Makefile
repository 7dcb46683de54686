# Ember: two commands do all the setup on a fresh Debian 12 machine.
#   make run   - install what is missing, build, start the server
#   make test  - install what is missing, build with ASan+UBSan and as
#                Release, run every test against both
#
# Everything else is plain CMake under build/ (tests, sanitizers) and
# build-release/ (what `make run` and the benchmarks use); both build
# Ember's own code with -Werror (EMBER_WERROR).  docs/testing.md says how to
# run one test.

SHELL := /bin/bash
BUILD ?= build
RELEASE_BUILD ?= build-release
JOBS ?= $(shell nproc)

# Debian packages the build and the tests need (GnuTLS's own -dev
# packages for the static archives the server links, CMakeLists.txt).  Peer tools (llvm, gdb,
# elfutils, golang-go) are here because the tests run them as oracles or
# as real clients; libc6-dbg because gdb names libc's frames from it; Ceph
# (monitor, OSD, radosgw) because the S3 client is tested against a real
# single-node cluster (tests/objstore/ceph_cluster.sh); bpftrace and
# linux-perf are the agent benchmark's peers; chromium, chromium-driver
# and python3-selenium because the web UI is tested in a real headless
# browser (tests/web); strace because the server tests read the server's
# fsyncs off its system calls; python3-dev and python3.11-dbg because the
# agent's Python unwinding is tested on two builds of CPython 3.11 (the
# release and the debug one) and its offsets against their own headers.
# tests/packages.txt maps each tool and file the tests need to its package,
# and the packages_* tests check that it is in these lists.
BUILD_PKGS := build-essential cmake ninja-build pkg-config clang \
	libdw-dev libelf-dev libiberty-dev zlib1g-dev libzstd-dev liblzma-dev \
	libbz2-dev librocksdb-dev libmicrohttpd-dev libdebuginfod-dev \
	libcurl4-gnutls-dev nettle-dev libarchive-dev libjansson-dev libyajl-dev \
	protobuf-c-compiler libprotobuf-c-dev golang-github-google-pprof-dev \
	libgnutls28-dev libgmp-dev libidn2-dev libtasn1-6-dev libp11-kit-dev \
	libunistring-dev libexpat1-dev libbpf-dev bpftool libre2-dev libnghttp2-dev
TEST_PKGS := llvm binutils elfutils gdb libc6-dbg golang-go golang-1.19-src \
	python3 libclang-rt-14-dev rustc debuginfod curl \
	ceph-mon ceph-osd radosgw ceph-common bpftrace linux-perf \
	libxml2-utils zstd nodejs chromium chromium-driver python3-selenium strace \
	protobuf-compiler python3-protobuf python3-grpcio openjdk-17-jdk-headless \
	python3-dev python3.11-dbg
PKGS := $(BUILD_PKGS) $(TEST_PKGS)

.PHONY: all deps node-deps build build-release run test bench clean

all: build

# Idempotent: asks apt only for packages that are not installed yet.
deps:
	@missing=$$(for p in $(PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DEMBER_SANITIZE=ON \
		-DEMBER_WERROR=ON
	cmake --build $(BUILD) -j $(JOBS)

build-release: deps
	cmake -S . -B $(RELEASE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_SANITIZE=OFF \
		-DEMBER_WERROR=ON
	cmake --build $(RELEASE_BUILD) -j $(JOBS)

# Grafana's Pyroscope SDK and the Connect client (@connectrpc/connect-node)
# for the profile tests (tests/profiles/node):
# `npm ci` from the npm registry, pinned by its package-lock.json, before
# any test runs (no test downloads).  Debian's nodejs comes without npm
# (the package `npm`); a nodejs that brings its own (NodeSource's, which
# conflicts with Debian's npm) is left as it is.  If npm ci fails, the
# test says why it skips.
node-deps: deps
	@if ! command -v npm >/dev/null; then \
		echo "installing: npm"; \
		if [ "$$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends npm; \
	fi; \
	(cd tests/profiles/node && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || \
		echo "node-deps: npm ci failed: the Pyroscope Node.js SDK and Connect client tests will skip"

# The whole suite twice: ASan+UBSan (build/), then Release without
# sanitizers (build-release/, the binaries `make run` runs).  Both run even
# if the first fails; either failing fails the target.  A sanitizer's
# report exits 86, not 1, so a test expecting a command to fail with 1
# cannot take a crash for that failure.
test: build build-release node-deps
	@rc=0; \
	echo "== tests: ASan+UBSan build ($(BUILD))"; \
	(cd $(BUILD) && ASAN_OPTIONS=exitcode=86 ctest --output-on-failure -j $(JOBS)) || rc=1; \
	echo "== tests: Release build ($(RELEASE_BUILD))"; \
	(cd $(RELEASE_BUILD) && ctest --output-on-failure -j $(JOBS)) || rc=1; \
	exit $$rc

# The main job: the debuginfo server on ./ember-data, 127.0.0.1:8002, and
# OTLP/gRPC profiles on OTLP's gRPC port.
run: build-release
	./$(RELEASE_BUILD)/ember serve --otlp-grpc-listen 127.0.0.1:4317

bench: build-release
	bench/symbolize/run.sh

clean:
	rm -rf $(BUILD) $(RELEASE_BUILD)
