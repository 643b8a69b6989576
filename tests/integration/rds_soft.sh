#!/bin/bash
# RDS between two endpoints of the software subnet (issue 15): rdspeer
# (ulp/rds/rds_ep.h) on two soft nodes, h1 = 10.1.0.1, h2 = 10.1.0.2:
#  1. both ways at once, each side's first send racing the other's
#     connect: 10,000 messages of 16..2000 bytes, 200 of 16 bytes..64 KiB,
#     20 of 1 MiB, 8 more port pairs, pings both ways; in order, none
#     lost, duplicated or corrupt (rdspeer --expect checks every byte);
#  2. the simultaneous first send again, five times: the race settles
#     (REJ int 1, backoff) and both deliver;
#  3. h2 killed mid-stream and restarted (a new process: new sequence
#     state): h1 resends what was unacknowledged, every message it sent
#     reached one of h2's two lives, every send acknowledged;
#  4. tshark on the capture: the CM REQ's rdma_cm IP header (RDS port
#     18634, IPv4, the two RDS addresses), REP, nothing malformed (with
#     tshark's RPC-over-RDMA heuristic off: it claims RDS SENDs);
#  5. ibfabricd --loss/--reorder/--dup: RC recovers, RDS intact;
#  6. congestion: a port congested in the receiver's map gets ENOBUFS at
#     the sender until the map update that clears it (run before 4);
#  7. IPv6 RDS addresses: port 16385, 56-byte private data (before 4);
#  8. messages to an unreachable peer wait, connects retried with backoff
#     until it comes (before 4).
# Counters asserted: ACKs, congestion maps, retransmits, reconnects, the
# send window filling (RDS_CONN_WINDOW) and everything arriving after.
. "$(dirname "$0")/lib.bash"
command -v tshark >/dev/null || fail "no tshark (run 'make deps')"
RP=$BIN/tests/rdspeer
[ -x "$RP" ] || fail "no $RP (make all)"

start_fabric --pcap "$T/rds.pcap"
gid_of() { fabtest info "$1" | sed -n 's/^gid //p'; }
G1=$(gid_of h1)
G2=$(gid_of h2)
[ -n "$G1" ] && [ -n "$G2" ] || fail "no GIDs for h1/h2"
# rdspeer as h1 or h2 (exec: a background peer's $! is rdspeer itself)
peer() {	# NODE ARGS...
	local n=$1
	shift
	case $n in
	h1) exec "$RP" --fabric "soft:$SOCK" --node h1 --addr 10.1.0.1 \
		--route 10.1.0.2="$G2" "$@" ;;
	h2) exec "$RP" --fabric "soft:$SOCK" --node h2 --addr 10.1.0.2 \
		--route 10.1.0.1="$G1" "$@" ;;
	esac
}
cnt() {	# OUTFILE COUNTER
	sed -n "s/^$2 //p" "$T/$1"
}
gt0() {	# OUTFILE COUNTER
	local v
	v=$(cnt "$1" "$2")
	[ "${v:-0}" -gt 0 ] || { cat "$T/$1"; fail "$1: $2 is '${v:-}', want > 0"; }
}

# 1: everything both ways at once
many_ports() {	# DST: 8 more port pairs, 100 messages each
	local i
	for i in 0 1 2 3 4 5 6 7; do
		echo "--send $1:$((2000 + i)):$((3000 + i)):100:16-5000"
	done
}
many_expect() {	# SRC
	local i
	for i in 0 1 2 3 4 5 6 7; do
		echo "--expect $1:$((3000 + i)):$((2000 + i)):100"
	done
}
common_send() {	# DST
	echo "--send $1:200:100:10000:16-2000 --send $1:201:101:200:16-65536" \
	     "--send $1:202:102:20:1048576 --ping $1"
	many_ports "$1"
}
common_expect() {	# SRC
	echo "--expect $1:100:200:10000 --expect $1:101:201:200" \
	     "--expect $1:102:202:20"
	many_expect "$1"
}
# shellcheck disable=SC2046
peer h2 --timeout 90 --linger 1 --stats $(common_send 10.1.0.1) \
	$(common_expect 10.1.0.1) >"$T/h2.out" 2>&1 &
