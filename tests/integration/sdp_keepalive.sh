#!/bin/bash
# SDP keepalive and dead-peer detection (issue 14, item 1): an idle SDP
# connection whose peer host hangs (its ipoibd stopped with SIGSTOP: its
# RC layer answers nothing, and nothing tells the fabric it is gone) is
# found dead by the service's keepalive probe, a zero-length RDMA WRITE
# that the dead peer never acknowledges, and the program blocked in recv
# fails with ETIMEDOUT, as over TCP with keepalive.
#  a) ipoibd --sdp-keepalive 1 on h1 and h2, an idle connection: probes
#     go out and it stays up for 4 s (probes do not disturb a live one);
#  b) h2's ipoibd stopped: h1's program, blocked in recv, fails with
#     ETIMEDOUT within 10 s (1 s idle + the RC retry budget),
#     keepalive_dead counts it;
#  c) the same with --sdp-keepalive 0 on h3 and h4: the program is still
#     blocked 6 s after its peer hung (what a) and b) need keepalive for);
#  d), e) --sdp-keepalive 0 on h5 and h6, but the program sets
#     SO_KEEPALIVE and TCP_KEEPIDLE 1 (after connect, or before it on the
#     TCP socket): its connection is probed, and the hung peer gives the
#     blocked recv ETIMEDOUT within 10 s;
#  f), g) the server's side: SO_KEEPALIVE and TCP_KEEPIDLE 1 on the
#     listener (before or after listen) are inherited by the accepted
#     stream, and its hung client gives the server's recv ETIMEDOUT.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
for t in socat python3; do
	command -v $t >/dev/null || skip "$t not installed (make deps)"
done
start_fabric
sdp_host h1 --address 10.1.0.1/24 --sdp-keepalive 1
sdp_host h2 --address 10.1.0.2/24 --sdp-keepalive 1
sdp_host h3 --address 10.1.0.3/24 --sdp-keepalive 0
sdp_host h4 --address 10.1.0.4/24 --sdp-keepalive 0

# client NS DST NAME TIMEOUT [KA]: connect, send one line, then block in
# recv (KA: after or before: SO_KEEPALIVE and TCP_KEEPIDLE 1 set after or
# before connect, and TCP_KEEPIDLE 0 refused with EINVAL); writes
# "end SECONDS HOW" (HOW: eof or the errno's name; SECONDS from the file
# $T/NAME.go appearing) or "still" to $T/NAME.out
client() {
	pre "$1" python3 -c '
import errno, os, socket, sys, time
ka = sys.argv[4] if len(sys.argv) > 4 else "none"
def keepalive(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 1)
    if s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) != 1:
        sys.exit("TCP_KEEPIDLE does not read back")
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 0)
        sys.exit("TCP_KEEPIDLE 0 taken (TCP says EINVAL)")
    except OSError as e:
        if e.errno != errno.EINVAL:
            raise
if ka == "before":
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    keepalive(s)
    s.connect((sys.argv[1], 7500))
else:
    s = socket.create_connection((sys.argv[1], 7500))
    if ka == "after":
        keepalive(s)
s.sendall(b"hello\n")
open(sys.argv[2] + ".up", "w").close()
s.settimeout(float(sys.argv[3]))
how = "eof"
try:
    while True:
        d = s.recv(4096)
        if not d:
            break
except OSError as e:
    # socket.timeout is TimeoutError, as is ETIMEDOUT from recv: the
    # settimeout one has no errno
    if e.errno is None:
        print("still"); sys.exit(0)
    how = errno.errorcode.get(e.errno, str(e.errno))
go = sys.argv[2] + ".go"
t0 = os.stat(go).st_mtime if os.path.exists(go) else time.time()
print("end %.2f %s" % (time.time() - t0, how))
' "$2" "$T/$3" "$4" "${5:-none}" >"$T/$3.out" 2>"$T/$3.err"
}
server() {	# VAR NS: a server that reads and never answers
	pre_bg "$1" "$2" socat -u TCP-LISTEN:7500,reuseaddr OPEN:/dev/null
	wait_port "$2" 7500
}
wait_up() {	# NAME
	local i
	for i in $(seq 1 100); do
		[ -e "$T/$1.up" ] && return 0
		sleep 0.1
	done
	cat "$T/$1.err"
	fail "$1: the client never connected"
}

# hang_peer HOST NAME CASE: HOST's ipoibd stopped until client NAME
# (in $CP) ends; it must have failed with ETIMEDOUT, as TCP's keepalive
# gives, within 10 s; sets secs
hang_peer() {
	local out
	kill -STOP "$(eval echo \$${1}_PID)"
	touch "$T/$2.go"
	wait "$CP"
	kill -CONT "$(eval echo \$${1}_PID)"
	out=$(cat "$T/$2.out")
	case $out in
	end\ *\ ETIMEDOUT) ;;
	*) cat "$T/$2.err"; fail "$3: the client did not see its peer die (ETIMEDOUT, as TCP's keepalive gives): '$out'" ;;
	esac
	secs=${out#end }
	secs=${secs% *}
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 10 else 1)" "$secs" ||
		fail "$3: the dead peer found only after $secs s"
}

# a) and b)
server S1 h2
p0=$(stat_of h1 sdp.keepalive_probes)
client h1 10.1.0.2 ab 30 &
CP=$!
wait_up ab
[ "$(stat_of h1 sdp.conns_now)" -ge 1 ] || fail "a: h1 has no SDP connection"
sleep 4
[ -s "$T/ab.out" ] && fail "a: the idle connection ended by itself: $(cat "$T/ab.out")"
p1=$(stat_of h1 sdp.keepalive_probes)
d1=$(stat_of h1 sdp.keepalive_dead)
[ "$((p1 - p0))" -ge 2 ] || fail "a: $((p1 - p0)) keepalive probes in 4 s idle (--sdp-keepalive 1)"
expect_eq "a: connections found dead while the peer lives" "$d1" 0
ok "a: an idle SDP connection probed $((p1 - p0)) times in 4 s, still up"

