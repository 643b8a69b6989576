#!/bin/bash
# Two nodes exchange UD datagrams through ibfabricd; several processes of
# one node share its port and get their own QPNs; a crashed node process is
# cleaned up while the others keep running; shared rings and socket bursts
# interwork.
. "$(dirname "$0")/lib.bash"

start_fabric --lid-file "$T/guid2lid"

# port identity: stable GUID from the name, LID from the SM, P_Key 0xffff
fabtest info h1 >"$T/info1"
fabtest info h1 >"$T/info1b"
grep -q '^pkeys 0xffff$' "$T/info1" || { cat "$T/info1"; fail "default P_Key table"; }
grep -q '^sm_lid 0x0001$' "$T/info1" || fail "SM LID"
grep -q '^mtu 4096$' "$T/info1" || fail "port MTU"
expect_eq "GUID stable across processes" "$(grep guid "$T/info1")" "$(grep guid "$T/info1b")"

start_recv r1 h2 --count 5
fabtest send h1 --dlid "$r1_LID" --dqpn "$r1_QPN" --count 5 --data hello-h2 >"$T/send.out" || fail "send"
wait_recv r1
expect_eq "datagrams received" "$(received r1)" 5
grep -q 'data=hello-h2' "$T/r1.out" || fail "payload not intact"
h1_lid=$(sed -n 's/^lid //p' "$T/info1")
grep -q "slid=$h1_lid" "$T/r1.out" || fail "source LID not h1's"
grep -q "grh=0" "$T/r1.out" || fail "unicast without GRH expected"

# a second process of h2 gets its own QPN on the same LID
start_recv r2 h2 --count 1
start_recv r3 h2 --count 1
[ "$r2_LID" = "$r3_LID" ] || fail "processes of one node have different LIDs"
[ "$r2_QPN" != "$r3_QPN" ] || fail "processes of one node share a QPN"
fabtest send h1 --dlid "$r2_LID" --dqpn "$r3_QPN" --data to-r3 >/dev/null
fabtest send h1 --dlid "$r2_LID" --dqpn "$r2_QPN" --data to-r2 >/dev/null
wait_recv r2
wait_recv r3
grep -q 'data=to-r2' "$T/r2.out" || fail "r2 got the wrong datagram"
grep -q 'data=to-r3' "$T/r3.out" || fail "r3 got the wrong datagram"
ok "per-process QPNs on one port"

# a node process killed with SIGKILL: its QP goes away, others keep going
start_recv r4 h3 --count 1 --timeout 60000
kill -KILL "$r4_PID"; wait "$r4_PID" 2>/dev/null
qp_gone() { ! ctl qps | grep -q "$r4_QPN"; }
eventually qp_gone || { ctl qps; fail "killed process's QP still exists"; }
before=$(counter drop.unknown_qp)
fabtest send h1 --dlid "$r4_LID" --dqpn "$r4_QPN" --data gone >/dev/null
wait_counter drop.unknown_qp $((before + 1))
start_recv r5 h3 --count 1
fabtest send h1 --dlid "$r5_LID" --dqpn "$r5_QPN" --data alive >/dev/null
wait_recv r5
grep -q 'data=alive' "$T/r5.out" || fail "node h3 unusable after a crash"
fabric_alive

# biggest datagram (4096) passes, 4097 is refused by the sender
start_recv r6 h2 --count 1
fabtest send h1 --dlid "$r6_LID" --dqpn "$r6_QPN" --size 4096 >/dev/null || fail "4096-byte send"
wait_recv r6
grep -q 'len=4096' "$T/r6.out" || fail "4096-byte datagram"
fabtest send h1 --dlid "$r6_LID" --dqpn "$r6_QPN" --size 4097 >"$T/big.out" 2>&1 && fail "4097-byte send accepted"
grep -q "exceeds the port MTU" "$T/big.out" || { cat "$T/big.out"; fail "no clear error for 4097 bytes"; }

# the soft provider's two QP data paths, shared rings (the default) and
# bursts on the QP socket (IBGW_SOFT_RINGS=0), carry datagrams to each
# other in both directions
for pair in "1 0" "0 1" "0 0" "1 1"; do
	set -- $pair	# receiver's mode, sender's mode
	IBGW_SOFT_RINGS=$1 start_recv m h2 --count 300 --timeout 10000
	grep -q "^rings $1\$" "$T/m.out" || { cat "$T/m.out"; fail "receiver not in mode rings=$1"; }
	IBGW_SOFT_RINGS=$2 fabtest send h1 --dlid "$m_LID" --dqpn "$m_QPN" --count 300 --data mix-%n >/dev/null || fail "send (rings $2 -> $1)"
	wait_recv m
	expect_eq "datagrams from rings=$2 to rings=$1" "$(received m)" 300
	grep -q 'data=mix-299' "$T/m.out" || fail "last datagram missing (rings $2 -> $1)"
done

# the subnet going away reaches node processes as a port event, promptly;
# they stay, and when ibfabricd is back the port comes up again with the
# same LID and QPN, CLIENT_REREGISTER follows, and datagrams flow again
start_recv r7 h2 --count 5 --timeout 60000
stop_fabric
r7_down() { grep -q '^event PORT_ERR$' "$T/r7.out"; }
eventually r7_down || { cat "$T/r7.out"; fail "no PORT_ERR event"; }
kill -0 "$r7_PID" 2>/dev/null || { cat "$T/r7.out"; fail "receiver exited when the fabric went away"; }
ok "fabric loss reported as PORT_ERR, the receiver stays"
start_fabric --lid-file "$T/guid2lid"	# the LIDs of before
r7_up() { grep -q '^event PORT_ACTIVE$' "$T/r7.out" &&
	  grep -q '^event CLIENT_REREGISTER$' "$T/r7.out"; }
eventually r7_up || { cat "$T/r7.out"; fail "no PORT_ACTIVE and CLIENT_REREGISTER after ibfabricd came back"; }
fabtest send h1 --dlid "$r7_LID" --dqpn "$r7_QPN" --count 5 --data back-%n >/dev/null || fail "send after the restart"
wait_recv r7 || true
grep -q 'data=back-4' "$T/r7.out" || { cat "$T/r7.out"; fail "no datagrams after the restart"; }
ok "ud_unicast"
