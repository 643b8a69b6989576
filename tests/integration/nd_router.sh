#!/bin/bash
# IPv6 forwarding switched on and off at run time on an ipoibd host: its
# Neighbour Advertisements carry the Router flag from then on (RFC 4861
# 7.2.4), and it tells the link at once with an unsolicited one per
# address (7.2.6), not only in its next answers.  ipoibd hears the switch
# as the kernel's netconf notification.  The fabric's capture decoded by
# tshark is the oracle.
#   h1 fd71::1, h2 fd71::2: ipoibd hosts in P_Key 0x8001
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
for t in ping tshark; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done
cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : h1=full, h2=full;
CONF
start_fabric -P "$T/partitions.conf" --pcap "$T/fabric.pcap"

ib() {	# NAME ADDR
	local name=$1
	ns_add "$name"
	ns_bg "${name}_PID" "$name" "$BIN/ipoibd" -f -F "soft:$SOCK" \
		-n "$name" -p 0x8001 -i ib0 --address "$2" >"$T/$name.log" 2>&1
	hr() { grep -q "ready:" "$T/$name.log"; }
	eventually hr || { cat "$T/$name.log"; fail "ipoibd $name not ready"; }
}
ib h1 fd71::1/64
ib h2 fd71::2/64
preferred() { ! ns "$1" ip -6 addr show dev ib0 | grep -q tentative; }
for h in h1 h2; do
	eventually preferred $h || fail "$h: DAD never ended"
done
ns h2 ping -6 -c 2 -W 2 fd71::1 >/dev/null || fail "h2 -> h1 before the switch"
ok "h2 reaches h1 (forwarding off on h1)"

# the unsolicited NAs of fd71::1 so far, by Router flag (ibfabricd
# flushes its capture every second)
nas() {
	tshark -r "$T/fabric.pcap" -Y 'icmpv6.type == 136 && icmpv6.nd.na.target_address == fd71::1 && ipv6.dst == ff02::1' \
		-T fields -e icmpv6.nd.na.flag.r 2>/dev/null | sed 's/^True$/1/; s/^False$/0/' | tr -d '\n'
}
sleep 1.5
before=$(nas)
case "$before" in *1*) fail "an NA with the Router flag before forwarding was on: $before" ;; esac
[ -n "$before" ] || fail "no unsolicited NA of fd71::1 after DAD"
ns h1 sysctl -qw net.ipv6.conf.ib0.forwarding=1
on_r() { [ "$(nas)" != "$before" ] && nas | grep -q '1$'; }
eventually on_r || fail "no unsolicited NA with the Router flag after forwarding on (NAs: $(nas))"
ok "forwarding on: an unsolicited NA of fd71::1 with the Router flag (NAs so far: $(nas))"
ns h2 ping -6 -c 1 -W 2 fd71::1 >/dev/null || fail "h2 -> h1 with forwarding on"
mid=$(nas)
ns h1 sysctl -qw net.ipv6.conf.ib0.forwarding=0
off_r() { [ "$(nas)" != "$mid" ] && nas | grep -q '0$'; }
eventually off_r || fail "no unsolicited NA without the Router flag after forwarding off (NAs: $(nas))"
ok "forwarding off: an unsolicited NA of fd71::1 without it (NAs: $(nas))"
ns h2 ping -6 -c 2 -W 2 fd71::1 >/dev/null || fail "h2 -> h1 after the switches"
ok "h2 still reaches h1"
