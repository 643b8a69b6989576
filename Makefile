# ibgw - InfiniBand-to-Ethernet gateway.  GNU make.
#
#   make            build everything into $(BUILD)
#   make check      install missing packages, build, run every test tier
#   make check-vm   the guest tier alone (Debian kernel under QEMU, tests/vm/)
#   make SAN=1      ASan + UBSan build (into build-san/)
#   make deps       install the Debian packages the build and tests need
#   make install    DESTDIR/PREFIX honoured

PREFIX   ?= /usr/local
DESTDIR  ?=
SBINDIR  ?= $(PREFIX)/sbin
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
DOCDIR   ?= $(PREFIX)/share/doc/ibgw
UNITDIR  ?= $(PREFIX)/lib/systemd/system
VERSION  := 0.1.0

CC       ?= cc
PKG_CONFIG ?= pkg-config

ifeq ($(SAN),1)
BUILD    ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD    ?= build
SANFLAGS :=
endif

PKGS     := libevent_core libibverbs librdmacm libibumad libmnl libnl-3.0 libnl-route-3.0
HTTP_LIBS = $(shell pkg-config --libs libevent_extra)
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) cmocka 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
INI_CFLAGS := -I/usr/include/iniparser
INI_LIBS := -liniparser
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)
# Linked only where used: libpcap by what links subnet/pcap.c (ibfabricd,
# ibfabricctl, the tests), libcap-ng by ibgwd (gateway/gw_caps.c).
LIB_PKGS := libpcap libcap-ng
PKG_CFLAGS += $(shell $(PKG_CONFIG) --cflags $(LIB_PKGS) 2>/dev/null)
PCAP_LIBS := $(shell $(PKG_CONFIG) --libs libpcap 2>/dev/null)
CAPNG_LIBS := $(shell $(PKG_CONFIG) --libs libcap-ng 2>/dev/null)

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -D_GNU_SOURCE -DIBGW_VERSION='"$(VERSION)"' \
            -I. $(PKG_CFLAGS) $(INI_CFLAGS) $(SANFLAGS) -MMD -MP
LDFLAGS  += $(SANFLAGS)

# --- libraries: one archive per layer ------------------------------------------
# Bottom up: inet (IP-generic helpers and byte order, no dependencies),
# fabric (InfiniBand
# access: interface, providers, IB codecs, SA client), conf (configuration
# and logging), netlink, ulp/ipoib, gateway.  The software subnet (subnet/)
# is a simulator with an archive of its own: only ibfabricd, ibfabricctl
# and the tests link it, never the daemons.
CONF_SRCS   := conf/log.c conf/conf.c conf/counters.c conf/daemon.c \
               conf/notify.c
INET_SRCS   := inet/addr.c inet/csum.c inet/err.c inet/ip.c inet/icmp.c \
               inet/nd.c inet/frag.c inet/gso.c inet/tcp_mss.c inet/mcast.c
FABRIC_SRCS := fabric/ib_crc.c fabric/ib_pkt.c fabric/fabric.c \
               fabric/prov_soft.c fabric/prov_soft_rc.c fabric/prov_verbs.c fabric/prov_verbs_cm.c \
               fabric/soft_proto.c fabric/soft_ring.c \
               fabric/sa_mad.c fabric/prov_umad.c fabric/sa_client.c \
               fabric/ib_rc.c fabric/cm_mad.c fabric/soft_rc.c
SUBNET_SRCS := subnet/partitions.c subnet/fsw_switch.c subnet/fsw_fault.c \
               subnet/fsw_sa.c subnet/fsw_cm.c subnet/pcap.c
IPOIB_SRCS  := ulp/ipoib/ipoib_wire.c ulp/ipoib/ipoib_link.c ulp/ipoib/ipoib_neigh.c ulp/ipoib/ipoib_cm.c \
               ulp/ipoib/ipoib_dhcp.c \
               ulp/ipoib/ipoib_mcast.c ulp/ipoib/ipoib_tun.c
