#!/bin/bash
# RC queue pairs recycled on the software subnet (FSP_QP_RECYCLE and the
# soft provider's pool of spare RC QPs, docs/soft-fabric.md):
#  1. the protocol spoken directly (python3, not our provider): an RC QP
#     with rings is renewed under a new number, nothing passed; the old
#     number is gone from the switch, the new one is there; a UD QP, an
#     unknown QPN and a P_Key index outside the table are refused, a
#     request of the wrong size closes the connection (ctl_malformed);
#  2. SDP connections made and closed back to back (tcp_rr -C under the
#     preload) take recycled QPs: every transaction echoed, qps_recycled
#     rises with them, the spare QPs a host keeps stay within the pool,
#     and a second round leaves the service's descriptors where the first
#     did;
#  3. the same with IBGW_SOFT_QP_POOL=0 recycles nothing; a bad value is
#     refused at start with the variable named;
#  4. ibfabricd restarted while hosts keep spare QPs: they are let go, the
#     SDP listeners listen again, and the next connections are SDP and
#     recycle again.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
command -v python3 >/dev/null || fail "python3 not installed (make deps)"
RR=$BIN/tests/tcp_rr
[ -x "$RR" ] || fail "no $RR (make all)"
start_fabric

# --- 1: the protocol ------------------------------------------------------------
python3 - "$SOCK" "$BIN/ibfabricctl" <<'PY' || fail "1: QP_RECYCLE protocol"
import array, errno, os, socket, struct, subprocess, sys

path, ctl = sys.argv[1], sys.argv[2]
HELLO, QP_CREATE, REPLY, QP_RECYCLE = 1, 3, 9, 19
UD, RC = 1, 2
BURST, SHM = 0x4, 0x8
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
seq = 0


def call(t, body):
    global seq
    seq += 1
    s.send(struct.pack('=HHIiI', t, 0, seq, 0, len(body)) + body)
    while True:
        msg, anc, _, _ = s.recvmsg(70000, socket.CMSG_SPACE(16))
        if not msg:
            return None, b'', []
        ty, _, sq, st, ln = struct.unpack_from('=HHIiI', msg)
        fds = []
        for lvl, typ, data in anc:
            if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                fds += array.array('i', data[:len(data) - len(data) % 4])
        if ty == REPLY and sq == seq:
            return st, msg[16:16 + ln], list(fds)
        for f in fds:
            os.close(f)


def qps():
    out = subprocess.run([ctl, '-s', path, 'qps'], capture_output=True,
                         text=True, check=True).stdout
    return {l.split()[1] for l in out.splitlines() if l.startswith('pool ')}


def expect(what, got, want):
    if got != want:
        sys.exit('%s: %r, expected %r' % (what, got, want))


st, _, _ = call(HELLO, struct.pack('=II64s', 1, 0, b'pool'))
expect('HELLO', st, 0)
st, body, fds = call(QP_CREATE, struct.pack('=IIHH', UD, 0x1234, 0, 0))
expect('UD QP_CREATE', st, 0)
ud = struct.unpack('=I', body)[0]
st, _, _ = call(QP_RECYCLE, struct.pack('=IHH', ud, 0, 0))
expect('recycling a UD QP', st, errno.EINVAL)
st, body, fds = call(QP_CREATE, struct.pack('=IIHH', RC, 0, 0, BURST | SHM))
expect('RC QP_CREATE', (st, len(fds)), (0, 2))
old = struct.unpack('=I', body)[0]
st, body, fds = call(QP_RECYCLE, struct.pack('=IHH', old, 0, 0))
expect('QP_RECYCLE', (st, len(body), fds), (0, 4, []))
new = struct.unpack('=I', body)[0]
if new == old:
    sys.exit('QP_RECYCLE kept the number 0x%06x' % old)
have = qps()
if '0x%06x' % old in have or '0x%06x' % new not in have:
    sys.exit('qps after the recycle: %s (old 0x%06x, new 0x%06x)' %
             (sorted(have), old, new))
st, _, _ = call(QP_RECYCLE, struct.pack('=IHH', old, 0, 0))
expect('recycling the old number again', st, errno.ENOENT)
st, _, _ = call(QP_RECYCLE, struct.pack('=IHH', new, 31, 0))
expect('recycling onto P_Key index 31', st, errno.EINVAL)
st, body, fds = call(QP_RECYCLE, struct.pack('=IHH', new, 0, 0))
expect('recycling the new number', (st, fds), (0, []))
st, _, _ = call(QP_RECYCLE, struct.pack('=I', new))
expect('a 4-byte QP_RECYCLE', st, errno.EBADMSG)
if s.recv(100):
    sys.exit('the connection stayed after a malformed QP_RECYCLE')
print('old 0x%06x new 0x%06x, refusals as expected' % (old, new))
PY
[ "$(counter qps_recycled)" -eq 2 ] || fail "1: qps_recycled $(counter qps_recycled), expected 2"
[ "$(counter ctl_malformed)" -ge 1 ] || fail "1: the malformed QP_RECYCLE was not counted"
eventually fabric_alive || fail "1: ibfabricd died"
ok "1: QP_RECYCLE renews an RC QP under a new number; UD, unknown, bad P_Key index refused; bad size closes"

# --- 2: SDP connections through the pool ------------------------------------------
sdp_host h1 --address 10.7.0.1/24
sdp_host h2 --address 10.7.0.2/24
pre_bg SRV h2 "$RR" -s -p 7300
wait_port h2 7300
sleep 0.2
r0=$(counter qps_recycled)
c0=$(stat_of h1 sdp.conns_active)
out=$(pre h1 "$RR" -c 10.7.0.2 -p 7300 -n 60 -w 0 -C 2>&1) ||
	{ echo "$out"; fail "2: tcp_rr -C failed"; }
