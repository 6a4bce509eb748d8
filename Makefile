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

JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
BUILD    ?= build
PKGS      = cmake make gcc pkg-config libsqlite3-dev sqlite3 libzstd-dev \
            lemon check libxxhash-dev libreadline-dev python3 clang \
            libclang-rt-14-dev tmux
BENCH_PKGS = librocksdb-dev
PREFIX   ?= /usr/local
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
	cmake -S . -B build-bench -DWCS_BENCH=ON -DWCS_TESTS=OFF \
	  -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build-bench -j $(JOBS)
	cd build-bench && ../bench/run.sh

crashtest: build
	WCS_CRASH_ROUNDS=10000 ./$(BUILD)/tests/crash_test
	WCS_SQL_CRASH_ROUNDS=2000 ./$(BUILD)/tests/sql_crash

visual: build
	$(call install_missing,chromium)
	./tests/visual.sh $(BUILD)

install: deps
	cmake -S . -B build-release -DWCS_TESTS=OFF -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build build-release -j $(JOBS)
	DESTDIR=$(DESTDIR) cmake --install build-release

clean:
	rm -rf build build-asan build-fuzz build-bench build-release
