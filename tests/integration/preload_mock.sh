#!/bin/bash
# libibgw_preload.so with unmodified programs (socat, curl, python3's
# asyncio, socketserver and threads), against sdp_mocksvc, the test double
# of the host's SDP service (no InfiniBand here: what is tested is the
# preload's side of ulp/sdp/sdp_ctl.h).  In a network namespace of its
# own, on a veth address, since loopback destinations are left to TCP by
# design.  That SDP carried the data is read from the mock's relayed-bytes
# counter; that TCP did is read from the same counter not moving.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
SO=$BIN/libibgw_preload.so
MOCK=$BIN/tests/sdp_mocksvc
PROGS=$TOP/tests/integration/preload_progs.py
[ -e "$SO" ] || fail "no $SO (make all)"
[ -x "$MOCK" ] || fail "no $MOCK (make all)"
for p in socat python3 curl sha256sum ss; do
	command -v $p >/dev/null || skip "no $p"
done
A=10.77.0.1

ns_add p
ns p ip link add va type veth peer name vb || fail "veth"
ns p ip link set va up
ns p ip link set vb up
ns p ip addr add $A/24 dev va || fail "address"
A6=fd00:77::1
ns p ip addr add $A6/64 dev va nodad || fail "IPv6 address"

unix_listens() {	# PATTERN: a unix listener whose name matches
	ns p ss -lxH | grep -q -- "$1"
}
tcp_listens() {	# ADDR:PORT
	ns p ss -ltnH | grep -q -- " $1 "
}
ns_bg MOCK_PID p "$MOCK" -c "$T/counts" -d 7099:3000 >"$T/mock.out" 2>&1
eventually unix_listens '@ibgw-sdp ' || fail "the mock does not listen"

NOCONF=$T/no-such-libsdp.conf
pre() {	# CONF CMD...: CMD in the namespace under the preload
	local conf=$1
	shift
	ns p env LD_PRELOAD="$SO" LIBSDP_CONFIG_FILE="$conf" "$@"
}

counts_now() {	# the mock's counters, fresh
	rm -f "$T/counts"
	kill -USR1 "$MOCK_PID"
	eventually test -s "$T/counts" || fail "no counters from the mock"
}
count() {	# NAME: one counter of the last counts_now
	sed -n "s/^$1 //p" "$T/counts"
}
relayed() {
	counts_now
	count relayed_bytes
}

wait_listen() {	# PORT: something listens there (TCP, or a mock listener)
	local i
	for i in $(seq 1 100); do
		grep -q "^listening" "$T/srv.out" 2>/dev/null && return 0
		sleep 0.05
	done
	cat "$T/srv.out"
	fail "the server on $1 does not listen"
}

start_srv() {	# VAR CONF CMD...: a server under the preload, output srv.out
	local var=$1 conf=$2
	shift 2
	: >"$T/srv.out"
	ns_bg "$var" p env LD_PRELOAD="$SO" LIBSDP_CONFIG_FILE="$conf" "$@" \
		>>"$T/srv.out" 2>&1
}

