#!/bin/bash
# Hostile SDP peers against an IB host's SDP service (issue 14, item 8).
# h2 runs a preloaded socat server that appends what it receives to a
# file; sdptest, a peer that breaks the rules on purpose, connects from
# another node of the fabric and, after one good message, sends:
#   a Hello with a bad version, IP version or max_adverts (refused: REJ,
#   counted bad_hello), a message out of sequence, an unknown MID, a
#   zero-copy MID we never offered, an ack of messages never sent, a BSDH
#   length that is not the message's, data after its DisConn, a lie
#   about its buffers, and buffers claimed but never posted (RNR NAK for
#   ever: the victim's stall time ends it).
# Each must abort the connection (AbortConn or DREQ), be counted under
# its reason, hand the program nothing after the good message, and leave
# the service serving.  Malformed requests on the service's control
# socket are dropped or refused and counted.  Then a well-behaved peer and
# a preloaded socat client
# then get through, and a last SIGUSR1 report shows ipoibd alive.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
command -v socat >/dev/null || fail "socat not installed (make deps)"
ST=$BIN/tests/sdptest
start_fabric

host() {	# NAME ADDR
	sdp_host "$1" --address "$2"
}
host h1 10.1.0.1/24
host h2 10.1.0.2/24
# h2's port GID: the last 16 bytes of its 20-byte link address
gid=$(sed -n 's/^.*ready: .* address \([0-9a-f:]*\).*/\1/p' "$T/h2.log" |
	head -n1 | cut -d: -f5- | tr -d : |
	sed 's/\(....\)/\1:/g; s/:$//')
[ -n "$gid" ] || fail "no GID for h2"

ns_bg SRV h2 env LD_PRELOAD="$PRE" socat -u TCP-LISTEN:7100,fork,reuseaddr \
	OPEN:"$T/got",creat,append
sleep 0.5


hostile() {	# CASE COUNTER WANT [WAIT]
	local before after out
	before=$(stat_of h2 "$2")
	out=$("$ST" --fabric "soft:$SOCK" --node evil --gid "$gid" --port 7100 \
		--src 10.1.0.9 --dst 10.1.0.2 --wait "${4:-5}" "$1" 2>&1)
	[ "$out" = "$3" ] || fail "$1: the victim did '$out', not '$3'"
	after=$(stat_of h2 "$2")
	[ "${after:-0}" -gt "${before:-0}" ] ||
		fail "$1: $2 stayed at ${after:-none}"
	kill -0 "$h2_PID" 2>/dev/null || fail "$1: ipoibd h2 died"
	ok "$1: $3, $2 $before -> $after"
}

hostile hello-version sdp.bad_hello "rejected reason 28"
hostile hello-ipv sdp.bad_hello "rejected reason 28"
hostile hello-adverts sdp.bad_hello "rejected reason 28"
hostile bad-mseq sdp.proto_error.bad_mseq aborted
hostile bad-mid sdp.proto_error.bad_mid aborted
hostile zcopy-mid sdp.proto_error.bad_mid aborted
hostile ack-beyond sdp.proto_error.bad_ack aborted
hostile bad-len sdp.proto_error.bad_header aborted
hostile after-disconn sdp.proto_error.data_after_disconn aborted
hostile credit-lie sdp.proto_error.bad_credits aborted
# buffers claimed and none posted: the victim's send is answered with RNR
# NAK for ever (rnr_retry 7); after its stall time (10 s) it gives up
hostile rnr sdp.stalls aborted 20

# malformed requests on the service's control socket (any local program
# can reach it): short and without magic dropped, an unknown op refused
# with EOPNOTSUPP; all counted, none answered with a descriptor
before=$(stat_of h2 sdp_service.bad_requests)
ns h2 python3 - <<'PY' || fail "control socket garbage: the service answered wrongly"
import socket, struct, sys
def send(b):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(3)
    s.connect("\0ibgw-sdp")
    s.send(b)
    try:
        msg, anc, flags, _ = s.recvmsg(256, socket.CMSG_SPACE(16))
    except socket.timeout:
        sys.exit("no answer and not closed")
    if anc:
        sys.exit("a descriptor came back")
    return msg
