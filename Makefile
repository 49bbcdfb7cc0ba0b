# Thin wrappers around CMake; see README.md and docs/development.md.
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# A comma, for an argument of $(call ...).
, := ,
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
# make run's address and data dir (empty: the config's): two runs on
# different ones never collide.  Also SPACED_HTTP_LISTEN, SPACED_DATA_DIR.
HTTP_LISTEN ?=
DATA_DIR ?=
# No make or CMake chatter: no "Entering directory" from the make that
# cmake --build runs (CMakeLists.txt turns off the progress and "Built
# target" lines).  The compiler's own output still shows.
MAKEFLAGS += --no-print-directory
# Configure only a new tree, or for new CMAKE_FLAGS: BUILD may name a
# tree configured from another checkout.  Then the tree's own check, which
# re-runs CMake when a CMakeLists.txt or a globbed directory changed (a
# pull): run by cmake --build, it would print CMake's "-- Configuring
# done" lines.  Either output goes to a log, shown when it fails.
define configure
	@if [ -n "$(3)" ] || [ ! -f $(1)/CMakeCache.txt ]; then \
	  mkdir -p $(1) && \
	  cmake -S . -B $(1) $(2) $(3) >$(1)/configure.log 2>&1 || \
	  { cat $(1)/configure.log >&2; exit 1; }; fi
	@if [ -f $(1)/Makefile ]; then \
	  cmake --build $(1) --target cmake_check_build_system \
	    >$(1)/regenerate.log 2>&1 || \
	  { cat $(1)/regenerate.log >&2; exit 1; }; fi
endef

.PHONY: all setup build run test test-sanitize test-tsan fuzz bench bench-pg \
	format clean install package deb chaos

all: build

setup:
	@./scripts/setup.sh

build: setup
	$(call configure,$(BUILD),-DCMAKE_BUILD_TYPE=RelWithDebInfo,$(CMAKE_FLAGS))
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@./scripts/run.sh $(BUILD) $(if $(HTTP_LISTEN),--http-listen=$(HTTP_LISTEN)) \
		$(if $(DATA_DIR),--data-dir=$(DATA_DIR))

# scripts/tmp_check.sh fails the run when a test left something in /tmp.
TMP_CHECK = $(CURDIR)/scripts/tmp_check.sh

test: build
	@cd $(BUILD) && $(TMP_CHECK) ctest --output-on-failure -j $(JOBS) -LE tsan-only

# Unit and integration tests again under ASan and UBSan.
test-sanitize: setup
	$(call configure,$(ASAN_BUILD),-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
		-DSPACED_SANITIZE=address$(,)undefined,$(CMAKE_FLAGS))
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		$(TMP_CHECK) ctest --output-on-failure -j $(JOBS) -L 'unit|integration'

# The api's and the store's integration tests (both processes are
# threaded) against the daemons of a ThreadSanitizer build: the tests
# labelled tsan in CMakeLists.txt, from $(BUILD) (Criterion cannot run
# under TSan), start the binaries of $(TSAN_BUILD) (TK_BIN_DIR).
# Every process they start inherits TSAN_OPTIONS, so a report from a
# spaced-api or spaced-store that the supervisor would restart is not
# lost: each goes to a file in $(TSAN_BUILD)/tsan/, which must stay empty.
# One test at a time: the sanitized daemons are several times slower, and
# the tests' bounds (a ?wait=10 task) were set for daemons at full speed.
TSAN_DIR = $(abspath $(TSAN_BUILD))/tsan
test-tsan: build
	$(call configure,$(TSAN_BUILD),-DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_C_COMPILER=clang -DSPACED_SANITIZE=thread,$(CMAKE_FLAGS))
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target spaced spaced-store \
		spaced-api spaced-actor
	@rm -rf $(TSAN_DIR) && mkdir -p $(TSAN_DIR)
	@cd $(BUILD) && rc=0; \
		TK_BIN_DIR=$(abspath $(TSAN_BUILD)) \
		TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:atexit_sleep_ms=0:suppressions=$(CURDIR)/tests/tsan.supp:log_path=$(TSAN_DIR)/report \
		ctest --output-on-failure -L tsan || rc=1; \
		if [ -n "$$(ls -A $(TSAN_DIR))" ]; then \
		  echo "ThreadSanitizer reports:" >&2; cat $(TSAN_DIR)/* >&2; rc=1; fi; \
		exit $$rc

# Every libFuzzer target for FUZZ_SECONDS each (clang).
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30
fuzz: setup
	$(call configure,$(FUZZ_BUILD),-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
		-DSPACED_FUZZ=ON,$(CMAKE_FLAGS))
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers
	@./scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The long chaos run: CHAOS_KILLS kills on the fake runtime, then
# CHAOS_BROWSER_KILLS with real browsers (CHAOS_FLAGS adds options,
# --seed=N to repeat a run).
CHAOS_KILLS ?= 200
CHAOS_FLAGS ?=
CHAOS_BROWSER_KILLS ?= 40
chaos: build
	@./$(BUILD)/chaos --kills=$(CHAOS_KILLS) --spaces=12 $(CHAOS_FLAGS)
	@./$(BUILD)/chaos --kills=$(CHAOS_BROWSER_KILLS) --spaces=4 --browsers \
		$(CHAOS_FLAGS)

bench: build
	@./$(BUILD)/store_bench
	@./$(BUILD)/store_bench --ping 64
	@./$(BUILD)/http_bench
	@HTTP_BENCH_SIEGE=1 ./$(BUILD)/http_bench
	@./$(BUILD)/actor_bench
	@./$(BUILD)/lifecycle_bench
	@./$(BUILD)/click_bench
	@./$(BUILD)/warm_bench
	@./$(BUILD)/live_bench
	@./$(BUILD)/egress_bench
	@./$(BUILD)/snapshot_bench
	@./$(BUILD)/page_bench
	@./$(BUILD)/density_bench
	@./$(BUILD)/mcp_bench
	@./scripts/bench_pg.sh $(BUILD)

# 64-Space throughput and no-op latency on SQLite, on PostgreSQL and on
# two hosts sharing one PostgreSQL, in one run (a throwaway cluster);
# skipped, saying so, without PostgreSQL's server binaries.
bench-pg: build
	@./scripts/bench_pg.sh $(BUILD)

# The binaries, etc/ and the systemd unit under PREFIX (DESTDIR works).
# The prefix is configured, not only given to cmake --install: the unit
# and the configuration's place are made for it.
PREFIX ?= /usr/local
install: build
	$(call configure,$(BUILD),,-DCMAKE_INSTALL_PREFIX=$(PREFIX))
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) >$(BUILD)/install.log 2>&1 || \
		{ cat $(BUILD)/install.log >&2; exit 1; }

# The Debian package (CPack), in $(BUILD), for /usr and /etc/spaced.
package deb: build
	$(call configure,$(BUILD),,-DCMAKE_INSTALL_PREFIX=/usr)
	@cd $(BUILD) && cpack -G DEB >cpack.log 2>&1 || { cat cpack.log >&2; exit 1; }
	@ls $(BUILD)/spaced_*.deb

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
