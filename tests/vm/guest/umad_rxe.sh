# Inside a guest: our umad provider on Soft-RoCE with only rdma_rxe and
# ib_umad loaded (no ib_cm: it would own the CM class's Send).
#   umad_rxe.sh ping PEER | echo PEER
# Both: the port as fab_query_port() sees it, against sysfs and ibstat.
# echo: madtest echo serving CM class (0x07 version 2) Get and Send, two
# requests; then, with ib_cm loaded, the Send it owns is refused to us.
# ping: what fails on RoCE (no GRH, SA, SMPs), what the kernel drops,
# a Set nobody serves (answered by the peer's kernel), a Get (IPv6 GIDs)
# and a Send (IPv4 GIDs) to the echo, all captured by tcpdump into
# /ibgw-run/mad.pcap for the host's tshark.
. "$(dirname "$0")/../guest.bash"
role=$1 peer=$2
B=${IBGW_BIN:-$G_TOP/build}
case "$B" in /*) ;; *) B=$G_TOP/$B ;; esac
SPEC=umad:rxe0:1
port=/sys/class/infiniband/rxe0/ports/1

# the kernel's own IPv6 form of a sysfs GID (fe80:0000:... -> fe80::...)
gid_str() {
	python3 -c 'import ipaddress, sys; print(ipaddress.ip_address(sys.argv[1]))' "$1"
}

lsmod | grep -q '^ib_cm ' && gfail "ib_cm is loaded: it owns the CM class"
[ -c /dev/infiniband/umad0 ] || gfail "no /dev/infiniband/umad0"
wait_peer "$peer"
gidx=$(gid_index rxe0 "RoCE v2" 4) || gfail "no IPv4 RoCE v2 GID on rxe0"
gok "RoCE v2 IPv4 GID index $gidx"

# ---- the port: fabtest info against sysfs and rdma-core's ibstat
"$B/tests/fabtest" -F $SPEC info "$VM_NAME" >/tmp/info || gfail "fabtest info"
cat /tmp/info
ibstat rxe0 >/tmp/ibstat || gfail "ibstat rxe0 failed"
cat /tmp/ibstat
field() { sed -n "s/^$1 //p" /tmp/info; }
[ "$(field lid)" = 0x0000 ] || gfail "lid $(field lid), not 0"
[ "$(field sm_lid)" = 0x0000 ] || gfail "sm_lid $(field sm_lid), not 0"
[ "$(field state)" = 4 ] || gfail "state $(field state), not 4 (active)"
[ "$(field port)" = 1 ] || gfail "port $(field port)"
[ "$(field pkeys)" = 0xffff ] || gfail "pkeys '$(field pkeys)', not 0xffff"
want=$(gid_str "$(cat $port/gids/0)")
[ "$(field gid)" = "$want" ] || gfail "gid $(field gid), sysfs gids/0 $want"
want=0x$(tr -d : </sys/class/infiniband/rxe0/node_guid)
[ "$(field node_guid)" = "$want" ] || gfail "node_guid $(field node_guid), sysfs $want"
want=$(sed -n 's/^\t*Port GUID: //p' /tmp/ibstat)
[ "$(field port_guid)" = "$want" ] || gfail "port_guid $(field port_guid), ibstat $want"
[ "$(field link_layer)" = ethernet ] ||
	gfail "link_layer '$(field link_layer)', not ethernet"
[ "$(field sgid_type)" = roce-v2 ] ||
	gfail "sgid_type '$(field sgid_type)': sysfs types/0 is $(cat $port/gid_attrs/types/0)"
grep -q 'State: Active' /tmp/ibstat || gfail "ibstat: not Active"
grep -q 'Base lid: 0$' /tmp/ibstat || gfail "ibstat: base lid not 0"
grep -q 'Link layer: Ethernet' /tmp/ibstat || gfail "ibstat: link layer not Ethernet"
gok "port: state 4, lid 0, sm_lid 0, link layer ethernet, gid $(field gid) (roce-v2), GUIDs as sysfs and ibstat"

# expect_fail TEXT CMD...: CMD fails within 15 s, saying TEXT
expect_fail() {
	local text=$1 rc
	shift
	timeout 15 "$@" >/tmp/ef.out 2>&1
	rc=$?
	sed 's/^/    /' /tmp/ef.out
	[ $rc -ne 0 ] || gfail "'$*' succeeded"
	[ $rc -ne 124 ] || gfail "'$*' hung"
	grep -q "$text" /tmp/ef.out || gfail "'$*' did not say '$text'"
}

if [ "$role" = echo ]; then
	timeout 150 "$B/tests/madtest" -F $SPEC echo --count 2 \
		--timeout 120000 >/tmp/echo.out 2>&1
	rc=$?
	cat /tmp/echo.out
	[ $rc -eq 0 ] || gfail "madtest echo exited $rc"
	gok "madtest echo answered 2 requests"
	# what a CM of ours meets when the kernel's is loaded
	modprobe ib_cm || gfail "modprobe ib_cm"
	expect_fail "cannot register an agent for class 0x07 version 2" \
		"$B/tests/madtest" -F $SPEC open --class 7 --methods 3
	gok "with ib_cm loaded, the CM class's Send is refused (EINVAL)"
	"$B/tests/madtest" -F $SPEC open --class 7 ||
		gfail "a responses-only CM agent beside ib_cm was refused"
	gok "with ib_cm loaded, a responses-only CM agent opens"
	exit 0
fi

# ---- ping: capture first
tcpdump -i eth0 -U -Z root -w /ibgw-run/mad.pcap udp port 4791 \
	2>/tmp/tcpdump.err &
tcpdump_pid=$!
for i in $(seq 1 50); do
	grep -q 'listening on' /tmp/tcpdump.err && break
	sleep 0.2
done
grep -q 'listening on' /tmp/tcpdump.err || gfail "tcpdump did not start"

peer_gid="::ffff:$peer"
# the peer's IPv6 link-local GID (index 0): EUI-64 of its MAC, as rxe
# takes it from the netdev's fe80:: address
mac=$(ip neigh show "$peer" dev eth0 | sed -n 's/.* lladdr \([0-9a-f:]*\).*/\1/p')
[ -n "$mac" ] || gfail "no neighbour entry for $peer"
peer_gid6=$(python3 -c '
import ipaddress, sys
m = bytes.fromhex(sys.argv[1].replace(":", ""))
eui = bytes([m[0] ^ 2]) + m[1:3] + b"\xff\xfe" + m[3:]
print(ipaddress.IPv6Address(b"\xfe\x80" + bytes(6) + eui))' "$mac")
[ "$(cat $port/gid_attrs/types/0)" = "RoCE v2" ] || gfail "GID 0 is not RoCE v2"
M=("$B/tests/madtest" -F $SPEC)
G4=(--dgid "$peer_gid" --gid-index "$gidx")
G6=(--dgid "$peer_gid6" --gid-index 0)

# what cannot work on RoCE, each a clear error, none a hang
expect_fail "MAD send: Invalid argument" "${M[@]}" ping --timeout 3000
gok "a MAD without GRH (LID routing) is refused: EINVAL"
expect_fail "MAD send: Invalid argument" "${M[@]}" ping --dlid 2 --timeout 3000
gok "a MAD to LID 2 without GRH is refused: EINVAL"
expect_fail "no subnet manager, so no SA" "${M[@]}" open --class 3
expect_fail "no subnet manager, so no SA" "$B/tests/fabtest" -F $SPEC \
	mad-ping "$VM_NAME" --timeout 3000
gok "an SA agent is refused: RoCE has no SM"
expect_fail "for SMPs on QP0" "${M[@]}" open --class 1
expect_fail "for SMPs on QP0" "${M[@]}" open --class 0x81
gok "SMP classes (QP0) are refused"
# rdma-core's own tools, the second opinion
expect_fail "client_register for mgmt 1 failed" smpquery -C rxe0 -P 1 nodeinfo 0
expect_fail "No SM/SA found" saquery -C rxe0 -P 1
gok "smpquery: no QP0 agent; saquery: no SM/SA"

# a CM-class Get about anything but ClassPortInfo: the peer's kernel drops
# it (mad.c validate_mad(): CM messages are Sends)
"${M[@]}" ping "${G4[@]}" --method 1 --attr 0xff01 --tid 0x1110 \
	--timeout 3000 >/tmp/drop.out 2>&1
rc=$?
cat /tmp/drop.out
[ $rc -eq 1 ] && grep -q 'no answer within' /tmp/drop.out ||
	gfail "a CM Get(0xff01) was answered (exit $rc)"
gok "a CM-class Get of attribute 0xff01 gets no answer (the kernel drops it)"

# Set(ClassPortInfo), which no one serves, from the IPv4 GID: the peer's
# kernel answers 0x000c (the host's tshark sees it), but ours drops that
# response: for RoCE v2 over IPv4 the receive's GRH slot holds an IPv4
# header, and mad.c's rcv_has_same_gid() compares it as a GRH's DGID
"${M[@]}" ping "${G4[@]}" --method 2 --attr 1 --tid 0x1111 --timeout 3000 \
	>/tmp/set4.out 2>&1
rc=$?
cat /tmp/set4.out
[ $rc -eq 1 ] && grep -q 'no answer within' /tmp/set4.out ||
	gfail "Set over IPv4 RoCE v2: exit $rc, not 1 (no answer)"
gok "a response over IPv4 RoCE v2 is not delivered (rcv_has_same_gid)"

# the same from the IPv6 link-local GID: the peer's kernel's 0x000c arrives
"${M[@]}" ping "${G6[@]}" --method 2 --attr 1 --tid 0x1112 --timeout 5000 \
	>/tmp/set6.out 2>&1
rc=$?
cat /tmp/set6.out
[ $rc -eq 3 ] || gfail "Set over IPv6: madtest ping exited $rc, not 3"
grep -q '^mad rx tid 0x........00001112 class 0x07 version 2 method 0x81 status 0x000c' /tmp/set6.out ||
	gfail "Set over IPv6: no GetResp with status 0x000c"
gok "Set(ClassPortInfo) nobody serves: the peer's kernel answered status 0x000c"

# Get(ClassPortInfo) over IPv6, retried while the echo is not serving yet
# (answered 0x000c as above)
retry 60 "${M[@]}" ping "${G6[@]}" --method 1 --attr 1 \
	--tid 0xabcdef0012345678 --data "ping from $VM_NAME" --timeout 5000 \
	>/tmp/get.out 2>&1 || { cat /tmp/get.out; gfail "Get: no echo"; }
cat /tmp/get.out
grep -q '^mad rx tid 0x........12345678 class 0x07 version 2 method 0x81 status 0x0000 attr 0x0001$' /tmp/get.out ||
	gfail "Get: no GetResp with our TID and status 0"
grep -q "^mad rx from lid 0x0000 qpn 0x000001 qkey 0x80010000 .* grh 1 gid $peer_gid6 sgid_index 0 " /tmp/get.out ||
	gfail "Get: the answer's address is not the peer's GID with a GRH"
grep -q "^mad rx data 'ping from $VM_NAME' ok" /tmp/get.out ||
	gfail "Get: our payload did not come back"
gok "Get -> GetResp: TID 0x12345678, payload and peer GID $peer_gid6 checked"

# a Send answered by a Send, as CM messages are
"${M[@]}" ping "${G4[@]}" --method 3 --tid 0x00000000cafe5e4d \
	--data "send from $VM_NAME" --timeout 10000 >/tmp/send.out 2>&1
rc=$?
cat /tmp/send.out
[ $rc -eq 0 ] || gfail "Send: madtest ping exited $rc"
grep -q '^mad rx tid 0x........cafe5e4d class 0x07 version 2 method 0x03 status 0x0000' /tmp/send.out ||
	gfail "Send: no Send back with our TID"
grep -q "^mad rx from lid 0x0000 qpn 0x000001 qkey 0x80010000 .* grh 1 gid $peer_gid sgid_index $gidx " /tmp/send.out ||
	gfail "Send: the answer's address is not the peer's IPv4 GID"
grep -q "^mad rx data 'send from $VM_NAME' ok" /tmp/send.out ||
	gfail "Send: our payload did not come back"
gok "Send -> Send: TID 0xcafe5e4d and payload checked"

sleep 1
kill -INT $tcpdump_pid
wait $tcpdump_pid
cat /tmp/tcpdump.err
gok "capture in /ibgw-run/mad.pcap"
