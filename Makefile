# pulsarc — build, test and run.
#
# make deps      install the Debian packages the project needs (when missing)
# make           libpulsarc.{a,so} (the client), libpulsarc-connector.{a,so}
#                (source/sink/table, on the client's public API), their .pc
#                files, the CLI and examples
# make test      deps, then unit tests, then the live-broker tests (starts and
#                stops a broker)
# make run       deps, then a local broker, a producer and a consumer, figures
#                printed
# make fresh-check  make run and make test in a fresh minimal Debian 12 root
#                (debootstrap, chroot; needs root): what a new machine sees
# make unit      unit tests only (no broker)
# make asan      unit + live tests built with ASan/UBSan
# make valgrind  unit tests under valgrind
# make structure call graph of lib/ by room, its circles, the biggest structs
# make tsan      unit tests + test_basic, test_consumer under ThreadSanitizer
# make install PREFIX=/usr/local
#
# Compiler and linker flags come from pkg-config when this file is read, so
# they are only right once the -dev packages are installed: `run` and `test`
# install them (deps) and then build in a new $(MAKE), which reads this file
# again. Every compile and link first checks (pkg-check) that pkg-config
# finds the packages, so a build without them stops with a message saying
# so instead of linking without their flags.
#
# Build options: WITH_TLS=0 (no OpenSSL), WITH_CURL=0 (no libcurl),
# WITH_ZSTD=0, WITH_SNAPPY=0 (optional codecs), WITH_CONNECTOR=0 (no
# source/sink/table library: the client library alone; `make lib` only, the
# CLI and the tests need the connector).

WITH_TLS    ?= 1
WITH_CONNECTOR ?= 1
WITH_CURL   ?= 1
WITH_ZSTD   ?= 1
WITH_SNAPPY ?= 1
PREFIX      ?= /usr/local
BUILD       ?= build
SAN         ?=

VERSION := 0.1.0
V ?= 0
ifeq ($(V),0)
  Q := @
  say = @printf '  %-6s %s\n' $(1) $(2);
else
  Q :=
  say =
endif
CC      ?= cc
OPT     ?= -O2 -g
# -Wno-format-truncation: diagnostics are snprintf'd into fixed buffers and
# cutting a long host name short there is intended, not a bug.
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-format-truncation \
               -fPIC -pthread -fvisibility=hidden $(OPT)
CPPFLAGS_BASE := -Iinclude -Ilib -I$(BUILD)/gen -DPULSARC_VERSION_STR=\"$(VERSION)\"

PKGS := libprotobuf-c zlib liblz4
FEATURES :=
ifeq ($(WITH_TLS),1)
  PKGS += openssl
  FEATURES += -DPULSARC_WITH_TLS=1
endif
ifeq ($(WITH_CURL),1)
  # json-c parses the admin API's answers (see lib/admin/json.c for why json-c).
  PKGS += libcurl json-c
  FEATURES += -DPULSARC_WITH_CURL=1
endif
ifeq ($(WITH_ZSTD),1)
  PKGS += libzstd
  FEATURES += -DPULSARC_WITH_ZSTD=1
endif
SNAPPY_LIBS :=
ifeq ($(WITH_SNAPPY),1)
  FEATURES += -DPULSARC_WITH_SNAPPY=1
  SNAPPY_LIBS := -lsnappy
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) $(SNAPPY_LIBS) -lpthread -lm

CFLAGS   += $(CFLAGS_BASE) $(SAN)
CPPFLAGS += $(CPPFLAGS_BASE) $(FEATURES) $(PKG_CFLAGS)
LDFLAGS  += $(SAN)

