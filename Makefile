# sluice build. `make` builds ./sluice; `make SAN=1` builds it with ASan+UBSan;
# `make test` runs unit and regression tests; `make run` starts the demo.

CC      ?= gcc
SAN     ?= 0
PKGS    := openssl libpcre2-8 lua5.4 libnghttp2 zlib
DEBIAN_BUILD_PKGS := gcc make pkg-config libssl-dev libpcre2-dev liblua5.4-dev \
                     libnghttp2-dev zlib1g-dev libcrypt-dev
DEBIAN_TEST_PKGS  := varnish socat python3 clang libclang-rt-14-dev curl chromium chromium-driver
DEBIAN_BENCH_PKGS := haproxy nginx wrk nghttp2-client

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
           -Wshadow=local -Wstrict-prototypes
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 $(WARN) -Iinclude -pthread -D_GNU_SOURCE $(PKG_CFLAGS)
LDLIBS  += $(PKG_LIBS) -lcrypt -pthread -lrt -lm
LDFLAGS += -rdynamic

ifeq ($(SAN),1)
OBJDIR  := obj-san
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
else
OBJDIR  := obj
endif

# EXCLUDE: source patterns left out (e.g. EXCLUDE='src/expr/%' while a
# module is being written next to a working tree).
SRCS    := $(filter-out $(EXCLUDE),$(shell find src -name '*.c' | sort))
OBJS    := $(SRCS:%.c=$(OBJDIR)/%.o)
LIBOBJS := $(filter-out $(OBJDIR)/src/main.o,$(OBJS))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=tests/unit/bin/%)

# Relink ./sluice when switching between plain and SAN builds.
$(shell echo "$(SAN)" | cmp -s - .build-mode 2>/dev/null || echo "$(SAN)" > .build-mode)

.PHONY: all deps test unit reg-tests run clean fuzz bench-deps bench

all: sluice

sluice: $(OBJS) .build-mode
	$(CC) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

$(OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

tests/unit/bin/%: tests/unit/%.c $(LIBOBJS) tests/unit/t.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBOBJS) $(LDLIBS)

BUILD_INFO := -DBUILD_CC='"$(CC)"' -DBUILD_CFLAGS='"$(filter-out -I% -D% -W%,$(CFLAGS))"'
$(OBJDIR)/src/main.o: CFLAGS += $(BUILD_INFO)

-include $(OBJS:.o=.d)

# Installs (as root) or names (otherwise) the Debian packages that are missing,
# then h2spec into tools/bin/ (never fails: without Go or network, the h2spec
# checks report themselves skipped with the reason).
deps:
	@sh scripts/deps.sh $(DEBIAN_BUILD_PKGS) $(DEBIAN_TEST_PKGS)
	@sh scripts/h2spec-install.sh

bench-deps:
	@sh scripts/deps.sh $(DEBIAN_BUILD_PKGS) $(DEBIAN_BENCH_PKGS)

# Benchmarks against HAProxy 2.6 (not part of `make test`).
bench: bench-deps
	@$(MAKE) --no-print-directory sluice
	python3 bench/bench.py $(BENCH_ARGS)

unit: $(UNIT_BINS) tests/stress/bin/tcpload

tests/stress/bin/tcpload: tests/stress/tcpload.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Werror -o $@ $<

test: deps
	@$(MAKE) --no-print-directory sluice unit
	@SAN=$(SAN) sh scripts/run-tests.sh

run: deps
	@$(MAKE) --no-print-directory sluice
	./sluice -d -f examples/proxy.cfg

fuzz:
	@$(MAKE) --no-print-directory -f fuzz/Makefile

clean:
	rm -rf obj obj-san sluice tests/unit/bin tests/stress/bin fuzz/bin .build-mode