P2=$!
PIDS+=("$P2")
# shellcheck disable=SC2046
(peer h1 --timeout 90 --linger 1 --stats $(common_send 10.1.0.2) \
	$(common_expect 10.1.0.2)) >"$T/h1.out" 2>&1
rc1=$?
wait "$P2"
rc2=$?
[ $rc1 -eq 0 ] || { cat "$T/h1.out"; fail "1: h1 exit $rc1"; }
[ $rc2 -eq 0 ] || { cat "$T/h2.out"; fail "1: h2 exit $rc2"; }
for h in h1 h2; do
	grep -q "^rdspeer: ok" "$T/$h.out" || fail "1: $h not ok"
	grep -q "^rdspeer: pong from " "$T/$h.out" || fail "1: $h: no pong"
	expect_eq "1: $h rx_msgs" "$(cnt $h.out rx_msgs)" 11022
	gt0 $h.out cong_tx
	gt0 $h.out cong_rx
	gt0 $h.out pings_rx
	gt0 $h.out pongs_tx
	for c in drop.short drop.long drop.bad_csum drop.bad_len \
		 drop.frag_mismatch drop.too_big dups acks_beyond; do
		expect_eq "1: $h $c" "$(cnt $h.out $c)" 0
	done
done
acks=$(( $(cnt h1.out acks_rx) + $(cnt h2.out acks_rx) ))
[ "$acks" -gt 0 ] || fail "1: no ACK-only frames either way"
# 20 messages of 1 MiB (256 fragments each) queued at once: the window of
# 512 unacknowledged fragments (RDS_CONN_WINDOW) shuts, and opens again
win=$(( $(cnt h1.out window_full) + $(cnt h2.out window_full) ))
[ "$win" -gt 0 ] || fail "1: the window of unacknowledged fragments never filled"
ok "1: both ways, 11,022 messages each (up to 1 MiB, 11 port pairs), pings; $(grep '^rdspeer: sent' "$T/h1.out"); ACK frames $acks, races h1 $(cnt h1.out races) h2 $(cnt h2.out races), window full h1 $(cnt h1.out window_full) h2 $(cnt h2.out window_full)"

# 2: simultaneous first sends
races=0
for i in 1 2 3 4 5; do
	peer h2 --timeout 30 --stats --send 10.1.0.1:11:10:50:16-9000 \
		--expect 10.1.0.1:10:11:50 >"$T/r2.out" 2>&1 &
	p=$!
	(peer h1 --timeout 30 --stats --send 10.1.0.2:11:10:50:16-9000 \
		--expect 10.1.0.2:10:11:50) >"$T/r1.out" 2>&1
	rc1=$?
	wait $p
	rc2=$?
	[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] ||
		{ cat "$T/r1.out" "$T/r2.out"; fail "2: round $i: exit $rc1/$rc2"; }
	races=$((races + $(cnt r1.out races) + $(cnt r2.out races) + \
		$(cnt r1.out stale) + $(cnt r2.out stale)))
done
ok "2: five simultaneous first sends, both delivered each time ($races REQs met a connect under way)"

# 3: h2 killed mid-stream, restarted
N=60000
peer h2 --bind 200 --log "$T/b1.log" --linger 120 --timeout 120 >"$T/b1.out" 2>&1 &
B=$!
PIDS+=("$B")
sleep 0.2
peer h1 --send 10.1.0.2:200:100:$N:16-3000 --timeout 90 --stats >"$T/a.out" 2>&1 &
A=$!
PIDS+=("$A")
for i in $(seq 1 400); do
	[ -s "$T/b1.log" ] && [ "$(wc -l <"$T/b1.log")" -ge 2000 ] && break
	sleep 0.005
done
kill -9 $B
wait $B 2>/dev/null
n1=$(wc -l <"$T/b1.log")
[ "$n1" -lt $N ] || fail "3: h2 had everything before it was killed"
sleep 0.3
peer h2 --bind 200 --log "$T/b2.log" --linger 120 --timeout 120 >"$T/b2.out" 2>&1 &
B=$!
PIDS+=("$B")
wait $A
rc=$?
kill $B 2>/dev/null
[ $rc -eq 0 ] || { cat "$T/a.out"; fail "3: h1 exit $rc"; }
have=$(cat "$T/b1.log" "$T/b2.log" | awk '$2 == 100 && $3 == 200 {print $4}' | sort -n -u | wc -l)
expect_eq "3: messages h2's two lives got between them" "$have" $N
gt0 a.out retransmits
gt0 a.out reconnects
ok "3: h2 killed after $n1 messages, restarted: h1 resent $(cnt a.out retransmits), reconnected ($(cnt a.out reconnects) attempts), all $N acknowledged and delivered"

