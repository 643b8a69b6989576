#!/bin/bash
# Malformed packets replayed from a pcap (garbage, truncated headers, bad
# PktLen, bad VCRC, bad ICRC, bad LVer, raw LNH, unknown DLID, spoofed SLID,
# multicast without GRH) are each counted under their reason while
# ordinary traffic continues; garbage on the node socket, broken burst
# framing on a QP socket and impossible shared rings are counted too.
. "$(dirname "$0")/lib.bash"

start_fabric
h1_lid=$(fabtest info h1 | sed -n 's/^lid //p')
start_recv r h2 --count 200 --timeout 8000
fabtest send h1 --dlid $r_LID --dqpn $r_QPN --count 200 --interval-us 2000 --data seq-%n >"$T/send.out" &
sender=$!
PIDS+=("$sender")

python3 "$TOP/tests/integration/mkpcap.py" garbage "$T/garbage.pcap" \
	--slid "$h1_lid" --dlid "$r_LID" --dqpn "$r_QPN" >"$T/expect" || fail "mkpcap"
declare -A before
while read -r reason n; do before[$reason]=$(counter "drop.$reason"); done <"$T/expect"
ctl replay "$T/garbage.pcap" h1 >"$T/replay.out" || { cat "$T/replay.out"; fail "replay"; }
total=$(awk '{s += $2} END {print s}' "$T/expect")
grep -q "replayed $total packet" "$T/replay.out" || { cat "$T/replay.out"; fail "not all replayed"; }
while read -r reason n; do
	expect_eq "drop.$reason" "$(counter "drop.$reason")" $(( ${before[$reason]} + n ))
done <"$T/expect"

# garbage on the node socket: counted, connection closed, daemon fine
python3 - "$SOCK" <<'PY'
import os, socket, sys
for payload in (b"", b"\x01", os.urandom(300), b"\x01\x00" + b"\xff" * 14):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    s.send(payload) if payload else s.shutdown(socket.SHUT_WR)
    s.settimeout(2)
    try:
        s.recv(100)
    except OSError:
        pass
    s.close()
PY
[ "$(counter ctl_malformed)" -ge 3 ] || fail "control-socket garbage not counted"
fabric_alive

# broken framing inside bursts on a QP socket: each broken record is
# dropped as truncated, the good packets around them arrive
start_recv b h3 --count 2 --timeout 8000
trunc=$(counter drop.truncated)
IBGW_SOFT_RINGS=0 fabtest burst-garbage h1 --dlid $b_LID --dqpn $b_QPN >/dev/null || fail "burst-garbage"
wait_recv b
expect_eq "good packets among broken bursts" "$(received b)" 2
grep -q 'data=ok-2' "$T/b.out" || fail "the packet after the broken bursts is missing"
expect_eq "broken burst records" "$(counter drop.truncated)" $((trunc + 3))
fabric_alive

# impossible shared rings (counters, lengths, a wrap marker; a flooded
# receive ring whose head lies): counted, the good packets around arrive
start_recv c h3 --count 2 --timeout 8000
bad=$(counter drop.bad_ring)
over=$(counter drop.rx_overrun)
bvcrc=$(counter drop.bad_vcrc)
bicrc=$(counter drop.bad_icrc)
fabtest ring-garbage h1 --dlid $c_LID --dqpn $c_QPN >/dev/null || fail "ring-garbage"
wait_recv c
expect_eq "good packets around broken rings" "$(received c)" 2
grep -q 'data=ok-2' "$T/c.out" || fail "the packet after the broken rings is missing"
expect_eq "broken rings" "$(counter drop.bad_ring)" $((bad + 4))
expect_eq "bad VCRC in a ring" "$(counter drop.bad_vcrc)" $((bvcrc + 1))
expect_eq "bad ICRC in a ring" "$(counter drop.bad_icrc)" $((bicrc + 1))
n=$(counter drop.rx_overrun)
[ "$n" -gt "$over" ] || fail "no overrun counted on a flooded ring with a lying head"
ok "flooded ring with a lying head: $((n - over)) overruns counted" 
fabric_alive

wait "$sender" || fail "sender"
wait_recv r
expect_eq "traffic during the replay" "$(received r)" 200
grep -q 'data=seq-199' "$T/r.out" || fail "last datagram missing"
stop_fabric
ok "replay_garbage"
