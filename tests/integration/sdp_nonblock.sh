#!/bin/bash
# Non-blocking connect and SO_LINGER 0 through libibgw_preload.so between
# two IB hosts of the software subnet (issue 14, item 3).  h1 runs the
# clients (sdp_nonblock.py), h2 the servers.
#  - a non-blocking connect returns EINPROGRESS at once, and poll, select
#    and epoll (edge-triggered) report it writable only once the SDP
#    connection is up: h2's ipoibd is stopped meanwhile, and it stays
#    unwritable (recv/send EAGAIN, getpeername ENOTCONN, connect EALREADY)
#    until h2 goes on; then SO_ERROR 0, the names, EISCONN, a 2 MB echo
#    compared by sha256; the same across an exec while connecting (the
#    new image asks the service what it is); SDP carried it (h1's service counts connections
#    answered at once, no failures);
#  - the same with IPv6 (AF_INET6 socket, epoll edge-triggered);
#  - epoll sets joined before connect, as nginx joins them (edge and
#    level, non-blocking and blocking connect): writable, then readable;
#  - 'use sdp' to a port with no SDP listener (a REJ): EINPROGRESS within
#    1 s, then POLLERR|POLLHUP and SO_ERROR ECONNREFUSED, then 0;
#    to h2 with its ipoibd stopped: EINPROGRESS within 1 s, ETIMEDOUT
#    after IBGW_SDP_TIMEOUT_MS (3 s): a wait for the outcome would take 2 or 3 s;
#  - 'both' to a TCP-only server on h2 (no SDP listener): EINPROGRESS,
#    then the 2 MB echo over the service's TCP relay (tcp_relays);
#  - curl (a non-blocking connect) fetches 5 MB over SDP (h1's service
#    answered it at once, h1's endpoint received the bytes);
#  - SO_LINGER {1, 0} then close: AbortConn, not DisConn (h1's
#    linger_aborts and aborts_tx, h2's aborts_rx rise, h2's disconn_rx
#    does not), and the server reads less than was sent; the same
#    without SO_LINGER is a DisConn and the server reads every byte;
#  - SO_LINGER {1, 10}: close waits until the slow server has read it
#    all; {1, 1}: close gives up after a second, the rest still goes; the
#    same as over TCP in the same run;
#  - a server's SO_LINGER 0 close as its client sees it: the first read
#    (or write, or SO_ERROR; or a read waiting when it comes) gives
#    ECONNRESET, then end of file and EPIPE, and SIGPIPE only on the
#    second write, the same as over TCP in the same run;
#  - a server sends 1 MB, then resets before its client reads: the
#    client still reads all of it, then ECONNRESET (or its write fails
#    with ECONNRESET first, and its reads still get it all), as over TCP
#    (in the same run: what TCP's window took, then ECONNRESET); a
#    client that closes without reading leaves nothing behind;
#  - an accepted stream inherits its listener's options (set before
#    listen or after): SO_LINGER {1, 0}, SO_KEEPALIVE, TCP_KEEPIDLE,
#    TCP_NODELAY, SO_RCVBUF read back as over TCP, and its close resets;
#  - SO_LINGER 0 through the gateway (router mode, g1 -> lan): the LAN
#    TCP server reads part of the data, then ECONNRESET (an RST); a LAN
#    server's RST: the IB client's reads after it as over TCP; 1 MB sent
#    before a reset, both ways through the gateway (a LAN server to an
#    IB client, an IB server behind an export to a LAN client): all of
#    it read, then ECONNRESET, as over TCP;
#  - no record or descriptor left behind in h1's service.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
for p in python3 curl; do
	command -v $p >/dev/null || skip "no $p"
done
PY=$TOP/tests/integration/sdp_nonblock.py
SEM=$TOP/tests/integration/sdp_semantics.py
cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p3=0x8003, ipoib : g1=full, gw=full;
CONF
start_fabric -P "$T/partitions.conf"
# h1's descriptors are counted at the end: no spare RC QPs (three
# descriptors each) to tell from a leak; qp_pool.sh checks the pool's own
IBGW_SOFT_QP_POOL=0 sdp_host h1 --address 10.1.0.1/24 --address fd00:1b::1/64
sdp_host h2 --address 10.1.0.2/24 --address fd00:1b::2/64
A=10.1.0.2

