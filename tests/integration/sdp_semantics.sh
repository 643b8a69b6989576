#!/bin/bash
# The program semantics preload_mock.sh proves against sdp_mocksvc, here
# against the real SDP service between two IB hosts of the software subnet
# (issue 14, items 3, 5): h1 runs the clients, h2 the servers, both under
# LD_PRELOAD=libibgw_preload.so with no libsdp.conf (every TCP socket
# 'both'), with IPv4 and IPv6 addresses on ib0.  Servers: sdp_semantics.py's
# (a non-blocking listener: EAGAIN when idle, select, accept4 with its
# flags checked), preload_progs.py's asyncio echo server and forking
# server.  Clients: fork, exec, dup/dup2 (after connect, and before
# connect and listen), epoll (level, edge, ONESHOT,
# RDHUP), poll/select, FIONREAD, sendfile, SO_RCVBUF/SO_SNDBUF,
# TCP_NODELAY, SO_RCVTIMEO/SO_SNDTIMEO (set before connect, before and
# after listen), EINTR on a blocking read, threads on one socket, a
# non-blocking connect, IPv6, a server's shutdown(SHUT_RD) with data
# coming after it (the connection kept, as TCP keeps it).  That SDP
# carried them: h1's service counts
# a connection for each, and no failed SDP attempt (no TCP fallback).
# Then the same clients and servers without the preload on plain TCP
# between two namespaces: the oracle for what the cases expect.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
command -v python3 >/dev/null || skip "no python3"
PY=$TOP/tests/integration/sdp_semantics.py
PP=$TOP/tests/integration/preload_progs.py
[ -f "$PRE" ] || fail "no $PRE (make all)"
start_fabric

host() {	# NAME ADDR ADDR6 (ipoibd's: it joins the solicited-node group)
	sdp_host "$1" --address "$2" --address "$3"
}
host h1 10.1.0.1/24 fd00:1b::1/64
host h2 10.1.0.2/24 fd00:1b::2/64
grep -q "SDP service on @ibgw-sdp" "$T/h2.log" || fail "h2 has no SDP service"

# run NAME CMD...: a client on h1 under the preload; SDP, not TCP, must
# carry it: h1's service makes connections, none fails
run() {
	local name=$1 c0 f0 c1 f1 out
	shift
	c0=$(stat_of h1 sdp_service.connects) f0=$(stat_of h1 sdp_service.connect_failures)
	out=$(pre h1 timeout 60 "$@" 2>&1) || fail "$name: $out"
	c1=$(stat_of h1 sdp_service.connects) f1=$(stat_of h1 sdp_service.connect_failures)
	[ "$c1" -gt "$c0" ] || fail "$name: no SDP connection made ($out)"
	[ "$f1" = "$f0" ] || fail "$name: $((f1 - f0)) SDP connects failed (TCP fallback?)"
	ok "$name: $out ($((c1 - c0)) SDP connections)"
}

pre_bg SRV h2 python3 "$PY" server 7500 >"$T/srv.log" 2>&1
wait_port h2 7500
grep -q "idle accept: EAGAIN" "$T/srv.log" || { cat "$T/srv.log"; fail "the non-blocking listener"; }
pre_bg SRV6 h2 python3 "$PY" server 7501 fd00:1b::2 >"$T/srv6.log" 2>&1
wait_port h2 7501
pre_bg ECHO h2 python3 "$PP" echo-server 10.1.0.2 7502 >"$T/echo.log" 2>&1
pre_bg FORK h2 python3 "$PP" forking-server 10.1.0.2 7503 >"$T/fork.log" 2>&1
wait_port h2 7502
wait_port h2 7503

