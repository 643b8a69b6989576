#!/bin/bash
# IPoIB connected mode (RFC 4755) between ipoibd hosts on the software
# subnet (issue 13, item 5):
# - c1 and c2 in connected mode, d3 in datagram mode, one partition;
# - connected mode's interface MTU is 65520 and the link address carries
#   the RC flag (0x80 in its first byte); datagram mode's has neither;
#   an MTU set above 65520 is put back to it, as the Linux driver refuses
#   it (ipoib_hosts.sh does datagram mode's);
# - a 30000-byte ping with DF between c1 and c2 goes whole, over RC
#   connections made to service ID 0x1000000000000000 | UD QPN (the CMs
#   show them), and the hosts' counters show the frames on them;
# - iperf3 c1 -> c2 carries TCP over RC;
# - c1 <-> d3: a peer without the flag is reached by datagrams, and a
#   packet above the datagram MTU to it gets ICMP too big with 2044;
# - IPv6 multicast above the datagram MTU: Packet Too Big from the host's
#   own address, which its kernel takes, so the next datagrams go in
#   fragments;
# - a peer that claims the flag but refuses the connection (d3, whose
#   spoofed ARP says so): the connection fails and c1 falls back to
#   datagrams;
# - idle connections are reaped (--cm-idle 2).
# The capture of the connection's start decodes in tshark: CM REQ to the
# IPoIB service ID with the private data {QPN, 65524}.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
for t in ping iperf3 tshark; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done
MK=$TOP/tests/integration/mkpcap.py
start_fabric --pcap "$T/cap.pcap"

host() {	# NAME MODE ADDR
	ns_add "$1"
	ns_bg "${1}_PID" "$1" "$BIN/ipoibd" -f -F "soft:$SOCK" -n "$1" \
		-i ib0 --mode "$2" --cm-idle 2 --address "$3" \
		--address "$4" >"$T/$1.log" 2>&1
	local i
	for i in $(seq 1 100); do
		grep -q "ready:" "$T/$1.log" && return 0
		sleep 0.05
	done
	cat "$T/$1.log"
	fail "ipoibd $1 did not become ready"
}
host c1 connected 10.1.0.1/24 fd01::1/64
host c2 connected 10.1.0.2/24 fd01::2/64
host d3 datagram 10.1.0.3/24 fd01::3/64

expect_eq "c1 MTU (connected)" "$(ns c1 cat /sys/class/net/ib0/mtu)" 65520
expect_eq "d3 MTU (datagram)" "$(ns d3 cat /sys/class/net/ib0/mtu)" 2044
# the 20-byte link address, as ipoibd's ready line gives it (a TUN has none)
hw() { sed -n 's/^.*ready: .* address \([0-9a-f:]*\).*/\1/p' "$T/$1.log" | head -n1; }
c1_hw=$(hw c1) d3_hw=$(hw d3)
case "$c1_hw" in 80:*) ;; *) fail "c1's address $c1_hw has no RC flag" ;; esac
case "$d3_hw" in 00:*) ;; *) fail "d3's address $d3_hw has flags" ;; esac
ok "connected mode: MTU 65520, address $c1_hw; datagram mode: MTU 2044, address $d3_hw"
ns c1 ip link set ib0 mtu 65535 || fail "ip link set ib0 mtu 65535"
c1_mtu_back() { [ "$(ns c1 cat /sys/class/net/ib0/mtu)" = 65520 ]; }
for _ in $(seq 1 40); do c1_mtu_back && break; sleep 0.05; done
c1_mtu_back || fail "MTU 65535 in connected mode not put back within 2 s: $(ns c1 cat /sys/class/net/ib0/mtu)"
grep -q "ib0: MTU 65535 refused: the link carries at most 65520 (connected mode); MTU 65520 again" "$T/c1.log" ||
	{ tail "$T/c1.log"; fail "no log line for the refused MTU"; }
ok "MTU 65535 in connected mode put back to 65520 and logged"

stats() {	# HOST COUNTER: from ipoibd's SIGUSR1 report
	kill -USR1 "$(eval echo \$${1}_PID)"
	sleep 0.3
	sed -n "s/.*\\b$2 \\([0-9]*\\).*/\\1/p" "$T/$1.log" | tail -n1
}

# 1: a 30000-byte ping with DF, both ways, IPv4 and IPv6
ns c1 ping -c 3 -W 3 -s 30000 -M do 10.1.0.2 >"$T/p1" 2>&1 ||
	{ cat "$T/p1" "$T/c1.log"; fail "c1 -> c2: 30000 bytes with DF"; }
ns c2 ping -6 -c 2 -W 3 -s 30000 -M do fd01::1 >"$T/p2" 2>&1 ||
	{ cat "$T/p2"; fail "c2 -> c1: 30000 bytes IPv6"; }