pre_bg SRV h2 python3 "$SEM" server 7500 >"$T/srv.log" 2>&1
wait_port h2 7500
fds0=$(ls /proc/"$h1_PID"/fd | wc -l)

# 1: readiness only once up
a0=$(stat_of h1 sdp_service.connects_async)
c0=$(stat_of h1 sdp_service.connects)
f0=$(stat_of h1 sdp_service.connect_failures)
for m in poll select epollet; do
	out=$(pre h1 timeout 60 python3 "$PY" ready $m $A 7500 "$h2_PID" 2>&1) ||
		{ kill -CONT "$h2_PID"; fail "ready $m: $out"; }
	ok "$out"
done
out=$(pre h1 timeout 60 python3 "$PY" exec $A 7500 "$h2_PID" 2>&1) ||
	{ kill -CONT "$h2_PID"; fail "exec: $out"; }
ok "$out"
expect_eq "connects answered at once" "$(delta h1 sdp_service.connects_async "$a0")" 4
expect_eq "of them SDP connections" "$(delta h1 sdp_service.connects "$c0")" 4
expect_eq "SDP connects failed" "$(delta h1 sdp_service.connect_failures "$f0")" 0

# IPv6: the same path with an AF_INET6 socket
pre_bg SRV6 h2 python3 "$SEM" server 7501 fd00:1b::2 >"$T/srv6.log" 2>&1
wait_port h2 7501
a0=$(stat_of h1 sdp_service.connects_async)
c0=$(stat_of h1 sdp_service.connects)
out=$(pre h1 timeout 60 python3 "$PY" both fd00:1b::2 7501 2>&1) || fail "IPv6: $out"
expect_eq "IPv6: answered at once" "$(delta h1 sdp_service.connects_async "$a0")" 1
expect_eq "IPv6: SDP connections" "$(delta h1 sdp_service.connects "$c0")" 1
ok "$out"

# epoll registrations made before connect (nginx's order) carried to
# the stream
for how in nb block; do
	c0=$(stat_of h1 sdp_service.connects)
	out=$(pre h1 timeout 60 python3 "$PY" early $A 7500 $how 2>&1) || fail "early epoll, $how: $out"
	expect_eq "early epoll, $how: SDP connections" "$(delta h1 sdp_service.connects "$c0")" 1
	ok "$out"
done

# 2: failures after EINPROGRESS
printf 'use sdp client * *:*\n' >"$T/sdp.conf"
out=$(LIBSDP_CONFIG_FILE=$T/sdp.conf pre h1 timeout 30 python3 "$PY" fail $A 7599 ECONNREFUSED 2>&1) ||
	fail "refused: $out"
ok "no SDP listener, 'use sdp': $out"
kill -STOP "$h2_PID"
out=$(LIBSDP_CONFIG_FILE=$T/sdp.conf IBGW_SDP_TIMEOUT_MS=3000 pre h1 timeout 30 \
	python3 "$PY" fail $A 7500 ETIMEDOUT 2>&1)
r=$?
kill -CONT "$h2_PID"
[ $r = 0 ] || fail "timeout: $out"
ok "h2's ipoibd stopped, 'use sdp': $out"

# 3: 'both' against a TCP-only server: the service's TCP relay
ns_bg TCPSRV h2 python3 "$SEM" server 7600 >"$T/tcpsrv.log" 2>&1
wait_port h2 7600
r0=$(stat_of h1 sdp_service.tcp_relays)
out=$(pre h1 timeout 60 python3 "$PY" both $A 7600 2>&1) || fail "both: $out"
expect_eq "TCP relays" "$(delta h1 sdp_service.tcp_relays "$r0")" 1
ok "TCP-only server, 'both': $out"