# SDP (ulp/sdp/): every .c there is the layer (the codecs, the message
# layer, libsdp.conf, the endpoint and the host's service).
SDP_SRCS    := $(sort $(wildcard ulp/sdp/*.c))
# RDS (ulp/rds/): every .c there is the layer (the kernel's RDS/IB wire).
RDS_SRCS    := $(sort $(wildcard ulp/rds/*.c))
GW_SRCS     := gateway/eth_wire.c gateway/gw_bridge.c gateway/gw_conf.c \
               gateway/gw_gids.c
NETLINK_SRCS := netlink/nl_link.c

LAYERS := CONF INET FABRIC SUBNET IPOIB SDP RDS GW NETLINK
$(foreach l,$(LAYERS),$(eval $(l)_OBJS := $$($(l)_SRCS:%.c=$$(BUILD)/%.o)))

LIB_CONF    := $(BUILD)/libibgw_conf.a
LIB_INET    := $(BUILD)/libibgw_inet.a
LIB_FABRIC  := $(BUILD)/libibgw_fabric.a
LIB_SUBNET  := $(BUILD)/libibgw_subnet.a
LIB_IPOIB   := $(BUILD)/libibgw_ipoib.a
LIB_SDP     := $(BUILD)/libibgw_sdp.a
LIB_RDS     := $(BUILD)/libibgw_rds.a
LIB_GW      := $(BUILD)/libibgw_gateway.a
LIB_NETLINK := $(BUILD)/libibgw_netlink.a

# Link order: users before what they use.
DAEMON_LIBS := $(LIB_GW) $(LIB_SDP) $(LIB_RDS) $(LIB_IPOIB) $(LIB_NETLINK) \
               $(LIB_FABRIC) $(LIB_CONF) $(LIB_INET)
SUBNET_LIBS := $(LIB_SUBNET) $(LIB_FABRIC) $(LIB_CONF) $(LIB_INET)
TEST_LIBS   := $(LIB_GW) $(LIB_SDP) $(LIB_RDS) $(LIB_IPOIB) $(LIB_NETLINK) \
               $(LIB_SUBNET) $(LIB_FABRIC) $(LIB_CONF) $(LIB_INET)
LIBS_ALL := $(PKG_LIBS) $(INI_LIBS)

PROGS := $(BUILD)/ibfabricd $(BUILD)/ibfabricctl $(BUILD)/ipoibd $(BUILD)/ibgwd \
         $(BUILD)/ibgwctl
TOOLS := $(BUILD)/tests/fabtest $(BUILD)/tests/bench_ud $(BUILD)/tests/satest \
         $(BUILD)/tests/bench_sa $(BUILD)/tests/nltest $(BUILD)/tests/bench_gw \
         $(BUILD)/tests/madtest $(BUILD)/tests/rctest $(BUILD)/tests/sdptest \
         $(BUILD)/tests/tcp_rr

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))

# --- libibgw_preload.so: SDP sockets for unmodified TCP programs --------------
# Position-independent objects of its own (in $(BUILD)/pic/), never the
# sanitizers (an LD_PRELOAD library cannot bring ASan's runtime into a
# program that lacks it); hidden by default, and the version script
# exports the interposers alone.  sdp_mocksvc is the tests' stand-in for
# the host's SDP service.
PRELOAD_SO    := $(BUILD)/libibgw_preload.so
PRELOAD_SRCS  := $(sort $(wildcard ulp/preload/*.c)) ulp/sdp/sdp_conf.c inet/addr.c
PRELOAD_OBJS  := $(PRELOAD_SRCS:%.c=$(BUILD)/pic/%.o)
PRELOAD_CFLAGS = $(filter-out $(SANFLAGS),$(CFLAGS)) -fPIC -fvisibility=hidden
TOOLS += $(BUILD)/tests/sdp_mocksvc

all: $(PRELOAD_SO)

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -c -o $@ $<

# linked aside and renamed: a program starting while make runs never maps
# a half-written library
$(PRELOAD_SO): $(PRELOAD_OBJS) ulp/preload/preload.map
	$(CC) -shared -Wl,--version-script=ulp/preload/preload.map \
		-Wl,-z,defs -o $@.tmp $(PRELOAD_OBJS) -ldl -lpthread
	mv -f $@.tmp $@

$(BUILD)/tests/sdp_mocksvc: $(BUILD)/tests/tools/sdp_mocksvc.o
	$(CC) $(LDFLAGS) -o $@ $^

.PHONY: install-preload
install: install-preload
install-preload: $(PRELOAD_SO)
	install -d $(DESTDIR)$(PREFIX)/lib
	install -m 0755 $(PRELOAD_SO) $(DESTDIR)$(PREFIX)/lib/libibgw_preload.so

.PHONY: all check check-unit check-integration check-vm check-san deps install clean \
        bench fuzz demo
all: $(PROGS) $(TOOLS) $(UNIT_TESTS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIB_CONF): $(CONF_OBJS)
$(LIB_INET): $(INET_OBJS)
$(LIB_FABRIC): $(FABRIC_OBJS)
$(LIB_SUBNET): $(SUBNET_OBJS)
$(LIB_IPOIB): $(IPOIB_OBJS)
$(LIB_SDP): $(SDP_OBJS)
$(LIB_RDS): $(RDS_OBJS)
$(LIB_GW): $(GW_OBJS)
$(LIB_NETLINK): $(NETLINK_OBJS)
$(BUILD)/libibgw_%.a:
	rm -f $@
	$(AR) rcs $@ $^

# Programs and tests link archives, so each takes only the objects it uses.
$(BUILD)/ibfabricd: $(BUILD)/subnet/ibfabricd.o $(SUBNET_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL) $(PCAP_LIBS)

$(BUILD)/ibfabricctl: $(BUILD)/subnet/ibfabricctl.o $(SUBNET_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL) $(PCAP_LIBS)

$(BUILD)/ipoibd: $(BUILD)/ulp/ipoib/ipoibd.o $(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL)

$(BUILD)/ibgwd: $(BUILD)/gateway/ibgwd.o $(BUILD)/gateway/gw_ctl.o \
                $(BUILD)/gateway/gw_metrics.o $(BUILD)/gateway/gw_caps.o \
                $(BUILD)/gateway/gw_sdp.o $(BUILD)/gateway/gw_rds.o \
                $(BUILD)/gateway/gw_seed.o $(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL) $(HTTP_LIBS) $(CAPNG_LIBS)

$(BUILD)/ibgwctl: $(BUILD)/gateway/ibgwctl.o
	$(CC) $(LDFLAGS) -o $@ $^

$(BUILD)/tests/nltest: $(BUILD)/tests/tools/nltest.o $(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL)

$(BUILD)/tests/fabtest: $(BUILD)/tests/tools/fabtest.o $(BUILD)/tests/tools/tool.o \
		$(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL)

$(BUILD)/tests/rctest: $(BUILD)/tests/tools/rctest.o $(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL)

$(BUILD)/tests/sdptest: $(BUILD)/tests/tools/sdptest.o $(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL)

# the RDS test peer (ulp/rds/rds_ep.h) and its hostile modes
TOOLS += $(BUILD)/tests/rdspeer
$(BUILD)/tests/rdspeer: $(BUILD)/tests/tools/rdspeer.o \
		$(BUILD)/tests/tools/rdspeer_evil.o $(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL)

# RDS round trips on our endpoint (tests/bench/rds_vm_bench.sh); all:
# was expanded with TOOLS above, so it is named here too
TOOLS += $(BUILD)/tests/bench_rds_rr
all: $(BUILD)/tests/bench_rds_rr
$(BUILD)/tests/bench_rds_rr: $(BUILD)/tests/bench/bench_rds_rr.o $(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL)

# Ordinary programs that run unmodified under the preload: no project
# libraries, and never the sanitizers (ASan refuses to start behind an
# LD_PRELOAD library that is not its runtime), so in build-san too.
PLAIN_CFLAGS  = $(filter-out $(SANFLAGS),$(CFLAGS))
PLAIN_LDFLAGS = $(filter-out $(SANFLAGS),$(LDFLAGS))
$(BUILD)/plain/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PLAIN_CFLAGS) -c -o $@ $<

# RDS rate and round trips on the AF_RDS socket API only (the kernel's,
# or ours under the preload: tests/bench/rds_vm_bench.sh,
# tests/integration/rds_preload.sh)
TOOLS += $(BUILD)/tests/rds_sock_bench
all: $(BUILD)/tests/rds_sock_bench
$(BUILD)/tests/rds_sock_bench: $(BUILD)/plain/tests/bench/rds_sock_bench.o
	$(CC) $(PLAIN_LDFLAGS) -o $@ $^

# ibv_destroy_qp made slow, as rxe's can be (tests/vm/rds_slow_destroy.sh)
TOOLS += $(BUILD)/tests/libslow_destroy.so
all: $(BUILD)/tests/libslow_destroy.so
$(BUILD)/tests/libslow_destroy.so: tests/tools/slow_destroy.c
	@mkdir -p $(dir $@)
	$(CC) $(PLAIN_CFLAGS) -fPIC -shared -o $@ $< -ldl

# the kernel's AF_RDS semantics, one corner per run, under the preload
# (tests/integration/rds_semantics.sh)
TOOLS += $(BUILD)/tests/rds_semantics
all: $(BUILD)/tests/rds_semantics
$(BUILD)/tests/rds_semantics: $(BUILD)/plain/tests/integration/rds_semantics.o
	$(CC) $(PLAIN_LDFLAGS) -o $@ $^

# an ordinary TCP program (tests/bench/sdp_bench.sh runs it under the
# preload)
$(BUILD)/tests/tcp_rr: $(BUILD)/plain/tests/tools/tcp_rr.o
	$(CC) $(PLAIN_LDFLAGS) -o $@ $^

$(BUILD)/tests/satest: $(BUILD)/tests/tools/satest.o $(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL)

$(BUILD)/tests/madtest: $(BUILD)/tests/tools/madtest.o $(BUILD)/tests/tools/tool.o \
		$(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL)

$(BUILD)/tests/bench_sa: $(BUILD)/tests/bench/bench_sa.o $(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL)

$(BUILD)/tests/bench_gw: $(BUILD)/tests/bench/bench_gw.o $(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL)

$(BUILD)/tests/bench_ud: $(BUILD)/tests/bench/bench_ud.o $(DAEMON_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL)

# The IPoIB link's tests run over the in-memory provider, with the link's
# clock and 1 s timer in the test's hands (tests/unit/ipoib_harness.h).
IPOIB_TEST_WRAP := -Wl,--wrap=clock_gettime -Wl,--wrap=event_new \
                   -Wl,--wrap=event_free
IPOIB_TESTS := $(BUILD)/tests/test_ipoib_link $(BUILD)/tests/test_ipoib_neigh
$(IPOIB_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/unit/%.o \
                $(BUILD)/tests/unit/ipoib_harness.o \
                $(BUILD)/tests/unit/prov_mem.o \
                $(BUILD)/tests/unit/vectors.o $(TEST_LIBS)
	$(CC) $(LDFLAGS) $(IPOIB_TEST_WRAP) -o $@ $^ $(LIBS_ALL) $(PCAP_LIBS) $(CMOCKA_LIBS)

# The fabric interface's RC/CM dispatch, over the in-memory provider.
$(BUILD)/tests/test_fabric_rc: $(BUILD)/tests/unit/test_fabric_rc.o \
                $(BUILD)/tests/unit/prov_mem.o \
                $(BUILD)/tests/unit/vectors.o $(TEST_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL) $(PCAP_LIBS) $(CMOCKA_LIBS)

# The tshark oracle tests share writing the capture and reading the fields.
$(BUILD)/tests/test_rc_tshark $(BUILD)/tests/test_sdp_tshark: $(BUILD)/tests/test_%: \
		$(BUILD)/tests/unit/test_%.o $(BUILD)/tests/unit/tshark_cap.o \
		$(BUILD)/tests/unit/vectors.o $(TEST_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL) $(PCAP_LIBS) $(CMOCKA_LIBS)

# The switch's tests share their queue pairs' owner slots.
$(BUILD)/tests/test_fsw $(BUILD)/tests/test_fsw_sa: $(BUILD)/tests/test_%: \
		$(BUILD)/tests/unit/test_%.o $(BUILD)/tests/unit/fsw_slots.o \
		$(BUILD)/tests/unit/vectors.o $(TEST_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL) $(PCAP_LIBS) $(CMOCKA_LIBS)

# The gateway's RDS exports over loopback UDP: the endpoint a recorder in
# the test, the fabric wrapped.
GW_RDS_TEST_WRAP := -Wl,--wrap=fab_open -Wl,--wrap=fab_close \
                    -Wl,--wrap=fab_query_port -Wl,--wrap=fab_pkey_find \
                    -Wl,--wrap=fab_dev_fd -Wl,--wrap=fab_get_event \
                    -Wl,--wrap=time
$(BUILD)/tests/test_gw_rds: $(BUILD)/tests/unit/test_gw_rds.o \
		$(BUILD)/gateway/gw_rds.o $(BUILD)/tests/unit/vectors.o $(TEST_LIBS)
	$(CC) $(LDFLAGS) $(GW_RDS_TEST_WRAP) -o $@ $^ $(LIBS_ALL) $(PCAP_LIBS) $(CMOCKA_LIBS)

$(BUILD)/tests/test_%: $(BUILD)/tests/unit/test_%.o $(BUILD)/tests/unit/vectors.o \
                      $(TEST_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_ALL) $(PCAP_LIBS) $(CMOCKA_LIBS)

# --- tests -------------------------------------------------------------------
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

check: deps
	$(MAKE) -j$(JOBS) all
	$(MAKE) -j$(JOBS) SAN=1 all
	tests/run --build $(BUILD) --san-build build-san

check-unit: all
	tests/run --build $(BUILD) --only unit

check-integration: all
	tests/run --build $(BUILD) --only integration

check-vm: deps
	$(MAKE) -j$(JOBS) all
	tests/run --build $(BUILD) --only vm

bench: all
	tests/bench/run --build $(BUILD)

# --- fuzzing (clang libFuzzer) -----------------------------------------------
FUZZ_CC    ?= clang
FUZZ_DIR   := build-fuzz
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
              -std=gnu11 -D_GNU_SOURCE -DIBGW_VERSION='"$(VERSION)"' -I. \
              $(PKG_CFLAGS) $(INI_CFLAGS)
FUZZ_OBJS  := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(foreach l,$(LAYERS),$($(l)_SRCS)))
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(wildcard tests/fuzz/fuzz_*.c))

fuzz: $(FUZZ_TARGETS)

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -MMD -MP -c -o $@ $<

$(FUZZ_DIR)/libibgw.a: $(FUZZ_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# The IPoIB link's fuzzer runs over the unit tests' in-memory provider.
$(FUZZ_DIR)/fuzz_ipoib_link: tests/fuzz/fuzz_ipoib_link.c \
                             tests/unit/prov_mem.c $(FUZZ_DIR)/libibgw.a
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS_ALL) \
		$(PCAP_LIBS)

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DIR)/libibgw.a
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS_ALL) \
		$(PCAP_LIBS)

# --- demo ----------------------------------------------------------------------
demo: deps
	$(MAKE) -j$(JOBS) all
	tools/demo.sh $(if $(KEEP),--keep) $(BUILD)

# --- packages ----------------------------------------------------------------
deps:
	@tools/deps.sh

# --- install -----------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR)
	install -m 0755 $(BUILD)/ibfabricd $(DESTDIR)$(SBINDIR)/ibfabricd
	install -m 0755 $(BUILD)/ibfabricctl $(DESTDIR)$(BINDIR)/ibfabricctl
	install -m 0755 $(BUILD)/ipoibd $(DESTDIR)$(SBINDIR)/ipoibd
	install -m 0755 $(BUILD)/ibgwd $(DESTDIR)$(SBINDIR)/ibgwd
	install -m 0755 $(BUILD)/ibgwctl $(DESTDIR)$(BINDIR)/ibgwctl
	install -d $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man5
	for m in docs/*.8; do [ -e "$$m" ] && install -m 0644 $$m $(DESTDIR)$(MANDIR)/man8/ || true; done
	for m in docs/*.5; do [ -e "$$m" ] && install -m 0644 $$m $(DESTDIR)$(MANDIR)/man5/ || true; done
	install -d $(DESTDIR)$(DOCDIR)
	install -m 0644 conf/ibgw.conf $(DESTDIR)$(DOCDIR)/ibgw.conf.example
	install -d $(DESTDIR)$(UNITDIR)
	for u in systemd/*.service; do \
		sed 's|@SBINDIR@|$(SBINDIR)|g' $$u >$(DESTDIR)$(UNITDIR)/$$(basename $$u) && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$(basename $$u) || exit 1; \
	done

clean:
	rm -rf build build-san build-fuzz

# rdspeer joined TOOLS after all: took its value
all: $(BUILD)/tests/rdspeer

-include $(shell find $(BUILD) $(FUZZ_DIR) -name '*.d' 2>/dev/null)
