#!/bin/bash
# RDS between IB hosts of the software subnet (issue 15): unmodified
# python3 AF_RDS programs (rds_progs.py) under LD_PRELOAD=libibgw_preload.so
# on h1 and h2, each an ipoibd host with its RDS service:
#  - the kernel's error codes (ENOTCONN before bind, EINVAL for a second
#    bind, ANY, multicast, EADDRNOTAVAIL for h2's address on h1,
#    EADDRINUSE, EMSGSIZE past sndbuf/2 and past 1 MiB, ...);
#  - echoes of 1 B .. 1 MiB both ways, the sender's address and port as
#    each side saw them; 40 sockets on 40 ports;
#  - poll, select, epoll readiness, MSG_PEEK, MSG_TRUNC, non-blocking
#    EAGAIN; a forked child using its parent's socket; the socket after
#    os.dup and in an exec()ed program;
#  - 10,000 datagrams in order, none lost, and what carried them: the RDS
#    services' and endpoints' counters against the count, the IPoIB
#    link's bytes meanwhile (no UDP/IP), ibfabricd's CM report (RDS's
#    RDMA_PS_TCP service ID of port 18634);
#  - a slow receiver: its port marked congested (map updates counted on
#    both sides), nothing lost, nothing dropped; a non-blocking sender to
#    a congested port gets ENOBUFS;
#  - an RDS ping (port 0) answered by h2's endpoint;
#  - to the host's own address (the kernel's loop transport): echoes of
#    every size, a ping, a slow receiver fed from its own host (congested,
#    nothing lost), and no RDS connection made for any of it; the same
#    slow receiver on 127.0.0.1 fed from 127.0.0.2;
#  - IPv6: round trips and 2000 datagrams between [fd00:5::1] and
#    [fd00:5::2] (sockaddr_in6, a C program);
#  - a program without AF_RDS under the preload: one getsockname per
#    descriptor it uses, none per call;
#  - ipoibd stopping: a blocked receive fails with ECONNRESET.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
command -v python3 >/dev/null || fail "python3 not installed (make deps)"
PY=$TOP/tests/integration/rds_progs.py
A1=10.5.0.1 A2=10.5.0.2
start_fabric
B1=fd00:5::1 B2=fd00:5::2
sdp_host h1 --address $A1/24 --address $B1/64 --no-sdp
sdp_host h2 --address $A2/24 --address $B2/64 --no-sdp
for i in $(seq 1 50); do
	grep -q "RDS service on @ibgw-rds" "$T/h1.log" && break
	sleep 0.1
done
grep -q "RDS service on @ibgw-rds" "$T/h1.log" ||
	{ cat "$T/h1.log"; fail "h1 has no RDS service"; }
ns h1 ping -c 1 -W 5 $A2 >/dev/null || fail "no IPoIB between h1 and h2"

py() {	# HOST ARGS...: a program under the preload, bounded
	local n=$1
	shift
	pre "$n" timeout 60 python3 "$PY" "$@"
}

# 1: errors, on h1 alone
py h1 errors $A1 $A2 >"$T/errors.log" 2>&1 ||
	{ cat "$T/errors.log"; fail "error codes"; }
ok "$(tail -n1 "$T/errors.log"): $(grep -c ': E' "$T/errors.log") codes"

# 2: echoes both ways, sizes 1 B .. 1 MiB, addresses and ports
pre_bg ES2 h2 python3 "$PY" echo-server $A2 5000 0 >"$T/es2.log" 2>&1
pre_bg ES1 h1 python3 "$PY" echo-server $A1 5000 0 >"$T/es1.log" 2>&1
for i in $(seq 1 50); do
	grep -q bound "$T/es2.log" && grep -q bound "$T/es1.log" && break
	sleep 0.1
done
sizes="1 2 100 4095 4096 4097 8192 65536 100000 1000000 1048576"
py h1 echo-client $A1 $A2 5000 $sizes >"$T/ec1.log" 2>&1 ||
	{ cat "$T/ec1.log" "$T/es2.log"; fail "h1 -> h2 echoes"; }
py h2 echo-client $A2 $A1 5000 $sizes >"$T/ec2.log" 2>&1 ||
	{ cat "$T/ec2.log" "$T/es1.log"; fail "h2 -> h1 echoes"; }
port1=$(sed -n 's/.* port \([0-9]*\)$/\1/p' "$T/ec1.log")
grep -q "^from $A1:$port1 1048576\$" "$T/es2.log" ||
	{ cat "$T/es2.log"; fail "h2 did not see h1's datagrams from $A1:$port1"; }