# 4: curl over SDP
mkdir -p "$T/www"
head -c 5000000 /dev/urandom >"$T/www/f.bin"
pre_bg HTTP h2 python3 -m http.server 8080 --directory "$T/www" >"$T/http.log" 2>&1
wait_port h2 8080
a0=$(stat_of h1 sdp_service.connects_async)
b0=$(stat_of h1 sdp.rx_bytes)
r0=$(stat_of h1 sdp_service.tcp_relays)
pre h1 curl -sS --max-time 30 -o "$T/f.got" http://$A:8080/f.bin 2>"$T/curl.err" ||
	fail "curl: $(cat "$T/curl.err")"
cmp -s "$T/f.got" "$T/www/f.bin" || fail "curl: the file differs"
expect_eq "curl's connect answered at once" "$(delta h1 sdp_service.connects_async "$a0")" 1
expect_eq "curl over the TCP relay" "$(delta h1 sdp_service.tcp_relays "$r0")" 0
rx=$(delta h1 sdp.rx_bytes "$b0")
[ "$rx" -ge 5000000 ] || fail "curl: h1 received $rx bytes over SDP"
ok "curl: 5 MB equal, $rx bytes over SDP"

# 5: SO_LINGER 0
pre_bg HOLD h2 python3 "$PY" hold-server 7700 >"$T/hold.log" 2>&1
wait_port h2 7700
linger() {	# abort|clean PORT LOG [nb]: sets SENT, GOT, and EARLY (h2's
		# aborts_rx as the flood ends, before the server reads)
	local n0 i
	n0=$(grep -c '^got' "$3")
	out=$(pre h1 timeout 60 python3 "$PY" flood $A "$2" "$1" ${4:-} 2>&1) || fail "flood $1: $out"
	EARLY=$(stat_of h2 sdp.aborts_rx)
	grep -q '^got' "$3" && [ "$(grep -c '^got' "$3")" -gt "$n0" ] &&
		fail "the server read before the flood's close was seen"
	SENT=${out#sent }
	for i in $(seq 1 100); do
		[ "$(grep -c '^got' "$3")" -gt "$n0" ] && break
		sleep 0.1
	done
	GOT=$(grep '^got' "$3" | tail -n1)
	[ -n "$GOT" ] || fail "the server read nothing"
}
la0=$(stat_of h1 sdp.linger_aborts)
at0=$(stat_of h1 sdp.aborts_tx)
ar0=$(stat_of h2 sdp.aborts_rx)
dr0=$(stat_of h2 sdp.disconn_rx)
linger abort 7700 "$T/hold.log"
# at once, not when the server reads again and credits come back
expect_eq "h2 AbortConn received before the server read" "$((EARLY - ar0))" 1
expect_eq "h1 linger_aborts" "$(delta h1 sdp.linger_aborts "$la0")" 1
expect_eq "h1 AbortConn sent" "$(delta h1 sdp.aborts_tx "$at0")" 1
expect_eq "h2 AbortConn received" "$(delta h2 sdp.aborts_rx "$ar0")" 1
expect_eq "h2 DisConn received" "$(delta h2 sdp.disconn_rx "$dr0")" 0
n=$(echo "$GOT" | cut -d' ' -f2)
[ "$n" -lt "$SENT" ] || fail "SO_LINGER 0: the server read $n of $SENT"
ok "SO_LINGER 0: AbortConn; the server read $n of $SENT bytes ($GOT)"
la0=$(stat_of h1 sdp.linger_aborts)
ar0=$(stat_of h2 sdp.aborts_rx)
dr0=$(stat_of h2 sdp.disconn_rx)
linger clean 7700 "$T/hold.log"
expect_eq "h2 DisConn received" "$(delta h2 sdp.disconn_rx "$dr0")" 1
expect_eq "h2 AbortConn received" "$(delta h2 sdp.aborts_rx "$ar0")" 0
expect_eq "h1 linger_aborts" "$(delta h1 sdp.linger_aborts "$la0")" 0
expect_eq "without SO_LINGER, the server reads all" "$GOT" "got $SENT eof"

# SO_LINGER {1, N}: close waits until the server has taken it all (its
# 5 s hold over), or N s; the same over TCP (no preload on either side,
# the oracle) in the same run
pre_bg LH h2 python3 "$PY" hold-server 7704 5 >"$T/lhold.log" 2>&1
ns_bg LHT h2 python3 "$PY" hold-server 7705 5 >"$T/lholdt.log" 2>&1
wait_port h2 7704
wait_port h2 7705
lwait() {	# sdp|tcp PORT LOG N: sets SENT, SECS, GOT
	local n0 i out
	n0=$(grep -c '^got' "$3")
	if [ "$1" = sdp ]; then
		out=$(pre h1 timeout 60 python3 "$PY" flood $A "$2" wait$4 2>&1)
	else
		out=$(ns h1 timeout 60 python3 "$PY" flood $A "$2" wait$4 2>&1)
	fi || fail "flood wait$4 ($1): $out"
	SENT=$(echo "$out" | sed -n 's/^sent \([0-9]*\) close.*/\1/p')
	SECS=$(echo "$out" | sed -n 's/.* close \([0-9.]*\) s$/\1/p')
	for i in $(seq 1 100); do
		[ "$(grep -c '^got' "$3")" -gt "$n0" ] && break
		sleep 0.1
	done
	GOT=$(grep '^got' "$3" | tail -n1)
}
between() {	# X LO HI
	python3 -c "import sys; x, lo, hi = map(float, sys.argv[1:]); sys.exit(0 if lo <= x < hi else 1)" "$@"
}
lw0=$(stat_of h1 sdp_service.linger_waits_done)
for side in tcp sdp; do
	[ $side = sdp ] && { port=7704 log=$T/lhold.log; } || { port=7705 log=$T/lholdt.log; }
	lwait $side $port "$log" 10
	between "$SECS" 1.5 10 ||
		fail "$side, SO_LINGER {1, 10}: close took $SECS s (the server holds 5 s after accepting)"
	expect_eq "$side, SO_LINGER {1, 10}: the server reads all" "$GOT" "got $SENT eof"
	ok "$side, SO_LINGER {1, 10}: close waited $SECS s, until the server had read everything ($SENT bytes)"
	lwait $side $port "$log" 1
	between "$SECS" 0.8 2.5 ||
		fail "$side, SO_LINGER {1, 1}: close took $SECS s"
	expect_eq "$side, SO_LINGER {1, 1}: the server still reads all" "$GOT" "got $SENT eof"
	ok "$side, SO_LINGER {1, 1}: close gave up after $SECS s; the rest still went ($SENT bytes)"
done
expect_eq "h1 linger waits answered when all was acknowledged" "$(delta h1 sdp_service.linger_waits_done "$lw0")" 1

# a 'both' connection over the service's TCP relay: SO_LINGER 0 resets
# the relay's TCP side, the TCP-only server reads an RST
ns_bg TCPHOLD h2 python3 "$PY" hold-server 7702 >"$T/tcphold.log" 2>&1
wait_port h2 7702
r0=$(stat_of h1 sdp_service.tcp_relays)
linger abort 7702 "$T/tcphold.log" nb
expect_eq "TCP relays" "$(delta h1 sdp_service.tcp_relays "$r0")" 1
n=$(echo "$GOT" | cut -d' ' -f2)
[ "$GOT" = "got $n ECONNRESET" ] || fail "relayed, SO_LINGER 0: the TCP server saw '$GOT'"
[ "$n" -lt "$SENT" ] || fail "relayed, SO_LINGER 0: the server read $n of $SENT"
ok "relayed over TCP, SO_LINGER 0: the TCP server read $n of $SENT, then ECONNRESET"

# the server's side: SO_LINGER 0 on an accepted stream (found by the N of
# the service's end's name), its close a reset.  What the client's calls
# give after it is what they give over TCP, the oracle, in the same run
# (a TCP server without the preload, the client without it either):
# ECONNRESET for the first read or write, then end of file and EPIPE;
# the first write raises no SIGPIPE, the second does (exit -13)
ns_bg TABS h2 python3 "$PY" abort-server 7703 >"$T/tabs.log" 2>&1
pre_bg ABS h2 python3 "$PY" abort-server 7701 >"$T/abs.log" 2>&1
wait_port h2 7703
wait_port h2 7701
for how in read write error blocked; do
	want=$(ns h1 timeout 60 python3 "$PY" reset-client $A 7703 $how 2>&1
	       echo "(exit $?)")
	echo "TCP: $want"
	case "$want" in
	"reset then $how: ECONNRESET, "* | "reset then error: SO_ERROR ECONNRESET, eof"*) ;;
	*) fail "TCP, the oracle, $how after a reset: '$want'" ;;
	esac
	la0=$(stat_of h2 sdp.linger_aborts)
	ar0=$(stat_of h1 sdp.aborts_rx)
	rt0=$(stat_of h1 sdp_service.resets_told)
	out=$(pre h1 timeout 60 python3 "$PY" reset-client $A 7701 $how 2>&1
	      echo "(exit $?)")
	echo "SDP: $out"
	expect_eq "h2 linger_aborts (accepted stream)" "$(delta h2 sdp.linger_aborts "$la0")" 1
	expect_eq "h1 AbortConn received" "$(delta h1 sdp.aborts_rx "$ar0")" 1
	expect_eq "h1 resets told" "$(delta h1 sdp_service.resets_told "$rt0")" 1
	[ "$out" = "$want" ] || fail "accepted stream, SO_LINGER 0, $how after it: SDP '$out', TCP '$want'"
	ok "accepted stream, SO_LINGER 0: the client's $how after it, over SDP as over TCP: $out"