echo "$out"
echo "$out" | grep -q "^tcp_rr: n 60 " || fail "2: not 60 transactions"
made=$(delta h1 sdp.conns_active "$c0")
[ "$made" -eq 60 ] || fail "2: $made SDP connections made, expected 60 (not SDP?)"
eventually test "$(($(counter qps_recycled) - r0))" -ge 100 ||
	fail "2: qps_recycled rose by $(($(counter qps_recycled) - r0)) for 60 connections, expected 100 or more"
rc_qps() { ctl qps | awk -v n="$1" '$1 == n && $3 == "0x00000000"' | wc -l; }
# once every connection is torn down a host keeps at most the pool (4)
idle() { [ "$(rc_qps h1)" -le 4 ] && [ "$(rc_qps h2)" -le 4 ]; }
eventually idle || { ctl qps; fail "2: more RC QPs kept than the pool holds"; }
fds1=$(ls /proc/"$h1_PID"/fd | wc -l)
# a second round: with the pool full, every descriptor comes back
out=$(pre h1 "$RR" -c 10.7.0.2 -p 7300 -n 60 -w 0 -C 2>&1) ||
	{ echo "$out"; fail "2: the second tcp_rr -C failed"; }
eventually idle || { ctl qps; fail "2: more RC QPs kept than the pool holds"; }
same_fds() { [ "$(ls /proc/"$h1_PID"/fd | wc -l)" -le "$fds1" ]; }
eventually same_fds || fail "2: h1's ipoibd had $fds1 descriptors after 60 connections, $(ls /proc/"$h1_PID"/fd | wc -l) after 120"
ok "2: 60 SDP connections back to back, $(($(counter qps_recycled) - r0)) QPs recycled over 120, $(rc_qps h1) and $(rc_qps h2) kept, h1's descriptors steady at $fds1"

# --- 3: no pool ------------------------------------------------------------------
IBGW_SOFT_QP_POOL=0 sdp_host h3 --address 10.7.0.3/24
IBGW_SOFT_QP_POOL=0 sdp_host h4 --address 10.7.0.4/24
pre_bg SRV4 h4 "$RR" -s -p 7301
wait_port h4 7301
sleep 0.2
r0=$(counter qps_recycled)
out=$(pre h3 "$RR" -c 10.7.0.4 -p 7301 -n 20 -w 0 -C 2>&1) ||
	{ echo "$out"; fail "3: tcp_rr -C failed without the pool"; }
echo "$out" | grep -q "^tcp_rr: n 20 " || fail "3: not 20 transactions"
sleep 1
[ "$(counter qps_recycled)" -eq "$r0" ] ||
	fail "3: QPs recycled with IBGW_SOFT_QP_POOL=0"
[ "$(rc_qps h3)" -eq 0 ] || { ctl qps; fail "3: h3 kept RC QPs without a pool"; }
ns_add h5
if ns h5 env IBGW_SOFT_QP_POOL=lots timeout 10 "$BIN/ipoibd" -f -F "soft:$SOCK" \
	-n h5 -i ib0 >"$T/h5.log" 2>&1; then
	fail "3: ipoibd started with IBGW_SOFT_QP_POOL=lots"
fi
grep -q "IBGW_SOFT_QP_POOL 'lots'" "$T/h5.log" || { cat "$T/h5.log"; fail "3: no reason given"; }
ok "3: IBGW_SOFT_QP_POOL=0 recycles nothing and keeps no QP; a bad value is refused: $(grep -o "IBGW_SOFT_QP_POOL.*" "$T/h5.log" | head -n1)"

# --- 4: ibfabricd restarted under a full pool -----------------------------------------
# h1 and h2 keep spare QPs (part 2); they went with the old ibfabricd, and
# the hosts' next connections take new ones, then recycle them again
[ "$(rc_qps h1)" -ge 1 ] || { ctl qps; fail "4: h1 keeps no spare QP to lose"; }
stop_fabric
start_fabric
reattached() { ns h1 ping -c 1 -W 1 10.7.0.2 >/dev/null 2>&1; }
eventually reattached || fail "4: h1 cannot reach h2 after the restart"
for h in h1 h2; do
	kill -0 "$(eval echo \$${h}_PID)" 2>/dev/null || fail "4: ipoibd $h died"
done
# the services' listeners came back with the port (soft_cm_reattach):
# h2 takes every connection over SDP, none falls back to TCP
p0=$(stat_of h2 sdp.conns_passive)
out=$(pre h1 "$RR" -c 10.7.0.2 -p 7300 -n 30 -w 0 -C 2>&1)
echo "$out" | grep -q "^tcp_rr: n 30 " || { echo "$out"; fail "4: tcp_rr -C failed after the restart"; }
got=$(delta h2 sdp.conns_passive "$p0")
[ "$got" -eq 30 ] || fail "4: h2 took $got of 30 connections over SDP after the restart (its listener gone?)"
eventually test "$(counter qps_recycled)" -ge 50 || {
	ctl qps; echo "h1 active $(stat_of h1 sdp.conns_active) h2 passive $(stat_of h2 sdp.conns_passive)"
	fail "4: qps_recycled $(counter qps_recycled) after 30 connections"; }
ok "4: ibfabricd restarted: the pools were let go, 30 more connections recycled $(counter qps_recycled) QPs"
echo PASS