ok "echoes of $(echo $sizes | wc -w) sizes (1 B .. 1 MiB) both ways; h2 saw h1 as $A1:$port1"

# 3: readiness, peek, truncation, non-blocking; fork; many sockets
py h1 ready $A1 $A2 5000 >"$T/ready.log" 2>&1 ||
	{ cat "$T/ready.log"; fail "readiness"; }
ok "$(tail -n1 "$T/ready.log")"
py h1 fork $A1 $A2 5000 >"$T/fork.log" 2>&1 ||
	{ cat "$T/fork.log"; fail "fork"; }
ok "$(tail -n1 "$T/fork.log")"
py h1 exec $A1 $A2 5000 >"$T/exec.log" 2>&1 ||
	{ cat "$T/exec.log"; fail "dup and exec"; }
ok "$(tail -n1 "$T/exec.log")"
pre_bg MS h2 timeout 60 python3 "$PY" multi-server $A2 7000 40 10 >"$T/ms.log" 2>&1
sleep 1
py h1 multi-client $A1 $A2 7000 40 10 >"$T/mc.log" 2>&1 ||
	{ cat "$T/mc.log" "$T/ms.log"; fail "many sockets"; }
wait "$MS" || { cat "$T/ms.log"; fail "multi-server"; }
ok "$(tail -n1 "$T/mc.log")"

# 4: 10,000 in order, and what carried them
tx0=$(stat_of h1 rds_service.tx_msgs)
rx0=$(stat_of h2 rds_service.rx_msgs)
ep0=$(stat_of h1 rds.tx_msgs)
ipo0=$(stat_of h1 tx_bytes)
pre_bg FR h2 timeout 90 python3 "$PY" flood-recv $A2 6000 10000 0 >"$T/fr.log" 2>&1
for i in $(seq 1 50); do grep -q bound "$T/fr.log" && break; sleep 0.1; done
py h1 flood-send $A1 $A2 6000 10000 1000 >"$T/fs.log" 2>&1 ||
	{ cat "$T/fs.log"; fail "flood-send"; }
wait "$FR" || { cat "$T/fr.log"; fail "10,000 datagrams"; }
tx=$(( $(stat_of h1 rds_service.tx_msgs) - tx0 ))
rx=$(( $(stat_of h2 rds_service.rx_msgs) - rx0 ))
ep=$(( $(stat_of h1 rds.tx_msgs) - ep0 ))
ipo=$(( $(stat_of h1 tx_bytes) - ipo0 ))
[ "$tx" -ge 10000 ] && [ "$rx" -ge 10000 ] && [ "$ep" -ge 10000 ] ||
	fail "RDS counters for 10,000: service tx $tx, h2 rx $rx, endpoint tx $ep"
[ "$ipo" -lt 100000 ] || fail "IPoIB carried $ipo bytes during 10 MB of RDS"
ctl cm >"$T/cm.txt"
grep -qi "service 0x00000000010648ca" "$T/cm.txt" ||
	{ cat "$T/cm.txt"; fail "no CM connection on RDS's service ID (port 18634)"; }
ok "$(tail -n1 "$T/fr.log") ($(tail -n1 "$T/fs.log" | sed 's/.*sent //')); counters: service tx $tx, h2 rx $rx, endpoint tx $ep, IPoIB $ipo bytes; CM on 0x10648ca"

# 5: a slow receiver: congestion, nothing lost
c0=$(stat_of h2 rds_service.cong_set)
m0=$(stat_of h1 rds.cong_rx)
d0=$(stat_of h2 rds_service.rx_dropped)
pre_bg SR h2 timeout 90 python3 "$PY" flood-recv $A2 6001 400 3 >"$T/sr.log" 2>&1
for i in $(seq 1 50); do grep -q bound "$T/sr.log" && break; sleep 0.1; done
py h1 flood-send $A1 $A2 6001 400 65536 >"$T/ss.log" 2>&1 ||
	{ cat "$T/ss.log"; fail "slow receiver's sender"; }
wait "$SR" || { cat "$T/sr.log"; fail "slow receiver"; }
c=$(( $(stat_of h2 rds_service.cong_set) - c0 ))
m=$(( $(stat_of h1 rds.cong_rx) - m0 ))
d=$(( $(stat_of h2 rds_service.rx_dropped) - d0 ))
[ "$c" -ge 1 ] && [ "$m" -ge 1 ] ||
	fail "a slow receiver: h2 marked congested $c times, h1 got $m map updates"
