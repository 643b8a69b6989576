#!/bin/bash
# A Neighbour Advertisement without the Override flag does not replace the
# link address a neighbour entry holds; one with it does (RFC 4861 7.2.5).
# First the oracle: Linux's own neighbour cache on a veth pair, the same
# advertisements sent by tests/integration/na_send.py.  Then ipoibd, whose
# neighbour cache resolves for its host (the TUN has no link layer):
#   h1 fd73::1, h2 fd73::2, h3 fd73::3: ipoibd hosts in P_Key 0x8001
# - h3 advertises fd73::2 (h2's) with its own 20-byte address and no
#   Override: h1 keeps h2's (state PROBE), still reaches h2, asks for it
#   again after 5 s, and h2's own answer ends the check (REACHABLE, nothing
#   counted in neigh_unreachable);
# - the same with Override: h1 takes h3's address at once, and its pings
#   to fd73::2 go to h3, which does not answer them.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
NA="python3 $(dirname "$0")/na_send.py"
for t in ping python3; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done

# ---- the oracle: Linux on Ethernet ----
ns_add la
ns_add lb
ns_veth la eth0 lb eth0
ns la ip addr add fd72::1/64 dev eth0 nodad
ns lb ip addr add fd72::2/64 dev eth0 nodad
ns la ping -6 -c 1 -W 2 fd72::2 >/dev/null || fail "la -> lb"
b_mac=$(ns lb cat /sys/class/net/eth0/address)
lladdr() { ns la ip -6 neigh show fd72::2 dev eth0 | sed -n 's/.*lladdr \([^ ]*\).*/\1/p'; }
expect_eq "Linux's entry for fd72::2 before" "$(lladdr)" "$b_mac"
ns lb $NA eth0 fd72::2 --mac 02:00:00:00:00:99
sleep 0.2
expect_eq "Linux's entry after an NA without Override" "$(lladdr)" "$b_mac"
ns lb $NA eth0 fd72::2 --mac 02:00:00:00:00:99 --override
sleep 0.2
expect_eq "Linux's entry after an NA with Override" "$(lladdr)" "02:00:00:00:00:99"
ok "oracle: Linux keeps its entry on an NA without Override and takes the address of one with it"

# ---- ipoibd ----
cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : ALL=full;
CONF
start_fabric -P "$T/partitions.conf"
# ipoibd hosts as the SDP tests make them (sdp.bash), without the SDP
# service: ready, and their addresses past duplicate address detection
for h in 1 2 3; do
	sdp_host h$h -p 0x8001 --address fd73::$h/64 --no-sdp
done
hw_of() { sed -n 's/.*ready: .* address //p' "$T/$1.log"; }
h2_hw=$(hw_of h2) h3_hw=$(hw_of h3)
[ -n "$h2_hw" ] && [ -n "$h3_hw" ] || fail "no 20-byte addresses in the logs"

# neigh_of IP: "HW STATE" of IP in h1's neighbour cache (its SIGUSR1
# report, which ends with the counter rx_coalesced)
report() {
	local n
	n=$(grep -c "stats rx_coalesced" "$T/h1.log")
	kill -USR1 "$h1_PID"
	for _ in $(seq 1 100); do
		[ "$(grep -c "stats rx_coalesced" "$T/h1.log")" -gt "$n" ] && break
		sleep 0.05
	done
}
neigh_of() {
	report
	sed -n "s/^ipoibd: neighbors $1 \([^ ]* [^ ]*\) .*/\1/p" "$T/h1.log" | tail -1
}

ns h1 ping -6 -c 1 -W 2 fd73::2 >/dev/null || fail "h1 -> h2"
expect_eq "h1's entry for fd73::2 before" "$(neigh_of fd73::2)" "$h2_hw REACHABLE"

ns h3 $NA ib0 fd73::2
probing() { [ "$(neigh_of fd73::2)" = "$h2_hw PROBE" ]; }
eventually probing || fail "h1's entry after h3's NA without Override: $(neigh_of fd73::2), not '$h2_hw PROBE'"
ns h1 ping -6 -c 1 -W 2 fd73::2 >/dev/null || fail "h1 -> h2 while its entry is checked"
back() { [ "$(neigh_of fd73::2)" = "$h2_hw REACHABLE" ]; }
for _ in 1 2; do eventually back && break; done	# 5 s, then the first ask
back || fail "h1's entry not confirmed by h2's answer: $(neigh_of fd73::2)"
expect_eq "neigh_unreachable" "$(stat_of h1 neigh_unreachable)" 0
ok "an NA without Override from another host: h1 keeps h2's address, checks it, h2's answer confirms it"

ns h3 $NA ib0 fd73::2 --override
took() { [ "$(neigh_of fd73::2)" = "$h3_hw REACHABLE" ]; }
eventually took || fail "h1's entry after h3's NA with Override: $(neigh_of fd73::2), not '$h3_hw REACHABLE'"
ns h1 ping -6 -c 1 -W 1 fd73::2 >/dev/null && fail "h1 -> fd73::2 answered though h1 sends it to h3"
ok "an NA with Override: h1 takes h3's address at once"
ok "nd_override"