# 6 (before the capture ends): congestion.  h2's port 200 is congested in
# its map from the start and cleared after 700 ms: h1's sends to it get
# ENOBUFS once the map has come, and go on when the update clears it
peer h2 --cong 200:700 --expect 10.1.0.1:100:200:20000 --stats \
	--timeout 30 >"$T/c2.out" 2>&1 &
p=$!
PIDS+=("$p")
sleep 0.2
(peer h1 --send 10.1.0.2:200:100:20000:16-100 --stats --timeout 30) \
	>"$T/c1.out" 2>&1
rc1=$?
wait $p
rc2=$?
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] ||
	{ cat "$T/c1.out" "$T/c2.out"; fail "6: exit $rc1/$rc2"; }
waits=$(sed -n 's/^rdspeer: \([0-9]*\) sends met a congested port$/\1/p' "$T/c1.out")
[ "${waits:-0}" -gt 0 ] || { cat "$T/c1.out"; fail "6: no send met the congested port"; }
[ "$(cnt c2.out cong_tx)" -ge 2 ] || fail "6: h2 sent no map update"
[ "$(cnt c1.out cong_rx)" -ge 2 ] || fail "6: h1 took no map update"
ok "6: congestion: $waits sends got ENOBUFS until h2's update cleared port 200 (h2 cong_tx $(cnt c2.out cong_tx), h1 cong_rx $(cnt c1.out cong_rx)); all 20000 delivered"

# 7 (before the capture ends): IPv6 RDS addresses (RDS_CM_PORT 16385,
# the 56-byte private data), both ways, pings
"$RP" --fabric "soft:$SOCK" --node h2 --addr fd00::2 --route fd00::1="$G1" \
	--expect '[fd00::1]:100:200:500' --send '[fd00::1]:200:100:500:16-9000' \
	--stats --timeout 30 >"$T/v2.out" 2>&1 &
p=$!
PIDS+=("$p")
"$RP" --fabric "soft:$SOCK" --node h1 --addr fd00::1 --route fd00::2="$G2" \
	--send '[fd00::2]:200:100:500:16-9000' --expect '[fd00::2]:100:200:500' \
	--ping fd00::2 --stats --timeout 30 >"$T/v1.out" 2>&1
rc1=$?
wait $p
rc2=$?
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] ||
	{ cat "$T/v1.out" "$T/v2.out"; fail "7: IPv6: exit $rc1/$rc2"; }
grep -q '^rds fd00::1 fd00::2 ' "$T/v1.out" || fail "7: no connection fd00::1 fd00::2"
ok "7: IPv6 RDS addresses: 500 messages each way, $(grep '^rdspeer: pong' "$T/v1.out")"

# 8: messages wait while the peer is unreachable (no ECONNREFUSED): h1
# sends before h2 exists; its connects fail and are retried with backoff
# (at most 1 s apart) until h2 comes
peer h1 --send 10.1.0.2:200:100:300:16-5000 --stats --timeout 30 \
	>"$T/w1.out" 2>&1 &
p=$!
PIDS+=("$p")
sleep 1.5
(peer h2 --expect 10.1.0.1:100:200:300 --timeout 30) >"$T/w2.out" 2>&1 ||
	{ cat "$T/w2.out"; fail "8: h2 exit"; }
wait $p || { cat "$T/w1.out"; fail "8: h1 exit"; }
[ "$(cnt w1.out connect_failed)" -ge 2 ] || { cat "$T/w1.out"; fail "8: h1 did not retry"; }
ok "8: 300 messages waited for an unreachable peer: $(cnt w1.out connect_failed) connects failed, then delivered"

