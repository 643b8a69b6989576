#!/bin/bash
# Two ipoibd on one port: the same node name (-n d1) and P_Key in two
# namespaces, as two programs on one HCA port.  ibfabricd counts each
# process's multicast joins apart, as a host's multicast layer counts its
# local joiners (drivers/infiniband/core/multicast.c):
# - one of them stopping (SIGTERM: it sends its leaves) keeps the port in
#   the broadcast group for the other, which still answers ARP and ping;
# - a group only a killed one joined (SIGKILL: no leaves) goes with it,
#   while the port stays in the groups the survivor joined.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
for t in ping python3; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done

BC=ff12:401b:ffff::ffff:ffff		# Default's IPoIB broadcast group
MC=ff12:401b:ffff::f01:204		# 239.1.2.4's
start_fabric

# host NS NODE ADDR: namespace NS with ipoibd attached as node NODE
host() {
	local ns=$1 node=$2 addr=$3 i
	ns_add "$ns"
	ns_bg "${ns}_PID" "$ns" "$BIN/ipoibd" -f -F "soft:$SOCK" -n "$node" \
		-p 0xffff -i ib0 --address "$addr" >"$T/$ns.log" 2>&1
	for i in $(seq 1 100); do
		grep -q "ready:" "$T/$ns.log" && return 0
		sleep 0.05
	done
	cat "$T/$ns.log"
	fail "ipoibd $ns did not become ready"
}

# member GROUP NODE: the node's port is a full member of GROUP
member() {
	ctl groups "$1" | tail -n +2 | grep -q "[ ,]$2:F"
}

# d2 pings ADDR with no neighbour entry left: its ARP request goes to the
# broadcast group
fresh_ping() {
	ns d2 ip neigh flush dev ib0
	ns d2 ping -c 2 -W 3 "$1" >"$T/ping" 2>&1
}

host d1 d1 10.7.0.1/24
host d1b d1 10.7.0.9/24
host d2 d2 10.7.0.2/24
fresh_ping 10.7.0.1 || { cat "$T/ping"; fail "d2 -> d1"; }
fresh_ping 10.7.0.9 || { cat "$T/ping"; fail "d2 -> d1b"; }
member $BC d1 || { ctl groups; fail "d1 not in the broadcast group"; }
ok "two ipoibd on node d1 in one partition, both reachable"

# --- one stops and leaves; the other keeps the port's membership ------------
leaves=$(counter sa_leaves)
kill -TERM "$d1b_PID"
wait "$d1b_PID" || { cat "$T/d1b.log"; fail "d1b's ipoibd exit status"; }
[ "$(counter sa_leaves)" -gt "$leaves" ] || fail "the stopped ipoibd sent no leaves"
member $BC d1 || { ctl groups; fail "d1's port left the broadcast group with d1b"; }
nm=$(counter drop.mcast_not_member)
fresh_ping 10.7.0.1 || { cat "$T/ping"; ctl groups; fail "d2 -> d1 after d1b stopped"; }
expect_eq "broadcasts dropped as not a member" "$(counter drop.mcast_not_member)" "$nm"
ns d1 ping -c 2 -W 3 10.7.0.2 >/dev/null || fail "d1 -> d2 after d1b stopped"
ok "d1b stopped: its leaves took nothing d1 still holds"

# --- one killed: the groups it alone joined go, the others' stay ------------
host d1c d1 10.7.0.8/24
ns_bg lis d1c python3 -c '
import socket, struct, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", 5000))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             struct.pack("4s4s", socket.inet_aton("239.1.2.4"),
                         socket.inet_aton("10.7.0.8")))
print("listening", flush=True)
time.sleep(120)' >"$T/lis.out" 2>&1
eventually member $MC d1 || { cat "$T/lis.out"; ctl groups; fail "d1c did not join 239.1.2.4's group"; }
kill -KILL "$d1c_PID"
wait "$d1c_PID" 2>/dev/null
mc_gone() { ! member $MC d1; }
eventually mc_gone || { ctl groups; fail "d1's port still in 239.1.2.4's group after d1c was killed"; }
member $BC d1 || { ctl groups; fail "d1's port left the broadcast group with the killed d1c"; }
fresh_ping 10.7.0.1 || { cat "$T/ping"; ctl groups; fail "d2 -> d1 after d1c was killed"; }
kill -TERM "$lis"; wait "$lis" 2>/dev/null
ok "d1c killed: its own group went, d1 still in the broadcast group"

# --- the last process of the node: the port's memberships go ----------------
kill -TERM "$d1_PID"
wait "$d1_PID" || { cat "$T/d1.log"; fail "d1's ipoibd exit status"; }
d1_out() { ! ctl groups | grep -q "[ ,]d1:"; }
eventually d1_out || { ctl groups; fail "d1 still a member with no process left"; }
ok "d1's last process stopped: the port is in no group"
kill -TERM "$d2_PID"
wait "$d2_PID" || { cat "$T/d2.log"; fail "d2's ipoibd exit status"; }
fabric_alive
stop_fabric
ok "ipoib_shared_port"