[ "$d" -eq 0 ] || fail "a slow receiver: h2 dropped $d"
ok "slow receiver: $(tail -n1 "$T/sr.log"); h2's port congested $c times, h1 took $m map updates, nothing dropped"

# 5b: a non-blocking sender to a congested port: ENOBUFS, as the
# kernel's (the preload reads the port's bit on the service's congestion
# board); what was queued before is held by the service, and the
# socket's close while held frees it
h0=$(stat_of h1 rds_service.tx_cong_holds)
k0=$(stat_of h1 rds_service.sockets_closed)
o0=$(stat_of h1 rds_service.sockets_opened)
pre_bg SK h2 timeout 60 python3 "$PY" sink $A2 6002 8 >"$T/sink.log" 2>&1
for i in $(seq 1 50); do grep -q bound "$T/sink.log" && break; sleep 0.1; done
py h1 nb-cong $A1 $A2 6002 >"$T/nb.log" 2>&1 ||
	{ cat "$T/nb.log"; fail "a non-blocking sender to a congested port"; }
h=$(( $(stat_of h1 rds_service.tx_cong_holds) - h0 ))
for i in $(seq 1 20); do
	k=$(( $(stat_of h1 rds_service.sockets_closed) - k0 ))
	o=$(( $(stat_of h1 rds_service.sockets_opened) - o0 ))
	[ "$k" -ge "$o" ] && break
	sleep 0.3
done
[ "$k" -ge "$o" ] || fail "a socket closed while held: $o opened, $k closed"
wait "$SK"
ok "$(tail -n1 "$T/nb.log"); $h held by the service; the socket's close freed it"

# 6a: to h1's own address, as the kernel's loop transport takes it (it
# used to open a connection to itself that never came up: lost unseen)
ca0=$(stat_of h1 rds.conns_active)
lp0=$(stat_of h1 rds.loop_msgs)
lc0=$(stat_of h1 rds_service.cong_set)
ld0=$(stat_of h1 rds_service.rx_dropped)
py h1 echo-client $A1 $A1 5000 $sizes >"$T/el.log" 2>&1 ||
	{ cat "$T/el.log" "$T/es1.log"; fail "h1 -> h1 echoes"; }
py h1 ping $A1 $A1 >"$T/pl.log" 2>&1 || { cat "$T/pl.log"; fail "a ping of h1's own address"; }
pre_bg LR h1 timeout 90 python3 "$PY" flood-recv $A1 6002 400 3 >"$T/lr.log" 2>&1
for i in $(seq 1 50); do grep -q bound "$T/lr.log" && break; sleep 0.1; done
py h1 flood-send $A1 $A1 6002 400 65536 >"$T/ls.log" 2>&1 ||
	{ cat "$T/ls.log"; fail "h1 -> h1 slow receiver's sender"; }
wait "$LR" || { cat "$T/lr.log"; fail "h1 -> h1 slow receiver"; }
lp=$(( $(stat_of h1 rds.loop_msgs) - lp0 ))
lc=$(( $(stat_of h1 rds_service.cong_set) - lc0 ))
expect_eq "connections made for h1 -> h1" $(( $(stat_of h1 rds.conns_active) - ca0 )) 0
expect_eq "h1 -> h1 datagrams dropped" $(( $(stat_of h1 rds_service.rx_dropped) - ld0 )) 0
# 11 echoes each way, the ping, 400 to the slow receiver
[ "$lp" -ge 423 ] || fail "h1's endpoint handed over $lp messages to its own address, not 423"
[ "$lc" -ge 1 ] || fail "the slow receiver on h1 was never marked congested"
ok "to h1's own address: $(tail -n1 "$T/el.log"); $(tail -n1 "$T/pl.log"); $(tail -n1 "$T/lr.log") (congested $lc times); $lp handed over, no connection"

# 6b: on the loop transport's addresses: a slow receiver on 127.0.0.1
# fed from 127.0.0.2 (the kernel queues without congestion there; ours
# marks the port congested and holds the sender back): all 400 in order
lp0=$(stat_of h1 rds.loop_msgs)
ld0=$(stat_of h1 rds_service.rx_dropped)
pre_bg LL h1 timeout 90 python3 "$PY" flood-recv 127.0.0.1 6003 400 3 >"$T/llr.log" 2>&1
for i in $(seq 1 50); do grep -q bound "$T/llr.log" && break; sleep 0.1; done
py h1 flood-send 127.0.0.2 127.0.0.1 6003 400 65536 >"$T/lls.log" 2>&1 ||
	{ cat "$T/lls.log"; fail "127.0.0.2 -> 127.0.0.1: the sender"; }
