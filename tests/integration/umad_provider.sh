#!/bin/bash
# The umad provider on ibsim + OpenSM: the port it reports (LID, SM LID,
# GUIDs, GID, P_Key table, state) against what the SMA and the SA say over
# the wire (smpquery, saquery under the same preload); queue pair
# operations fail cleanly; an SA Get(ClassPortInfo) goes out and comes back
# through a MAD agent (fab_mad_*), and is what saquery -c shows.
#   IBGW_BIN=build bash tests/integration/umad_provider.sh
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/ibsim.bash"

ibsim_require
[ -x "$BIN/tests/fabtest" ] || fail "no $BIN/tests/fabtest"

# ibsim's port GUIDs follow the order of tests/integration/ibsim/fabric.net
H1_GUID=0x0000000000100003
H2_GUID=0x0000000000100005
cat >"$T/partitions.conf" <<CONF
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : $H1_GUID=full, $H2_GUID=full;
CONF
ibsim_start "$IBSIM_NET" "$T/partitions.conf"
ok "OpenSM up in ${OPENSM_START_MS} ms"

DEV=$(ibsim_run h1 ibstat -l) || fail "ibstat -l"
DEV=${DEV%%$'\n'*}
[ -n "$DEV" ] || fail "ibstat -l lists no device"
SPEC=umad:$DEV:1
ok "device $DEV"

fab() {	# NODE CMD [args]: fabtest as that node
	local node=$1 cmd=$2
	shift 2
	ibsim_run "$node" "$BIN/tests/fabtest" -F "$SPEC" "$cmd" "$node" "$@"
}

field() {	# FILE KEY: value of "KEY value" in fabtest output
	sed -n "s/^$2 //p" "$1"
}

dec() {	# hex or decimal -> decimal
	printf '%d' "$1"
}

# smpquery/saquery print "Key:....value" or "key.....value"
dotted() {	# FILE KEY
	sed -n "s/^[[:space:]]*$2[.:]\{1,\}\([^.:].*\)\$/\1/p" "$1" | head -n 1
}

