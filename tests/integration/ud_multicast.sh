#!/bin/bash
# A multicast datagram reaches exactly the QPs attached to its MLID: three
# attached receivers get it once each, an unattached QP on the same node
# and partition gets nothing, and a detached group stops delivering.
. "$(dirname "$0")/lib.bash"

MGID=ff12:401b:ffff::1
MLID=0xc001
start_fabric

start_recv a h1 --mcast "$MGID@$MLID" --count 2 --timeout 30000
start_recv b h2 --mcast "$MGID@$MLID" --count 2 --timeout 30000
start_recv c h3 --mcast "$MGID@$MLID" --count 2 --timeout 30000
start_recv none h3 --timeout 60000
ctl mcast >"$T/mcast"
grep -q "^0xc001 .*$MGID" "$T/mcast" || { cat "$T/mcast"; fail "group not listed"; }
[ "$(grep -o 'h[0-9]:0x' "$T/mcast" | wc -l)" = 3 ] || { cat "$T/mcast"; fail "group should list 3 members"; }

before=$(counter delivered)
fabtest send h4 --dlid $MLID --mgid $MGID --count 2 --data mc-%n >/dev/null || fail "multicast send"
for r in a b c; do
	wait_recv $r
	expect_eq "receiver $r count" "$(received $r)" 2
	grep -q 'grh=1 .*data=mc-0' "$T/$r.out" || { cat "$T/$r.out"; fail "$r: no GRH or wrong data"; }
done
# the switch replicates in one pass: six deliveries, none to 'none'
expect_eq "deliveries" "$(counter delivered)" $((before + 6))
stop_recv none
expect_eq "unattached QP receives" "$(rx_count none)" 0

# a multicast DLID nobody attached to is dropped and counted (multicast
# without a GRH is covered by replay_garbage)
before=$(counter drop.unknown_mlid)
fabtest send h4 --dlid 0xc0ff --mgid $MGID --data nobody >/dev/null
expect_eq "unknown MLID counted" "$(counter drop.unknown_mlid)" $((before + 1))

# after all members left (processes exited) the group is gone
group_gone() { ! ctl mcast | grep -q "^0xc001"; }
eventually group_gone || fail "group outlived its members"
fabric_alive
stop_fabric
ok "ud_multicast"