wait "$LL" || { cat "$T/llr.log"; fail "127.0.0.2 -> 127.0.0.1: the slow receiver"; }
expect_eq "127.0.0.2 -> 127.0.0.1 datagrams dropped" $(( $(stat_of h1 rds_service.rx_dropped) - ld0 )) 0
[ $(( $(stat_of h1 rds.loop_msgs) - lp0 )) -ge 400 ] || fail "127.0.0.2 -> 127.0.0.1 did not take the loop"
ok "loopback: $(tail -n1 "$T/llr.log") from 127.0.0.2 to a slow receiver on 127.0.0.1"

# 6: ping
py h1 ping $A1 $A2 >"$T/ping.log" 2>&1 || { cat "$T/ping.log"; fail "RDS ping"; }
ok "$(tail -n1 "$T/ping.log")"
kill "$ES1" "$ES2" 2>/dev/null

# 6b: IPv6 (sockaddr_in6, as the kernel's RDS takes it; python3's AF_RDS
# is IPv4 only, so a C program, rds_sock_bench): round trips of a
# 3-fragment message, each echo from [B2]:6100, then 2000 datagrams of
# 9000 bytes counted by a sink, none lost
RSB=$BIN/tests/rds_sock_bench
[ -x "$RSB" ] || fail "no $RSB (make all)"
ns h1 ping -6 -c 1 -W 5 $B2 >/dev/null || fail "no IPv6 over IPoIB between h1 and h2"
pre_bg E6 h2 "$RSB" -t 60 echo $B2 6100 >"$T/e6.log" 2>&1
pre_bg S6 h2 "$RSB" -t 60 sink $B2 6101 >"$T/s6.log" 2>&1
sleep 1
out=$(pre h1 timeout 60 "$RSB" -t 60 rr $B1 $B2 6100 200 9000 2>&1) ||
	fail "IPv6 round trips: $out $(cat "$T/e6.log")"
case $out in
*" 200 round trips of 9000 bytes "*) ;;
*) fail "IPv6 round trips: '$out'" ;;
esac
ok "IPv6: $out"
out=$(pre h1 timeout 60 "$RSB" -t 60 send $B1 $B2 6101 2000 9000 2>&1) ||
	fail "IPv6 datagrams: $out $(cat "$T/s6.log")"
case $out in
*", received 2000") ;;
*) fail "IPv6 datagrams: '$out'" ;;
esac
ok "IPv6: $out"
wait "$E6" "$S6"

# 7: untouched: a UDP program pays one getsockname per descriptor it
# uses (each file python3 reads at start-up is one, ENOTSOCK), not one per
# call: 4000 more datagrams cost none more
command -v strace >/dev/null || fail "strace not installed (make deps)"
gsn() {	# N: getsockname calls of udp-loop N under the preload
	pre h1 strace -f -c -e trace=getsockname -o "$T/st$1.txt" \
		python3 "$PY" udp-loop "$1" >"$T/udp$1.log" 2>&1 ||
		{ cat "$T/udp$1.log"; fail "udp-loop $1 under the preload"; }
	awk '$NF == "getsockname" { print $4 }' "$T/st$1.txt"
}
g0=$(ns h1 strace -f -c -e trace=getsockname -o "$T/st.txt" \
	python3 "$PY" udp-loop 10 >/dev/null &&
	awk '$NF == "getsockname" { print $4 }' "$T/st.txt")
g1=$(gsn 1000)
g5=$(gsn 5000)
[ -n "$g1" ] && [ -n "$g5" ] && [ "$g5" -le $((g1 + 2)) ] ||
	fail "getsockname calls under the preload: $g1 for 1000 UDP round trips, $g5 for 5000"
ok "a UDP program under the preload: $g1 getsockname calls for 1000 round trips, $g5 for 5000 (${g0:-0} without the preload)"

# 8: the service goes (ipoibd stops): a blocked receive fails with
# ECONNRESET, not an endless run of empty datagrams
pre_bg OR h2 timeout 30 python3 "$PY" orphan $A2 6003 >"$T/orphan.log" 2>&1
for i in $(seq 1 50); do grep -q bound "$T/orphan.log" && break; sleep 0.1; done
kill -TERM "$h2_PID"
wait "$OR" || { cat "$T/orphan.log"; fail "a socket whose service went"; }
ok "$(tail -n1 "$T/orphan.log")"
