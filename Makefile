# Thin driver around CMake. Every target first installs the Debian packages
# that are missing (only those), then configures and builds.
#
#   make demo        build, then run the demo on an embedded default store
#   make test        build and run every test, then again under clang's
#                    ASan+UBSan (it reports more undefined behaviour than
#                    gcc's, e.g. an offset added to a NULL pointer),
#                    then a short smoke run of each fuzz target
#   make bench       build with the benchmarks (and RocksDB) and run them
#   make crashtest   the long crash tests (10,000 kill rounds of the store,
#                    2,000 of SQL transactions through the module)
#   make visual      render the key-distribution picture to PNG (Chromium)
#   make install     an optimised build installed under PREFIX (default
#                    /usr/local; DESTDIR for staging): the module wcs.so,
#                    libwcs.a and libwcscore.a, wcs.h, the shell, wcs.pc.
#                    With PREFIX=/usr the module lands in the loader's
#                    search path, so `.load wcs` works from any directory
#
# The optimised builds (bench, install) are profile-guided: the library is
# built instrumented, bench/pgo_train runs a mixed SQL workload through
# both copies of the module (linked and loadable), and the build is made
# again with the profile that left. PGO=0 builds them in one plain pass.

JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
BUILD    ?= build
PKGS      = cmake make gcc pkg-config libsqlite3-dev sqlite3 libzstd-dev \
            lemon check libxxhash-dev libreadline-dev python3 clang \
            libclang-rt-14-dev tmux
BENCH_PKGS = librocksdb-dev
PREFIX   ?= /usr/local
PGO      ?= 1
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

define install_missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" \
	    || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
endef

# An optimised (Release) build in directory $(1), with CMake arguments $(2):
# profile-guided unless PGO=0 (see above).
define optimised_build
	@if [ "$(PGO)" = 1 ]; then \
	  set -e; \
	  echo "profile-guided build in $(1): instrumented pass, training run"; \
	  rm -rf $(1)/pgo-profile $(1)/pgo-train; \
	  cmake -S . -B $(1) -DCMAKE_BUILD_TYPE=Release -DWCS_PGO=GENERATE \
	    $(2) >/dev/null; \
	  cmake --build $(1) -j $(JOBS) --target pgo_train wcs >/dev/null; \
	  $(1)/pgo_train $(1)/pgo-train; \
	  $(1)/pgo_train $(1)/pgo-train 150000 $(1)/wcs; \
	  cmake -S . -B $(1) -DWCS_PGO=USE >/dev/null; \
	else \
	  cmake -S . -B $(1) -DCMAKE_BUILD_TYPE=Release -DWCS_PGO= \
	    $(2) >/dev/null; \
	fi
	cmake --build $(1) -j $(JOBS)
endef

.PHONY: deps bench-deps build demo test test-plain test-asan test-fuzz bench crashtest visual install clean

deps:
	$(call install_missing,$(PKGS))

bench-deps: deps
	$(call install_missing,$(BENCH_PKGS))

build: deps
	cmake -S . -B $(BUILD) -DWCS_TESTS=ON >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/bin/wcs demo

test: test-plain test-asan test-fuzz

test-plain: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	cmake -S . -B build-asan -DCMAKE_C_COMPILER=clang -DWCS_TESTS=ON \
	  -DWCS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

test-fuzz: deps
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DWCS_FUZZ=ON \
	  -DWCS_TESTS=OFF >/dev/null
	cmake --build build-fuzz -j $(JOBS)
	cd build-fuzz && ctest --output-on-failure -L fuzz

bench: bench-deps
	$(call optimised_build,build-bench,-DWCS_BENCH=ON -DWCS_TESTS=OFF)
	cd build-bench && ../bench/run.sh

crashtest: build
	WCS_CRASH_ROUNDS=10000 ./$(BUILD)/tests/crash_test
	WCS_SQL_CRASH_ROUNDS=2000 ./$(BUILD)/tests/sql_crash

visual: build
	$(call install_missing,chromium)
	./tests/visual.sh $(BUILD)

install: deps
	$(call optimised_build,build-release,-DWCS_TESTS=OFF \
	  -DCMAKE_INSTALL_PREFIX=$(PREFIX))
	DESTDIR=$(DESTDIR) cmake --install build-release

clean:
	rm -rf build build-asan build-fuzz build-bench build-release
