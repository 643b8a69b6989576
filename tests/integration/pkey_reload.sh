#!/bin/bash
# Partitions changed at run time, as an operator edits OpenSM's
# partitions.conf and sends SIGHUP:
# - h3's ipoibd, started for a P_Key its port lacks, stays up without
#   carrier and says so;
# - h3 added to the partition (SIGHUP): carrier, pings h1 and h2, while a
#   ping between h1 and h2 in the partition runs on (at most 2 lost);
# - h3 removed (ibfabricctl reload): carrier down, h1 cannot reach it;
#   added again (ibfabricctl reload): carrier, pings again;
# - a bad file (reload and SIGHUP) is refused with its errors, everything
#   stays as it was;
# - the partition deleted: its groups are gone from the SA and the switch,
#   its hosts lose carrier;
# - an ibgwd partition whose P_Key appears gets its carrier, and its SDP
#   and RDS start (an ipoibd's services likewise, with h3's key).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
command -v ping >/dev/null || fail "ping not installed (make deps)"

P=$T/partitions.conf
conf() {	# conf MEMBERS-OF-p1 (empty: no p1) [EXTRA LINE]
	{
		echo "Default=0x7fff, ipoib : ALL=full;"
		[ -n "$1" ] && echo "p1=0x8001, ipoib : $1;"
		[ -n "${2:-}" ] && echo "$2"
	} >"$P.new"
	mv "$P.new" "$P"
}
conf "h1=full, h2=full"
start_fabric -P "$P"

host() {	# NAME ADDR
	ns_add "$1"
	ns_bg "${1}_PID" "$1" "$BIN/ipoibd" -f -F "soft:$SOCK" -n "$1" \
		-p 0x8001 -i ib0 --address "$2" >"$T/$1.log" 2>&1
}
host h1 10.3.0.1/24
host h2 10.3.0.2/24
host h3 10.3.0.3/24
for h in h1 h2; do
	hr() { grep -q "ready:" "$T/$h.log"; }
	eventually hr || { cat "$T/$h.log"; fail "ipoibd $h not ready"; }
done
h3_waits() { grep -q "P_Key 0x8001 is not in the port's table: no carrier until the subnet manager adds it" "$T/h3.log"; }
eventually h3_waits || { cat "$T/h3.log"; fail "h3: no message"; }
sleep 0.5
kill -0 "$h3_PID" 2>/dev/null || { cat "$T/h3.log"; fail "h3's ipoibd exited"; }
grep -q "carrier up" "$T/h3.log" && fail "h3 has carrier"
grep -q "SDP service: P_Key 0x8001 not in the port's table: no SDP until it is added" "$T/h3.log" ||
	{ cat "$T/h3.log"; fail "h3: no word of SDP waiting for the P_Key"; }
grep -q "SDP service on" "$T/h3.log" && fail "h3: an SDP service without the P_Key"
ns h1 ping -c 2 -W 3 10.3.0.2 >/dev/null || fail "h1 -> h2"
ok "a host without the P_Key stays up without carrier (and without SDP and RDS)"

# a ping h1 -> h2 in the partition through the changes that touch h3
ns_bg PING_PID h1 ping -i 0.05 -W 1 10.3.0.2 >"$T/bgping.out" 2>&1

carrier_ups() { grep -c "carrier up" "$T/$1.log"; }
carrier_downs() { grep -c "carrier down" "$T/$1.log"; }
has_ups() { [ "$(carrier_ups "$1")" -ge "$2" ]; }
has_downs() { [ "$(carrier_downs "$1")" -ge "$2" ]; }