check_port() {	# NODE
	local n=$1 info=$T/info-$1 lid
	fab "$n" info >"$info" 2>"$info.err" ||
		{ cat "$info" "$info.err"; fail "$n: fabtest info"; }
	lid=$(field "$info" lid)

	# the SMA's view, over the wire (ibsim answers SMPs itself)
	ibsim_run h3 smpquery portinfo "$(dec "$lid")" 1 >"$T/pi-$n" ||
		fail "$n: smpquery portinfo"
	ibsim_run h3 smpquery nodeinfo "$(dec "$lid")" >"$T/ni-$n" ||
		fail "$n: smpquery nodeinfo"
	ibsim_run h3 smpquery pkeys "$(dec "$lid")" 1 >"$T/pk-$n" ||
		fail "$n: smpquery pkeys"
	# the SA's view (OpenSM)
	ibsim_run h3 saquery NR "$(dec "$lid")" >"$T/nr-$n" ||
		fail "$n: saquery NR"

	expect_eq "$n lid" "$(dec "$lid")" "$(dotted "$T/pi-$n" Lid)"
	expect_eq "$n sm_lid" "$(dec "$(field "$info" sm_lid)")" \
		"$(dotted "$T/pi-$n" SMLid)"
	expect_eq "$n sm_sl" "$(field "$info" sm_sl)" "$(dotted "$T/pi-$n" SMSL)"
	expect_eq "$n lmc" "$(field "$info" lmc)" "$(dotted "$T/pi-$n" LMC)"
	expect_eq "$n port" "$(field "$info" port)" \
		"$(dotted "$T/pi-$n" LocalPort)"
	expect_eq "$n state" "$(dotted "$T/pi-$n" LinkState)/$(field "$info" state)" \
		"Active/4"
	# no MTU in sysfs: the provider reports 2048, which ibsim's links have
	expect_eq "$n mtu" "$(field "$info" mtu)" "$(dotted "$T/pi-$n" NeighborMTU)"
	expect_eq "$n node_guid (SMA)" "$(field "$info" node_guid)" \
		"$(dotted "$T/ni-$n" Guid)"
	expect_eq "$n port_guid (SMA)" "$(field "$info" port_guid)" \
		"$(dotted "$T/ni-$n" PortGuid)"
	expect_eq "$n node_guid (SA)" "$(field "$info" node_guid)" \
		"$(dotted "$T/nr-$n" node_guid)"
	expect_eq "$n port_guid (SA)" "$(field "$info" port_guid)" \
		"$(dotted "$T/nr-$n" port_guid)"

	# GID = GidPrefix + port GUID, as the colon form prints it
	local prefix guid want
	prefix=$(dotted "$T/pi-$n" GidPrefix)
	guid=$(field "$info" port_guid)
	want=$(python3 -c 'import ipaddress,sys
p,g=(int(x,16) for x in sys.argv[1:])
print(ipaddress.IPv6Address((p<<64)|g))' "$prefix" "$guid")
	expect_eq "$n gid" "$(field "$info" gid)" "$want"

	# P_Key table, index for index, up to the last valid entry
	want=$(sed -n 's/^ *[0-9]*: //p' "$T/pk-$n" | tr -s ' ' '\n' |
		head -n 32 | tr '\n' ' ' | sed 's/\( 0x0000\)* *$//')
	expect_eq "$n pkeys" "$(field "$info" pkeys)" "$want"
}

check_port h1
check_port h3
expect_eq "h1 is in p1" "$(field "$T/info-h1" pkeys)" "0xffff 0x8001"
expect_eq "h3 is not" "$(field "$T/info-h3" pkeys)" "0xffff"

# queue pairs and address handles: a clean failure, exit status 1
fab h1 recv --timeout 100 >"$T/qp.out" 2>&1
expect_eq "recv exit status" "$?" 1
grep -q 'umad provider has no queue pairs: use verbs:' "$T/qp.out" ||
	{ cat "$T/qp.out"; fail "recv: no clear message"; }
fab h1 send --dlid 4 >"$T/ah.out" 2>&1
expect_eq "send exit status" "$?" 1
grep -q 'umad provider has no queue pairs' "$T/ah.out" ||
	{ cat "$T/ah.out"; fail "send: no clear message"; }

# bad specs: named, not a crash
ibsim_run h1 "$BIN/tests/fabtest" -F umad:nosuch0 info h1 >"$T/bad.out" 2>&1
expect_eq "unknown device exit status" "$?" 1
grep -q "no port 1 on device \"nosuch0\".*devices: $DEV" "$T/bad.out" ||
	{ cat "$T/bad.out"; fail "unknown device: no clear message"; }
ibsim_run h1 "$BIN/tests/fabtest" -F "umad:$DEV:2" info h1 >"$T/bad.out" 2>&1
expect_eq "missing port exit status" "$?" 1
"$BIN/tests/fabtest" -F "$SPEC" info h1 >"$T/bad.out" 2>&1
expect_eq "no umad (no preload) exit status" "$?" 1
grep -q 'no ib_umad module' "$T/bad.out" ||
	{ cat "$T/bad.out"; fail "no umad: no clear message"; }

# a MAD round trip: SA Get(ClassPortInfo) to the SM LID and back
fab h2 mad-ping --timeout 5000 >"$T/ping.out" 2>&1 ||
	{ cat "$T/ping.out"; fail "mad-ping"; }
cat "$T/ping.out"
ibsim_run h3 saquery -c >"$T/cpi" || fail "saquery -c"
grep -q '^mad method 0x81 status 0x0000 class 0x03 version 2 attr 0x0001 ' \
	"$T/ping.out" || fail "mad-ping: not a GetResp(ClassPortInfo)"
tid=$(sed -n 's/^mad method .* tid \(0x[0-9a-f]*\)$/\1/p' "$T/ping.out")
expect_eq "response TID, low 32 bits" "$(printf '0x%08x' $((tid & 0xffffffff)))" \
	0xc0ffee01
expect_eq "response from the SM LID" "$(sed -n 's/^mad rx slid \(0x[0-9a-f]*\) .*/\1/p' "$T/ping.out")" \
	"$(field "$T/info-h1" sm_lid)"
cpi=$(sed -n 's/^cpi //p' "$T/ping.out")
want=$(printf 'base_version %d class_version %d capmask 0x%04x capmask2 0x%07x resp_time 0x%02x' \
	"$(dotted "$T/cpi" 'Base version')" "$(dotted "$T/cpi" 'Class version')" \
	"$(dotted "$T/cpi" 'Capability mask')" "$(dotted "$T/cpi" 'Capability mask 2')" \
	"$(dotted "$T/cpi" 'Response time value')")
expect_eq "ClassPortInfo" "$cpi" "$want"

# nobody answers SA MADs at an ordinary port: a timeout, not a hang
fab h2 mad-ping --timeout 500 --dlid "$(field "$T/info-h3" lid)" \
	>"$T/noping.out" 2>&1
expect_eq "mad-ping to a non-SA exit status" "$?" 1
grep -q 'no response within 500 ms' "$T/noping.out" ||
	{ cat "$T/noping.out"; fail "mad-ping to a non-SA"; }

ibsim_stop
ok "ibsim and OpenSM stopped"
