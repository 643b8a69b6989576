#!/bin/bash
# The verbs provider on Soft-RoCE in one guest: two rxe devices on a veth
# pair; unicast both ways over IPv4 and IPv6 GIDs, multicast to two QPs
# (IPv4-mapped and IPv6 MGIDs), 3000 batched datagrams checked one by one,
# port events (tests/vm/guest/verbs_veth.sh does the work).
. "$(dirname "$0")/lib.bash"
[ -x "$BIN/tests/fabtest" ] || fail "no $BIN/tests/fabtest (make all)"
vm_guest a --modprobe rdma_rxe --script "tests/vm/guest/verbs_veth.sh" \
	--timeout 400
vm_run_checked 450
out=$(vm_output a)
for want in \
	'rxe1 default: link_layer ethernet sgid ::ffff:10.78.0.1 index [0-9]+ roce-v2' \
	'rxe1:1:ipv6 -> index [0-9]+ fe80:' \
	'uc12: rxe1 -> rxe2 qpn 0x[0-9a-f]+, 5 datagrams, sgid ::ffff:10.78.0.1 dgid ::ffff:10.78.0.2' \
	'uc21: rxe2 -> rxe1 qpn 0x[0-9a-f]+, 5 datagrams, sgid ::ffff:10.78.0.2 dgid ::ffff:10.78.0.1' \
	'uc6: rxe1 -> rxe2 qpn 0x[0-9a-f]+, 5 datagrams, sgid fe80:' \
	'gid-index: rxe1 \(default IPv4\) sent from index [0-9]+ fe80:' \
	'mc4: rxe1 -> ::ffff:239.1.2.3, 3 datagrams at each of 2 QPs' \
	'mc6: rxe1 -> ff0e::1:2:3, 3 datagrams at each of 2 QPs' \
	'batch: send calls [0-9]+, verify ok 3000 bad 0 dup 0 missing 0 bytes 3000000' \
	'events: PORT_ERR then PORT_ACTIVE'; do
	echo "$out" | grep -Eq "^ok\(a\): $want" || fail "guest did not report: $want"
done
ok "verbs on two rxe devices in one guest: unicast (IPv4, IPv6 GIDs), multicast, 3000 batched, port events"
