# SPDX-License-Identifier: MIT
#
# wafer top-level build.
#
#   make            set up the machine if needed, build wafer.ko, libwafer,
#                   the wafer CLI, libwfsim and every test program
#   make test       build, then run every test tier; ends with "N passed, M failed"
#   make demo       build, boot the test VM and run the shared model through
#                   the kernel driver
#   make mutation [MUTANTS=REGEX]
#                   how many plausible bugs the unit tests catch: each mutant
#                   of tests/mutation/mutants applied to a scratch copy of the
#                   tree, rebuilt and run against the tests it names; prints
#                   "N of M mutants killed" (a tool, not part of make test)
#   make module KDIR=/lib/modules/$(uname -r)/build
#                   build wafer.ko for your own (>= 6.12) kernel
#   make dkms-install [DESTDIR=]
#                   the module's source into /usr/src/wafer-VERSION and
#                   dkms add/build/install (dkms-src: the source only)
#   make install [DESTDIR=] [PREFIX=/usr/local]
#                   install the wafer CLI, libwafer, its header and .pc file,
#                   the udev rule that gives group "wafer" the devices,
#                   the systemd unit wafer-serve.service with its sysusers.d
#                   entry and /etc/default/wafer-serve, the man pages and
#                   the bash completion
#
# Everything is written under $(BUILD) (default build/).

BUILD   ?= build
CC      := gcc
CLANG   ?= clang
V       ?= 0

Q := $(if $(filter 1,$(V)),,@)
TOP := $(CURDIR)
B := $(TOP)/$(BUILD)

include firmware-sim/sources.mk

# The release, as dkms.conf names it (wafer --version).
WAFER_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

# ---------------------------------------------------------------- flags ----
WARN      := -Wall -Wextra -Werror
CSTD      := -std=c11
DEPFLAGS   = -MMD -MP
DRM_CFLAGS := $(shell pkg-config --cflags libdrm 2>/dev/null)
DRM_LIBS   := $(shell pkg-config --libs libdrm 2>/dev/null || echo -ldrm)
JSON_CFLAGS := $(shell pkg-config --cflags json-c 2>/dev/null)
JSON_LIBS  := $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
# wafer serve's HTTP server, and the HTTP client of its tests.
MHD_LIBS   := $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)
CURL_LIBS  := $(shell pkg-config --libs libcurl 2>/dev/null || echo -lcurl)
# libwafer's host-to-host link (userlib/wafer_link.h) when rdma-core is
# there; RDMA=0 builds without it (the link's calls then fail and say so).
RDMA       ?= $(shell pkg-config --exists libibverbs librdmacm 2>/dev/null && echo 1 || echo 0)
ifeq ($(RDMA),1)
RDMA_CFLAGS := -DWAFER_HAVE_RDMA $(shell pkg-config --cflags libibverbs librdmacm)
RDMA_LIBS  := $(shell pkg-config --libs libibverbs librdmacm)
# ibv_reg_dmabuf_mr (rdma-core 34): the link registers the device's own BOs
# where the NIC can; without it, udmabuf slots always.
RDMA_CFLAGS += $(shell grep -qs ibv_reg_dmabuf_mr \
	$$(pkg-config --variable=includedir libibverbs)/infiniband/verbs.h && \
	echo -DWAFER_HAVE_REG_DMABUF)
endif

# firmware-sim in userspace: the same freestanding sources as in wafer.ko,
# optimised so the matmul loops vectorise.
# Each layer's files see their own folder and the layers below
# (firmware-sim/sources.mk).
WFS_CFLAGS  := $(CSTD) -O3 -g -fPIC $(WARN)
wfs_inc = $(addprefix -Ifirmware-sim/,$(WFS_INC_$(1)))
$(foreach l,$(WFS_LAYERS),$(eval $(B)/obj/firmware-sim/$(l)/%.o: WFS_CFLAGS += $(call wfs_inc,$(l))))
# libwafer and the CLI: of firmware-sim only the ABI, its host half and the
# model layer; the tests see every layer.
USER_CFLAGS := $(CSTD) -D_GNU_SOURCE -O2 -g $(WARN) -Iuapi -Iuserlib \
	$(addprefix -Ifirmware-sim/,$(WFS_INC_LIBWAFER)) -Itests/common $(DRM_CFLAGS) $(JSON_CFLAGS) $(RDMA_CFLAGS)
