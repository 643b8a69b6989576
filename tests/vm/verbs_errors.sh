#!/bin/bash
# What the verbs provider refuses on Soft-RoCE, with which message: an
# unknown device, port or GID; an address handle by LID; a destination of
# the other IP family; an SA join; an IPoIB host (ipoibd); a datagram
# larger than the MTU (EMSGSIZE).  tests/vm/guest/verbs_errors.sh does it.
. "$(dirname "$0")/lib.bash"
[ -x "$BIN/tests/fabtest" ] && [ -x "$BIN/ipoibd" ] ||
	fail "no $BIN/tests/fabtest or $BIN/ipoibd (make all)"
vm_guest a --modprobe rdma_rxe --modprobe tun \
	--script "tests/vm/guest/verbs_errors.sh" --timeout 300
vm_run_checked 350
out=$(vm_output a)
for want in \
	'nosuchdev: exit 1: fabtest: open: verbs: no RDMA device "nosuchdev" \(2 found\)' \
	'noport: exit 1: .*rxe1 has no port 2 \(1 port\)' \
	'badgid: exit 1: .*bad GID "bogus" \(a GID index 0-255, ipv4 or ipv6\)' \
	'nogid: exit 1: .*has no GID at index 200' \
	'lidah: exit 1: fabtest: address handle: verbs: rxe1 port 1 is RoCE' \
	'family: exit 1: fabtest: address handle: verbs: source GID ::ffff:10.78.0.1' \
	'sajoin: exit 1: fabtest: SA client: the port is RoCE' \
	'ipoibd: exit 1: .*IPoIB runs on an InfiniBand link layer only' \
	'mtu: 1024 bytes sent and received' \
	'emsgsize: exit 1: fabtest: send: a datagram of 1025 bytes exceeds the port MTU'; do
	echo "$out" | grep -Eq "^ok\(a\): $want" || fail "guest did not report: $want"
done
ok "verbs on RoCE refuses: unknown device/port/GID, LID address handles, the other IP family, SA joins, ipoibd (needs InfiniBand), 1025 > MTU 1024 bytes (EMSGSIZE)"