stop_srv() {	# PID
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# --- socat both ways, a few MB, sha256 --------------------------------------
head -c 4000000 /dev/urandom >"$T/tx"
want=$(sha256sum <"$T/tx" | cut -d' ' -f1)
r0=$(relayed)
start_srv S "$NOCONF" socat -u TCP-LISTEN:7001,bind=$A,reuseaddr \
	OPEN:"$T/rx1",creat,trunc
eventually unix_listens '@ibgw-sdp-l/' || fail "no SDP listener"
pre "$NOCONF" timeout 30 socat -u OPEN:"$T/tx" TCP:$A:7001 ||
	fail "socat client to server"
wait "$S"
expect_eq "socat client->server sha256" "$(sha256sum <"$T/rx1" | cut -d' ' -f1)" "$want"
start_srv S "$NOCONF" socat -u OPEN:"$T/tx" TCP-LISTEN:7002,bind=$A,reuseaddr
eventually unix_listens '@ibgw-sdp-l/' || fail "no SDP listener on 7002"
pre "$NOCONF" timeout 30 socat -u TCP:$A:7002 OPEN:"$T/rx2",creat,trunc ||
	fail "socat server to client"
wait "$S"
expect_eq "socat server->client sha256" "$(sha256sum <"$T/rx2" | cut -d' ' -f1)" "$want"
r1=$(relayed)
[ $((r1 - r0)) -ge 8000000 ] || fail "the mock relayed $((r1 - r0)) bytes, want >= 8000000"
ok "SDP carried both transfers ($((r1 - r0)) bytes relayed)"

# --- asyncio server (epoll) and clients; half-close; nonblocking connect ----
start_srv S "$NOCONF" python3 "$PROGS" echo-server $A 7010
wait_listen 7010
tcp_listens $A:7010 ||
	fail "a 'both' listener has no TCP side"
out=$(pre "$NOCONF" timeout 60 python3 "$PROGS" asyncio-client $A 7010 20 200000) ||
	fail "asyncio clients: $out"
ok "$out"
out=$(pre "$NOCONF" timeout 30 python3 "$PROGS" nonblock-connect $A 7010) ||
	fail "non-blocking connect: $out"
ok "$out"
out=$(pre "$NOCONF" timeout 30 python3 "$PROGS" exec-names $A 7010) ||
	fail "exec: $out"
ok "$out"
# a process that is not the service connecting to the listener is dropped
lname=$(ns p ss -lxHp | grep '@ibgw-sdp-l/' | grep "pid=$S," |
	awk '{print $5}' | head -1)
[ -n "$lname" ] || fail "no unix listener of the asyncio server"
out=$(ns p timeout 30 python3 "$PROGS" spoof "${lname#@}") || fail "spoof: $out"
ok "$out"
out=$(pre "$NOCONF" timeout 60 python3 "$PROGS" asyncio-client $A 7010 2 1000) ||
	fail "asyncio after the spoof: $out"
ok "the server still serves after the spoof"
stop_srv "$S"
# IPv6
start_srv S "$NOCONF" python3 "$PROGS" echo-server $A6 7012
wait_listen 7012
r0=$(relayed)
out=$(pre "$NOCONF" timeout 60 python3 "$PROGS" asyncio-client $A6 7012 4 100000) ||
	fail "asyncio clients over IPv6: $out"
r1=$(relayed)
[ $((r1 - r0)) -ge 800000 ] || fail "IPv6: $((r1 - r0)) bytes relayed"
ok "IPv6 over SDP ($((r1 - r0)) bytes)"
# curl's non-blocking connect against python's http.server
echo "served by http.server" >"$T/index.html"
stop_srv "$S"
: >"$T/srv.out"
ns_bg H p env LD_PRELOAD="$SO" LIBSDP_CONFIG_FILE="$NOCONF" \
	python3 -m http.server --bind $A --directory "$T" 7011 >"$T/http.out" 2>&1
eventually unix_listens '@ibgw-sdp-l/' || fail "no http listener"
r0=$(relayed)
out=$(pre "$NOCONF" timeout 30 curl -sS --max-time 10 http://$A:7011/index.html) ||
	fail "curl: $out $(cat "$T/http.out")"
expect_eq "curl over SDP" "$out" "served by http.server"
r1=$(relayed)
[ "$r1" -gt "$r0" ] || fail "curl's request did not go through the mock"
stop_srv "$H"

# --- a forking server, a threaded client, many sockets ----------------------
start_srv S "$NOCONF" python3 "$PROGS" forking-server $A 7020
wait_listen 7020
r0=$(relayed)
out=$(pre "$NOCONF" timeout 120 python3 "$PROGS" threaded-client $A 7020 8 8 50000) ||
	fail "threaded client: $out"
ok "$out"
case "$out" in *", 1 server processes") fail "one server process: not forking?" ;; esac
r1=$(relayed)
[ $((r1 - r0)) -ge 3200000 ] || fail "threaded: $((r1 - r0)) bytes relayed, want >= 3200000"
stop_srv "$S"

# --- accept4 flags, names, options (listener and client in one process) ----
out=$(pre "$NOCONF" timeout 30 python3 "$PROGS" accept-names $A 7030) ||
	fail "accept-names: $out"
ok "$out"

out=$(pre "$NOCONF" timeout 30 python3 "$PROGS" accept-exec $A 7031) ||
	fail "accept-exec: $out"
ok "$out"

# --- 'both' falls back to TCP when no SDP listener exists -------------------
ns_bg S p socat TCP-LISTEN:7040,bind=$A,reuseaddr SYSTEM:'echo tcp-only-server'
eventually tcp_listens $A:7040 || fail "plain TCP server"
counts_now
r0=$(count relayed_bytes) f0=$(count refused)
out=$(pre "$NOCONF" timeout 30 python3 "$PROGS" tcp-client $A 7040) ||
	fail "fallback client: $out"
expect_eq "both -> TCP fallback" "$out" "OK got tcp-only-server"
counts_now
[ "$(count refused)" -gt "$f0" ] || fail "the client did not ask the mock first"
expect_eq "bytes relayed by the fallback" "$(count relayed_bytes)" "$r0"
stop_srv "$S"

# --- 'both' server: a TCP client (no preload) is handed over ----------------
start_srv S "$NOCONF" python3 "$PROGS" echo-server $A 7045
wait_listen 7045
counts_now
h0=$(count tcp_handovers)
out=$(ns p timeout 30 python3 "$PROGS" nonblock-connect $A 7045) ||
	fail "TCP client of a 'both' server: $out"
counts_now
[ "$(count tcp_handovers)" -gt "$h0" ] || fail "no TCP handover counted"
ok "a plain TCP client reached the 'both' server: $out"
stop_srv "$S"

# --- a signal interrupts connect's wait for the service: EINTR, cancelled ----
counts_now
k0=$(count cancelled)
out=$(pre "$NOCONF" timeout 30 python3 "$PROGS" eintr $A 7099) ||
	fail "EINTR: $out"
ok "$out"
cancelled() { counts_now; [ "$(count cancelled)" -gt "$k0" ]; }
eventually cancelled || fail "the mock saw no cancelled request"
ok "the service saw the request cancelled"

# --- libsdp.conf: port 7201 tcp, 7202 sdp, 7203 sdp with no SDP peer --------
cat >"$T/libsdp.conf" <<CONF
# routes by port
log destination file $T/preload.log min-level 1
use tcp server * *:7201
use tcp client * *:7201
use sdp server * $A:7202
use sdp client * 10.77.0.0/24:7202-7203
CONF
C=$T/libsdp.conf
start_srv S "$C" python3 "$PROGS" echo-server $A 7201
wait_listen 7201
r0=$(relayed)
out=$(pre "$C" timeout 30 python3 "$PROGS" asyncio-client $A 7201 2 100000) ||
	fail "tcp rule: $out"
expect_eq "bytes relayed for the tcp rule" "$(relayed)" "$r0"
stop_srv "$S"
# min-level 1 has the sockets the rules sent to TCP too (before: only a
# fallback after SDP failed was logged)
grep -q "connect $A:7201: TCP (a 'use tcp' rule)" "$T/preload.log" &&
	grep -q "listen $A:7201: TCP (a 'use tcp' rule)" "$T/preload.log" ||
	{ cat "$T/preload.log"; fail "no log line for the sockets sent to TCP"; }
ok "logged: $(grep -m1 "connect $A:7201: TCP" "$T/preload.log" | sed 's/.*: connect/connect/')"
start_srv S "$C" python3 "$PROGS" echo-server $A 7202
wait_listen 7202
tcp_listens $A:7202 && fail "an 'sdp' listener listens on TCP too"
out=$(pre "$C" timeout 30 python3 "$PROGS" asyncio-client $A 7202 2 100000) ||
	fail "sdp rule: $out"
r1=$(relayed)
[ $((r1 - r0)) -ge 400000 ] || fail "sdp rule: $((r1 - r0)) bytes relayed"
ok "the sdp rule's port went over SDP ($((r1 - r0)) bytes)"
stop_srv "$S"
grep -q "connect $A:7202: SDP" "$T/preload.log" ||
	{ cat "$T/preload.log"; fail "no log line for the redirected connect"; }
ok "the log line's file has: $(grep -m1 "connect $A:7202" "$T/preload.log")"
# out of descriptors when the rules are first needed: that socket goes
# TCP (refused: 7202 is 'sdp' only), the next one, with descriptors
# again, reads the file and goes SDP (before: TCP for the process's life)
start_srv S "$C" python3 "$PROGS" echo-server $A 7202
wait_listen 7202
out=$(pre "$C" timeout 30 python3 -c '
import os, socket, sys
a, p = sys.argv[1], int(sys.argv[2])
s = socket.socket()
fill = []
try:
    while True:
        fill.append(os.dup(0))
except OSError:
    pass
try:
    s.connect((a, p))
    first = "connected"
except OSError as e:
    first = e.strerror
for f in fill:
    os.close(f)
s.close()
s = socket.create_connection((a, p), timeout=10)
s.sendall(b"y" * 10)
print(first, "then echo", len(s.recv(100)))' $A 7202 2>"$T/emfile.err") ||
	fail "descriptors back, SDP again: $out $(cat "$T/emfile.err")"
expect_eq "connects out of descriptors, then not" "$out" "Connection refused then echo 10"
grep -q "Too many open files; TCP until it can be read" "$T/emfile.err" ||
	{ cat "$T/emfile.err"; fail "EMFILE on libsdp.conf not reported"; }
ok "libsdp.conf unreadable for want of descriptors: TCP for that socket, SDP for the next"
# O_ASYNC and its owner set before connect stay with the SDP stream: the
# echo raises SIGIO, as on TCP (before: the flag without an owner, no
# signal)
out=$(pre "$C" timeout 30 python3 -c '
import fcntl, os, signal, socket, sys, time
got = []
signal.signal(signal.SIGIO, lambda n, f: got.append(n))
s = socket.socket()
fcntl.fcntl(s, fcntl.F_SETOWN, os.getpid())
fcntl.fcntl(s, fcntl.F_SETFL, fcntl.fcntl(s, fcntl.F_GETFL) | os.O_ASYNC)
s.connect((sys.argv[1], int(sys.argv[2])))
got.clear()
s.sendall(b"z" * 10)
end = time.time() + 5
while not got and time.time() < end:
    time.sleep(0.01)
print("SIGIO" if got else "no SIGIO", len(s.recv(100)))' $A 7202 2>&1) ||
	fail "O_ASYNC: $out"
expect_eq "an O_ASYNC socket's echo" "$out" "SIGIO 10"
stop_srv "$S"
ns_bg S p socat TCP-LISTEN:7203,bind=$A,reuseaddr SYSTEM:'echo tcp'
eventually tcp_listens $A:7203 || fail "TCP server on 7203"
out=$(pre "$C" timeout 30 python3 "$PROGS" tcp-client $A 7203 2>&1) &&
	fail "an 'sdp' client fell back to TCP: $out"
case "$out" in *"Connection refused"*) ok "sdp without an SDP peer: refused" ;;
*) fail "sdp without a peer: $out" ;; esac
stop_srv "$S"
# an 'sdp' rule with no SDP service to ask: ENETUNREACH, as TCP knows an
# absent network (before: ENOENT, no TCP error)
ns_bg S p socat TCP-LISTEN:7203,bind=$A,reuseaddr SYSTEM:'echo tcp'
eventually tcp_listens $A:7203 || fail "TCP server on 7203"
out=$(IBGW_SDP_SOCKET=@ibgw-no-such-service pre "$C" timeout 30 python3 "$PROGS" tcp-client $A 7203 2>&1) &&
	fail "an 'sdp' client without a service connected: $out"
case "$out" in *"Network is unreachable"*) ok "sdp without an SDP service: network unreachable" ;;
*) fail "sdp without a service: $out" ;; esac
stop_srv "$S"
# a timeout that is not one: said, the default used, the connect made
ns_bg S p socat TCP-LISTEN:7204,bind=$A,reuseaddr SYSTEM:'echo tcp'
eventually tcp_listens $A:7204 || fail "TCP server on 7204"
printf 'log destination stderr\nuse both client * *:7204\n' >"$T/tmo.conf"
out=$(IBGW_SDP_TIMEOUT_MS=abc pre "$T/tmo.conf" timeout 30 python3 "$PROGS" tcp-client $A 7204 2>"$T/tmo.err") ||
	fail "IBGW_SDP_TIMEOUT_MS=abc: $out $(cat "$T/tmo.err")"
