# hvbench — one non-recursive Makefile.
#
#   make                  build the three programs into build/bin
#   make check            install missing packages, build, fuzz-check, run every test
#   make api              regenerate api/openapi.json from api/openapi.yaml
#   make schema           regenerate migrations/schema.sql from the migrations
#   make demo             run a plan end to end on this machine
#   make SANITIZE=address,undefined check   the same under sanitizers
#   make WERROR=1         warnings are errors (CI)
#   make format-check     clang-format must agree with the tree
#   make install PREFIX=/usr DESTDIR=/tmp/pkg
#   make bench-progs      build the load generator and the bench programs
#   make bench            every bench/*.sh, then the table of BENCHMARKS.md (BENCH_QUICK=1: < 10 min)
#   make fuzz FUZZ_SECONDS=600   each libFuzzer target that long (fuzz/README.md)

VERSION  := 0.1.0
PREFIX   ?= /usr/local
DESTDIR  ?=
# Configuration files: /etc for PREFIX=/usr, else PREFIX/etc.
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR    ?= $(PREFIX)/lib/systemd/system
MANDIR     ?= $(PREFIX)/share/man
CC       ?= cc
SANITIZE ?=
WERROR   ?=

ifeq ($(SANITIZE),)
BUILD    ?= build
else
BUILD    ?= build/sanitize
endif

PKG_CONFIG ?= pkg-config
PKGS_LIB    = jansson libcurl gsl
PKGS_SERVER = libmicrohttpd jansson libpq gsl gnutls libcurl
PKGS_WORKER = jansson libcurl
# Headers only: worker/virt.c loads libvirt and worker/virt/xml.c libxml2
# (for editing domain XML) at run time, so guest workers load neither.
PKGS_VIRT   = libvirt libxml-2.0
PKGS_CLI    = jansson libcurl gsl

pkg_cflags = $(shell $(PKG_CONFIG) --cflags $(1))
pkg_libs   = $(shell $(PKG_CONFIG) --libs $(1))

WARN      = -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wno-unused-parameter
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 $(WARN) -D_GNU_SOURCE -Ilib -I. -I$(BUILD)/gen -MMD -MP
ifneq ($(WERROR),)
CFLAGS   += -Werror
endif
ifneq ($(SANITIZE),)
CFLAGS   += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=$(SANITIZE)
# AddressSanitizer wraps the xdr_* functions libvirt's RPC calls, and looks
# up the real ones once at start: a worker that loads libvirt (and with it
# libtirpc) later would call a null pointer. Linking libtirpc from the
# start gives the wrappers something to call (the worker, and the unit tests
# that load libvirt).
WORKER_SAN_LIBS = -Wl,--no-as-needed $(shell $(PKG_CONFIG) --libs libtirpc) -Wl,--as-needed
endif
LDLIBS_COMMON = -lpthread -lm

# Each wing compiles with the include paths of its own libraries only, so
# that a server file including libvirt's or libxml2's headers, or a worker
# file including libpq's, does not build (as far as pkg-config paths go;
# tools/layers-check.sh checks the rest). Tests, benchmarks and fuzzers
# see every wing.
ALL_PKG_CFLAGS := $(call pkg_cflags,$(sort $(PKGS_LIB) $(PKGS_SERVER) $(PKGS_WORKER) $(PKGS_VIRT) $(PKGS_CLI)))
LIB_PKG_CFLAGS    := $(call pkg_cflags,$(PKGS_LIB))
SERVER_PKG_CFLAGS := $(call pkg_cflags,$(sort $(PKGS_LIB) $(PKGS_SERVER)))
WORKER_PKG_CFLAGS := $(call pkg_cflags,$(sort $(PKGS_LIB) $(PKGS_WORKER) $(PKGS_VIRT)))
CLI_PKG_CFLAGS    := $(call pkg_cflags,$(sort $(PKGS_LIB) $(PKGS_CLI)))
PKG_CFLAGS = $(ALL_PKG_CFLAGS)

