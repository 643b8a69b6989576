#!/bin/bash
# An IB host's ipoibd (its SDP service) restarted under preloaded servers
# that listen: the service started again takes their listeners over, as a
# program listening on a TCP port expects its port to stay open while the
# host's IPoIB driver is reloaded under it.
#  - 'both' (no libsdp.conf) and 'sdp' (use sdp) servers on h2, a
#    blocking accept (socat fork) and an event loop (python3 asyncio);
#  - h2's ipoibd stopped (SIGTERM, as systemctl restart does) and, once
#    more, killed (SIGKILL), and started again each time;
#  - after each restart: SDP clients on h1 reach every server, over SDP
#    (the new service's accepted_sdp counter), and a plain TCP client
#    reaches the 'both' ones (their TCP half made again);
#  - a listener its program has closed meanwhile is not taken over, and
#    a server started after the restart listens as before.
# Before, the listeners of the service before were left to their
# programs, which waited in accept for ever: clients went TCP ('both',
# and even that was refused, its TCP half gone with the service) or
# failed (ECONNREFUSED).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
for t in socat python3; do
	command -v $t >/dev/null || skip "$t not installed (make deps)"
done
start_fabric
sdp_host h1 --address 10.61.0.1/24 --address fd61::1/64
sdp_host h2 --address 10.61.0.2/24 --address fd61::2/64
printf 'use sdp server * *:*\nuse sdp client * *:*\n' >"$T/sdp.conf"

# the servers: an echo each; 'both' and 'sdp'; blocking accept (socat
# fork) and asyncio (epoll, non-blocking accept); IPv4 and IPv6
pre_bg S1 h2 socat TCP4-LISTEN:7101,reuseaddr,fork EXEC:cat
LIBSDP_CONFIG_FILE=$T/sdp.conf pre_bg S2 h2 socat TCP4-LISTEN:7102,reuseaddr,fork EXEC:cat
cat >"$T/aecho.py" <<'PY'
import asyncio, socket, sys
async def echo(r, w):
    while True:
        b = await r.read(65536)
        if not b:
            break
        w.write(b)
        await w.drain()
    w.close()
async def main():
    s = await asyncio.start_server(echo, sys.argv[1], int(sys.argv[2]),
                                   family=socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
    print("listening", flush=True)
    async with s:
        await s.serve_forever()
asyncio.run(main())
PY
pre_bg S3 h2 python3 "$T/aecho.py" fd61::2 7103
pre_bg S4 h2 socat TCP4-LISTEN:7104,reuseaddr,fork EXEC:cat	# closed later
for p in 7101 7103 7104; do wait_port h2 $p; done
ulistens() { [ "$(ns h2 ss -lxH | grep -c '@ibgw-sdp-l/')" -ge "$1" ]; }
eventually ulistens 4 || { ns h2 ss -lxH; fail "not 4 SDP listeners on h2"; }

# echo_over NAME HOST PORT [sdp|tcp]: one line echoed, from h1; sdp: under
# the preload with 'use sdp' (no TCP to fall back on); tcp: no preload
echo_over() {
	local out
	case $4 in
	sdp) out=$(echo "hello $1" | LIBSDP_CONFIG_FILE=$T/sdp.conf pre h1 timeout 10 socat -t 5 - "TCP:$2:$3" 2>&1) ;;
	tcp) out=$(echo "hello $1" | ns h1 timeout 10 socat -t 5 - "TCP:$2:$3" 2>&1) ;;
	esac
	[ "$out" = "hello $1" ] || fail "$1: $4 to $2:$3 echoed '$out'"
}
check_all() {	# LABEL
	local a0
	a0=$(stat_of h2 sdp_service.accepted_sdp)
	echo_over "$1 both" 10.61.0.2 7101 sdp
	echo_over "$1 sdp-only" 10.61.0.2 7102 sdp
	echo_over "$1 asyncio v6" '[fd61::2]' 7103 sdp
	expect_eq "$1: connections h2's service handed over SDP" "$(delta h2 sdp_service.accepted_sdp "$a0")" 3
	echo_over "$1 both, plain TCP" 10.61.0.2 7101 tcp
	echo_over "$1 asyncio v6, plain TCP" '[fd61::2]' 7103 tcp
}
check_all "before"
ok "before the restart: SDP to the three servers, TCP to the two 'both' ones"

