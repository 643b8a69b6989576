# Helpers of the verbs provider's guest scripts (sourced inside a guest,
# after guest.bash).
FT=${IBGW_BIN:-$G_TOP/build}/tests/fabtest
case "$FT" in /*) ;; *) FT=$G_TOP/$FT ;; esac
[ -x "$FT" ] || gfail "no $FT (make all first)"

# veth_pair: two rxe devices in this one guest, rxe1 on va (10.78.0.1) and
# rxe2 on vb (10.78.0.2), the two ends of a veth pair.  Both addresses are
# local, so by default the kernel would loop their traffic through lo,
# where no rxe device listens; policy routing sends what this host
# originates out of the veth instead, and accept_local lets it in at the
# other end (the local table still delivers what arrives).
veth_pair() {
	local i
	modprobe veth || gfail "no veth module"
	ip link add va type veth peer name vb || gfail "cannot add veth"
	ip addr add 10.78.0.1/24 dev va
	ip addr add 10.78.0.2/24 dev vb
	ip link set va up
	ip link set vb up
	for i in all default va vb; do
		sysctl -qw net.ipv4.conf.$i.accept_local=1 \
			net.ipv4.conf.$i.rp_filter=0
	done
	ip route add 10.78.0.2 dev va src 10.78.0.1 table 100
	ip route add 10.78.0.1 dev vb src 10.78.0.2 table 100
	ip rule add pref 100 iif lo lookup 100
	ip rule add pref 1000 lookup local
	ip rule del pref 0
	rdma link add rxe1 type rxe netdev va || gfail "rdma link add rxe1"
	rdma link add rxe2 type rxe netdev vb || gfail "rdma link add rxe2"
	wait_active rxe1
	wait_active rxe2
}



# qpn_of F: the QPN a fabtest --qpn-file left
qpn_of() {
	cut -d' ' -f1 "$1"
}

# expect FILE PATTERN WHAT: FILE has a line matching the extended regexp
expect() {
	grep -Eq -- "$2" "$1" || { sed 's/^/    | /' "$1"; gfail "$3"; }
}



# sdp_service DIR: start ipoibd --sdp-only on verbs:rxe0 (log DIR/ipoibd.log,
# pid in IPID), fail unless its SDP service came up
sdp_service() {
	sdp_only "$IBGW_BIN" "$1/ipoibd.log"
	expect "$1/ipoibd.log" 'SDP service on @ibgw-sdp, over rdma_cm on RoCE from ' \
		"ipoibd --sdp-only did not start its service"
}