# Sources: every lib/ file, minus the ones an option turns off.
LIB_SRCS := $(sort $(wildcard lib/*/*.c lib/*/*/*.c))
ifneq ($(WITH_TLS),1)
  LIB_SRCS := $(filter-out lib/net/transport_tls.c lib/net/auth_tls.c $(filter-out lib/crypto/none.c,$(wildcard lib/crypto/*.c)),$(LIB_SRCS))
endif
ifneq ($(WITH_CURL),1)
  LIB_SRCS := $(filter-out lib/admin/% lib/net/auth_oauth2.c,$(LIB_SRCS))
endif
ifneq ($(WITH_ZSTD),1)
  LIB_SRCS := $(filter-out lib/core/codec_zstd.c,$(LIB_SRCS))
endif
ifneq ($(WITH_SNAPPY),1)
  LIB_SRCS := $(filter-out lib/core/codec_snappy.c,$(LIB_SRCS))
endif
# The connector is a library of its own on top of the client's public API.
CONN_SRCS := $(filter lib/connector/%,$(LIB_SRCS))
LIB_SRCS := $(filter-out lib/connector/%,$(LIB_SRCS))
ifneq ($(WITH_CONNECTOR),1)
  CONN_SRCS :=
  ifneq ($(filter-out lib size clean %.a %.so %.pc,$(or $(MAKECMDGOALS),all)),)
    $(error WITH_CONNECTOR=0 builds the client library only (make lib): the CLI, examples and tests use the connector layer)
  endif
endif

PROTO_C := $(BUILD)/gen/PulsarApi.pb-c.c
PROTO_H := $(BUILD)/gen/PulsarApi.pb-c.h
LIB_OBJS := $(BUILD)/gen/PulsarApi.pb-c.o $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS))
CONN_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(CONN_SRCS))
# Stateless helpers (errstr formatting, base64, crc32c, hashes, topic and URL
# syntax, configuration values, the property-table code) that both libraries
# carry a private copy of; never installed. test/check-connector-api.sh keeps the connector to these
# and the client's exported API.
CORE_OBJS := $(filter $(BUILD)/lib/core/%,$(LIB_OBJS)) $(BUILD)/lib/conf/value.o \
             $(BUILD)/lib/conf/table.o

STATIC := $(BUILD)/libpulsarc.a
SHARED := $(BUILD)/libpulsarc.so
PCFILE := $(BUILD)/pulsarc.pc
CORE_AR := $(BUILD)/libpulsarc-core.a
CONN_STATIC := $(if $(CONN_SRCS),$(BUILD)/libpulsarc-connector.a)
CONN_SHARED := $(if $(CONN_SRCS),$(BUILD)/libpulsarc-connector.so)
CONN_PCFILE := $(if $(CONN_SRCS),$(BUILD)/pulsarc-connector.pc)
# What a program using the connector links, connector first (static order).
LINK_LIBS := $(CONN_STATIC) $(STATIC)

UNIT_SRCS := $(sort $(wildcard test/unit/test_*.c))
UNIT_BINS := $(patsubst test/unit/%.c,$(BUILD)/test/unit/%,$(UNIT_SRCS))
LIVE_SRCS := $(sort $(wildcard test/integration/test_*.c))
LIVE_BINS := $(patsubst test/integration/%.c,$(BUILD)/test/integration/%,$(LIVE_SRCS))
# Shared by every test program: helpers, the fault proxy and the fake broker.
TEST_COMMON := $(sort $(wildcard test/common/*.c) $(wildcard test/faults/*.c))
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)

EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRCS))
CMD_SRCS := $(sort $(wildcard cmd/pulsarc/*.c))
CMD_BIN := $(BUILD)/pulsarc

.PHONY: all lib deps test unit live live-loop run asan valgrind install clean pkg-check pkg-check-tests
.SUFFIXES:

# Empty flags from a pkg-config that cannot find a package make the build
# fail much later, at link time, with undefined references: say what is
# missing before compiling anything.
pkg-check:
	@missing=""; \
	if command -v pkg-config >/dev/null; then \
	  for p in $(PKGS); do pkg-config --exists $$p || missing="$$missing $$p"; done; \
	else missing=" pkg-config"; fi; \
	command -v protoc-c >/dev/null || missing="$$missing protoc-c"; \
	if [ -n "$$missing" ]; then \
	  echo "pulsarc: not found:$$missing (pkg-config packages / tools). Run 'make deps' (Debian) or install them; 'make run' and 'make test' do it for you." >&2; \
	  exit 1; fi
pkg-check-tests: pkg-check
	@command -v pkg-config >/dev/null && pkg-config --exists check || { \
	  echo "pulsarc: the tests need Check (pkg-config finds no 'check'). Run 'make deps'." >&2; exit 1; }

$(PROTO_C) $(LIB_OBJS) $(SHARED) $(EXAMPLE_BINS) $(CMD_BIN): | pkg-check
$(UNIT_BINS) $(LIVE_BINS): | pkg-check-tests

all: lib $(EXAMPLE_BINS) $(if $(CMD_SRCS),$(CMD_BIN))
lib: $(STATIC) $(SHARED) $(PCFILE) $(CONN_STATIC) $(CONN_SHARED) $(CONN_PCFILE)

# One protoc-c run writes both (a grouped target: not run once per file, nor
# twice at once under -j).
$(PROTO_C) $(PROTO_H) &: proto/PulsarApi.proto
	@mkdir -p $(BUILD)/gen
	$(call say,PROTOC,$<)protoc-c --c_out=$(BUILD)/gen -Iproto proto/PulsarApi.proto

$(BUILD)/gen/PulsarApi.pb-c.o: $(PROTO_C)
	$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/lib/%.o: lib/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(STATIC): $(LIB_OBJS)
	@rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

$(SHARED): $(LIB_OBJS)
	$(call say,LD,$@)$(CC) -shared -Wl,-soname,libpulsarc.so.0 $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(PCFILE): Makefile
	@mkdir -p $(BUILD)
	@printf 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: pulsarc\nDescription: Apache Pulsar client in C\nVersion: %s\nRequires.private: %s\nLibs: -L$${libdir} -lpulsarc\nLibs.private: %s -lpthread -lm\nCflags: -I$${includedir}\n' \
	  '$(PREFIX)' '$(VERSION)' '$(PKGS)' '$(SNAPPY_LIBS)' > $@

$(CORE_AR): $(CORE_OBJS)
	@rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

$(CONN_STATIC): $(CONN_OBJS)
	@rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

# --no-undefined: a private client symbol has hidden visibility, so using one
# fails here. The client comes first so that its public functions are taken
# from it; the core archive then supplies the private helpers, which
# --exclude-libs keeps private to this library.
$(CONN_SHARED): $(CONN_OBJS) $(CORE_AR) $(SHARED)
	$(call say,LD,$@)$(CC) -shared -Wl,-soname,libpulsarc-connector.so.0 -Wl,--no-undefined \
	  -Wl,--exclude-libs,ALL $(LDFLAGS) -o $@ $(CONN_OBJS) $(SHARED) $(CORE_AR) -lpthread -lm

$(CONN_PCFILE): Makefile
	@mkdir -p $(BUILD)
	@printf 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: pulsarc-connector\nDescription: Flink-style source, sink and table connector on the pulsarc client\nVersion: %s\nRequires: pulsarc = %s\nLibs: -L$${libdir} -lpulsarc-connector\nCflags: -I$${includedir}\n' \
	  '$(PREFIX)' '$(VERSION)' '$(VERSION)' > $@

$(BUILD)/test/%.o: test/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CPPFLAGS) -Itest/common $(CFLAGS) -c $< -o $@

TEST_COMMON_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(TEST_COMMON))

$(BUILD)/test/unit/%: test/unit/%.c $(LINK_LIBS) $(TEST_COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CPPFLAGS) -Itest/common -Itest/faults $(CFLAGS) $< $(TEST_COMMON_OBJS) -o $@ $(LDFLAGS) $(LINK_LIBS) $(PKG_LIBS) $(CHECK_LIBS)

$(BUILD)/test/integration/%: test/integration/%.c $(LINK_LIBS) $(TEST_COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CPPFLAGS) -Itest/common -Itest/faults $(CFLAGS) $< $(TEST_COMMON_OBJS) -o $@ $(LDFLAGS) $(LINK_LIBS) $(PKG_LIBS) $(CHECK_LIBS)

# The event-loop examples link their loop library too (libuv1-dev,
# libevent-dev: in DEB_PKGS for these examples only).
EXAMPLE_LIBS_loop_uv := $(shell pkg-config --libs libuv 2>/dev/null || echo -luv)
EXAMPLE_LIBS_loop_event := $(shell pkg-config --libs libevent 2>/dev/null || echo -levent)

$(BUILD)/examples/%: examples/%.c $(LINK_LIBS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LDFLAGS) $(LINK_LIBS) $(PKG_LIBS) $(EXAMPLE_LIBS_$*)

$(CMD_BIN): $(CMD_SRCS) $(LINK_LIBS)
	$(call say,LD,$@)$(CC) $(CPPFLAGS) $(CFLAGS) $(CMD_SRCS) -o $@ $(LDFLAGS) $(LINK_LIBS) $(PKG_LIBS)

# --- docs -----------------------------------------------------------------
.PHONY: docs
docs: docs/CONFIGURATION.md docs/CONNECTOR_CONFIGURATION.md
$(BUILD)/tools/gen_config_doc: tools/gen_config_doc.c $(LINK_LIBS)
	@mkdir -p $(BUILD)/tools
	$(call say,LD,$@)$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LDFLAGS) $(LINK_LIBS) $(PKG_LIBS)
docs/CONFIGURATION.md: $(BUILD)/tools/gen_config_doc lib/conf/props.h
	$(BUILD)/tools/gen_config_doc client > $@
docs/CONNECTOR_CONFIGURATION.md: $(BUILD)/tools/gen_config_doc lib/connector/connector_props.h \
                                 lib/connector/table_props.h
	$(BUILD)/tools/gen_config_doc connector > $@

# --- set-up ---------------------------------------------------------------
# Besides the build: curl, openssl, ss (iproute2) and ps (procps) are used by
# the test broker's scripts, ca-certificates by Maven's download of the broker.
DEB_PKGS := build-essential pkg-config protobuf-c-compiler libprotobuf-c-dev \
            libssl-dev zlib1g-dev liblz4-dev libzstd-dev libsnappy-dev \
            libcurl4-openssl-dev libjson-c-dev check curl openssl valgrind \
            ca-certificates iproute2 procps \
            clang-14 libclang-rt-14-dev python3-venv musl-tools \
            openjdk-17-jdk-headless maven libuv1-dev libevent-dev
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if command -v java >/dev/null && command -v mvn >/dev/null; then \
	  missing=$$(echo "$$missing" | tr ' ' '\n' | grep -v -e '^openjdk' -e '^maven$$' | tr '\n' ' '); fi; \
	if [ -n "$$(echo $$missing | tr -d ' ')" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "deps: all present"; fi

# --- tests ----------------------------------------------------------------
BROKER := bash test/broker/run-with-broker.sh

unit: $(UNIT_BINS) check-connector-api
	@bash test/run-tests.sh $(UNIT_BINS)
	@bash test/tools/test_structure.sh

# Fails when libpulsarc-connector uses a client symbol the client does not export.
.PHONY: check-connector-api
check-connector-api: $(CONN_OBJS) $(CONN_SHARED) $(SHARED) $(STATIC) $(CORE_AR)
	@$(if $(CONN_SRCS),BUILD=$(BUILD) bash test/check-connector-api.sh $(CONN_OBJS),true)

# test_tls_mtls runs twice: on the shared broker (client certs optional) and on
# one that requires them (a broker-wide setting, so a broker of its own).
live: $(LIVE_BINS) all
	@$(BROKER) bash test/run-tests.sh $(LIVE_BINS)
	@PULSARC_BROKER_CONF_EXTRA=test/broker/mtls-required.conf $(BROKER) \
	  bash test/run-tests.sh $(BUILD)/test/integration/test_tls_mtls

test: deps
	$(MAKE) unit
	$(MAKE) live
	$(MAKE) live-loop
	$(MAKE) cli-test

# The producer and consumer suites again with threadingMode=loop clients,
# each stepped by a driver thread of the test (PULSARC_TEST_LOOP_MODE, see
# test/common/testutil.h), then the one-threaded epoll, libuv and libevent examples.
LOOP_LIVE := test_producer test_producer_waits test_consumer test_consumer_batches test_producer_partitioned test_multi_topic \
             test_receive_async
.PHONY: live-loop
live-loop: $(addprefix $(BUILD)/test/integration/,$(LOOP_LIVE)) all
	@$(BROKER) bash -c 'PULSARC_TEST_LOOP_MODE=1 bash test/run-tests.sh $(addprefix $(BUILD)/test/integration/,$(LOOP_LIVE)) && \
	  $(BUILD)/examples/loop_epoll "$$PULSAR_SERVICE_URL" 10000 && \
	  $(BUILD)/examples/loop_uv "$$PULSAR_SERVICE_URL" 10000 && \
	  $(BUILD)/examples/loop_event "$$PULSAR_SERVICE_URL" 10000'

# libFuzzer targets, each for FUZZ_SECONDS (default 30); needs clang-14.
.PHONY: fuzz
fuzz:
	@bash test/fuzz/run.sh

# Every libFuzzer target for 10 million inputs (FUZZ_RUNS), no time limit:
# hours on two cores. Prints inputs run per target; exits 1 on any finding.
.PHONY: fuzz-long
fuzz-long:
	@FUZZ_SECONDS=0 FUZZ_RUNS=$${FUZZ_RUNS:-10000000} bash test/fuzz/run.sh

.PHONY: cli-test
cli-test: all
	@PULSARC_CLI_SKIP_BUILD=1 PULSARC_CLI=$(BUILD)/pulsarc $(BROKER) bash test/cli/test_cli.sh

# --- other Pulsar releases ------------------------------------------------
# make test-versions: the live suites (with the mTLS broker) and the CLI
# suite against each release in PULSAR_VERSIONS: the oldest supported LTS
# line and the newest release the Maven registry serves, beside the default
# that test/broker/pom.xml names (make test). PULSAR_VERSION reaches
# test/broker/fetch.sh, which keeps one classpath per release. Every suite
# runs even when an earlier one failed; a summary closes the run.
PULSAR_VERSIONS ?= 3.3.2 4.2.4
.PHONY: test-versions
test-versions: $(LIVE_BINS) all
	@st=0; sum=""; \
	for v in $(PULSAR_VERSIONS); do \
	  for suite in live cli-test; do \
	    echo "===== Pulsar $$v: make $$suite"; \
	    if PULSAR_VERSION=$$v $(MAKE) --no-print-directory $$suite; then r=passed; \
	    else r=FAILED; st=1; fi; \
	    sum="$$sum  Pulsar $$v, $$suite: $$r\n"; \
	  done; \
	done; \
	printf 'test-versions:\n%b' "$$sum"; exit $$st

# A new make for the build: this one's flags were computed before deps ran.
run: deps
	@$(MAKE) --no-print-directory all
	@$(BROKER) bash examples/run-demo.sh $(BUILD)

# The README's make run and make test, first time, in a minimal Debian 12
# root made with debootstrap (root needed): see test/fresh/fresh-check.sh.
.PHONY: fresh-check
fresh-check:
	@bash test/fresh/fresh-check.sh

asan:
	$(MAKE) BUILD=build-asan OPT='-O1 -g -fno-omit-frame-pointer' \
	  SAN='-fsanitize=address,undefined -fno-sanitize-recover=undefined' unit live

# ThreadSanitizer: unit tests, then test_basic, test_consumer, test_producer_waits
# (senders blocked in line while close and receipts hand slots out), test_txn, test_sink,
# test_peer_close_inflight (close with everything in flight), test_tableview
# (a reader thread per partition, close from another thread),
# test_interceptors (hooks on application and callback threads, close hooks
# after the last one), test_loop_mode (callbacks on the stepping thread) and
# test_receive_async (messages handed from the io thread to waiting receivers)
# on a broker, in build-tsan. A race makes the test program exit non-zero
# (TSan's exitcode 66), so it fails the run; TSAN_OPTIONS=log_path=... keeps reports.
TSAN_LIVE := test_basic test_consumer test_producer_waits test_txn test_sink test_peer_close_inflight test_tableview test_connector_parallel test_interceptors test_loop_mode \
             test_receive_async
.PHONY: tsan tsan-run
tsan:
	$(MAKE) BUILD=build-tsan OPT='-O1 -g -fno-omit-frame-pointer' SAN='-fsanitize=thread' tsan-run

tsan-run: $(UNIT_BINS) $(addprefix $(BUILD)/test/integration/,$(TSAN_LIVE))
	@export TSAN_OPTIONS="$${TSAN_OPTIONS:-second_deadlock_stack=1}"; st=0; \
	  bash test/run-tests.sh $(UNIT_BINS) || st=1; \
	  $(BROKER) bash test/run-tests.sh $(addprefix $(BUILD)/test/integration/,$(TSAN_LIVE)) || st=1; \
	  exit $$st

# The reliability issue's full-size scenarios: 1,000,000 messages under 100
# proxy cuts (dedup off and on) and 10 broker stop/starts (SIGTERM, SIGKILL);
# 10,000 client/producer/consumer create-close cycles with traffic; a
# consumer's flow permits across 2 broker restarts.
LONG_LIVE := test_faults test_broker_churn test_peer_cycles test_peer_resume test_peer_lookups
.PHONY: long
long: $(addprefix $(BUILD)/test/integration/,$(LONG_LIVE))
	@$(BROKER) env PULSARC_LONG=1 bash test/run-tests.sh $^

valgrind: $(UNIT_BINS)
	@VALGRIND=1 bash test/run-tests.sh $(UNIT_BINS)

install: lib
	install -d $(DESTDIR)$(PREFIX)/include/pulsarc $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/pulsarc.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(wildcard include/pulsarc/*.h) $(DESTDIR)$(PREFIX)/include/pulsarc/
	install -m 644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED) $(DESTDIR)$(PREFIX)/lib/libpulsarc.so.0
	ln -sf libpulsarc.so.0 $(DESTDIR)$(PREFIX)/lib/libpulsarc.so
	@rm -f $(PCFILE) && $(MAKE) --no-print-directory $(PCFILE) PREFIX=$(PREFIX)
	install -m 644 $(PCFILE) $(DESTDIR)$(PREFIX)/lib/pkgconfig/
ifneq ($(CONN_SRCS),)
	install -m 644 $(CONN_STATIC) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(CONN_SHARED) $(DESTDIR)$(PREFIX)/lib/libpulsarc-connector.so.0
	ln -sf libpulsarc-connector.so.0 $(DESTDIR)$(PREFIX)/lib/libpulsarc-connector.so
	@rm -f $(CONN_PCFILE) && $(MAKE) --no-print-directory $(CONN_PCFILE) PREFIX=$(PREFIX)
	install -m 644 $(CONN_PCFILE) $(DESTDIR)$(PREFIX)/lib/pkgconfig/
endif

clean:
	rm -rf build build-asan build-tsan

-include $(patsubst %.o,%.d,$(LIB_OBJS) $(CONN_OBJS))
.SECONDARY:

# Benchmarks: make bench-build (build/bench/*), make bench-run (bench/run.sh),
# make bench (both, then the client comparison on the replay server and live)
-include bench/Makefile.inc

# The shape of lib/ from the objects just built: file -> file edges by room,
# edges that go up the layer map, circles (strongly connected components),
# the structs with the most fields. On another tree or build:
# python3 tools/structure.py --build OTHER/build --src OTHER
# STRUCTURE_ARGS passes options (--symbols, --no-edges, --top N).
.PHONY: structure
structure: $(LIB_OBJS) $(CONN_OBJS)
	@python3 tools/structure.py --build $(BUILD) --src . $(STRUCTURE_ARGS)

# Code size (bench/size.sh): full and minimal (build-min) library, static example.
.PHONY: size bench-compare
size:
	@BUILD=$(BUILD) bash bench/size.sh

# pulsarc beside PyPI's pulsar-client on the replay server (bench/compare.sh).
bench-compare:
	@BUILD=$(BUILD) bash bench/compare.sh

# --- the three-broker cluster (test/cluster) ---------------------------------
# make test-cluster: start a cluster (ZooKeeper, a bookie, three brokers and a
# pulsar-proxy, from Maven like the standalone), run the live suites that make
# sense on a cluster and test_cluster once per pass (against broker 1, through
# the proxy, with broker 1's http:// URL; PULSARC_CLUSTER_PASSES picks), then
# always stop it. Left out: test_broker_churn (restarts the
# standalone) and test_faults (its fault proxy fronts one broker only).
CLUSTER_LIVE := test_admin test_auth test_basic test_consumer test_consumer_batches \
  test_consumer_chunks test_dead_letter test_multi_topic test_producer test_producer_chunking \
  test_producer_errors test_producer_interop test_producer_partitioned test_producer_reconnect \
  test_schema test_sink test_source test_source_txn test_tls test_tls_mtls test_txn
# Long: topic ownership moved and the proxy restarted under load (200,000
# messages each, about 5 min per pass), and transactions across brokers with
# the coordinator's broker killed (about 2 min per pass). In the full run only: a command-line CLUSTER_LIVE (CI's
# short run) leaves it out unless CLUSTER_LONG is given too.
CLUSTER_LONG ?= $(if $(filter command line,$(origin CLUSTER_LIVE)),,test_cluster_moves test_cluster_txn)
CLUSTER_BINS := $(addprefix $(BUILD)/test/cluster/,test_cluster test_cluster_faults $(CLUSTER_LONG)) \
  $(addprefix $(BUILD)/test/integration/,$(CLUSTER_LIVE))
.PHONY: test-cluster
test-cluster: $(CLUSTER_BINS)
	@bash test/cluster/run-with-cluster.sh bash test/cluster/run-suites.sh $(CLUSTER_BINS)

$(BUILD)/test/cluster/%: test/cluster/%.c $(STATIC) $(TEST_COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CPPFLAGS) -Itest/common $(CFLAGS) $< $(TEST_COMMON_OBJS) -o $@ $(LDFLAGS) $(STATIC) $(PKG_LIBS) $(CHECK_LIBS)