hang_peer h2 ab b
d2=$(stat_of h1 sdp.keepalive_dead)
[ "${d2:-0}" -ge 1 ] || fail "b: keepalive_dead is ${d2:-none} after the peer hung"
expect_eq "b: h1's SDP connections after" "$(stat_of h1 sdp.conns_now)" 0
ok "b: the peer's host hung: the blocked recv failed with ETIMEDOUT after $secs s, keepalive_dead $d2"

# c) without keepalive nothing notices
server S2 h4
client h3 10.1.0.4 c 6 &
CP=$!
wait_up c
kill -STOP "$h4_PID"
touch "$T/c.go"
wait "$CP"
kill -CONT "$h4_PID"
expect_eq "c: the client without keepalive" "$(cat "$T/c.out")" "still"
expect_eq "c: probes sent with --sdp-keepalive 0" "$(stat_of h3 sdp.keepalive_probes)" 0
ok "c: with --sdp-keepalive 0 the program stays blocked 6 s after its peer hung"

# d) and e): the program's own keepalive where the service has none
# (--sdp-keepalive 0): SO_KEEPALIVE with TCP_KEEPIDLE 1, set after connect
# (d) or on the TCP socket before it (e), probes its connection, and the
# hung peer gives the blocked recv ETIMEDOUT as TCP's keepalive would
sdp_host h5 --address 10.1.0.5/24 --sdp-keepalive 0
sdp_host h6 --address 10.1.0.6/24 --sdp-keepalive 0
for ka in after before; do
	server S3 h6	# socat: one connection each
	k0=$(stat_of h5 sdp_service.keepalives)
	p0=$(stat_of h5 sdp.keepalive_probes)
	client h5 10.1.0.6 $ka 30 $ka &
	CP=$!
	wait_up $ka
	sleep 3
	[ -s "$T/$ka.out" ] && fail "$ka: the idle connection ended by itself: $(cat "$T/$ka.out")"
	[ "$(delta h5 sdp_service.keepalives "$k0")" -ge 1 ] ||
		fail "$ka: h5's service was not told the program's keepalive"
	[ "$(delta h5 sdp.keepalive_probes "$p0")" -ge 2 ] ||
		fail "$ka: $(delta h5 sdp.keepalive_probes "$p0") probes in 3 s idle with TCP_KEEPIDLE 1"
	hang_peer h6 $ka $ka
	ok "$ka connect: SO_KEEPALIVE, TCP_KEEPIDLE 1 with the service's keepalive off: probes, then ETIMEDOUT $secs s after the peer hung"
done

# f) and g): an accepted stream inherits its listener's SO_KEEPALIVE and
# TCP_KEEPIDLE, as TCP's accept copies them: set on the socket before
# listen (f) or on the listener after it (g); h5's ipoibd is hung, and
# the server's recv on the accepted stream fails with ETIMEDOUT (the
# services' own keepalive is off)
# lserver NS NAME WHEN: listen on 7600 (keepalive set WHEN), accept one,
# block in recv; writes "end SECONDS HOW" to $T/NAME.out, as client()
lserver() {
	pre "$1" python3 -c '
import errno, os, socket, sys, time
ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("", 7600))
def keepalive(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 1)
if sys.argv[2] == "before":
    keepalive(ls)
ls.listen(4)
if sys.argv[2] == "after":
    keepalive(ls)
open(sys.argv[1] + ".listening", "w").close()
s, _ = ls.accept()
got = (s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
       s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE))
if got != (1, 1):
    sys.exit("accepted: SO_KEEPALIVE, TCP_KEEPIDLE %r, not (1, 1)" % (got,))
s.recv(10)
open(sys.argv[1] + ".up", "w").close()
how = "eof"
try:
    while s.recv(4096):
        pass
except OSError as e:
    how = errno.errorcode.get(e.errno, str(e.errno))
go = sys.argv[1] + ".go"
t0 = os.stat(go).st_mtime if os.path.exists(go) else time.time()
print("end %.2f %s" % (time.time() - t0, how))
' "$T/$2" "$3" >"$T/$2.out" 2>"$T/$2.err"
}
for when in before after; do
	k0=$(stat_of h6 sdp_service.keepalives)
	p0=$(stat_of h6 sdp.keepalive_probes)
	lserver h6 l$when $when &
	CP=$!
	for i in $(seq 1 100); do
		[ -e "$T/l$when.listening" ] && break
		sleep 0.1
	done
	pre_bg LC h5 python3 -c 'import socket, time
s = socket.create_connection(("10.1.0.6", 7600)); s.sendall(b"hello"); time.sleep(60)'
	wait_up l$when
	sleep 3
	[ -s "$T/l$when.out" ] && fail "listener, $when: the idle connection ended by itself: $(cat "$T/l$when.out")"
	[ "$(delta h6 sdp_service.keepalives "$k0")" -ge 1 ] ||
		fail "listener, $when: h6's service was not told the accepted stream's keepalive"
	[ "$(delta h6 sdp.keepalive_probes "$p0")" -ge 2 ] ||
		fail "listener, $when: $(delta h6 sdp.keepalive_probes "$p0") probes in 3 s idle"
	hang_peer h5 l$when "listener, $when listen"
	kill "$LC" 2>/dev/null
	ok "keepalive set $when listen: the accepted stream inherits it (probes, then ETIMEDOUT $secs s after the peer hung)"
done
