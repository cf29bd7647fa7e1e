# pulsarc — build, test and run.
#
# make deps      install the Debian packages the project needs (when missing)
# make           libpulsarc.a, libpulsarc.so, pulsarc.pc, the CLI and examples
# make test      unit tests, then the live-broker tests (starts and stops a broker)
# make run       a local broker, a producer and a consumer, figures printed
# make unit      unit tests only (no broker)
# make asan      unit + live tests built with ASan/UBSan
# make valgrind  unit tests under valgrind
# make tsan      unit tests + test_basic, test_consumer under ThreadSanitizer
# make install PREFIX=/usr/local
#
# Build options: WITH_TLS=0 (no OpenSSL), WITH_CURL=0 (no libcurl),
# WITH_ZSTD=0, WITH_SNAPPY=0 (optional codecs), WITH_CONNECTOR=0 (no
# source/sink/table layer: the client library alone; `make lib` only, the
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
LIB_SRCS := $(sort $(wildcard lib/*/*.c))
ifneq ($(WITH_TLS),1)
  LIB_SRCS := $(filter-out lib/net/transport_tls.c lib/net/auth_tls.c,$(LIB_SRCS))
endif
ifneq ($(WITH_CURL),1)
  LIB_SRCS := $(filter-out lib/admin/%,$(LIB_SRCS))
endif
ifneq ($(WITH_ZSTD),1)
  LIB_SRCS := $(filter-out lib/core/codec_zstd.c,$(LIB_SRCS))
endif
ifneq ($(WITH_SNAPPY),1)
  LIB_SRCS := $(filter-out lib/core/codec_snappy.c,$(LIB_SRCS))
endif
ifneq ($(WITH_CONNECTOR),1)
  LIB_SRCS := $(filter-out lib/connector/%,$(LIB_SRCS))
  ifneq ($(filter-out lib size clean %.a %.so %.pc,$(or $(MAKECMDGOALS),all)),)
    $(error WITH_CONNECTOR=0 builds the client library only (make lib): the CLI, examples and tests use the connector layer)
  endif
endif

PROTO_C := $(BUILD)/gen/PulsarApi.pb-c.c
PROTO_H := $(BUILD)/gen/PulsarApi.pb-c.h
LIB_OBJS := $(BUILD)/gen/PulsarApi.pb-c.o $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS))

STATIC := $(BUILD)/libpulsarc.a
SHARED := $(BUILD)/libpulsarc.so
PCFILE := $(BUILD)/pulsarc.pc

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

.PHONY: all lib deps test unit live run asan valgrind install clean check-env
.SUFFIXES:

all: lib $(EXAMPLE_BINS) $(if $(CMD_SRCS),$(CMD_BIN))
lib: $(STATIC) $(SHARED) $(PCFILE)

$(PROTO_C) $(PROTO_H): proto/PulsarApi.proto
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

$(BUILD)/test/%.o: test/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CPPFLAGS) -Itest/common $(CFLAGS) -c $< -o $@

TEST_COMMON_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(TEST_COMMON))

$(BUILD)/test/unit/%: test/unit/%.c $(STATIC) $(TEST_COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CPPFLAGS) -Itest/common -Itest/faults $(CFLAGS) $< $(TEST_COMMON_OBJS) -o $@ $(LDFLAGS) $(STATIC) $(PKG_LIBS) $(CHECK_LIBS)

$(BUILD)/test/integration/%: test/integration/%.c $(STATIC) $(TEST_COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CPPFLAGS) -Itest/common -Itest/faults $(CFLAGS) $< $(TEST_COMMON_OBJS) -o $@ $(LDFLAGS) $(STATIC) $(PKG_LIBS) $(CHECK_LIBS)

$(BUILD)/examples/%: examples/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LDFLAGS) $(STATIC) $(PKG_LIBS)

$(CMD_BIN): $(CMD_SRCS) $(STATIC)
	$(call say,LD,$@)$(CC) $(CPPFLAGS) $(CFLAGS) $(CMD_SRCS) -o $@ $(LDFLAGS) $(STATIC) $(PKG_LIBS)

# --- docs -----------------------------------------------------------------
.PHONY: docs
docs: docs/CONFIGURATION.md docs/CONNECTOR_CONFIGURATION.md
docs/CONNECTOR_CONFIGURATION.md: tools/gen_connector_doc.c lib/connector/connector_props.h $(STATIC)
	@mkdir -p $(BUILD)/tools
	$(call say,LD,$(BUILD)/tools/gen_connector_doc)$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $(BUILD)/tools/gen_connector_doc $(LDFLAGS) $(STATIC) $(PKG_LIBS)
	$(BUILD)/tools/gen_connector_doc > $@
docs/CONFIGURATION.md: tools/gen_config_doc.c lib/conf/props.h $(STATIC)
	@mkdir -p $(BUILD)/tools
	$(call say,LD,$(BUILD)/tools/gen_config_doc)$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $(BUILD)/tools/gen_config_doc $(LDFLAGS) $(STATIC) $(PKG_LIBS)
	$(BUILD)/tools/gen_config_doc > $@

# --- set-up ---------------------------------------------------------------
DEB_PKGS := build-essential pkg-config protobuf-c-compiler libprotobuf-c-dev \
            libssl-dev zlib1g-dev liblz4-dev libzstd-dev libsnappy-dev \
            libcurl4-openssl-dev libjson-c-dev check curl openssl valgrind \
            clang-14 libclang-rt-14-dev python3-venv musl-tools \
            openjdk-17-jdk-headless maven
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

unit: $(UNIT_BINS)
	@bash test/run-tests.sh $(UNIT_BINS)

# test_tls_mtls runs twice: on the shared broker (client certs optional) and on
# one that requires them (a broker-wide setting, so a broker of its own).
live: $(LIVE_BINS) all
	@$(BROKER) bash test/run-tests.sh $(LIVE_BINS)
	@PULSARC_BROKER_CONF_EXTRA=test/broker/mtls-required.conf $(BROKER) \
	  bash test/run-tests.sh $(BUILD)/test/integration/test_tls_mtls

test: deps
	$(MAKE) unit
	$(MAKE) live
	$(MAKE) cli-test

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

run: deps all
	@$(BROKER) bash examples/run-demo.sh $(BUILD)

asan:
	$(MAKE) BUILD=build-asan OPT='-O1 -g -fno-omit-frame-pointer' \
	  SAN='-fsanitize=address,undefined -fno-sanitize-recover=undefined' unit live

# ThreadSanitizer: unit tests, then test_basic, test_consumer, test_txn and test_sink on a broker,
# in build-tsan. A race makes the test program exit non-zero (TSan's
# exitcode 66), so it fails the run; TSAN_OPTIONS=log_path=... keeps reports.
TSAN_LIVE := test_basic test_consumer test_txn test_sink
.PHONY: tsan tsan-run
tsan:
	$(MAKE) BUILD=build-tsan OPT='-O1 -g -fno-omit-frame-pointer' SAN='-fsanitize=thread' tsan-run

tsan-run: $(UNIT_BINS) $(addprefix $(BUILD)/test/integration/,$(TSAN_LIVE))
	@export TSAN_OPTIONS="$${TSAN_OPTIONS:-second_deadlock_stack=1}"; st=0; \
	  bash test/run-tests.sh $(UNIT_BINS) || st=1; \
	  $(BROKER) bash test/run-tests.sh $(addprefix $(BUILD)/test/integration/,$(TSAN_LIVE)) || st=1; \
	  exit $$st

# The reliability issue's full-size scenarios: 1,000,000 messages under 100
# proxy cuts (dedup off and on) and 10 broker stop/starts (SIGTERM, SIGKILL).
LONG_LIVE := test_faults test_broker_churn
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

clean:
	rm -rf build build-asan build-tsan

-include $(patsubst %.o,%.d,$(LIB_OBJS))
.SECONDARY:

# Benchmarks: make bench-build (build/bench/*), make bench-run (bench/run.sh),
# make bench (both, then the client comparison on the replay server and live)
-include bench/Makefile.inc

# Code size (bench/size.sh): full and minimal (build-min) library, static example.
.PHONY: size bench-compare
size:
	@BUILD=$(BUILD) bash bench/size.sh

# pulsarc beside PyPI's pulsar-client on the replay server (bench/compare.sh).
bench-compare:
	@BUILD=$(BUILD) bash bench/compare.sh
