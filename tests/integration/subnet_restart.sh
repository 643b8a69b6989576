#!/bin/bash
# ibfabricd stops (SIGTERM) or crashes (SIGKILL) and starts again on the
# same socket with the same --lid-file while the nodes run:
#
#   ib1, ib2 (ipoibd, P_Key 0x8001) == gw: ibgwd transparent, tap in br1 == lan1
#
# - no ipoibd or ibgwd exits; each logs its port down and comes back
# - every node keeps its GUID and its LID (ibfabricctl nodes)
# - the groups are joined again after CLIENT_REREGISTER (ibfabricctl groups)
# - ping IB<->IB and IB<->LAN resumes; the time to recovery is printed
# - an iperf3 TCP stream from the LAN to an IB host across a restart
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
for t in ping iperf3; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done

cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : ib1=full, ib2=full, gw=full;
CONF
LIDS=$T/guid2lid
start_fabric -P "$T/partitions.conf" --lid-file "$LIDS"

for h in ib1 ib2; do
	ns_add $h
done
ns_bg IB1_PID ib1 "$BIN/ipoibd" -f -F "soft:$SOCK" -n ib1 -p 0x8001 -i ib0 \
	--address 10.41.0.1/24 >"$T/ib1.log" 2>&1
ns_bg IB2_PID ib2 "$BIN/ipoibd" -f -F "soft:$SOCK" -n ib2 -p 0x8001 -i ib0 \
	--address 10.41.0.2/24 >"$T/ib2.log" 2>&1
ns_add gw
ns_add lan1
ns gw ip link add br1 type bridge
ns gw ip link set br1 up
ns_veth gw v1 lan1 eth0
ns gw ip link set v1 master br1
ns lan1 ip addr add 10.41.0.50/24 dev eth0
cat >"$T/ibgw.conf" <<CONF
[gateway]
fabric = soft:$SOCK
node = gw
control = $T/ibgwd.sock

[partition p1]
pkey = 0x8001
tap = gwtap1
bridge = br1
CONF
ns_bg GW_PID gw "$BIN/ibgwd" -f -c "$T/ibgw.conf" >"$T/gw.log" 2>&1
gw_ready() { grep -q "ready: 1 partition" "$T/gw.log"; }
eventually gw_ready || { cat "$T/gw.log"; fail "ibgwd not ready"; }
for h in ib1 ib2; do
	hr() { grep -q "ready:" "$T/$h.log"; }
	eventually hr || { cat "$T/$h.log"; fail "ipoibd $h not ready"; }
done

pings() {	# all of them, a few tries each
	ns ib1 ping -c 1 -W 1 10.41.0.2 >/dev/null &&
	ns ib2 ping -c 1 -W 1 10.41.0.1 >/dev/null &&
	ns lan1 ping -c 1 -W 1 10.41.0.1 >/dev/null &&
	ns ib2 ping -c 1 -W 1 10.41.0.50 >/dev/null
}
eventually pings || fail "ping before any restart"
ok "up: ping IB<->IB and IB<->LAN"

nodes() { ctl nodes | awk '$1 ~ /^(ib1|ib2|gw)$/ {print $1, $2, $3}' | sort; }
# the full members of the partition's broadcast and all-hosts groups (v4,
# v6); others come and go with the LAN's listeners
groups_of() {
	ctl groups | awk '$1 ~ /^ff12:[46]01b:8001::(ffff:ffff|1)$/ {print $1, $NF}' |
		sort | while read -r g m; do
			echo "$g $(echo "$m" | tr , '\n' | grep ':F$' | sort | tr '\n' ' ')"
		done
}
NODES0=$(nodes)
GROUPS0=$(groups_of)
[ "$(echo "$NODES0" | wc -l)" -eq 3 ] || { ctl nodes; fail "nodes missing"; }
[ "$(echo "$GROUPS0" | grep -c "gw:F ib1:F ib2:F")" -eq 3 ] ||
	{ echo "$GROUPS0"; ctl groups; fail "not every node in the broadcast and all-hosts groups"; }
grep -q "$(echo "$NODES0" | awk '$1 == "ib1" {print $2}' | head -c 10)" "$LIDS" 2>/dev/null ||
	{ cat "$LIDS"; fail "the LID file does not list ib1"; }

alive() {
	local p
	for p in "$IB1_PID" "$IB2_PID" "$GW_PID"; do
		kill -0 "$p" 2>/dev/null || return 1
	done
}

now_ms() { date +%s%3N; }

restart() {	# SIGNAL
	local sig=$1 t0 t1 h n
	declare -A before
	for h in ib1 ib2 gw; do
		before[$h]=$(grep -c "port down" "$T/$h.log")
	done
	kill -"$sig" "$FABRIC_PID"
	wait "$FABRIC_PID" 2>/dev/null
	cp "$T/fabric.log" "$T/fabric.$sig.log"
	for h in ib1 ib2 gw; do
		n=${before[$h]}
		down() { [ "$(grep -c "port down" "$T/$h.log")" -gt "$n" ]; }
		eventually down || { cat "$T/$h.log"; fail "$h did not see its port go down ($sig)"; }
	done
	sleep 0.5	# a while without a subnet
	alive || fail "a node exited while ibfabricd was away ($sig)"
	t0=$(now_ms)
	start_fabric -P "$T/partitions.conf" --lid-file "$LIDS"
	eventually pings || { cat "$T/ib1.log" "$T/gw.log" "$T/fabric.log"; fail "ping does not resume after $sig"; }
	t1=$(now_ms)
	echo "# recovery after SIG$sig: $((t1 - t0)) ms from ibfabricd's start to every ping answered"
	alive || fail "a node exited ($sig)"
	expect_eq "nodes, GUIDs and LIDs after SIG$sig" "$(nodes)" "$NODES0"
	rejoined() { [ "$(groups_of)" = "$GROUPS0" ]; }
	eventually rejoined || { ctl groups; fail "groups not rejoined after $sig"; }
	grep -q "re-attached" "$T/fabric.log" || fail "ibfabricd logged no re-attach"
	ok "SIG$sig: nodes stayed, same GUIDs and LIDs, groups rejoined, ping IB<->IB and IB<->LAN resumes"
}
restart TERM
restart KILL

# iperf3 TCP from the LAN to ib1 across a restart
ns_bg IPERF_PID ib1 iperf3 -s -1 >/dev/null 2>&1
sleep 0.5
ns lan1 iperf3 -c 10.41.0.1 -t 8 -J >"$T/iperf.json" 2>&1 &
CLI=$!
sleep 2
kill -TERM "$FABRIC_PID"
wait "$FABRIC_PID" 2>/dev/null
sleep 0.3
start_fabric -P "$T/partitions.conf" --lid-file "$LIDS"
if wait "$CLI"; then
	ok "iperf3: the TCP connection survived the restart"
else
	cat "$T/iperf.json" | tail -5
	fail "iperf3 across a restart"
fi
alive || fail "a node exited"
ok "subnet_restart"