done

# data sent before a reset is read before the reset's error, as TCP's
# receive queue stays readable after an RST (before: h1's service
# closed the stream at the AbortConn, with what it had not written to it
# yet, most of the 1 MB)
ns_bg TDAT h2 python3 "$PY" data-server 7730 1000000 >"$T/tdat.log" 2>&1
pre_bg DAT h2 python3 "$PY" data-server 7731 1000000 >"$T/dat.log" 2>&1
wait_port h2 7730
wait_port h2 7731
# TCP, the oracle, gives what reached its receive queue before the RST
# (all of it, or what its window took: the RST drops the server's unsent
# rest), then ECONNRESET; SDP's buffers (32 x 64 KiB) hold all of it
want=$(ns h1 timeout 60 python3 "$PY" data-client $A 7730 read 2>&1)
echo "TCP: $want"
case "$want" in
"data then read: read "*" then ECONNRESET, eof") ;;
*) cat "$T/tdat.log"; fail "TCP, the oracle, 1 MB then a reset: '$want'" ;;
esac
want="data then read: read 1000000 then ECONNRESET, eof"
# a write after the reset, before the reads: TCP's fails with the reset's
# error once its RST is taken (a receive queue at its limit may drop the
# RST: then the write goes, and draws a new one), the reads still get
# everything, then end of file.  Over SDP the service shuts its end for
# reading while it still writes what came, so the write fails at once
# and cannot block on a service that no longer reads
for how in read write; do
	[ $how = read ] && w=$want ||
		w="data then write: write ECONNRESET, read 1000000 then eof, eof"
	ar0=$(stat_of h1 sdp.aborts_rx)
	rt0=$(stat_of h1 sdp_service.resets_told)
	out=$(pre h1 timeout 60 python3 "$PY" data-client $A 7731 $how 2>&1)
	echo "SDP: $out"
	expect_eq "h1 AbortConn received" "$(delta h1 sdp.aborts_rx "$ar0")" 1
	expect_eq "h1 resets told" "$(delta h1 sdp_service.resets_told "$rt0")" 1
	[ "$out" = "$w" ] || fail "1 MB then a reset, $how: SDP '$out', want '$w'"
	ok "1 MB then the server's reset, the client's $how after it: $out"