# every client case but oob-trunc (SDP's own: no urgent data), run by
# RUNNER against servers at A and A6 from the client address ME; also
# run on plain TCP at the end, where the same expectations must hold
client_cases() {	# RUNNER A A6 ME
	local r=$1 a=$2 a6=$3 me=$4
	$r fork python3 "$PY" client fork "$a" 7500
	$r dup python3 "$PY" client dup "$a" 7500
	$r dup-early python3 "$PY" client dup-early "$a" 7500
	$r epoll python3 "$PY" client epoll "$a" 7500
	$r poll python3 "$PY" client poll "$a" 7500
	$r sendfile python3 "$PY" client sendfile "$a" 7500 "$T/file"
	$r options python3 "$PY" client opts "$a" 7500
	$r eintr python3 "$PY" client eintr "$a" 7500
	$r threads python3 "$PY" client threads "$a" 7500 8 500
	$r exec python3 "$PP" exec-names "$a" 7502
	$r nonblock-connect python3 "$PP" nonblock-connect "$a" 7502
	$r asyncio python3 "$PP" asyncio-client "$a" 7502 10 200000
	$r forking-server python3 "$PP" threaded-client "$a" 7503 4 4 50000
	$r ipv6 python3 "$PY" client names6 "$a6" 7501
	$r ipv6-options python3 "$PY" client opts "$a6" 7501
	$r slow-reader python3 "$PY" client slowread "$a" 7500 2000000
	$r timeouts python3 "$PY" client timeouts "$a" 7500 "$me"
	$r connect-again python3 "$PY" client conn-again "$a" 7500
	$r tcp-options python3 "$PY" client tcp-opts "$a" 7500
	$r shut-rd python3 "$PY" client shut-rd "$a" 7500
}
A=10.1.0.2
head -c 5000000 /dev/urandom >"$T/file"
client_cases run $A fd00:1b::2 10.1.0.1
# shut-rd: what came for h2's server after its SHUT_RD was dropped by its
# service, the connection kept
[ "$(stat_of h2 sdp.rx_dropped_shut)" -gt 0 ] ||
	fail "shut-rd: h2's service dropped nothing after SHUT_RD"
run oob-trunc python3 "$PY" client oob-trunc $A 7500

# a link-local peer: TCP's semantics (the client's fe80:: address as the
# source, with its scope) on TCP itself, since SDP cannot give them
pre_bg SRVLL h2 python3 "$PP" echo-server :: 7504 >"$T/ll.log" 2>&1
wait_port h2 7504
LL=$(ns h2 ip -6 -o addr show dev ib0 scope link | sed -n 's/.*inet6 \(fe80::[0-9a-f:]*\)\/.*/\1/p' | head -n1)
[ -n "$LL" ] || fail "h2 has no link-local address on ib0"
cat >"$T/ll.py" <<'PY'
import socket, sys
c = socket.create_connection((sys.argv[1] + "%ib0", 7504), timeout=20)
c.sendall(b"link-local\n")
got = c.recv(100)
me = c.getsockname()
if got != b"link-local\n" or not me[0].startswith("fe80::") or not me[3]:
    print("BAD: echo %r from %r" % (got, me))
    sys.exit(1)
print("OK echo from %s%%%d" % (me[0], me[3]))
PY
c0=$(stat_of h1 sdp_service.connects)
out=$(pre h1 timeout 60 python3 "$T/ll.py" "$LL" 2>&1) || fail "link-local ('both'): $out"
[ "$(stat_of h1 sdp_service.connects)" = "$c0" ] || fail "link-local: an SDP connection was made (its source would not be link-local)"
ok "link-local $LL ('both'): $out, over TCP"
printf 'use sdp client * *:7504\n' >"$T/sdp7504.conf"
out=$(ns h1 env LD_PRELOAD="$PRE" LIBSDP_CONFIG_FILE="$T/sdp7504.conf" timeout 60 python3 "$T/ll.py" "$LL" 2>&1) &&
	fail "link-local with an 'sdp' rule connected: $out"
echo "$out" | grep -q "Cannot assign requested address" || fail "link-local, 'sdp' rule: $out"
ok "link-local, 'use sdp': EADDRNOTAVAIL (no link-local source for SDP)"

