#!/bin/bash
# Duplicate address detection across a transparent gateway and between
# IPoIB hosts (ipoibd), with the kernels' own DAD and arping as oracles.
#
#   ib1 (fd41::1, 10.41.0.1), later ib2, ib3 (P_Key 0x8001) == gw:
#   transparent, tap gwtap1 in br1 == lan1 (fd41::50, 10.41.0.50)
#
# (a) IPv6: lan1 configuring ib1's address goes dadfailed, ib1 configuring
#     lan1's goes dadfailed; a free address stays free on both sides;
# (b) IPv4: arping -D from the LAN for ib1's address reports a duplicate,
#     for a free one gets no reply; an ipoibd host given lan1's address
#     logs the conflict (its RFC 5227 probe is answered by the gateway),
#     and none for a free one;
# (c) a second ipoibd host with ib1's IPv6 address goes dadfailed on its
#     interface, and its log says so.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
for t in ping arping python3; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done

cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : ib1=full, ib2=full, ib3=full, gw=full;
CONF
start_fabric -P "$T/partitions.conf"

ib() {	# NAME ADDR...: an IPoIB host in P_Key 0x8001
	local name=$1 args=() a
	shift
	for a in "$@"; do args+=(--address "$a"); done
	ns_add "$name"
	ns_bg "${name}_PID" "$name" "$BIN/ipoibd" -f -F "soft:$SOCK" \
		-n "$name" -p 0x8001 -i ib0 "${args[@]}" >"$T/$name.log" 2>&1
	hr() { grep -q "ready:" "$T/$name.log"; }
	eventually hr || { cat "$T/$name.log"; fail "ipoibd $name not ready"; }
}

# state NS IF ADDR: tentative, dadfailed or preferred, as the kernel says
state() {
	local l
	l=$(ns "$1" ip -6 addr show dev "$2" | grep -A1 " $3/")
	[ -n "$l" ] || { echo none; return; }
	case "$l" in
	*dadfailed*) echo dadfailed ;;
	*tentative*) echo tentative ;;
	*) echo preferred ;;
	esac
}
settled() { [ "$(state "$@")" != tentative ]; }

ns_add gw
ns_add lan1
ns gw ip link add br1 type bridge
ns gw ip link set br1 up
ns_veth gw v1 lan1 eth0
ns gw ip link set v1 master br1
ns lan1 sysctl -qw net.ipv6.conf.eth0.accept_dad=1

cat >"$T/ibgw.conf" <<CONF
[gateway]
fabric = soft:$SOCK
node = gw
control = $T/ibgwd.sock

[partition p1]
pkey = 0x8001
tap = gwtap1
bridge = br1
CONF
ns_bg GW_PID gw "$BIN/ibgwd" -f -c "$T/ibgw.conf" >"$T/gw.log" 2>&1
gw_ready() { grep -q "ready: 1 partition" "$T/gw.log"; }
eventually gw_ready || { cat "$T/gw.log"; fail "ibgwd not ready"; }
ib ib1 10.41.0.1/24 fd41::1/64
# the gateway is up before the LAN host's addresses: their MLD reports
# make it join their solicited-node groups on IB
ns lan1 ip addr add 10.41.0.50/24 dev eth0
ns lan1 ip addr add fd41::50/64 dev eth0
eventually settled lan1 eth0 fd41::50
expect_eq "lan1's own fd41::50" "$(state lan1 eth0 fd41::50)" preferred
eventually settled ib1 ib0 fd41::1
expect_eq "ib1's own fd41::1 (DAD on the TUN)" "$(state ib1 ib0 fd41::1)" \
	preferred
ns lan1 ping -c 3 -W 2 10.41.0.1 >/dev/null || fail "lan1 -> ib1"
ns lan1 ping -c 3 -W 2 fd41::1 >/dev/null || fail "lan1 -> ib1 IPv6"
ok "gateway and hosts up, ping both families"