done
# a client that never reads: its close frees what the service held
cn0=$(stat_of h1 sdp.conns_now)
out=$(pre h1 timeout 60 python3 "$PY" data-client $A 7731 close 2>&1) || fail "data-client close: $out"
gone() { [ "$(stat_of h1 sdp.conns_now)" = "$cn0" ]; }
eventually gone || fail "h1 holds $(stat_of h1 sdp.conns_now) SDP connections after the unread one closed, $cn0 before"
ok "1 MB then a reset, the client closes unread: h1's connection gone"
kill "$TDAT" "$DAT" 2>/dev/null

# the same reset from a TCP-only server through the service's TCP relay
# (a non-blocking 'both' connect that SDP could not serve): the client's
# calls after it give what they give over TCP (before, end of file: a
# cut answer looked whole, curl exited 0)
for how in read write error blocked; do
	want=$(ns h1 timeout 60 python3 "$PY" reset-client $A 7703 $how nb 2>&1
	       echo "(exit $?)")
	tr0=$(stat_of h1 sdp_service.tcp_relays)
	out=$(pre h1 timeout 60 python3 "$PY" reset-client $A 7703 $how nb 2>&1
	      echo "(exit $?)")
	echo "relay: $out"
	expect_eq "TCP relays" "$(delta h1 sdp_service.tcp_relays "$tr0")" 1
	[ "$out" = "$want" ] || fail "TCP relay, the server's reset, $how after it: '$out', TCP '$want'"
	ok "TCP relay, the server's reset: the client's $how after it as over TCP: $out"