tx=$(stats c1 cm_tx_packets) rx=$(stats c2 cm_rx_packets)
con=$(stats c1 cm_connects) acc=$(stats c2 cm_accepts)
[ "${tx:-0}" -ge 3 ] && [ "${rx:-0}" -ge 3 ] || { cat "$T/c1.log"; fail "frames on RC: c1 sent $tx, c2 received $rx"; }
[ "${con:-0}" -ge 1 ] && [ "${acc:-0}" -ge 1 ] || fail "connections: c1 made $con, c2 accepted $acc"
ctl cm >"$T/cm.txt"
cat "$T/cm.txt"
c2_qpn=$(hw c2 | cut -d: -f2-4 | tr -d :)
grep -q "ESTABLISHED .*service 0x1000000000$c2_qpn" "$T/cm.txt" ||
	fail "no established connection to service 0x1000000000$c2_qpn (c2's UD QPN)"
ok "30000-byte pings with DF over RC: c1 sent $tx frames on $con connection(s), c2 received $rx"

# 2: TCP over RC
ns_bg S1 c2 iperf3 -s -1 -p 5201 >"$T/iperf_s.log" 2>&1
sleep 0.5
ns c1 iperf3 -c 10.1.0.2 -p 5201 -t 3 -J >"$T/iperf.json" 2>"$T/iperf.err" ||
	{ cat "$T/iperf.err" "$T/iperf.json" | tail -20; fail "iperf3 over connected mode"; }
bps=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' "$T/iperf.json")
[ "$bps" -gt 0 ] || fail "iperf3: no throughput"
bytes=$(stats c1 cm_tx_bytes)
[ "${bytes:-0}" -gt 10000000 ] || fail "iperf3's data did not go over RC ($bytes bytes)"
ok "iperf3 c1 -> c2 in connected mode: $((bps / 1000000)) Mbit/s, $bytes bytes on RC"

# 2b: small segments (the MSS a LAN host would announce): many frames per
# super-packet the host hands over, more than a connection's window takes.
# What waits beyond the window stops c1's reads of its TUN (as Linux stops
# its queue); none may be dropped at the link (drop.cm_queue_full), where
# they were when the queue was a fixed 64 frames
q0=$(stats c1 drop.cm_queue_full) st0=$(stats c1 cm_tx_stops)
ns_bg S2 c2 iperf3 -s -1 -p 5202 >"$T/iperf2_s.log" 2>&1
sleep 0.5
ns c1 iperf3 -c 10.1.0.2 -p 5202 -t 3 -M 1400 -J >"$T/iperf2.json" 2>"$T/iperf2.err" ||
	{ cat "$T/iperf2.err" "$T/iperf2.json" | tail -20; fail "iperf3 -M 1400 over connected mode"; }
read -r bps rtx < <(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["end"]; print(int(e["sum_received"]["bits_per_second"]), e["sum_sent"].get("retransmits", -1))' "$T/iperf2.json")
q=$(stats c1 drop.cm_queue_full) st=$(stats c1 cm_tx_stops)
[ "$bps" -gt 0 ] || fail "iperf3 -M 1400: no throughput"
expect_eq "2b: frames c1's link dropped for a full connection queue" "$((q - q0))" 0
ok "iperf3 -M 1400 c1 -> c2: $((bps / 1000000)) Mbit/s, no frame dropped at the link; TUN reads stopped $((st - st0)) times, TCP retransmits $rtx"

# 3: a datagram-mode peer
ns c1 ping -c 2 -W 3 10.1.0.3 >"$T/p3" || { cat "$T/p3"; fail "c1 -> d3"; }
ns d3 ping -c 2 -W 3 10.1.0.1 >"$T/p4" || { cat "$T/p4"; fail "d3 -> c1"; }
ns c1 ping -c 1 -W 3 -s 3000 -M do 10.1.0.3 >"$T/p5" 2>&1 &&
	fail "3000 bytes with DF reached a datagram-mode peer"
grep -Eq 'mtu ?= ?2044|Frag needed.*2044|Message too long' "$T/p5" ||
	{ cat "$T/p5"; fail "no ICMP too big with the datagram MTU"; }
ns c1 ip route get 10.1.0.3 >"$T/route" 2>&1
ok "d3 (datagram mode) reached by datagrams; 3000 bytes with DF: $(head -n2 "$T/p5" | tail -n1)"

# 3b: IPv6 multicast above the datagram MTU (multicast is datagrams): the
# Packet Too Big comes from c1's own address (from the group's address,
# ipv6_rcv drops it and the sender never fragments), so c1's next
# datagrams to the group go in fragments and reach c2
ns_bg M6 c2 python3 "$TOP/tests/integration/mcast6_recv.py" ff15::c2 6002 ib0 3000 >"$T/m6.out"
m6_up() { grep -q listening "$T/m6.out"; }
eventually m6_up || fail "3b: IPv6 multicast receiver on c2"
sleep 1	# c2's MLD report, its join
ns c1 python3 -c '
import socket, time
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, socket.if_nametoindex("ib0"))
for i in range(5):
    try:
        s.sendto(b"m" * 3000, ("ff15::c2", 6002))
    except OSError:
        pass
    time.sleep(0.3)'