grep -q "IBGW_SDP_TIMEOUT_MS 'abc': not a number of milliseconds" "$T/tmo.err" ||
	{ cat "$T/tmo.err"; fail "IBGW_SDP_TIMEOUT_MS=abc not reported"; }
ok "IBGW_SDP_TIMEOUT_MS=abc: reported, the default used ($out)"
stop_srv "$S"

# --- a bad libsdp.conf: file:line on stderr, the program runs on TCP --------
printf '# fine\nuse sdp client * *:*\nusee sdp server * *:*\n' >"$T/bad.conf"
ns_bg S p socat TCP-LISTEN:7300,bind=$A,reuseaddr SYSTEM:'echo tcp'
eventually tcp_listens $A:7300 || fail "TCP server on 7300"
r0=$(relayed)
out=$(pre "$T/bad.conf" timeout 30 python3 "$PROGS" tcp-client $A 7300 2>"$T/bad.err") ||
	fail "with a bad file: $out $(cat "$T/bad.err")"
expect_eq "with a bad file" "$out" "OK got tcp"
grep -q "^libibgw_preload: $T/bad.conf:3: .*; using TCP only$" "$T/bad.err" ||
	{ cat "$T/bad.err"; fail "no file:line report"; }
ok "reported: $(cat "$T/bad.err")"
expect_eq "bytes relayed with a bad file" "$(relayed)" "$r0"
# read whole or not at all: a rule past the first MiB is not dropped
# without a word (before: the file was cut there, silently)
stop_srv "$S"
python3 -c 'import sys; sys.stdout.write("# filler\n" * 120000 + "use sdp client * *:7301\n")' >"$T/big.conf"
ns_bg S p socat TCP-LISTEN:7301,bind=$A,reuseaddr SYSTEM:'echo tcp'
eventually tcp_listens $A:7301 || fail "TCP server on 7301"
out=$(pre "$T/big.conf" timeout 30 python3 "$PROGS" tcp-client $A 7301 2>"$T/big.err") ||
	fail "with a file over 1 MiB: $out $(cat "$T/big.err")"
expect_eq "with a file over 1 MiB" "$out" "OK got tcp"
grep -q "^libibgw_preload: $T/big.conf: File too large; using TCP only$" "$T/big.err" ||
	{ cat "$T/big.err"; fail "a file over 1 MiB not reported"; }
ok "a libsdp.conf over 1 MiB: reported, TCP"
stop_srv "$S"

kill -0 "$MOCK_PID" 2>/dev/null || fail "the mock died"
echo "PASS"
