#!/bin/bash
# Addresses given to an ipoibd interface at run time with ip(8), as on the
# Linux driver's interface, whose ARP and neighbour discovery answer for
# whatever addresses the kernel has:
#  a) ip addr add of an IPv4 address on h2: h1 reaches it (ARP answered)
#  b) ip -6 addr add on h2: after DAD, h1 reaches it (NS answered); while
#     tentative nothing answers for it (RFC 4862 5.4)
#  c) ip addr del of h2's --address: no longer answered (h3, which never
#     spoke to it, cannot reach it), nor its secondary the kernel deleted
#     with it; the IPv6 one added still is
#  d) an IPv6 address another host has: DAD fails on the kernel
#     (dadfailed), and the host that has it stays reachable at it from a
#     third host
#  e) the same address added again after its deletion is answered again
#  f) 16 addresses besides the link-local one are all answered (the 16th
#     too); a 17th is logged and not answered
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
start_fabric
sdp_host h1 --address 10.1.0.1/24 --address fd01::1/64 --no-sdp --no-rds
sdp_host h2 --address 10.1.0.2/24 --address fd01::2/64 --no-sdp --no-rds
sdp_host h3 --address 10.1.0.3/24 --address fd01::3/64 --no-sdp --no-rds

# a) IPv4
ns h2 ip addr add 10.1.0.22/24 dev ib0 || fail "a) ip addr add"
reach() { ns "$1" ping -c 1 -W 1 "$2" >/dev/null 2>&1; }
r22() { reach h1 10.1.0.22; }
eventually r22 || fail "a) h1 cannot reach 10.1.0.22, added on h2 with ip addr add"
ok "a) ip addr add 10.1.0.22/24 on h2: h1 reaches it"

# b) IPv6: DAD first
ns h2 ip -6 addr add fd01::22/64 dev ib0 || fail "b) ip -6 addr add"
r6() { reach h1 fd01::22; }
eventually r6 || fail "b) h1 cannot reach fd01::22, added on h2"
ns h2 ip -6 addr show dev ib0 | grep -q "fd01::22/64 scope global *$" ||
	fail "b) fd01::22 not preferred on h2: $(ns h2 ip -6 addr show dev ib0)"
ok "b) ip -6 addr add fd01::22/64 on h2: h1 reaches it after DAD"

# c) deleted: not answered for any more
ns h2 ip addr del 10.1.0.2/24 dev ib0 || fail "c) ip addr del"
sleep 0.5
for i in 1 2 3; do
	reach h3 10.1.0.2 && fail "c) h3 reaches 10.1.0.2, deleted on h2"
done
# not only the kernel's drop: nobody answered h3's ARP (its entry, while
# it is kept, has no link address; one given up is gone)
kill -USR1 "$h3_PID"
sleep 0.3
line=$(grep "neighbors 10.1.0.2 " "$T/h3.log" | tail -n1)
case $line in
""|*" - INCOMPLETE"*) ;;
*) fail "c) h3's neighbour entry for 10.1.0.2: '$line' (answered)" ;;
esac
# (the kernel deleted 10.1.0.22/24 with it: a secondary address of the
# same prefix goes with the primary unless promote_secondaries is set)
ns h2 ip -4 addr show dev ib0 | grep -q "10.1.0.22/" &&
	fail "c) the kernel kept 10.1.0.22 (promote_secondaries?)"
reach h3 10.1.0.22 && fail "c) h3 reaches 10.1.0.22, gone with 10.1.0.2"
reach h3 fd01::22 || fail "c) h3 cannot reach fd01::22 any more"
ok "c) ip addr del 10.1.0.2/24 on h2: it and its secondary 10.1.0.22 no longer answered, fd01::22 still is"

# d) a duplicate: h1's fd01::1 added on h3
ns h3 ip -6 addr add fd01::1/64 dev ib0 || fail "d) ip -6 addr add"
dadf() { ns h3 ip -6 addr show dev ib0 | grep -q "fd01::1/64 .*dadfailed"; }
eventually dadf || fail "d) fd01::1 did not fail DAD on h3: $(ns h3 ip -6 addr show dev ib0)"
ns h2 ip -6 neigh flush dev ib0
reach h2 fd01::1 || fail "d) h2 cannot reach h1 at fd01::1"
ns h3 ip -6 addr del fd01::1/64 dev ib0
ok "d) h1's fd01::1 added on h3: dadfailed there, h1 still reached at it"

# e) added again
ns h2 ip addr add 10.1.0.2/24 dev ib0 || fail "e) ip addr add"
r2() { reach h3 10.1.0.2; }
eventually r2 || fail "e) h3 cannot reach 10.1.0.2, added again on h2"
ok "e) 10.1.0.2/24 added back on h2: answered again"

# f) h3 with 16 addresses: 10.1.0.3 and fd01::3, and 14 added; then a
# 17th
for i in $(seq 100 113); do
	ns h3 ip addr add "10.1.0.$i/24" dev ib0 || fail "f) ip addr add 10.1.0.$i"
done
r113() { ns h1 ping -c 1 -W 1 10.1.0.113 >/dev/null 2>&1; }
eventually r113 || fail "f) h1 cannot reach h3's 16th address 10.1.0.113"
ns h3 ip addr add 10.1.0.114/24 dev ib0 || fail "f) ip addr add 10.1.0.114"
l17() { grep -q "address 10.1.0.114/24 not answered for" "$T/h3.log"; }
eventually l17 || fail "f) no log line for the 17th address: $(grep -i 'address' "$T/h3.log" | tail -n 3)"
ok "f) 16 addresses on h3 answered, the 17th logged"