# --- (a) IPv6 DAD across the gateway ---------------------------------------
ns lan1 ip addr add fd41::1/64 dev eth0
eventually settled lan1 eth0 fd41::1
expect_eq "lan1 configures ib1's fd41::1" "$(state lan1 eth0 fd41::1)" \
	dadfailed
ns lan1 ip addr add fd41::77/64 dev eth0
eventually settled lan1 eth0 fd41::77
expect_eq "lan1 configures free fd41::77" "$(state lan1 eth0 fd41::77)" \
	preferred
ns ib1 ip addr add fd41::50/64 dev ib0
eventually settled ib1 ib0 fd41::50
expect_eq "ib1 configures lan1's fd41::50" "$(state ib1 ib0 fd41::50)" \
	dadfailed
ns ib1 ip addr add fd41::88/64 dev ib0
eventually settled ib1 ib0 fd41::88
expect_eq "ib1 configures free fd41::88" "$(state ib1 ib0 fd41::88)" \
	preferred
expect_eq "lan1 keeps fd41::50" "$(state lan1 eth0 fd41::50)" preferred
expect_eq "ib1 keeps fd41::1" "$(state ib1 ib0 fd41::1)" preferred
ns lan1 ip addr del fd41::1/64 dev eth0
ns ib1 ip addr del fd41::50/64 dev ib0
ns lan1 ping -c 2 -W 2 fd41::1 >/dev/null || fail "lan1 -> ib1 IPv6 after"

# --- (b) IPv4 conflict probes ------------------------------------------------
ns lan1 arping -D -c 3 -w 4 -I eth0 10.41.0.1 >"$T/arp1" 2>&1
rc=$?
grep -q "reply from 10.41.0.1" "$T/arp1" && [ $rc = 1 ] ||
	{ cat "$T/arp1"; fail "arping -D from the LAN for ib1's address"; }
ok "arping -D from the LAN for ib1's 10.41.0.1: duplicate"
ns lan1 arping -D -c 2 -w 3 -I eth0 10.41.0.99 >"$T/arp2" 2>&1 ||
	{ cat "$T/arp2"; fail "arping -D for a free address was answered"; }
ok "arping -D from the LAN for free 10.41.0.99: no reply"
ib ib3 10.41.0.50/24 10.41.0.98/24
c3() { grep -q "address conflict: 10.41.0.50 is claimed" "$T/ib3.log"; }
eventually c3 ||
	{ cat "$T/ib3.log"; fail "ib3 saw no conflict for lan1's address"; }
ok "ipoibd with lan1's 10.41.0.50 logs the conflict"
sleep 2
grep -q "10.41.0.98" "$T/ib3.log" &&
	{ cat "$T/ib3.log"; fail "conflict for free 10.41.0.98"; }
ok "and none for free 10.41.0.98"
kill "$ib3_PID"

# --- (c) two ipoibd hosts, one IPv6 address ---------------------------------
ib ib2 fd41::1/64 fd41::2/64
eventually settled ib2 ib0 fd41::1
expect_eq "ib2 configured with ib1's fd41::1" "$(state ib2 ib0 fd41::1)" \
	dadfailed
eventually settled ib2 ib0 fd41::2
expect_eq "ib2's free fd41::2" "$(state ib2 ib0 fd41::2)" preferred
grep -q "duplicate address fd41::1: .*DAD failed: dadfailed" "$T/ib2.log" ||
	{ cat "$T/ib2.log"; fail "ib2's log: no duplicate fd41::1"; }
grep -q "fd41::2" "$T/ib2.log" && { cat "$T/ib2.log"; fail "ib2: fd41::2?"; }
ok "ib2's log: duplicate address fd41::1, DAD failed (none for fd41::2)"
expect_eq "ib1 keeps fd41::1" "$(state ib1 ib0 fd41::1)" preferred
ns lan1 ping -c 2 -W 2 fd41::1 >/dev/null || fail "lan1 -> ib1 IPv6 at the end"
ok "lan1 still reaches ib1 at fd41::1"
