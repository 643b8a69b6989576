#!/bin/bash
# Subnet manager events and membership lifetime on ibfabricd:
# - "ibfabricctl rereg" (as an SM restart) forgets every membership, keeps
#   the well-known groups, and raises CLIENT_REREGISTER on every node;
# - "ibfabricctl port NODE down|up" raises PORT_ERR / PORT_ACTIVE on that
#   node only, drops its memberships, and packets to it count port_down;
# - a process killed with SIGKILL loses its port's memberships (the last
#   process of a node gone: as the kernel leaves for a dead client);
# - trap subscribers get Reports (trap 66 on group creation, 67 on deletion);
# - send-only members send to a group but do not receive from it.
. "$(dirname "$0")/lib.bash"

BC=ff12:401b:ffff::ffff:ffff
G=ff12:401b:ffff::7
start_fabric

# --- traps: a subscriber hears a group created (66) and deleted (67)
G6=ff12:401b:ffff::66
"$BIN/tests/satest" -s "$SOCK" watcher "inform 66 on" "inform 67 on" \
	"inform 64 on" "notices 20000" >"$T/watch.out" 2>&1 &
watch_pid=$!
PIDS+=("$watch_pid")
eventually grep -q "^inform 64 on: OK" "$T/watch.out" || { cat "$T/watch.out"; fail "subscription"; }
"$BIN/tests/satest" -s "$SOCK" h6 "join $G6 full create qkey=0xb1b pkey=0xffff" \
	"leave $G6 full" >"$T/h6.out" 2>&1 || { cat "$T/h6.out"; fail "satest h6"; }
eventually grep -q "^notice trap=67 .* gid=$G6$" "$T/watch.out" || { cat "$T/watch.out"; fail "no trap 67"; }
grep -q "^notice trap=66 issuer_lid=0x0001 gid=$G6$" "$T/watch.out" || { cat "$T/watch.out"; fail "no trap 66"; }
# trap 64 (GID in service) when a new port appears
h6gid=$(sed -n 's/^self gid=\([^ ]*\) .*/\1/p' "$T/h6.out")
eventually grep -q "^notice trap=64 .* gid=$h6gid$" "$T/watch.out" || { cat "$T/watch.out"; fail "no trap 64 for h6"; }
kill "$watch_pid"; wait "$watch_pid" 2>/dev/null
ok "traps 64, 66 and 67 reported"

start_recv a h1 --join "$G" --count 0 --timeout 60000
start_recv b h2 --join "$BC" --count 0 --timeout 60000
start_recv c h3 --count 0 --timeout 60000
ctl groups not-a-gid >"$T/bad" 2>&1 && fail "groups with a bad MGID succeeded"
grep -q "not a GID" "$T/bad" || { cat "$T/bad"; fail "unclear error"; }
ctl groups >"$T/g1"
grep -q "^$G .* h1:F$" "$T/g1" || { cat "$T/g1"; fail "h1 not a member of $G"; }
grep -q "^$BC .* h2:F$" "$T/g1" || { cat "$T/g1"; fail "h2 not a member of $BC"; }

# --- send-only: h4 joins as SendOnlyNonMember, sends, and is not sent to
start_recv so h4 --join "$G" --join-state 4 --count 0 --timeout 60000
ctl groups "$G" | grep -q "h4:s" || { ctl groups "$G"; fail "h4 not a send-only member"; }
before=$(counter delivered)
fabtest send h4 --dlid "$a_MLID" --mgid "$G" --data from-sendonly >/dev/null || fail "send-only send"
wait_counter delivered $((before + 1))
eventually grep -q "data=from-sendonly" "$T/a.out" || fail "full member did not receive"
fabtest send h1 --dlid "$a_MLID" --mgid "$G" --data to-all >/dev/null || fail "send to G"
wait_counter delivered $((before + 2))	# h1 itself; not h4
eventually grep -q "data=to-all" "$T/a.out" || fail "h1's own datagram"
grep -q "data=" "$T/so.out" && { cat "$T/so.out"; fail "send-only member received"; }
ok "send-only members send but do not receive"
stop_recv so

# --- port down / up: events on that node only, memberships dropped
ctl port h2 down | grep -q "port DOWN" || fail "port down"
eventually grep -q "^event PORT_ERR$" "$T/b.out" || { cat "$T/b.out"; fail "no PORT_ERR on h2"; }
ctl nodes | grep -q "^h2 .* DOWN " || { ctl nodes; fail "h2 not DOWN"; }
ctl groups "$BC" | grep -q "h2:" && fail "h2 still a member while down"
before=$(counter drop.port_down)
fabtest send h1 --dlid "$b_LID" --dqpn "$b_QPN" --data nobody-home >/dev/null || fail "send to h2"
wait_counter drop.port_down $((before + 1))
ctl port h2 up | grep -q "port ACTIVE" || fail "port up"
eventually grep -q "^event PORT_ACTIVE$" "$T/b.out" || fail "no PORT_ACTIVE on h2"
grep -q "^event" "$T/c.out" && { cat "$T/c.out"; fail "h3 saw h2's port events"; }
ok "port down/up"

# --- client reregister: every node hears it, memberships forgotten
ctl rereg | grep -q "CLIENT_REREGISTER" || fail "rereg"
for r in a b c; do
	eventually grep -q "^event CLIENT_REREGISTER$" "$T/$r.out" || { cat "$T/$r.out"; fail "$r: no CLIENT_REREGISTER"; }
done
ctl groups >"$T/g2"
grep -q "^$G " "$T/g2" && { cat "$T/g2"; fail "$G outlived the SM restart"; }
grep -q "^$BC .*wk *$" "$T/g2" || { cat "$T/g2"; fail "well-known group lost or still has members"; }
ok "client reregister"

# --- a killed member: its port leaves
start_recv k h5 --join "$G" --count 0 --timeout 60000
ctl groups "$G" | grep -q "h5:F" || fail "h5 not joined"
kill -KILL "$k_PID"; wait "$k_PID" 2>/dev/null
gone() { ! ctl groups | grep -q "^$G "; }
eventually gone || { ctl groups; fail "group of a killed process stayed"; }
ok "killed process's membership dropped"

fabric_alive
stop_fabric
ok "sa_events"