$(B)/obj/tests/%.o: USER_CFLAGS += $(call wfs_inc,host)
# Objects depend on the flags they are compiled with: a header moved to
# another folder changes the include path, not the source, and the
# dependency files (-MP) would keep the object compiled against the old one.
FLAGS_STAMP := $(B)/obj/.flags-$(shell printf '%s' '$(WFS_CFLAGS) $(USER_CFLAGS) \
	$(foreach l,$(WFS_LAYERS) LIBWAFER,$(WFS_INC_$(l)))' | sha1sum | cut -c1-12)

# ------------------------------------------------------------- sources ----
WFS_SRCS     := $(addprefix firmware-sim/,$(WFS_COMMON_SRCS) $(WFW_HOST_SRCS) $(WFS_USER_SRCS))
WFS_OBJS     := $(WFS_SRCS:%.c=$(B)/obj/%.o)
TOOLS_OBJS   := $(WFS_PACK_SRCS:%.c=$(B)/obj/firmware-sim/%.o)
COMMON_OBJS  := $(patsubst %.c,$(B)/obj/%.o,$(wildcard tests/common/*.c))
LIBWAFER_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(wildcard userlib/lib/*.c userlib/lib/backends/*.c))
CLI_OBJS     := $(patsubst %.c,$(B)/obj/%.o,$(wildcard userlib/cli/*.c))

UNIT_TESTS   := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(wildcard tests/unit/*.c))
VM_PROGS     := $(patsubst tests/vm/progs/%.c,$(B)/tests/vm/%,$(wildcard tests/vm/progs/*.c))
BENCHES      := $(patsubst tests/bench/%.c,$(B)/tests/bench/%,$(wildcard tests/bench/*.c))
FUZZERS      := $(patsubst tests/fuzz/%.c,$(B)/tests/fuzz/%,$(wildcard tests/fuzz/*.c))

LIBWFSIM  := $(B)/lib/libwfsim.a
LIBWAFER_A := $(B)/lib/libwafer.a
LIBWAFER_SO := $(B)/lib/libwafer.so
WAFER_CLI := $(B)/bin/wafer

# The CLI's man pages, generated from its --help by help2man.
MAN_PAGES := $(addprefix $(B)/man/,wafer.1 $(patsubst %,wafer-%.1,list info run bench top plan serve convert node))

USERSPACE := $(LIBWFSIM) $(LIBWAFER_A) $(LIBWAFER_SO) $(WAFER_CLI) $(MAN_PAGES) \
	$(UNIT_TESTS) $(VM_PROGS) $(BENCHES) $(FUZZERS) $(B)/lib/pkgconfig/wafer.pc

.PHONY: all setup module module-debug userspace test unit fuzz kunit vm demo bench bench-kflags prefixes \
	layers layers-selftest doc-paths doc-paths-selftest \
	checkpatch sparse install clean
all: module userspace

# Keep objects make considers intermediate (the test programs are linked from them).
.SECONDARY:

# Idempotent: installs missing apt packages and caches Debian's kernel.
setup:
	$(Q)tests/setup/setup

# A second make, so that flags from pkg-config see what setup installed.
userspace: setup
	$(Q)$(MAKE) --no-print-directory userspace-build

.PHONY: userspace-build
userspace-build: $(USERSPACE)
	@:

# ---------------------------------------------------------------- module --
# Kbuild writes objects next to its sources, so it builds in a shadow tree
# of symlinks under $(BUILD)/kbuild; the source tree stays clean.
KBUILD_TREE := $(B)/kbuild
KBUILD_ARGS ?= W=1

# kbuild_module TREE KDIR OUT: build wafer.ko in shadow TREE against KDIR.
define kbuild_module
	$(Q)mkdir -p $(1) $(dir $(3))
	$(Q)find $(1) -type l -delete
	$(Q)cp -rs $(TOP)/Kbuild $(TOP)/kmod $(TOP)/firmware-sim $(TOP)/uapi $(1)/
	+$(Q)kdir="$(2)" && $(MAKE) --no-print-directory -C "$$kdir" M=$(1) $(KBUILD_ARGS) modules
	$(Q)cp $(1)/wafer.ko $(3)
	@echo "  built $(3:$(TOP)/%=%)"
endef

module: setup
	$(call kbuild_module,$(KBUILD_TREE),$${KDIR:-$$(tests/setup/setup --print-kdir)},$(B)/wafer.ko)

# The same module for the debug kernel (built first if needed, ~15 min once).
module-debug: setup
	$(call kbuild_module,$(B)/kbuild-debug,$$(tests/setup/debug-kernel --print-dir)/build,$(B)/debug/wafer.ko)

sparse: KBUILD_ARGS += C=2
sparse: module

# checkpatch.pl comes from the linux-source tree (the headers lack it).
# PREFER_DEFINED_ATTRIBUTE_MACRO: firmware-sim's userspace build has no
# __printf(), so its compat branch spells the attribute out (wfs_os.h).
# The packer (model/wfs_pack.*) is userspace code, outside the kernel's rules.
CHECKPATCH_FILES = $(filter-out firmware-sim/model/wfs_pack.%, \
	$(wildcard kmod/*.c kmod/*.h kmod/tests/*.c firmware-sim/*/*.c firmware-sim/*/*.h)) \
	uapi/drm/wafer_accel.h
# libwafer and the CLI as built where pkg-config finds no rdma-core (RDMA=0,
# in $(BUILD)/no-rdma): everything builds, and the link's calls say why
# they fail (docs/SCALE-OUT.md).
.PHONY: no-rdma
no-rdma: setup
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/no-rdma RDMA=0 \
		$(B)/no-rdma/bin/wafer $(B)/no-rdma/tests/unit/userlib_link_wire
	$(Q)$(B)/no-rdma/tests/unit/userlib_link_wire
	$(Q)out=$$($(B)/no-rdma/bin/wafer bench --link-loopback 127.0.0.1 2>&1); \
		case $$out in *"libwafer was built without RDMA"*) echo "ok - $$out" ;; \
		*) echo "not ok - wafer bench --link without RDMA: $$out"; exit 1 ;; esac

# One prefix per layer (docs/ARCHITECTURE.md).
prefixes:
	$(Q)tests/lint/prefixes

# The layers of firmware-sim, libwafer and the CLI, and wafer.ko's
# includes: no include or call circle, no reach across a layer
# (tests/lint/layers); and that check fails on each of them.
layers layers-selftest: $(WFS_OBJS) $(TOOLS_OBJS) $(LIBWAFER_OBJS) $(CLI_OBJS)
	$(Q)tests/lint/$@

# Every path the pages (README.md, docs/) name is in the tree.
doc-paths doc-paths-selftest:
	$(Q)tests/lint/$@

# A few files per checkpatch.pl, one at a time per core (serial, it took
# minutes of the lint tier).
checkpatch:
	$(Q)src="$$(tests/setup/setup --print-source)" && \
		printf '%s\n' $(CHECKPATCH_FILES) | xargs -P "$$(nproc)" -n 8 \
		"$$src/scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG,PREFER_DEFINED_ATTRIBUTE_MACRO \
		-f

# ------------------------------------------------------------ userspace --
$(FLAGS_STAMP):
	@mkdir -p $(@D) && rm -f $(B)/obj/.flags-* && touch $@

$(B)/obj/firmware-sim/%.o: firmware-sim/%.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(Q)$(CC) $(WFS_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(B)/obj/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -fPIC $(DEPFLAGS) -c $< -o $@

# The fp32 reference stands in for llama2.c's `run` in make bench: -O3 as
# llama2.c builds it (no -ffast-math: the tests' numerics are unchanged).
$(B)/obj/tests/common/ref_llama.o: USER_CFLAGS += -O3
$(B)/obj/tests/common/ref_moe.o: USER_CFLAGS += -O3

$(B)/obj/userlib/cli/cli_main.o: USER_CFLAGS += -DCLI_VERSION='"$(WAFER_VERSION)"'
$(B)/obj/userlib/cli/cli_main.o: dkms.conf

# wafer serve's web page: userlib/web/ compiled in (.incbin, unseen by -MMD).
$(B)/obj/userlib/cli/cli_serve_web.o: $(wildcard userlib/web/*)

$(LIBWFSIM): $(WFS_OBJS)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

# libwafer's converter is firmware-sim's host-side packer (model/wfs_pack.c).
$(LIBWAFER_A): $(LIBWAFER_OBJS) $(TOOLS_OBJS)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

# The shared library also carries the in-process backend (firmware-sim);
# it exports wafer.h's functions only (userlib/libwafer.map).
$(LIBWAFER_SO): $(LIBWAFER_OBJS) $(TOOLS_OBJS) $(WFS_OBJS) userlib/libwafer.map
	@mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libwafer.so.0 -Wl,--version-script=userlib/libwafer.map \
		-o $@.0 $(filter %.o,$^) $(DRM_LIBS) $(JSON_LIBS) $(RDMA_LIBS) -luring -lnuma -lpthread -lm
	$(Q)ln -sf libwafer.so.0 $@

$(B)/lib/pkgconfig/wafer.pc: userlib/wafer.pc.in
	@mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(B)|' $< >$@

USER_LIBS := $(LIBWAFER_A) $(LIBWFSIM) $(DRM_LIBS) $(JSON_LIBS) $(RDMA_LIBS) -luring -lnuma -lpthread -lm

$(WAFER_CLI): $(CLI_OBJS) $(LIBWAFER_A) $(LIBWFSIM)
	@mkdir -p $(@D)
	$(Q)$(CC) -o $@ $(CLI_OBJS) $(USER_LIBS) $(MHD_LIBS)

$(MAN_PAGES) &: $(WAFER_CLI) userlib/man/mkman
	$(Q)userlib/man/mkman $(WAFER_CLI) $(B)/man

TEST_DEPS := $(COMMON_OBJS) $(TOOLS_OBJS) $(LIBWAFER_A) $(LIBWFSIM)

# libcurl: tests/common/wt_http.c talks to wafer serve.
link_test = $(CC) -o $@ $< $(COMMON_OBJS) $(TOOLS_OBJS) $(USER_LIBS) $(CURL_LIBS)

$(B)/tests/unit/%: $(B)/obj/tests/unit/%.o $(TEST_DEPS)
	@mkdir -p $(@D)
	$(Q)$(link_test)

# wafer top's /proc and /metrics readers, alone.
TOP_OBJS := $(B)/obj/userlib/cli/cli_top_procs.o $(B)/obj/userlib/cli/cli_top_http.o
$(B)/tests/unit/userlib_top: $(B)/obj/tests/unit/userlib_top.o $(TOP_OBJS) $(TEST_DEPS)
	@mkdir -p $(@D)
	$(Q)$(CC) -o $@ $< $(TOP_OBJS) $(COMMON_OBJS) $(TOOLS_OBJS) $(USER_LIBS) $(CURL_LIBS)

$(B)/tests/bench/%: $(B)/obj/tests/bench/%.o $(TEST_DEPS)
	@mkdir -p $(@D)
	$(Q)$(link_test)

# Programs the VM tier runs inside the guest.
$(B)/tests/vm/%: $(B)/obj/tests/vm/progs/%.o $(TEST_DEPS)
	@mkdir -p $(@D)
	$(Q)$(link_test)

# The conformance program: conformance.c and its ioctl groups
# (tests/vm/progs/conformance/*.c) linked together.
CONFORMANCE_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(wildcard tests/vm/progs/conformance/*.c))
$(B)/tests/vm/conformance: $(B)/obj/tests/vm/progs/conformance.o $(CONFORMANCE_OBJS) $(TEST_DEPS)
	@mkdir -p $(@D)
	$(Q)$(CC) -o $@ $< $(CONFORMANCE_OBJS) $(COMMON_OBJS) $(TOOLS_OBJS) $(USER_LIBS) $(CURL_LIBS)

# The uapi fuzzer: uapi_fuzz.c and its ioctl groups
# (tests/vm/progs/uapi_fuzz/*.c) linked together.
UAPI_FUZZ_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(wildcard tests/vm/progs/uapi_fuzz/*.c))
$(B)/tests/vm/uapi_fuzz: $(B)/obj/tests/vm/progs/uapi_fuzz.o $(UAPI_FUZZ_OBJS) $(TEST_DEPS)
	@mkdir -p $(@D)
	$(Q)$(CC) -o $@ $< $(UAPI_FUZZ_OBJS) $(COMMON_OBJS) $(TOOLS_OBJS) $(USER_LIBS) $(CURL_LIBS)

# libFuzzer harnesses: clang with ASan/UBSan over the firmware-sim sources
# and libwafer's in-process DMA and ring bring-up (tests/unit/device_harness.h).
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	$(call wfs_inc,host) -Itests/common -Iuserlib
FUZZ_SRCS := $(WFS_SRCS) userlib/lib/backends/wafer_inproc_dma.c
$(B)/tests/fuzz/%: tests/fuzz/%.c $(FUZZ_SRCS) $(wildcard firmware-sim/*/*.h userlib/lib/backends/wafer_inproc_*.h) \
		tests/unit/device_harness.h
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRCS) -lpthread