wait "$M6"
got=$(sed -n 's/^received //p' "$T/m6.out")
ptb=$(ns c1 nstat -az Icmp6InPktTooBigs | awk '/Icmp6InPktTooBigs/ {print $2}')
[ "${got:-0}" -ge 3 ] ||
	fail "3b: c2 received ${got:-0} of 5 datagrams of 3000 bytes to ff15::c2 (c1's kernel took ${ptb:-0} Packet Too Big)"
ok "3b: IPv6 multicast of 3000 bytes from connected mode: Packet Too Big taken by c1's kernel ($ptb), $got of 5 reached c2 in fragments"

# 4: d3 claims the RC flag (a spoofed ARP), but takes no connection
fails0=$(stats c1 cm_failures)
d3_lid=$(fabtest info d3 | sed -n 's/^lid //p')
c1_lid=$(fabtest info c1 | sed -n 's/^lid //p')
c1_qpn=0x$(echo "$c1_hw" | cut -d: -f2-4 | tr -d :)
d3_qpn=0x$(echo "$d3_hw" | cut -d: -f2-4 | tr -d :)
python3 "$MK" arp "$T/arp.pcap" --slid "$d3_lid" --dlid "$c1_lid" \
	--dqpn "$c1_qpn" --srcqp "$d3_qpn" --sha "80:${d3_hw#00:}" \
	--spa 10.1.0.3 --tpa 10.1.0.1 --op 1 || fail "mkpcap arp"
ctl replay "$T/arp.pcap" d3 >/dev/null || fail "replay"
sleep 0.3
ns c1 ping -c 3 -W 3 10.1.0.3 >"$T/p6" 2>&1 || { cat "$T/p6"; fail "c1 -> d3 after its flag was claimed"; }
fails=$(stats c1 cm_failures)
[ "${fails:-0}" -gt "${fails0:-0}" ] || fail "no failed connection counted ($fails0 -> $fails)"
ok "a peer that claims RC but refuses: connection failed, datagrams instead ($(grep -c ' 0% packet loss' "$T/p6") ping run lost nothing)"

# 4b: a REQ to c1's IPoIB service ID whose private data is not {QPN, MTU}
# (all zero: MTU 0) is rejected, and c1 carries on
rej0=$(stats c1 cm_rejected)
"$BIN/tests/rctest" -F "soft:$SOCK" --node evil client \
	--dst "$(fabtest info c1 | sed -n 's/^gid //p')" --sid "0x10000000$(printf %08x "$c1_qpn")" \
	--pdata "" --timeout 10000 >"$T/evil.out" 2>&1
cat "$T/evil.out"
grep -q '^rejected reason 28 ' "$T/evil.out" || fail "4b: a REQ with MTU 0 was not rejected"
rej=$(stats c1 cm_rejected)
[ "${rej:-0}" -gt "${rej0:-0}" ] || fail "4b: c1 counted no rejected request"
ns c2 ping -c 2 -W 3 -s 30000 -M do 10.1.0.1 >"$T/p7" 2>&1 || { cat "$T/p7"; ctl cm; fail "4b: c1 unusable after a bad REQ"; }
ok "4b: a REQ to c1's IPoIB service with private data {0, 0}: rejected (reason 28), counted"

# 4c: a peer that takes the connection and then no frame: rctest on node
# "sink" listens on the IPoIB service ID of a made-up UD QPN and posts no
# receive (RNR NAK for ever, which rnr_retry 7 never gives up on); a
# spoofed ARP gives 10.1.0.9 its GID, that QPN and the RC flag.  What c1
# sends to 10.1.0.9 fills the connection's window and then stops c1's
# TUN; after 5 s with no send completed the connection fails (cm_stalls)
# and c1's other traffic flows again
sink_qpn=123456
sink_gid=$(fabtest info sink | sed -n 's/^sgid //p')
sink_hw="80:12:34:56:$(python3 -c 'import ipaddress,sys; print(":".join("%02x" % b for b in ipaddress.IPv6Address(sys.argv[1]).packed))' "$sink_gid")"
ns_bg SINK_PID c1 "$BIN/tests/rctest" -F "soft:$SOCK" --node sink stream-server \
	--sid "0x1000000000$sink_qpn" --recv-delay 600000 >"$T/sink.out" 2>&1