# 4: tshark on the capture
stop_fabric
tshark -r "$T/rds.pcap" -Y 'infiniband.cm.req.ip_cm.ipv == 4' -T fields \
	-e infiniband.cm.req.serviceid.dport -e infiniband.cm.req.ip_cm.ipv \
	-e infiniband.cm.req.ip_cm.sip4 -e infiniband.cm.req.ip_cm.dip4 \
	-e infiniband.cm.req.ip_cm.sport >"$T/req.txt" 2>"$T/tshark.err" ||
	{ cat "$T/tshark.err"; fail "4: tshark"; }
[ -s "$T/req.txt" ] || fail "4: no CM REQ with rdma_cm's IP CM header decoded"
head -n3 "$T/req.txt"
# tshark 4.0 prints these fields in hex: port 18634 is 0x48ca
awk -F'\t' '$1 != "0x48ca" || $2 != "0x04" ||
	!(($3 == "10.1.0.1" && $4 == "10.1.0.2") || ($3 == "10.1.0.2" && $4 == "10.1.0.1"))' \
	"$T/req.txt" >"$T/req.bad"
[ ! -s "$T/req.bad" ] || { head "$T/req.bad"; fail "4: a REQ's IP CM header is not RDS's"; }
tshark -r "$T/rds.pcap" -Y 'infiniband.cm.req.ip_cm.ipv == 6' -T fields \
	-e infiniband.cm.req.serviceid.dport -e infiniband.cm.req.ip_cm.sip6 \
	-e infiniband.cm.req.ip_cm.dip6 >"$T/req6.txt" 2>/dev/null
[ -s "$T/req6.txt" ] || fail "4: no IPv6 REQ decoded"
awk -F'\t' '$1 != "0x4001" || !(($2 == "fd00::1" && $3 == "fd00::2") ||
	($2 == "fd00::2" && $3 == "fd00::1"))' "$T/req6.txt" >"$T/req6.bad"
[ ! -s "$T/req6.bad" ] || { head "$T/req6.bad"; fail "4: an IPv6 REQ's IP CM header is not RDS's"; }
reps=$(tshark -r "$T/rds.pcap" -Y 'infiniband.cm.rep' 2>/dev/null | wc -l)
[ "$reps" -gt 0 ] || fail "4: no CM REP"
# tshark has no RDS dissector; its RPC-over-RDMA heuristic claims RDS
# SENDs (a ping's header reads as an RPC call) and calls them malformed
mal=$(tshark -r "$T/rds.pcap" --disable-protocol rpcordma \
	-Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | wc -l)
expect_eq "4: malformed packets" "$mal" 0
ok "4: tshark: $(wc -l <"$T/req.txt") REQs with RDS's IP CM header (port 18634, IPv4, 10.1.0.x), $(wc -l <"$T/req6.txt") IPv6 ones (port 16385, fd00::x), $reps REPs"

# 5: a lossy, reordering, duplicating fabric
start_fabric --loss 0.01 --reorder 0.01 --dup 0.01 --seed 7
peer h2 --timeout 90 --stats --send 10.1.0.1:21:20:2000:16-20000 \
	--expect 10.1.0.1:20:21:2000 >"$T/f2.out" 2>&1 &
p=$!
PIDS+=("$p")
(peer h1 --timeout 90 --stats --send 10.1.0.2:21:20:2000:16-20000 \
	--expect 10.1.0.2:20:21:2000) >"$T/f1.out" 2>&1
rc1=$?
wait $p
rc2=$?
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] ||
	{ cat "$T/f1.out" "$T/f2.out"; tail "$T/fabric.log"; fail "5: exit $rc1/$rc2"; }
for h in f1 f2; do
	for c in drop.bad_len drop.frag_mismatch drop.bad_csum dups; do
		expect_eq "5: $h $c" "$(cnt $h.out $c)" 0
	done
done
lost=$(counter drop.fault_loss)
dup=$(counter fault_dup)
held=$(counter fault_reorder)
[ "${lost:-0}" -gt 0 ] && [ "${dup:-0}" -gt 0 ] && [ "${held:-0}" -gt 0 ] ||
	fail "5: the fabric did no harm (lost ${lost:-} dup ${dup:-} reordered ${held:-})"
ok "5: loss/reorder/dup 1%: 2000 messages each way intact; the fabric lost $lost, duplicated $dup, reordered $held packets; $(grep '^rdspeer: sent' "$T/f1.out")"
stop_fabric