LIB_SRC    := $(wildcard lib/*.c)
SERVER_SRC := $(wildcard server/*.c)
WORKER_SRC := $(wildcard worker/*.c worker/engines/*.c worker/virt/*.c)
CLI_SRC    := $(wildcard cli/*.c)
TEST_SRC   := $(wildcard tests/unit/test_*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

# One archive per layer: lib/ in libhvbench.a, and each wing's objects but
# its main.o in an archive of its own, which its program, its unit tests
# and the benchmarks link (the CLI, with no unit test of its own, links
# its objects).
LIB_A    := $(BUILD)/libhvbench.a
SERVER_A := $(BUILD)/libhvserver.a
WORKER_A := $(BUILD)/libhvworker.a
SERVER  := $(BUILD)/bin/hvbench-server
WORKER  := $(BUILD)/bin/hvbench-worker
CLI     := $(BUILD)/bin/hvbench
PROGS   := $(SERVER) $(WORKER) $(CLI)
# api/openapi.json compiled into the server (GET /api/v1/openapi.json).
OPENAPI_OBJ := $(BUILD)/obj/gen/openapi_json.o
WORKER_LIBOBJ := $(filter-out $(BUILD)/obj/worker/main.o,$(call obj,$(WORKER_SRC)))
SERVER_LIBOBJ := $(filter-out $(BUILD)/obj/server/main.o,$(call obj,$(SERVER_SRC))) $(OPENAPI_OBJ)
TESTS   := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRC))
# A unit test links libhvbench.a and the archive of the wing it tests, the
# one its #includes name ("server/..." or "worker/..."); a test naming
# neither tests lib/ (or compiles in the file it tests, as test_cli_table)
# and links libhvbench.a only. So touching a handler relinks the server
# and the server's tests, not the others.
wing_tests    = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(shell grep -lE '^#include "$(1)/' $(TEST_SRC)))
SERVER_TESTS := $(call wing_tests,server)
WORKER_TESTS := $(call wing_tests,worker)
LIB_TESTS    := $(filter-out $(SERVER_TESTS) $(WORKER_TESTS),$(TESTS))
ifneq ($(filter $(SERVER_TESTS),$(WORKER_TESTS)),)
$(error a unit test tests one wing: $(filter $(SERVER_TESTS),$(WORKER_TESTS)) includes both server/ and worker/)
endif
# Libraries a test uses itself, beyond those of what it tests: the worker's
# client is tested against a libmicrohttpd server.
$(BUILD)/tests/test_worker_client: TEST_PKGS = libmicrohttpd

# Keep the unit tests' objects (make would delete them as intermediates).
.SECONDARY: $(patsubst tests/unit/%.c,$(BUILD)/obj/tests/unit/%.o,$(TEST_SRC))
.PHONY: all check demo install format format-check headers-check layers-check clean deps unit-tests api schema e2e-qemu \
        fuzz fuzz-check fuzz-merge fuzz-build

all: $(PROGS)

# Build settings compiled into the programs. The header is rewritten only
# when its text changes, so `make install PREFIX=...` recompiles exactly the
# files that use it.
GEN_BUILD_H := $(BUILD)/gen/hv_build.h
$(GEN_BUILD_H): FORCE
	@mkdir -p $(dir $@)
	@printf '#define HVBENCH_VERSION "%s"\n#define HVBENCH_DATADIR "%s"\n' \
	  '$(VERSION)' '$(PREFIX)/share/hvbench' >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
FORCE:

$(BUILD)/obj/lib/%.o: PKG_CFLAGS = $(LIB_PKG_CFLAGS)
$(BUILD)/obj/server/%.o: PKG_CFLAGS = $(SERVER_PKG_CFLAGS)
$(BUILD)/obj/worker/%.o: PKG_CFLAGS = $(WORKER_PKG_CFLAGS)
$(BUILD)/obj/cli/%.o: PKG_CFLAGS = $(CLI_PKG_CFLAGS)
$(BUILD)/obj/%.o: %.c | $(GEN_BUILD_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

# Archives are written afresh, so an object whose source is gone leaves.
$(LIB_A): $(call obj,$(LIB_SRC))
	@mkdir -p $(dir $@)
	@rm -f $@
	$(AR) rcs $@ $^

$(SERVER_A): $(SERVER_LIBOBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(WORKER_A): $(WORKER_LIBOBJ)
	@rm -f $@
	$(AR) rcs $@ $^

# The OpenAPI document as a C array (tools/embed.sh), linked into the
# server only; its source api/openapi.json is committed, so building needs
# no node.
$(BUILD)/gen/openapi_json.c: api/openapi.json tools/embed.sh
	@mkdir -p $(dir $@)
	sh tools/embed.sh hv_openapi_json api/openapi.json >$@.tmp && mv $@.tmp $@

$(OPENAPI_OBJ): $(BUILD)/gen/openapi_json.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(SERVER): $(BUILD)/obj/server/main.o $(SERVER_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(PKGS_SERVER)) $(LDLIBS_COMMON)

$(WORKER): $(BUILD)/obj/worker/main.o $(WORKER_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(PKGS_WORKER) $(PKGS_LIB)) $(WORKER_SAN_LIBS) $(LDLIBS_COMMON)

$(CLI): $(call obj,$(CLI_SRC)) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(PKGS_CLI)) $(LDLIBS_COMMON)

$(LIB_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(sort $(PKGS_LIB) $(TEST_PKGS))) $(LDLIBS_COMMON)

$(SERVER_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(SERVER_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(sort $(PKGS_SERVER) $(PKGS_LIB) $(TEST_PKGS))) $(LDLIBS_COMMON)

$(WORKER_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(WORKER_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(sort $(PKGS_WORKER) $(PKGS_LIB) $(TEST_PKGS))) $(WORKER_SAN_LIBS) $(LDLIBS_COMMON)

unit-tests: $(TESTS)

deps:
	@deploy/deps.sh

# make e2e-qemu: the tuning actuators against real QEMU guests through
# libvirt's embedded QEMU driver (tests/e2e/actuators_qemu.c); needs
# qemu-system-x86 and libvirt-daemon-driver-qemu. Not in make check.
E2E_QEMU := $(BUILD)/e2e/actuators_qemu
$(E2E_QEMU): $(BUILD)/obj/tests/e2e/actuators_qemu.o $(WORKER_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(sort $(PKGS_WORKER) $(PKGS_LIB))) $(LDLIBS_COMMON)

e2e-qemu: $(E2E_QEMU)
	$(E2E_QEMU)

# make check: every test, closing with "N passed, N failed".
check: deps
	tools/layers-check.sh
	$(MAKE) man-check
	$(MAKE) all unit-tests test-tools $(BUILD)/bench/hvload
	$(MAKE) fuzz-check
	BUILD=$(BUILD) tests/run.sh

# make api: api/openapi.json from api/openapi.yaml (node and the npm
# packages of tests/contract); commit both. test_contract checks they agree.
api: tests/contract/node_modules/.package-lock.json
	cd tests/contract && node yaml2json.mjs

tests/contract/node_modules/.package-lock.json: tests/contract/package-lock.json
	cd tests/contract && npm ci --no-audit --no-fund

# make schema: migrations/schema.sql, every definition as the migrations
# leave it, dumped from a scratch database they were applied to
# (tools/schema.sh); commit it with the migration that changed it.
# tests/integration/test_schema.sh fails while it is stale.
schema: $(SERVER)
	BUILD=$(BUILD) tools/schema.sh

# make web-vendor: the web page's libraries (web-src/package.json, pinned
# by web-src/package-lock.json) installed with npm and their built files
# and licences copied into web/vendor/; commit what changed. Only this
# needs node: building, installing and serving the page read web/ alone.
.PHONY: web-vendor
web-vendor:
	cd web-src && npm ci --no-audit --no-fund
	install -d web/vendor
	install -m 0644 web-src/node_modules/uplot/dist/uPlot.iife.min.js web/vendor/uPlot.iife.min.js
	install -m 0644 web-src/node_modules/uplot/dist/uPlot.min.css web/vendor/uPlot.min.css
	install -m 0644 web-src/node_modules/uplot/LICENSE web/vendor/uPlot.LICENSE.txt
	printf 'uplot %s\n' "$$(node -p 'require("./web-src/node_modules/uplot/package.json").version')" \
	  >web/vendor/VERSIONS.txt

demo: deps
	$(MAKE) all
	BUILD=$(BUILD) deploy/demo.sh

FORMAT_SRC = $(shell git ls-files --cached --others --exclude-standard '*.c' '*.h' 2>/dev/null)
format:
	clang-format -i $(FORMAT_SRC)
format-check:
	clang-format --dry-run --Werror $(FORMAT_SRC)

# Arrows point down only: lib/ includes no wing, no wing another, each wing
# only its own libraries (tools/layers-check.sh; make check runs it).
layers-check:
	@tools/layers-check.sh

# Every header must compile on its own.
headers-check:
	@set -e; for h in $(wildcard lib/*.h server/*.h worker/*.h worker/engines/*.h worker/virt/*.h cli/*.h fuzz/*.h); do \
	  printf '#include "%s"\n' "$$h" | $(CC) $(CFLAGS) $(ALL_PKG_CFLAGS) -MMD -MF /dev/null -fsyntax-only -x c - || exit 1; \
	done; echo "headers-check: ok"

# The man pages, from docs/man/*.scd.
MAN_SRC   := $(wildcard docs/man/*.scd)
MAN_PAGES := $(patsubst docs/man/%.scd,$(BUILD)/man/%,$(MAN_SRC))

# make install: bin/, share/hvbench/{web,migrations}, the systemd units
# (UNITDIR), example configuration files in SYSCONFDIR/hvbench (kept when
# they exist) and the man pages (MANDIR). docs/operations.md.
install: all man
	$(MAKE) install-files

# install-files: the same from what is built, building nothing
# (tests/integration/test_install.sh).
.PHONY: install-files
install-files: $(MAN_PAGES)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/hvbench/web \
	  $(DESTDIR)$(PREFIX)/share/hvbench/web/js $(DESTDIR)$(PREFIX)/share/hvbench/web/vendor \
	  $(DESTDIR)$(PREFIX)/share/hvbench/migrations $(DESTDIR)$(UNITDIR) \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8
	install -d -m 0750 $(DESTDIR)$(SYSCONFDIR)/hvbench
	install -m 0755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 migrations/*.sql $(DESTDIR)$(PREFIX)/share/hvbench/migrations/
	install -m 0644 $(wildcard web/*.html web/*.css) $(DESTDIR)$(PREFIX)/share/hvbench/web/
	install -m 0644 $(wildcard web/js/*.js) $(DESTDIR)$(PREFIX)/share/hvbench/web/js/
	install -m 0644 $(wildcard web/vendor/*) $(DESTDIR)$(PREFIX)/share/hvbench/web/vendor/
	for u in hvbench-server hvbench-worker; do \
	  sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    deploy/systemd/$$u.service.in >$(DESTDIR)$(UNITDIR)/$$u.service && \
	  chmod 0644 $(DESTDIR)$(UNITDIR)/$$u.service; \
	done
	install -d $(DESTDIR)$(PREFIX)/lib/sysusers.d
	install -m 0644 deploy/systemd/hvbench.sysusers $(DESTDIR)$(PREFIX)/lib/sysusers.d/hvbench.conf
	for f in server.json worker.json; do \
	  [ -e $(DESTDIR)$(SYSCONFDIR)/hvbench/$$f ] || \
	    install -m 0640 deploy/etc/$$f $(DESTDIR)$(SYSCONFDIR)/hvbench/$$f; \
	done
	install -m 0644 $(BUILD)/man/hvbench.1 $(BUILD)/man/hvbench-advice.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(BUILD)/man/hvbench-server.8 $(BUILD)/man/hvbench-worker.8 \
	  $(DESTDIR)$(MANDIR)/man8/

# make man: the man pages from docs/man/*.scd (scdoc); make man-check: man
# finds nothing to warn about in them (part of make check).
.PHONY: man man-check
man: $(MAN_PAGES)
$(BUILD)/man/%: docs/man/%.scd
	@mkdir -p $(@D)
	scdoc <$< >$@.tmp && mv $@.tmp $@
man-check: $(MAN_PAGES)
	@for p in $(MAN_PAGES); do \
	  w=$$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l $$p 2>&1 >/dev/null); \
	  if [ -n "$$w" ]; then echo "man-check: $$p:"; echo "$$w"; exit 1; fi; \
	done; echo "man-check: $(words $(MAN_PAGES)) pages, no warnings"

clean:
	rm -rf build

# make bench-progs: the load generator bench/hvload.c (BENCHMARKS.md) and the
# programs the bench scripts start. make bench builds them, runs every
# benchmark (bench/all.sh: each writes bench/results/NAME.json) and rewrites
# the table at the top of BENCHMARKS.md (tools/bench-table.py).
HVLOAD := $(BUILD)/bench/hvload
# bench/enginerun.c runs a built-in engine in-process (bench/disk-vs-fio.sh,
# bench/cpu-stability.sh).
ENGINERUN := $(BUILD)/bench/enginerun
# bench/netrun.c runs one side of the net engine (bench/net-vs-iperf.sh).
NETRUN := $(BUILD)/bench/netrun
# bench/curlidle.c: the memory floor of a libcurl client (bench/worker_idle.sh).
CURLIDLE := $(BUILD)/bench/curlidle
# bench/plancheck.c: one plan's validation time (bench/abuse_plan.sh).
PLANCHECK := $(BUILD)/bench/plancheck
# tests/tools/slowclients.c: slow clients on loopback
# (tests/integration/test_slow_clients.sh).
SLOWCLIENTS := $(BUILD)/tools/slowclients
# bench/mhd_min.c: the minimal libmicrohttpd responder (bench/reads.sh).
MHDMIN := $(BUILD)/bench/mhd_min
# bench/rounds.c: rounds to a verdict under the stop rule, simulated
# (bench/rounds.sh); its core bench/roundsim.c is compiled into
# tests/unit/test_roundsim.c too.
ROUNDS := $(BUILD)/bench/rounds
# tests/tools/hookrecv.c: a webhook receiver (tests/integration/test_webhooks.sh).
HOOKRECV := $(BUILD)/tools/hookrecv
.PHONY: bench bench-progs test-tools
bench-progs: $(PROGS) $(HVLOAD) $(ENGINERUN) $(NETRUN) $(CURLIDLE) $(SLOWCLIENTS) $(MHDMIN) $(HOOKRECV) \
  $(PLANCHECK) $(ROUNDS)
bench: bench-progs
	BUILD=$(BUILD) bench/all.sh
test-tools: $(SLOWCLIENTS) $(HOOKRECV)

$(HOOKRECV): $(BUILD)/obj/tests/tools/hookrecv.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,libmicrohttpd jansson gnutls) $(LDLIBS_COMMON)

$(SLOWCLIENTS): $(BUILD)/obj/tests/tools/slowclients.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^

$(ENGINERUN): $(BUILD)/obj/bench/enginerun.o $(WORKER_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(PKGS_LIB)) $(LDLIBS_COMMON)

$(NETRUN): $(BUILD)/obj/bench/netrun.o $(WORKER_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(sort $(PKGS_WORKER) $(PKGS_LIB))) $(LDLIBS_COMMON)

$(MHDMIN): $(BUILD)/obj/bench/mhd_min.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,libmicrohttpd)

$(PLANCHECK): $(BUILD)/obj/bench/plancheck.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(PKGS_LIB)) $(LDLIBS_COMMON)

$(ROUNDS): $(BUILD)/obj/bench/rounds.o $(BUILD)/obj/bench/roundsim.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(PKGS_LIB)) $(LDLIBS_COMMON)

$(CURLIDLE): $(BUILD)/obj/bench/curlidle.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,libcurl)

$(HVLOAD): $(BUILD)/obj/bench/hvload.o $(BUILD)/obj/bench/hvload_opts.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pkg_libs,$(PKGS_LIB)) $(LDLIBS_COMMON)

# make fuzz: the libFuzzer targets fuzz/fuzz_<target>.c (fuzz/README.md),
# built by clang with AddressSanitizer and UndefinedBehaviorSanitizer into
# build/fuzz of their own: lib/ is compiled again there, never linked from
# the gcc objects. A new fuzz/fuzz_<target>.c is a new target by itself.
#   make fuzz [FUZZ_SECONDS=N] [FUZZ_TARGETS="plan units"]   N seconds each,
#        new inputs kept in build/fuzz/corpus/<target>
#   make fuzz-merge   fold build/fuzz/corpus into the committed fuzz/corpus
#   make fuzz-check   (make check) replay fuzz/corpus, then fuzz each target
#        for FUZZ_CHECK_SECONDS
FUZZ_CC            ?= clang
FUZZ_BUILD         := build/fuzz
FUZZ_SECONDS       ?= 60
FUZZ_CHECK_SECONDS ?= 3
FUZZ_TARGETS       ?= $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_SAN           := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS        := -O1 -g -fno-omit-frame-pointer -std=gnu11 $(WARN) -D_GNU_SOURCE -Ilib -I. \
                      -MMD -MP $(FUZZ_SAN) $(ALL_PKG_CFLAGS) $(if $(WERROR),-Werror)
FUZZ_LIB_A         := $(FUZZ_BUILD)/libhvbench.a
FUZZ_BINS          := $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(FUZZ_TARGETS))
.SECONDARY: $(patsubst %,$(FUZZ_BUILD)/obj/fuzz/fuzz_%.o,$(FUZZ_TARGETS)) $(FUZZ_BUILD)/obj/fuzz/fuzz.o

# lib/ with coverage for libFuzzer; the targets' own files need none.
$(FUZZ_BUILD)/obj/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BUILD)/obj/fuzz/%.o: fuzz/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_LIB_A): $(patsubst lib/%.c,$(FUZZ_BUILD)/obj/lib/%.o,$(LIB_SRC))
	@rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/obj/fuzz/fuzz_%.o $(FUZZ_BUILD)/obj/fuzz/fuzz.o $(FUZZ_LIB_A)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(call pkg_libs,$(PKGS_LIB)) $(LDLIBS_COMMON)

fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	fuzz/run.sh fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-check: $(FUZZ_BINS)
	fuzz/run.sh check $(FUZZ_CHECK_SECONDS) $(FUZZ_TARGETS)

fuzz-merge: $(FUZZ_BINS)
	fuzz/run.sh merge 0 $(FUZZ_TARGETS)

-include $(shell find $(BUILD)/obj $(FUZZ_BUILD)/obj -name '*.d' 2>/dev/null)