send(b"x")                                      # short: closed
send(b"\0" * 200)                               # no magic: closed
# sizeof(struct sdp_ctl_req) is 120: an unknown op is refused in words
req = struct.pack("=IIII", 0x53445031, 99, 7, 0).ljust(120, b"\0")
magic, rid, err = struct.unpack("=IIi", send(req)[:12])
if (magic, rid, err) != (0x53445031, 7, 95):
    sys.exit("unknown op answered %x %d %d, not EOPNOTSUPP" % (magic, rid, err))
# a 'both' LISTEN whose TCP half is no listener (a unix stream): EINVAL
local = struct.pack("=H", socket.AF_INET) + struct.pack(">H", 7300) + bytes(24)
req = (struct.pack("=IIII", 0x53445031, 2, 8, 1) + local + bytes(28) +
       struct.pack("=IiQ", 0, 8, 0)).ljust(120, b"\0")
a, b = socket.socketpair()
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(3)
s.connect("\0ibgw-sdp")
s.sendmsg([req], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("=i", b.fileno()))])
msg, anc, flags, _ = s.recvmsg(256, socket.CMSG_SPACE(16))
magic, rid, err = struct.unpack("=IIi", msg[:12])
if anc or (magic, rid, err) != (0x53445031, 8, 22):
    sys.exit("LISTEN with a unix stream as its TCP half answered %x %d %d%s, not EINVAL" %
             (magic, rid, err, " and a descriptor" if anc else ""))
a.send(b"wake")                                 # readable: nothing listens on it
PY
after=$(stat_of h2 sdp_service.bad_requests)
[ "${after:-0}" -ge $(( ${before:-0} + 3 )) ] ||
	fail "malformed control requests: bad_requests $before -> $after"
kill -0 "$h2_PID" 2>/dev/null || fail "ipoibd h2 died on control garbage"
ok "malformed control requests dropped and counted (bad_requests $before -> $after)"

# a 'both' listener whose TCP half a forked child (which kept the TCP
# socket, as TCP's fork does) shuts down: accept on it fails with EINVAL
# while poll says readable; the service stops watching it instead of
# spinning (before: ipoibd at 100% CPU for as long as the program lived)
lost0=$(stat_of h2 sdp_service.tcp_listeners_lost)
ns_bg SHUTL h2 env LD_PRELOAD="$PRE" LIBSDP_CONFIG_FILE="$T/none.conf" python3 -c '
import os, socket, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7301))
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.read(r, 1)
    s.shutdown(socket.SHUT_RDWR)                # the TCP listener, through its copy here
    os._exit(0)
s.listen(8)                                     # both: SDP, and TCP through the service
os.write(w, b"x")
os.waitpid(pid, 0)
time.sleep(8)
'
lost() { [ "$(stat_of h2 sdp_service.tcp_listeners_lost)" -gt "${lost0:-0}" ]; }
eventually lost || fail "the shut-down TCP half of a 'both' listener not given up (tcp_listeners_lost)"
c0=$(awk '{print $14 + $15}' /proc/"$h2_PID"/stat)
sleep 2
c1=$(awk '{print $14 + $15}' /proc/"$h2_PID"/stat)
[ $((c1 - c0)) -lt 60 ] || fail "ipoibd h2 used $((c1 - c0)) ticks in 2 s after the TCP half shut down (spinning?)"
kill "$SHUTL" 2>/dev/null
wait "$SHUTL" 2>/dev/null
ok "a 'both' listener's TCP half shut down by the program: given up (tcp_listeners_lost), ipoibd $((c1 - c0)) ticks in 2 s"

# ipoibd out of descriptors while TCP connections wait on a 'both'
# listener's TCP half (many clients, a low RLIMIT_NOFILE): accept4, or
# the stream that hands a connection to the program, fails with EMFILE
# while the listener stays readable; the service keeps the connection it
# has, pauses that listener 100 ms at a time (tcp_accept_pauses) instead
# of spinning, and hands over every waiting connection once descriptors
# are back.
command -v prlimit >/dev/null || fail "prlimit not installed (util-linux)"
p0=$(stat_of h2 sdp_service.tcp_accept_pauses)
ns_bg ACC h2 env LD_PRELOAD="$PRE" LIBSDP_CONFIG_FILE="$T/none.conf" python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7302))
s.listen(64)
open(sys.argv[1], "w").write("listening\n")
s.settimeout(30)
n = 0
try:
    while n < 12:
        c, _ = s.accept()
        n += 1
        open(sys.argv[1], "a").write("accepted %d\n" % n)