restart_h2() {	# SIGNAL
	local old=$h2_PID
	kill "-$1" "$h2_PID"
	wait "$h2_PID" 2>/dev/null
	kill -0 "$old" 2>/dev/null && fail "h2's ipoibd still runs after SIG$1"
	# in the namespace it had (sdp_host would make a new one)
	ns_bg h2_PID h2 "$BIN/ipoibd" -f -F "soft:$SOCK" -n h2 -i ib0 \
		--address 10.61.0.2/24 --address fd61::2/64 >"$T/h2.log" 2>&1
	h2_ready() { grep -q "ready:" "$T/h2.log"; }
	eventually h2_ready || { cat "$T/h2.log"; fail "h2's ipoibd did not start again"; }
	h2_v6() { [ -z "$(ns h2 ip -6 addr show dev ib0 tentative)" ]; }
	eventually h2_v6 || fail "h2's IPv6 address stays tentative"
}
# a listener any user could make under such a name is not taken over:
# its 'both' flag would get it a TCP port (here 799, privileged) from
# the service
cat >"$T/fake.py" <<'PY'
import socket, time
h = 2166136261
for c in b"@ibgw-sdp":
    h = ((h ^ c) * 16777619) & 0xffffffff
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0ibgw-sdp-l/1.1/%08x.1.0.799.2/*" % h)
s.listen()
print("listening", flush=True)
time.sleep(300)
PY
ns_bg FAKE h2 setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c "$(cat "$T/fake.py")"	# $T is 0700
eventually ulistens 5 || { ns h2 ss -lxH; fail "the fake listener is not there"; }
restart_h2 TERM
check_all "after SIGTERM"
expect_eq "listeners taken over after SIGTERM" "$(stat_of h2 sdp_service.listens_restored)" 4
ns h2 ss -ltnH "sport = :799" | grep -q . && fail "another user's listener named as ours got TCP port 799"
kill "$FAKE"
# the IPv6 one's address is tentative again when the service starts
expect_eq "'both' TCP halves that could not be made again" "$(stat_of h2 sdp_service.restore_tcp_failures)" 0
ok "ipoibd stopped and started again: the new service took the 4 listeners over; SDP and TCP reach the servers"

# a listener closed while no service ran is not taken over
kill "$S4"
wait "$S4" 2>/dev/null
restart_h2 KILL
check_all "after SIGKILL"
expect_eq "listeners taken over after SIGKILL" "$(stat_of h2 sdp_service.listens_restored)" 3
expect_eq "'both' TCP halves that could not be made again" "$(stat_of h2 sdp_service.restore_tcp_failures)" 0
out=$(echo x | LIBSDP_CONFIG_FILE=$T/sdp.conf pre h1 timeout 10 socat -t 5 - TCP:10.61.0.2:7104 2>&1) &&
	fail "a connect to the closed server's port succeeded: '$out'"
ok "ipoibd killed and started again: 3 listeners taken over (the closed one not), all reachable"

# a server started after the restart listens as before, on a port one of
# the taken-over listeners does not hold
pre_bg S5 h2 socat TCP4-LISTEN:7105,reuseaddr,fork EXEC:cat
wait_port h2 7105
echo_over "new server" 10.61.0.2 7105 sdp
# and a second server on a taken-over port is refused as before
LIBSDP_CONFIG_FILE=$T/sdp.conf pre h2 timeout 5 socat TCP4-LISTEN:7102,reuseaddr EXEC:cat >"$T/dup.out" 2>&1 &&
	fail "a second listener on 7102 was taken"
grep -q "Address already in use" "$T/dup.out" || { cat "$T/dup.out"; fail "a second listener on 7102: not EADDRINUSE"; }
ok "after the restart: a new server listens, a second one on a taken-over port gets EADDRINUSE"
kill "$S1" "$S2" "$S3" "$S5" 2>/dev/null
ok "sdp_restart"