done

# the peer closes in order, then the client writes three times: TCP's
# first write goes (the peer answers it with an RST), the next two fail
# with EPIPE (an RST in CLOSE_WAIT); over SDP the same (before:
# ECONNRESET, then EPIPE)
ns_bg TCLS h2 python3 "$PY" close-server 7720 >"$T/tcls.log" 2>&1
pre_bg CLS h2 python3 "$PY" close-server 7721 >"$T/cls.log" 2>&1
wait_port h2 7720
wait_port h2 7721
want=$(ns h1 timeout 60 python3 "$PY" closed-client $A 7720 2>&1)
case "$want" in
"after the peer's close: 1000 sent, EPIPE, EPIPE") ;;
*) fail "TCP, the oracle, writes after the peer's close: '$want'" ;;
esac
out=$(pre h1 timeout 60 python3 "$PY" closed-client $A 7721 2>&1)
[ "$out" = "$want" ] || fail "SDP, writes after the peer's close: '$out', TCP '$want'"
ok "writes after the peer's close, over SDP as over TCP: $out"
kill "$TCLS" "$CLS" 2>/dev/null

# an accepted stream inherits its listener's options as TCP's accept
# copies them (SO_LINGER {1, 0}, SO_KEEPALIVE, TCP_KEEPIDLE, TCP_NODELAY,
# SO_RCVBUF), set before listen or on the listener after it: the options
# read on the accepted stream, and its plain close a reset, as over TCP
# in the same run
port=7710
for when in before after; do
	ns_bg TINH h2 python3 "$PY" inherit-server $port $when >"$T/tinh-$when.log" 2>&1
	pre_bg INH h2 python3 "$PY" inherit-server $((port + 1)) $when >"$T/inh-$when.log" 2>&1
	wait_port h2 $port
	wait_port h2 $((port + 1))
	want=$(ns h1 timeout 60 python3 "$PY" reset-client $A $port read 2>&1)
	la0=$(stat_of h2 sdp.linger_aborts)
	out=$(pre h1 timeout 60 python3 "$PY" reset-client $A $((port + 1)) read 2>&1)
	expect_eq "options set $when listen: h2 linger_aborts" "$(delta h2 sdp.linger_aborts "$la0")" 1
	[ "$out" = "$want" ] || fail "options set $when listen, the accepted stream's close: SDP '$out', TCP '$want'"
	topt=$(grep '^accepted' "$T/tinh-$when.log")
	sopt=$(grep '^accepted' "$T/inh-$when.log")
	[ -n "$topt" ] && [ "$sopt" = "$topt" ] ||
		fail "options set $when listen, on the accepted stream: SDP '$sopt', TCP '$topt'"
	ok "options set $when listen, on the accepted stream as over TCP: $sopt; its close: $out"
	kill "$TINH" "$INH" 2>/dev/null
	port=$((port + 2))
done