# --- added by SIGHUP -------------------------------------------------------------
conf "h1=full, h2=full, h3=full"
kill -HUP "$FABRIC_PID"
eventually has_ups h3 1 || { cat "$T/h3.log" "$T/fabric.log"; fail "h3: no carrier after SIGHUP"; }
grep -q "PKEY_CHANGE on 1 port(s)" "$T/fabric.log" || { cat "$T/fabric.log"; fail "reload log"; }
grep -q "node h3: PKEY_CHANGE" "$T/fabric.log" || fail "PKEY_CHANGE to h3"
grep -q "node h[12]: PKEY_CHANGE" "$T/fabric.log" && fail "PKEY_CHANGE to h1/h2, whose tables did not change"
ns h3 ping -c 3 -W 2 10.3.0.1 >/dev/null || { cat "$T/h3.log"; fail "h3 -> h1"; }
ns h3 ping -c 2 -W 2 10.3.0.2 >/dev/null || fail "h3 -> h2"
ns h1 ping -c 2 -W 2 10.3.0.3 >/dev/null || fail "h1 -> h3"
# its SDP and RDS services start with the key (before: never, until
# ipoibd was restarted): their CM listeners in the partition
svc_up() { grep -q "SDP service on" "$T/h3.log" && grep -q "RDS service on" "$T/h3.log"; }
eventually svc_up || { cat "$T/h3.log"; fail "h3: SDP and RDS services not started when the P_Key came"; }
h3lid=$(ctl nodes | awk '$1 == "h3" { print $3 }')
ctl cm | grep -q "^listen port $h3lid .*service 0x00000000010648ca .* pkey 0x0001$" ||
	{ ctl cm; fail "h3: no RDS listener in the partition"; }
ok "added by SIGHUP: carrier, pings both members, SDP and RDS services started"

# --- removed by ibfabricctl reload ---------------------------------------------------
conf "h1=full, h2=full"
ctl reload >"$T/reload.out" 2>&1 || { cat "$T/reload.out"; fail "reload"; }
grep -q "PKEY_CHANGE on 1 port(s)" "$T/reload.out" || fail "reload said: $(cat "$T/reload.out")"
eventually has_downs h3 1 || { cat "$T/h3.log"; fail "h3 kept its carrier"; }
ns h1 ping -c 2 -W 1 10.3.0.3 >/dev/null 2>&1 && fail "h1 reaches h3 after its removal"
ns h3 ping -c 1 -W 1 10.3.0.1 >/dev/null 2>&1 && fail "h3 reaches h1 after its removal"
ctl nodes | grep -w h3 | grep -q 0x8001 && fail "h3 still has 0x8001"
ok "removed by reload: carrier down, unreachable"

# --- added again by ibfabricctl reload -----------------------------------------------
conf "h1=full, h2=full, h3=full"
ctl reload >"$T/reload.out" 2>&1 || { cat "$T/reload.out"; fail "reload"; }
eventually has_ups h3 2 || { cat "$T/h3.log"; fail "h3: no carrier after reload"; }
ns h3 ping -c 3 -W 2 10.3.0.2 >/dev/null || { cat "$T/h3.log"; fail "h3 -> h2 again"; }
ns h1 ping -c 3 -W 2 10.3.0.3 >/dev/null || fail "h1 -> h3 again"
ok "added again by reload: carrier, pings"

# --- a bad file: refused, nothing changes --------------------------------------------
tables() { ctl nodes | awk '{ print $1, $2, $3, $NF }'; }	# not the packet counts
tables >"$T/nodes.before"
printf 'Default=0x7fff, ipoib : ALL=full;\np1=0x8001, ipoib, bogus : h1=full;\n' >"$P"
ctl reload >"$T/bad.out" 2>&1 && fail "reload of a bad file succeeded"
grep -q "partitions.conf:2: " "$T/bad.out" || fail "reload error: $(cat "$T/bad.out")"
grep -q "the partitions in use are kept" "$T/bad.out" || fail "reload error: $(cat "$T/bad.out")"
kill -HUP "$FABRIC_PID"
bad_logged() { [ "$(grep -c "reload: .*partitions.conf:2: .*the partitions in use are kept" "$T/fabric.log")" -ge 2 ]; }
eventually bad_logged || { cat "$T/fabric.log"; fail "bad file not logged"; }
tables >"$T/nodes.after"
cmp -s "$T/nodes.before" "$T/nodes.after" || { diff "$T/nodes.before" "$T/nodes.after"; fail "tables changed"; }
ns h3 ping -c 2 -W 2 10.3.0.1 >/dev/null || fail "h3 -> h1 after the bad file"
expect_eq "h3 carrier downs after the bad file" "$(carrier_downs h3)" 1
ok "a bad file is refused (reload and SIGHUP), the old partitions kept"

# the ping between h1 and h2 ran through all of it
kill -INT "$PING_PID"; wait "$PING_PID"
sent=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' "$T/bgping.out")
got=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$T/bgping.out")
[ -n "$sent" ] && [ "$sent" -ge 20 ] || { cat "$T/bgping.out"; fail "background ping"; }
[ $((sent - got)) -le 2 ] || { cat "$T/bgping.out"; fail "h1 -> h2 lost $((sent - got)) of $sent"; }
grep -q "carrier down" "$T/h1.log" "$T/h2.log" && fail "h1 or h2 lost carrier"
ok "h1 -> h2 undisturbed: $got of $sent answered (bound: at most 2 lost)"

