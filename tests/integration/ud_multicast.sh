#!/bin/bash
# A multicast datagram reaches exactly the QPs attached to its MLID on
# ports that joined the group through the SA: three receivers that joined
# (the first creates the group) get it once each, an unattached QP on a
# member node gets nothing, a port that never joined gets nothing even
# with a QP attached, and the group goes when its members' processes exit.
. "$(dirname "$0")/lib.bash"

MGID=ff12:401b:ffff::1
start_fabric

start_recv a h1 --join "$MGID" --count 2 --timeout 30000
MLID=$a_MLID
[ -n "$MLID" ] || fail "no MLID from the SA"
start_recv b h2 --join "$MGID" --count 2 --timeout 30000
start_recv c h3 --join "$MGID" --count 2 --timeout 30000
expect_eq "one MLID for the group" "$b_MLID $c_MLID" "$MLID $MLID"
start_recv none h3 --timeout 60000
# h4 attaches a QP without joining: its port is not in the group
start_recv stray h4 --mcast "$MGID@$MLID" --timeout 60000
ctl mcast >"$T/mcast"
grep -q "^$MLID .*$MGID" "$T/mcast" || { cat "$T/mcast"; fail "group not listed"; }
[ "$(grep -o 'h[0-9]:0x' "$T/mcast" | wc -l)" = 4 ] || { cat "$T/mcast"; fail "4 attached QPs expected"; }
ctl groups "$MGID" >"$T/groups"
grep -q "h1:F,h2:F,h3:F$" "$T/groups" || { cat "$T/groups"; fail "SA members"; }

before=$(counter delivered)
nm_before=$(counter drop.mcast_not_member)
fabtest send h4 --dlid $MLID --mgid $MGID --count 2 --data mc-%n >/dev/null || fail "multicast send"
for r in a b c; do
	wait_recv $r
	expect_eq "receiver $r count" "$(received $r)" 2
	grep -q 'grh=1 .*data=mc-0' "$T/$r.out" || { cat "$T/$r.out"; fail "$r: no GRH or wrong data"; }
done
# the switch replicates in one pass: six deliveries, none to 'none'
expect_eq "deliveries" "$(counter delivered)" $((before + 6))
expect_eq "stray QP on a port that never joined: dropped" \
	"$(counter drop.mcast_not_member)" $((nm_before + 2))
stop_recv none
expect_eq "unattached QP receives" "$(rx_count none)" 0
stop_recv stray
expect_eq "stray QP receives" "$(rx_count stray)" 0

# a multicast DLID nobody attached to is dropped and counted (multicast
# without a GRH is covered by replay_garbage)
before=$(counter drop.unknown_mlid)
fabtest send h4 --dlid 0xc0ff --mgid $MGID --data nobody >/dev/null
wait_counter drop.unknown_mlid $((before + 1))

# after all members left (processes exited) the group is gone, at the
# switch and at the SA
group_gone() { ! ctl mcast | grep -q "^$MLID" && ! ctl groups | grep -q "^$MGID "; }
eventually group_gone || { ctl groups; fail "group outlived its members"; }
fabric_alive
stop_fabric
ok "ud_multicast"
