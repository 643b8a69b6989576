#!/bin/bash
# The --pcap capture decodes in tshark (an independent dissector) with the
# values that were sent, and without malformed-packet or error warnings.
. "$(dirname "$0")/lib.bash"
command -v tshark >/dev/null || skip "tshark not installed"

MGID=ff12:401b:ffff::2
start_fabric --pcap "$T/cap.pcap"
h1_lid=$(fabtest info h1 | sed -n 's/^lid //p')
start_recv u h2 --qkey 0x1234 --count 3
start_recv m h3 --join "$MGID" --count 1
fabtest send h1 --dlid $u_LID --dqpn $u_QPN --qkey 0x1234 --count 3 --size 100 >/dev/null
fabtest send h1 --dlid $m_MLID --mgid $MGID --data multicast >/dev/null
wait_recv u
wait_recv m
stop_fabric	# flushes the capture

# the datagrams; the SA MADs of the join are checked in sa_capture.sh
tshark -r "$T/cap.pcap" -Y 'infiniband.bth.destqp != 1' -T fields -E separator=' ' \
	-e infiniband.lrh.dlid -e infiniband.lrh.slid -e infiniband.lrh.lnh \
	-e infiniband.lrh.pktlen -e infiniband.bth.opcode -e infiniband.bth.p_key \
	-e infiniband.bth.destqp -e infiniband.deth.q_key -e infiniband.grh.dgid \
	>"$T/fields" 2>"$T/tshark.err" || { cat "$T/tshark.err"; fail "tshark"; }
cat "$T/fields"
[ "$(wc -l <"$T/fields")" = 4 ] || tshark -r "$T/cap.pcap" 2>&1	# what is there
expect_eq "packets in capture" "$(wc -l <"$T/fields")" 4

read -r dlid slid lnh pktlen op pkey destqp qkey dgid < <(head -1 "$T/fields")
expect_eq "unicast DLID" "$(printf 0x%04x "$dlid")" "$u_LID"
expect_eq "unicast SLID" "$(printf 0x%04x "$slid")" "$h1_lid"
expect_eq "unicast LNH (BTH next)" "$((lnh))" 2
# 8 LRH + 12 BTH + 8 DETH + 100 payload + 4 ICRC = 132 bytes = 33 words
expect_eq "PktLen" "$pktlen" 33
expect_eq "opcode UD SEND_ONLY" "$op" 100
expect_eq "P_Key" "$(printf 0x%04x "$pkey")" 0xffff
expect_eq "DestQP" "$(printf 0x%06x "$destqp")" "$u_QPN"
expect_eq "Q_Key" "$(printf 0x%08x "$qkey")" 0x00001234

read -r dlid slid lnh pktlen op pkey destqp qkey dgid < <(tail -1 "$T/fields")
expect_eq "multicast DLID" "$(printf 0x%04x "$dlid")" "$m_MLID"
expect_eq "multicast LNH (GRH next)" "$((lnh))" 3
expect_eq "multicast DGID" "$dgid" "$MGID"
expect_eq "multicast DestQP" "$(printf 0x%06x "$destqp")" 0xffffff
expect_eq "multicast Q_Key" "$(printf 0x%08x "$qkey")" 0x00000b1b

bad=$(tshark -r "$T/cap.pcap" -Y '_ws.malformed || _ws.expert.severity >= "error"' 2>/dev/null | wc -l)
expect_eq "malformed or error packets" "$bad" 0
tshark -r "$T/cap.pcap" -V 2>/dev/null | grep -qi malformed && fail "tshark -V mentions malformed"

# the capture replays: every packet of it (4 datagrams, the join's 2 MADs)
# is switched again as h1's; so does its pcapng form, as editcap and tshark
# write it, into a fresh subnet with the same counters afterwards
replay_stats() {	# FILE -> the subnet's counters after replaying it
	start_fabric
	ctl replay "$1" h1 >"$T/replay.out" || { cat "$T/replay.out"; fail "replay $1"; }
	grep -q "replayed 6 packet" "$T/replay.out" || { cat "$T/replay.out"; fail "$1 does not replay"; }
	[ "$(counter rx_packets)" = 6 ] || fail "$1: replayed packets not switched"
	ctl stats
	stop_fabric
}
replay_stats "$T/cap.pcap" >"$T/stats.pcap"
grep -q '^rx_packets 6$' "$T/stats.pcap" || { cat "$T/stats.pcap"; fail "no counters"; }
editcap -F pcapng "$T/cap.pcap" "$T/cap.pcapng" || fail "editcap"
tshark -r "$T/cap.pcap" -F pcapng -w "$T/tshark.pcapng" 2>/dev/null || fail "tshark -w"
for f in cap.pcapng tshark.pcapng; do
	[ "$(head -c 4 "$T/$f" | od -An -tx1 | tr -d ' ')" = 0a0d0d0a ] ||
		fail "$f is not pcapng"
	replay_stats "$T/$f" >"$T/stats.ng"
	diff "$T/stats.pcap" "$T/stats.ng" || fail "$f replays unlike the pcap"
	ok "$f (pcapng) replays as the pcap does: 6 packets, the same counters"
done
ok "tshark_capture"
