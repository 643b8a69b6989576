#!/bin/bash
# Hostile peers against a live RC connection on the software subnet
# (issue 13, item 7).  While a stream runs from node cli to node srv, a
# third node, evil, sends
#  - RC packets to both ends' QPs (mkpcap.py rc-hostile, built without our
#    codecs): requests at random PSNs, FIRST/MIDDLE/LAST out of sequence,
#    WRITEs and READs with random rkeys, ACKs and NAKs, read responses
#    nobody asked for, and malformed ones (pad, DMA length, reserved
#    syndrome bits, short FIRST, oversize, a non-RC opcode, a P_Key not
#    in the partition);
#  - CM MADs to srv's CM naming the live connection's comm IDs and random
#    ones (REP, RTU, DREQ, DREP, REJ, MRA), reserved attributes, garbage
#    REQs (madtest raw).
# The stream arrives intact (sha256), the switch counts what it dropped,
# the QPs count what they dropped as not theirs, the CMs count the MADs
# they refused, nothing crashes and the connection ends only when the
# client disconnects.
. "$(dirname "$0")/lib.bash"
RT=$BIN/tests/rctest
MT=$BIN/tests/madtest
[ -x "$RT" ] && [ -x "$MT" ] || fail "no rctest/madtest (make all)"
MK=$TOP/tests/integration/mkpcap.py
SPEC=soft:$SOCK
start_fabric --mtu 1024
lid_of() { fabtest info "$1" | sed -n 's/^lid //p'; }
gid_of() { fabtest info "$1" | sed -n 's/^gid //p'; }
srv_lid=$(lid_of srv) cli_lid=$(lid_of cli) evil_lid=$(lid_of evil)
srv_gid=$(gid_of srv)

head -c 33554432 /dev/urandom >"$T/in"
"$RT" -F "$SPEC" --node srv stream-server --port 7201 --out "$T/out" \
	--timeout 60000 >"$T/srv.out" 2>&1 &
SP=$!
PIDS+=("$SP")
listening() { grep -q '^listening port 7201$' "$T/srv.out"; }
eventually listening || { cat "$T/srv.out"; fail "server does not listen"; }
# half the stream, a pause while evil does its worst, the other half
{ head -c 16777216 "$T/in"; sleep 4; tail -c +16777217 "$T/in"; } |
	"$RT" -F "$SPEC" --node cli stream-client --dst "$srv_gid" \
	--port 7201 --in /dev/stdin --timeout 60000 >"$T/cli.out" 2>&1 &
CP=$!
PIDS+=("$CP")
accepted() { grep -q '^accepted qpn ' "$T/srv.out" && grep -q '^established ' "$T/cli.out"; }
eventually accepted || { cat "$T/srv.out" "$T/cli.out"; fail "no connection"; }
srv_qpn=$(sed -n 's/^accepted qpn //p' "$T/srv.out")
cli_qpn=$(sed -n 's/^request .* peer_qpn \(0x[0-9a-f]*\)$/\1/p' "$T/srv.out" | tail -n1)
[ -n "$cli_qpn" ] || fail "no client QPN in the server's output"
sleep 0.5
ctl cm >"$T/cm1.txt"
cat "$T/cm1.txt"

drops_before=$(counter dropped)
python3 "$MK" rc-hostile "$T/h1.pcap" --slid "$evil_lid" --dlid "$srv_lid" \
	--dqpn "$srv_qpn" --mtu 1024 --seed 11 >"$T/h1.n" || fail "mkpcap"
python3 "$MK" rc-hostile "$T/h2.pcap" --slid "$evil_lid" --dlid "$cli_lid" \
	--dqpn "$cli_qpn" --mtu 1024 --seed 12 >"$T/h2.n" || fail "mkpcap"
ctl replay "$T/h1.pcap" evil >"$T/r1.out" || { cat "$T/r1.out"; fail "replay 1"; }
ctl replay "$T/h2.pcap" evil >"$T/r2.out" || { cat "$T/r2.out"; fail "replay 2"; }
sw=$(( $(sed -n 's/^switch //p' "$T/h1.n") + $(sed -n 's/^switch //p' "$T/h2.n") ))
qp1=$(sed -n 's/^qp //p' "$T/h1.n") qp2=$(sed -n 's/^qp //p' "$T/h2.n")
drops=$(( $(counter dropped) - drops_before ))
[ "$drops" -ge "$sw" ] || { ctl stats | grep -v ' 0$'; fail "the switch dropped $drops of the $sw malformed RC packets"; }

# CM MADs: the live connection's comm IDs (as ibfabricctl cm shows them,
# both orders) and random ones, from evil's port
ids=()
for pair in $(grep -Eo 'comm 0x[0-9a-f]+ peer 0x[0-9a-f]+ qpn 0x[0-9a-f]+ comm 0x[0-9a-f]+' "$T/cm1.txt" | awk '{print $2 "," $8}'); do
	ids+=(--comm-ids "$pair")
done
[ ${#ids[@]} -gt 0 ] || fail "no comm IDs in 'ibfabricctl cm'"
python3 "$MK" cm-hostile "$T/cm.mad" --seed 13 "${ids[@]}" >"$T/cm.n" || fail "mkpcap cm"
"$MT" -F "$SPEC" --node evil raw --data "$T/cm.mad" --dlid "$srv_lid" >"$T/mt.out" 2>&1 ||
	{ cat "$T/mt.out"; fail "madtest raw"; }
"$MT" -F "$SPEC" --node evil raw --data "$T/cm.mad" --dlid "$cli_lid" >>"$T/mt.out" 2>&1 ||
	{ cat "$T/mt.out"; fail "madtest raw"; }
cat "$T/mt.out"

wait "$CP" || { cat "$T/cli.out" "$T/srv.out"; fail "the stream failed"; }
wait "$SP" || { cat "$T/srv.out"; fail "the server failed"; }
cat "$T/cli.out" "$T/srv.out"
cmp -s "$T/in" "$T/out" || fail "the stream differs"
rc_counter() { sed -n 's/^rc .*\b'"$2"' \([0-9]*\).*/\1/p' "$1" | tail -n1; }
ns=$(rc_counter "$T/srv.out" drop_not_ours) nc=$(rc_counter "$T/cli.out" drop_not_ours)
[ "${ns:-0}" -ge "$qp1" ] || fail "srv's QP dropped $ns of evil's $qp1 packets as not its own"
[ "${nc:-0}" -ge "$qp2" ] || fail "cli's QP dropped $nc of evil's $qp2 packets as not its own"
ctl cm >"$T/cm2.txt"
cat "$T/cm2.txt"
cmc() { sed -n 's/^stats .*\b'"$1"' \([0-9]*\).*/\1/p' "$T/cm2.txt"; }
[ "$(cmc bad_mad)" -ge 1 ] || fail "the CMs counted no malformed MAD"
[ "$(cmc unknown)" -ge 1 ] || fail "the CMs counted no MAD for an unknown connection"
grep -q ' established 2 timewait ' "$T/cm2.txt" || fail "the CMs established other connections"
fabric_alive
ok "hostile RC packets: $drops dropped by the switch, $ns by srv's QP, $nc by cli's QP; $(cat "$T/cm.n") hostile CM MADs each way; 32 MiB intact, connection ended by its client"
stop_fabric