# an accepted socket handed to an exec'd program: the new image has no
# cache and asks the service (INFO by the N of the service's end's name);
# on h2, to itself, SDP only so that TCP cannot stand in
printf 'use sdp server * *:7810\nuse sdp client * *:7810\n' >"$T/sdp7810.conf"
c0=$(stat_of h2 sdp_service.accepted_sdp)
out=$(ns h2 env LD_PRELOAD="$PRE" LIBSDP_CONFIG_FILE="$T/sdp7810.conf" \
	timeout 60 python3 "$PP" accept-exec 10.1.0.2 7810 2>&1) ||
	fail "accept-exec: $out"
c1=$(stat_of h2 sdp_service.accepted_sdp)
[ "$c1" -gt "$c0" ] || fail "accept-exec: no SDP connection accepted ($out)"
ok "accept-exec: $out"
# After SO_RCVBUF 65536 on the connected socket, a 300000-byte echo (sent
# whole, then SHUT_WR, then read) came back short, then EOF, in 3 of 11
# runs: the peer's DisConn and DREQ came while our program had not yet
# read what the service held for it, and the DREQ closed the connection
# with that data (sdp_sock.c now drains it to the program first: 10 of 10
# since).  Five runs each time, as the regression test.
for i in 1 2 3 4 5; do
	run "options, 300000 echoed ($i)" python3 "$PY" client opts $A 7500 300000
done

# the server side: accept4's flags (all four kinds taken), nothing wrong
grep -q "^BAD" "$T/srv.log" "$T/srv6.log" && { cat "$T/srv.log"; fail "server: $(grep -h '^BAD' "$T/srv.log" "$T/srv6.log")"; }
for f in 0x0 0x80800 0x80000 0x800; do
	grep -q "^accept4 $f ok" "$T/srv.log" || { cat "$T/srv.log"; fail "no accept4 with flags $f"; }
done
grep -q "^serve" "$T/srv.log" && { cat "$T/srv.log"; fail "a server thread failed"; }
ok "server: idle non-blocking accept EAGAIN, select, accept4 flags 0, NONBLOCK|CLOEXEC, CLOEXEC, NONBLOCK as asked"
kill -0 "$h1_PID" && kill -0 "$h2_PID" || fail "an ipoibd died"

# --- the oracle: the same clients and servers on plain TCP (no preload)
# between two namespaces over a veth; what the cases expect of SDP sockets
# must be what Linux's TCP sockets do
ns_add t1
ns_add t2
ns_veth t1 v1 t2 v2
ns t1 ip addr add 10.9.0.1/24 dev v1
ns t2 ip addr add 10.9.0.2/24 dev v2
ns t1 ip addr add fd00:9::1/64 dev v1 nodad
ns t2 ip addr add fd00:9::2/64 dev v2 nodad
ns_bg TS t2 python3 "$PY" server 7500 >"$T/tsrv.log" 2>&1
ns_bg TS6 t2 python3 "$PY" server 7501 fd00:9::2 >"$T/tsrv6.log" 2>&1
ns_bg TE t2 python3 "$PP" echo-server 10.9.0.2 7502 >"$T/techo.log" 2>&1
ns_bg TF t2 python3 "$PP" forking-server 10.9.0.2 7503 >"$T/tfork.log" 2>&1
listens() { ns t2 ss -Hltn "sport = :$1" | grep -q .; }
for p in 7500 7501 7502 7503; do
	eventually listens $p || fail "plain TCP server on $p"
done
tcp_run() {	# NAME CMD...
	local name=$1 out
	shift
	out=$(ns t1 timeout 60 "$@" 2>&1) || fail "on plain TCP, $name: $out (the case expects what TCP does not do)"
	echo "  tcp: $name: $out"
}
client_cases tcp_run 10.9.0.2 fd00:9::2 10.9.0.1
grep -q "^BAD" "$T/tsrv.log" "$T/tsrv6.log" && fail "plain TCP server: $(grep -h '^BAD' "$T/tsrv.log" "$T/tsrv6.log")"
ok "the same 19 client cases and the server pass on plain TCP between namespaces: the expectations are Linux's"
echo PASS