# 7: through the gateway: AbortConn becomes the LAN server's RST
sdp_host g1 -p 0x8003 --address 10.43.0.1/24
ns_add gw
ns_add lan
ns_veth gw v3 lan eth0
ns gw ip addr add 10.44.0.254/24 dev v3
ns lan ip addr add 10.44.0.1/24 dev eth0
ns lan ip route add default via 10.44.0.254
cat >"$T/ibgw.conf" <<CONF
[gateway]
fabric = soft:$SOCK
node = gw
control = $T/ibgwd.sock

[partition p3]
pkey = 0x8003
mode = router
ifname = ib8003
address = 10.43.0.254/24
sdp = on
sdp_exports = 8090=10.43.0.1:7806
CONF
ns_bg GW_PID gw "$BIN/ibgwd" -f -v -c "$T/ibgw.conf" >"$T/gw.log" 2>&1
gw_ready() { grep -q "ready: 1 partition" "$T/gw.log"; }
eventually gw_ready || { cat "$T/gw.log"; fail "ibgwd not ready"; }
ns g1 ip route replace default via 10.43.0.254 || fail "route on g1"
ns_bg LANHOLD lan python3 "$PY" hold-server 7800 >"$T/lanhold.log" 2>&1
for i in $(seq 1 50); do ns lan ss -ltn "sport = :7800" | grep -q LISTEN && break; sleep 0.1; done
c0=$(stat_of g1 sdp_service.connects)
out=$(pre g1 timeout 60 python3 "$PY" flood 10.44.0.1 7800 abort 2>&1) || fail "gateway flood: $out"
sent=${out#sent }
expect_eq "g1's SDP connections" "$(delta g1 sdp_service.connects "$c0")" 1
for i in $(seq 1 100); do grep -q '^got' "$T/lanhold.log" && break; sleep 0.1; done
got=$(grep '^got' "$T/lanhold.log" | tail -n1)
n=$(echo "$got" | cut -d' ' -f2)
[ "$got" = "got $n ECONNRESET" ] || { tail "$T/gw.log"; fail "through the gateway, SO_LINGER 0: the LAN server saw '$got'"; }
[ "$n" -lt "$sent" ] || fail "through the gateway: the LAN server read $n of $sent"
ok "through the gateway, SO_LINGER 0: the LAN server read $n of $sent, then ECONNRESET"
# and the other way: a LAN server's RST reaches the IB client as
# AbortConn, and its read after it fails as over TCP (the client without
# the preload, routed by the gateway: the oracle)
ns_bg LANABS lan python3 "$PY" abort-server 7801 >"$T/lanabs.log" 2>&1
for i in $(seq 1 50); do ns lan ss -ltn "sport = :7801" | grep -q LISTEN && break; sleep 0.1; done
want=$(ns g1 timeout 60 python3 "$PY" reset-client 10.44.0.1 7801 read 2>&1
       echo "(exit $?)")
echo "TCP: $want"
case "$want" in
"reset then read: ECONNRESET, "*) ;;
*) fail "TCP through the gateway, the oracle, after a LAN reset: '$want'" ;;
esac
rt0=$(stat_of g1 sdp_service.resets_told)
out=$(pre g1 timeout 60 python3 "$PY" reset-client 10.44.0.1 7801 read 2>&1
      echo "(exit $?)")