except OSError as e:
    open(sys.argv[1], "a").write("error %s\n" % e)
' "$T/acc.out"
lsn() { grep -q "^listening" "$T/acc.out" 2>/dev/null; }
eventually lsn || fail "the 'both' listener on 7302"
old=$(prlimit --pid "$h2_PID" --nofile -o SOFT,HARD --raw --noheadings | awk '{print $1 ":" $2}')
case "$old" in [0-9]*:[0-9]*) ;; *) fail "ipoibd h2's RLIMIT_NOFILE: '$old'" ;; esac
# one above the lowest descriptor number free in ipoibd: the limit, so
# that accept4 gets a connection and the stream to the program's unix
# listener fails with EMFILE (before: the TCP connection was reset and
# lost), and from then on accept4 itself
nfd=0
while [ -e /proc/"$h2_PID"/fd/$nfd ]; do nfd=$((nfd + 1)); done
prlimit --pid "$h2_PID" --nofile=$((nfd + 1)):"${old#*:}" || fail "prlimit on ipoibd h2"
ns_bg CLI h1 python3 -c '
import socket, time
c = [socket.create_connection(("10.1.0.2", 7302), timeout=20) for _ in range(12)]
time.sleep(30)
'
paused() { [ "$(stat_of h2 sdp_service.tcp_accept_pauses)" -gt "${p0:-0}" ]; }
eventually paused || { prlimit --pid "$h2_PID" --nofile="$old"; fail "no tcp_accept_pauses with ipoibd out of descriptors"; }
c0=$(awk '{print $14 + $15}' /proc/"$h2_PID"/stat)
sleep 2
c1=$(awk '{print $14 + $15}' /proc/"$h2_PID"/stat)
prlimit --pid "$h2_PID" --nofile="$old" || fail "prlimit back on ipoibd h2"
[ $((c1 - c0)) -lt 60 ] || fail "ipoibd h2 used $((c1 - c0)) ticks in 2 s out of descriptors (spinning?)"
all() { grep -q "^accepted 12$" "$T/acc.out"; }
eventually all || { cat "$T/acc.out"; fail "the waiting TCP connections not all taken once descriptors were back"; }
kill "$CLI" "$ACC" 2>/dev/null
wait "$CLI" "$ACC" 2>/dev/null
ok "ipoibd out of descriptors: the 'both' listener paused ($(( $(stat_of h2 sdp_service.tcp_accept_pauses) - ${p0:-0} )) pauses, $((c1 - c0)) ticks in 2 s), all 12 TCP connections taken after"

sleep 0.5
# nothing after a violation reached the program; each good message did
if grep -qx -e bad -e "g*lie" "$T/got" || grep -q "bad$" "$T/got"; then
	cat "$T/got"
	fail "data sent after a violation reached the program"
fi
for c in bad-mseq bad-mid zcopy-mid ack-beyond bad-len after-disconn \
	credit-lie; do
	grep -q "^good:$c\$" "$T/got" || { cat "$T/got"; fail "good:$c missing"; }
done
ok "the program got each good message and nothing sent after a violation"

# still serving: a correct peer, then a preloaded client
out=$("$ST" --fabric "soft:$SOCK" --node evil --gid "$gid" --port 7100 \
	--src 10.1.0.9 --dst 10.1.0.2 --bytes 300000 data 2>&1)
[ "$out" = closed ] || fail "a correct peer after the hostile ones: $out"
head -c 200000 /dev/urandom >"$T/data"
: >"$T/got"
sleep 0.3
ns h1 env LD_PRELOAD="$PRE" socat -u OPEN:"$T/data" TCP:10.1.0.2:7100 ||
	fail "preloaded socat to h2 after the hostile peers"
for i in $(seq 1 50); do
	[ "$(stat -c %s "$T/got")" -ge 200000 ] && break
	sleep 0.1
done
cmp -s "$T/data" "$T/got" || fail "the transfer after the hostile peers differs"
conns=$(stat_of h2 sdp.conns_passive)
ok "h2 still serves SDP: a correct peer, then 200000 bytes by preloaded socat ($conns connections taken)"