# --- the partition deleted -----------------------------------------------------------
ctl groups | grep -q 8001 || fail "no 0x8001 group before"
ctl mcast | grep -q "ff12:401b:8001" || { ctl mcast; fail "no 0x8001 attachments before"; }
conf ""
ctl reload >"$T/reload.out" 2>&1 || { cat "$T/reload.out"; fail "reload"; }
grep -q "PKEY_CHANGE on 3 port(s)" "$T/reload.out" || fail "reload said: $(cat "$T/reload.out")"
grep -q "[1-9][0-9]* group(s) deleted" "$T/reload.out" || fail "reload said: $(cat "$T/reload.out")"
for h in h1 h2; do
	eventually has_downs $h 1 || { cat "$T/$h.log"; fail "$h kept its carrier"; }
done
eventually has_downs h3 2 || { cat "$T/h3.log"; fail "h3 kept its carrier"; }
ctl groups | grep -q 8001 && { ctl groups; fail "0x8001 groups left in the SA"; }
no_attach() { ! ctl mcast | grep -q "ff12:401b:8001"; }
eventually no_attach || { ctl mcast; fail "0x8001 attachments left"; }
ns h1 ping -c 1 -W 1 10.3.0.2 >/dev/null 2>&1 && fail "h1 reaches h2 in a deleted partition"
ok "partition deleted: groups gone (groups, mcast), hosts lose carrier"

# --- ibgwd: a partition whose P_Key appears -------------------------------------------
ns_add gw
cat >"$T/ibgw.conf" <<CONF
[gateway]
fabric = soft:$SOCK
node = gw
control = $T/ibgwd.sock

[partition q]
pkey = 0x8004
mode = router
ifname = ib8004
address = 10.4.0.254/24
sdp = on
rds = on
CONF
ns_bg GW_PID gw "$BIN/ibgwd" -f -c "$T/ibgw.conf" >"$T/gw.log" 2>&1
gw_waits() { grep -q "partition q: P_Key 0x8004 is not in the port's table" "$T/gw.log"; }
eventually gw_waits || { cat "$T/gw.log"; fail "ibgwd: no message"; }
grep -q "partition q: .*: no SDP" "$T/gw.log" || { cat "$T/gw.log"; fail "ibgwd: SDP without the P_Key?"; }
gw_ready() { grep -q "ready: 1 partition" "$T/gw.log"; }
eventually gw_ready || { cat "$T/gw.log"; fail "ibgwd not ready"; }
grep -q "carrier up" "$T/gw.log" && fail "ibgwd has carrier without the P_Key"
conf "" "q=0x8004, ipoib : gw=full;"
kill -HUP "$FABRIC_PID"
gw_up() { grep -q "ib8004: carrier up" "$T/gw.log"; }
eventually gw_up || { cat "$T/gw.log"; fail "ibgwd partition: no carrier"; }
grep -q "partition q: P_Key 0x8004 added to the port's table" "$T/gw.log" || fail "ibgwd: no log of the new key"
# sdp = on and rds = on start with the key (before: "failed" until the
# partition was restarted)
gw_svc() { grep -q "partition q: SDP on" "$T/gw.log" && grep -q "partition q: RDS on" "$T/gw.log"; }
eventually gw_svc || { cat "$T/gw.log"; fail "ibgwd: SDP and RDS not started when the P_Key came"; }
gwlid=$(ctl nodes | awk '$1 == "gw" { print $3 }')
ctl cm | grep -q "^listen port $gwlid .*service 0x00000000010648ca .* pkey 0x0004$" ||
	{ ctl cm; fail "ibgwd: no RDS listener in partition q"; }
ok "ibgwd partition gets its carrier, SDP and RDS when its P_Key appears"

kill -TERM "$GW_PID"; wait "$GW_PID" || { cat "$T/gw.log"; fail "ibgwd exit status"; }
for h in h1 h2 h3; do
	eval "pid=\$${h}_PID"
	kill -TERM "$pid"; wait "$pid" || { cat "$T/$h.log"; fail "ipoibd $h exit status"; }
done
fabric_alive
stop_fabric
ok "pkey_reload"