for i in $(seq 1 50); do grep -q '^listening' "$T/sink.out" && break; sleep 0.1; done
grep -q '^listening' "$T/sink.out" || { cat "$T/sink.out"; fail "4c: rctest did not listen"; }
python3 "$MK" arp "$T/arp9.pcap" --slid "$d3_lid" --dlid "$c1_lid" \
	--dqpn "$c1_qpn" --srcqp "0x$sink_qpn" --sha "$sink_hw" \
	--spa 10.1.0.9 --tpa 10.1.0.1 --op 1 || fail "mkpcap arp"
ctl replay "$T/arp9.pcap" d3 >/dev/null || fail "replay"
sleep 0.3
st0=$(stats c1 cm_stalls) stops0=$(stats c1 cm_tx_stops)
# datagrams of 60000 bytes for 4 s: more than a window of 512 frames and
# the 256 KiB that stop the TUN after it, however long the connection
# takes to come up (a fixed burst of 700 could all be gone, and dropped
# while the connection was made, on a loaded machine)
ns c1 timeout 20 python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setblocking(False)
end = time.time() + 4
while time.time() < end:
    try:
        s.sendto(b"x" * 60000, ("10.1.0.9", 9))
    except OSError:
        time.sleep(0.005)
' || fail "4c: the datagrams to 10.1.0.9"
t0=$(date +%s)
ok4c=
for i in $(seq 1 30); do
	if ns c1 ping -c 1 -W 1 10.1.0.2 >/dev/null 2>&1; then ok4c=1; break; fi
done
t1=$(date +%s)
kill "$SINK_PID" 2>/dev/null
[ -n "$ok4c" ] || { ctl cm; fail "4c: c1 -> c2 still dead 30 s after a peer stopped taking frames"; }
st=$(stats c1 cm_stalls) stops=$(stats c1 cm_tx_stops)
[ "$((stops - stops0))" -ge 1 ] || fail "4c: the TUN was never stopped (the test did not fill the window)"
[ "$((st - st0))" -ge 1 ] || fail "4c: no stalled connection counted"
ok "4c: a peer that takes no frame: c1's TUN stopped, the connection failed after $((t1 - t0)) s (cm_stalls $((st - st0))), c1 -> c2 flows again"

# 5: idle connections are reaped, by either side; the next frame
# connects again at once (a peer's close is no failure)
fails0=$(stats c1 cm_failures)
sleep 4
# (each connection is reaped by whichever end's once-a-second tick comes
# first; the other sees a disconnect: count both hosts)
r1=$(stats c1 cm_reaped)
r2=$(stats c2 cm_reaped)
reaped=$(( ${r1:-0} + ${r2:-0} ))
[ "$reaped" -ge 1 ] || fail "no idle connection reaped by c1 or c2"
ns c1 ping -c 1 -W 3 -s 20000 -M do 10.1.0.2 >/dev/null || fail "a new connection after the reaping"
ns c2 ping -c 1 -W 3 -s 20000 -M do 10.1.0.1 >/dev/null || fail "c2: a new connection after the reaping"
expect_eq "5: c1's failures (reaping is none)" "$(stats c1 cm_failures)" "$fails0"
ok "idle connections reaped ($reaped), a new one made when needed"

# the capture: the IPoIB CM REQ
ctl capture off >/dev/null
sleep 1.2
# the RPC-over-RDMA and Ethernet-over-IB heuristics misread RC payloads
# that are pieces of IPoIB frames (as in rc_soft.sh)
ts() {
	tshark --disable-heuristic rpcrdma_infiniband \
		--disable-heuristic eth_over_ib -r "$T/cap.pcap" "$@" 2>/dev/null
}
bad=$(ts -Y '_ws.malformed || _ws.expert.severity == error' | wc -l)
[ "$bad" -eq 0 ] || { ts -Y '_ws.malformed || _ws.expert.severity == error' | head; fail "capture: $bad malformed packets"; }
sid=$(ts -Y 'infiniband.mad.attributeid == 0x0010' -T fields -e infiniband.cm.req.serviceid | head -n1)
echo "capture: first REQ service ID $sid"
case "$sid" in 0x10000000000000*|0x100000000000*) ;; *) fail "capture: REQ service ID $sid is not IPoIB's" ;; esac
pd=$(ts -Y 'infiniband.mad.attributeid == 0x0010' -T fields -e infiniband.cm.req.private | head -n1 | tr -d :)
[ "${pd:8:8}" = "0000fff4" ] || fail "capture: REQ private data $pd does not end its QPN with MTU 65524"
ok "capture: CM REQ to service $sid, private data {QPN 0x${pd:0:8}, MTU 65524}, nothing malformed"
fabric_alive