# wafer serve's request parser, alone: its JSON file, the tokenizer, json-c.
FUZZ_SERVE_SRCS := userlib/cli/cli_serve_api.c userlib/cli/cli_serve_template.c \
	userlib/cli/cli_serve_logprobs.c userlib/lib/wafer_tokenizer.c \
	userlib/lib/wafer_error.c
$(B)/tests/fuzz/fuzz_serve: tests/fuzz/fuzz_serve.c $(FUZZ_SERVE_SRCS) userlib/cli/cli_serve.h \
		userlib/wafer.h $(wildcard userlib/wafer/*.h) userlib/lib/wafer_internal.h
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -std=c11 -D_GNU_SOURCE -Iuapi $(JSON_CFLAGS) -o $@ $< \
		$(FUZZ_SERVE_SRCS) $(JSON_LIBS) -lpthread -lm

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

# ---------------------------------------------------------------- tests ---
# tests/run runs the tiers and prints the one summary line.  The build
# takes one job per core whatever -j make was given (CI runs plain
# `make test`): serial, it was minutes of the test budget.
test:
	$(Q)$(MAKE) --no-print-directory -j$$(nproc) all module-debug
	$(Q)tests/run unit fuzz lint kunit vm vm-debug

unit: userspace
	$(Q)tests/run unit fuzz

# Hours of fuzzing (tests/run's fuzz tier runs each harness briefly): every
# harness for FUZZ_LONG_SECS (default 2 h) in turn, its corpus kept across
# runs in $(BUILD)/fuzz-corpus/<harness>, what it finds in
# $(BUILD)/fuzz-crashes/<harness>; FUZZ_LONG=fuzz_load runs one.
FUZZ_LONG_SECS ?= 7200
FUZZ_LONG ?= $(notdir $(FUZZERS))
.PHONY: fuzz-long
fuzz-long: $(addprefix $(B)/tests/fuzz/,$(FUZZ_LONG))
	$(Q)for f in $(FUZZ_LONG); do \
		mkdir -p $(B)/fuzz-corpus/$$f $(B)/fuzz-crashes/$$f && \
		echo "  FUZZ    $$f for $(FUZZ_LONG_SECS) s" && \
		$(B)/tests/fuzz/$$f -max_total_time=$(FUZZ_LONG_SECS) -rss_limit_mb=2048 \
			-max_len=65536 -print_final_stats=1 \
			-artifact_prefix=$(B)/fuzz-crashes/$$f/ $(B)/fuzz-corpus/$$f || exit 1; \
	done

kunit: setup
	$(Q)tests/run kunit

vm: all
	$(Q)tests/run vm

vm-debug: all module-debug
	$(Q)tests/run vm-debug

bench: userspace
	$(Q)for b in $(BENCHES); do echo "== $$b"; $$b || exit 1; done

# bench_forward with firmware-sim built with the userspace flags and with
# the kernel's code-generation flags (docs/PERF.md, "Firmware built with the
# kernel's flags").
bench-kflags: setup
	$(Q)BUILD=$(BUILD) tests/bench/kflags

demo: all
	$(Q)tests/demo

# tests/mutation/run: usage in its header.
.PHONY: mutation
mutation:
	$(Q)BUILD=$(BUILD) tests/mutation/run '$(MUTANTS)'

# -------------------------------------------------------------- install ---
# udev reads rules from /lib/udev/rules.d, not from under $(PREFIX); an
# admin's copy in /etc/udev/rules.d overrides it.  The rule names group
# "wafer": create it with groupadd --system wafer.
PREFIX       ?= /usr/local
UDEVRULESDIR ?= /lib/udev/rules.d
SYSTEMDUNITDIR ?= /lib/systemd/system
SYSUSERSDIR  ?= /usr/lib/sysusers.d
SYSCONFDIR   ?= /etc
BASHCOMPDIR  ?= $(PREFIX)/share/bash-completion/completions
MANDIR       ?= $(PREFIX)/share/man

install: $(WAFER_CLI) $(LIBWAFER_A) $(LIBWAFER_SO) $(LIBWFSIM) $(MAN_PAGES)
	$(Q)install -Dm755 $(WAFER_CLI) $(DESTDIR)$(PREFIX)/bin/wafer
	$(Q)install -Dm644 -t $(DESTDIR)$(PREFIX)/lib $(LIBWAFER_A) $(LIBWFSIM)
	$(Q)install -Dm755 $(LIBWAFER_SO).0 $(DESTDIR)$(PREFIX)/lib/libwafer.so.0
	$(Q)ln -sf libwafer.so.0 $(DESTDIR)$(PREFIX)/lib/libwafer.so
	$(Q)install -Dm644 userlib/wafer.h $(DESTDIR)$(PREFIX)/include/wafer.h
	$(Q)install -Dm644 userlib/wafer_link.h $(DESTDIR)$(PREFIX)/include/wafer_link.h
	$(Q)install -Dm644 -t $(DESTDIR)$(PREFIX)/include/wafer userlib/wafer/*.h
	$(Q)mkdir -p $(DESTDIR)$(PREFIX)/lib/pkgconfig
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' userlib/wafer.pc.in >$(DESTDIR)$(PREFIX)/lib/pkgconfig/wafer.pc
	$(Q)install -Dm644 userlib/udev/70-wafer.rules $(DESTDIR)$(UDEVRULESDIR)/70-wafer.rules
	$(Q)mkdir -p $(DESTDIR)$(SYSTEMDUNITDIR)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' userlib/systemd/wafer-serve.service.in \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/wafer-serve.service
	$(Q)chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/wafer-serve.service
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' userlib/systemd/wafer-node.service.in \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/wafer-node.service
	$(Q)chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/wafer-node.service
	$(Q)install -Dm644 userlib/systemd/wafer.sysusers $(DESTDIR)$(SYSUSERSDIR)/wafer.conf
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/default/wafer-serve ] || \
		install -Dm644 userlib/systemd/wafer-serve.default \
		$(DESTDIR)$(SYSCONFDIR)/default/wafer-serve
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/default/wafer-node ] || \
		install -Dm644 userlib/systemd/wafer-node.default \
		$(DESTDIR)$(SYSCONFDIR)/default/wafer-node
	$(Q)install -Dm644 -t $(DESTDIR)$(MANDIR)/man1 $(MAN_PAGES)
	$(Q)install -Dm644 userlib/completion/wafer.bash $(DESTDIR)$(BASHCOMPDIR)/wafer

# DKMS: the module's sources as Kbuild sees them, and dkms.conf.
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
DKMS_SRC     := $(DESTDIR)/usr/src/wafer-$(DKMS_VERSION)

.PHONY: dkms-src dkms-install
dkms-src:
	$(Q)rm -rf $(DKMS_SRC) && mkdir -p $(DKMS_SRC)
	$(Q)cp -r Kbuild dkms.conf kmod firmware-sim uapi $(DKMS_SRC)/

dkms-install: dkms-src
	$(Q)dkms add -m wafer -v $(DKMS_VERSION)
	$(Q)dkms build -m wafer -v $(DKMS_VERSION)
	$(Q)dkms install -m wafer -v $(DKMS_VERSION)

clean:
	rm -rf $(BUILD)