echo "SDP: $out"
expect_eq "g1 resets told" "$(delta g1 sdp_service.resets_told "$rt0")" 1
[ "$out" = "$want" ] || fail "through the gateway, a LAN server's reset: SDP '$out', TCP '$want'"
ok "through the gateway, a LAN server's RST: the IB client's reads after it, over SDP as over TCP: $out"
# 1 MB, then the LAN server's RST before the IB client reads: the
# gateway's AbortConn goes after the data, and g1's service writes all
# of it to the stream before the reset (before: ~240 KB of it)
ns_bg LANDAT lan python3 "$PY" data-server 7802 1000000 >"$T/landat.log" 2>&1
for i in $(seq 1 50); do ns lan ss -ltn "sport = :7802" | grep -q LISTEN && break; sleep 0.1; done
want=$(ns g1 timeout 60 python3 "$PY" data-client 10.44.0.1 7802 read 2>&1)
echo "TCP: $want"
case "$want" in
"data then read: read "*" then ECONNRESET, eof") ;;
*) fail "TCP through the gateway, the oracle, 1 MB then a LAN reset: '$want'" ;;
esac
want="data then read: read 1000000 then ECONNRESET, eof"
out=$(pre g1 timeout 60 python3 "$PY" data-client 10.44.0.1 7802 read 2>&1)
echo "SDP: $out"
[ "$out" = "$want" ] || fail "through the gateway, 1 MB then a LAN server's reset: SDP '$out', want '$want'"
ok "through the gateway, 1 MB then a LAN server's RST: the IB client read it all, then the reset: $out"
# and the other way: an IB server behind the export (8090 -> g1:7806)
# sends 1 MB, then resets: the gateway sends what it holds for the LAN
# client, then its RST (before: ~130 KB of it); the oracle is a TCP
# server on g1 reached through the gateway's routing
pre_bg IBDAT g1 python3 "$PY" data-server 7806 1000000 >"$T/ibdat.log" 2>&1
ns_bg TIBDAT g1 python3 "$PY" data-server 7807 1000000 >"$T/tibdat.log" 2>&1
wait_port g1 7806
wait_port g1 7807
want=$(ns lan timeout 60 python3 "$PY" data-client 10.43.0.1 7807 read 2>&1)
echo "TCP: $want"
case "$want" in
"data then read: read "*" then ECONNRESET, eof") ;;
*) fail "TCP through the gateway, the oracle, 1 MB then an IB server's reset: '$want'" ;;
esac
want="data then read: read 1000000 then ECONNRESET, eof"
la0=$(stat_of g1 sdp.linger_aborts)
out=$(ns lan timeout 60 python3 "$PY" data-client 10.44.0.254 8090 read 2>&1)
echo "export: $out"
expect_eq "g1 linger_aborts" "$(delta g1 sdp.linger_aborts "$la0")" 1
[ "$out" = "$want" ] || fail "through an export, 1 MB then the IB server's reset: '$out', want '$want'"
ok "through an export, 1 MB then the IB server's reset: the LAN client read it all, then the RST: $out"
gwc() { "$BIN/ibgwctl" -s "$T/ibgwd.sock" -j show stats |
	python3 -c 'import json, sys; print(sum(p.get("sdp", {}).get("gw_conns_now", 0) for p in json.load(sys.stdin)["partitions"]))'; }
gw_idle() { [ "$(gwc)" = 0 ]; }
eventually gw_idle || fail "the gateway holds $(gwc) SDP connections"
ok "the gateway holds no SDP connection"
kill "$LANDAT" "$IBDAT" "$TIBDAT" 2>/dev/null

# 6: programs that close while connecting; nothing left behind
kill -STOP "$h2_PID"
out=$(pre h1 timeout 30 python3 "$PY" abandon $A 7700 2>&1)
r=$?
sleep 0.3
kill -CONT "$h2_PID"
[ $r = 0 ] || fail "abandon: $out"
ok "closed while connecting (h2 stopped): $out"
out=$(LIBSDP_CONFIG_FILE=$T/sdp.conf pre h1 timeout 30 python3 "$PY" abandon $A 7599 2>&1) ||
	fail "abandon: $out"
ok "closed while connecting (refused): $out"
held() { [ "$(stat_of h1 sdp_service.async_now)" = 0 ]; }
eventually held || { grep "sdp connect" "$T/h1.log" | tail; fail "h1 holds $(stat_of h1 sdp_service.async_now) non-blocking connects"; }
ok "h1's service holds no non-blocking connect"
sleep 4	# the hold server closes its end of the abandoned one after 2 s
fds1=$(ls /proc/"$h1_PID"/fd | wc -l)
[ "$fds1" -le "$fds0" ] || {
	stat_of h1 sdp.conns_now >/dev/null
	tail -n 60 "$T/h1.log" | grep -E "sdp (active|passive|connect|listen)|conns_now"
	fail "h1's ipoibd: $fds0 fds before, $fds1 after"; }
ok "h1's ipoibd: $fds1 fds, $fds0 before"
kill -0 "$h1_PID" && kill -0 "$h2_PID" || fail "an ipoibd died"
echo PASS
