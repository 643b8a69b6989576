# Inside one guest: what the verbs provider refuses on Soft-RoCE, and how
# it says so.  rxe1 and rxe2 on a veth pair (verbs_lib.bash).
. "$(dirname "$0")/../guest.bash"
. "$(dirname "$0")/verbs_lib.bash"
T=$(mktemp -d)
veth_pair

# refuse CMD... : CMD must fail (not time out) and print the pattern $WANT
refuse() {
	local tag=$1 rc
	shift
	timeout 30 "$@" >$T/$tag.out 2>&1
	rc=$?
	cat $T/$tag.out
	[ $rc -ne 0 ] || gfail "$tag: succeeded"
	[ $rc -ne 124 ] || gfail "$tag: timed out instead of failing"
	expect $T/$tag.out "$WANT" "$tag: not the expected message"
	gok "$tag: exit $rc: $(grep -E -- "$WANT" $T/$tag.out | head -n1)"
}

WANT='verbs: no RDMA device "nosuchdev"' refuse nosuchdev $FT -F verbs:nosuchdev info x
WANT='verbs: rxe1 has no port 2' refuse noport $FT -F verbs:rxe1:2 info x
WANT='verbs: bad GID "bogus"' refuse badgid $FT -F verbs:rxe1:1:bogus info x
WANT='verbs: rxe1 port 1 has no GID at index 200' refuse nogid $FT -F verbs:rxe1:1:200 info x
# an address handle by LID: RoCE has none
WANT='RoCE \(Ethernet link layer\): an address handle needs a destination GID' \
	refuse lidah $FT -F verbs:rxe1 send x --dlid 3 --dqpn 0x11 --size 8
# an IPv4 source GID cannot reach an IPv6 destination
WANT='source GID ::ffff:10.78.0.1 \(RoCE v2 over IPv4\) cannot reach fe80::1' \
	refuse family $FT -F verbs:rxe1 send x --dgid fe80::1 --dqpn 0x11 --size 8
# no SA on RoCE: a join fails at once, it does not time out
WANT='SA client: the port is RoCE \(Ethernet link layer\): no subnet administrator' \
	refuse sajoin $FT -F verbs:rxe1 recv x --join ff12:401b:ffff::1 --timeout 20000
# IPoIB needs an InfiniBand port (as the kernel's ib_ipoib)
WANT='IPoIB runs on an InfiniBand link layer only: this port is RoCE \(Ethernet link layer\), which has no subnet manager or SA' \
	refuse ipoibd "$(dirname "$FT")/../ipoibd" -F verbs:rxe1 -n h1 -f
ip link show ib0 >/dev/null 2>&1 && gfail "ipoibd left ib0 behind"

# the MTU: 1024 bytes go (and arrive whole), 1025 get EMSGSIZE
rm -f $T/q
$FT -F verbs:rxe2 recv r --count 1 --timeout 20000 --qpn-file $T/q >$T/mtu.out 2>&1 &
wait_file $T/q
$FT -F verbs:rxe1 send x --dgid ::ffff:10.78.0.2 --dqpn "$(qpn_of $T/q)" \
	--size 1024 >$T/mtu.send 2>&1 || { cat $T/mtu.send; gfail "1024 bytes refused"; }
wait $! || { cat $T/mtu.out; gfail "mtu: recv failed"; }
expect $T/mtu.out '^rx .* len=1024 data=x{64}$' "mtu: 1024 bytes did not arrive"
gok "mtu: 1024 bytes sent and received"
WANT='fabtest: send: a datagram of 1025 bytes exceeds the port MTU' \
	refuse emsgsize $FT -F verbs:rxe1 send x --dgid ::ffff:10.78.0.2 \
	--dqpn "$(qpn_of $T/q)" --size 1025
