#!/bin/bash
# The kernel's AF_RDS semantics (Linux 6.1, net/rds and net/socket.c) in
# the corners rds_preload.sh does not reach, for an ordinary C program
# (tests/rds_semantics, one case per run) under the preload on h1, its
# peer an echo (or a sink that reads nothing for a while) on h2:
#  mmsg        sendmmsg, recvmmsg (msg_len, names, MSG_WAITFORONE, the
#              timeout); more than one message to sendmmsg is EOPNOTSUPP,
#              as the kernel's (its MSG_BATCH); a unix pair's untouched
#  shutdown    EOPNOTSUPP, the socket unaffected; a unix stream's
#              half-close untouched
#  listen      listen, accept EOPNOTSUPP
#  cancel      RDS_CANCEL_SENT_TO: unbound ENOTCONN first, short EINVAL,
#              the address unchecked
#  peercred    SO_PEERCRED: no process, no credentials (not ipoibd's)
#  transport   SO_RDS_TRANSPORT: once, not once bound, IB only
#  loopback    127.0.0.0/8 and ::1 on the loop transport: bound without
#              an IB address, datagrams among them and to the host's
#              address, none to another host nor from the host's address
#  names       IPv6 connects to non-unicast EPROTOTYPE, link-local
#              without a scope EINVAL, a bind to port 1 (the probe port)
#              EINVAL
#  ioctl       FIONREAD, SIOCOUTQ ENOTTY; SIOCRDSGETTOS/SETTOS (before
#              the first send only); FIONBIO
#  rcvtimeo    SO_RCVTIMEO's expiry ETIMEDOUT
#  congmon     RDS_CONG_MONITOR takes an int
#  tstamp      SO_TIMESTAMP's SCM_TIMESTAMP per datagram, nothing else
#  tstamp-rds  SO_TIMESTAMP at level SOL_RDS
#  cmsg        sendmsg's control messages: other levels skipped, unknown
#              SOL_RDS EINVAL, RDMA_ARGS looked at as the kernel does
#              (EINVAL, EMSGSIZE), RDMA_DEST EINVAL
#  restart     a send blocked on a congested port restarts after SA_RESTART
#  intr        ... and fails with EINTR without it
#  read0       read and readv of 0 bytes: 0, nothing taken
#  oob         recv(MSG_OOB): 0
#  levels      IPPROTO_IP/TCP options ENOPROTOOPT
#  zerocopy    MSG_ZEROCOPY EINVAL, SO_ZEROCOPY, then EOPNOTSUPP
#  recverr     RDS_RECVERR per socket (dup, fork)
#  linklocal   IPv6 link-local names with their scope (the hosts'
#              fe80:: addresses on ib0): bound on the scope's link only,
#              the scope in every name given back, peers on another link
#              EINVAL, datagrams both ways
#  sndtimeo    SO_SNDTIMEO's expiry ETIMEDOUT (h2's ipoibd stopped, so
#              nothing is acknowledged and the socket fills)
# Every case runs; the test fails at the end if one did.  The same cases
# but sndtimeo run against the kernel's RDS/IB in the guest tier
# (tests/vm/rds_semantics_kernel.sh): what they expect is what Linux does.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
RS=$BIN/tests/rds_semantics
[ -x "$RS" ] || fail "no $RS (make all)"
A1=10.5.0.1 A2=10.5.0.2
start_fabric
sdp_host h1 --address $A1/24 --no-sdp
sdp_host h2 --address $A2/24 --no-sdp
for h in h1 h2; do
	for i in $(seq 1 50); do
		grep -q "RDS service on @ibgw-rds" "$T/$h.log" && break
		sleep 0.1
	done
	grep -q "RDS service on @ibgw-rds" "$T/$h.log" ||
		{ cat "$T/$h.log"; fail "$h has no RDS service"; }
done
ns h1 ping -c 1 -W 5 $A2 >/dev/null || fail "no IPoIB between h1 and h2"

bound() {	# LOG: wait for the peer's "bound"
	local i
	for i in $(seq 1 50); do
		grep -q bound "$1" && return 0
		sleep 0.1
	done
	cat "$1"
	fail "the peer did not bind"
}

failed=""
case_run() {	# CASE PORT
	local out
	out=$(pre h1 timeout 60 "$RS" "$1" $A1 $A2 "$2" 2>&1)
	case $out in
	*"ok: $1:"*) echo "$out" | grep "^ok: $1:" ;;
	*) echo "FAILED: $1: $out"; failed="$failed $1" ;;
	esac
}

pre_bg EC h2 "$RS" echo $A2 7100 >"$T/echo.log" 2>&1
bound "$T/echo.log"
for c in mmsg shutdown listen names cancel transport loopback peercred ioctl rcvtimeo congmon tstamp \
	tstamp-rds cmsg read0 oob levels zerocopy recverr; do
	case_run $c 7100
done

# a sink that reads nothing for 3 s: its port congested, then clear
pre_bg SK1 h2 "$RS" sink $A2 7101 3 >"$T/sink1.log" 2>&1
bound "$T/sink1.log"
case_run restart 7101
wait "$SK1"
pre_bg SK2 h2 "$RS" sink $A2 7102 3 >"$T/sink2.log" 2>&1
bound "$T/sink2.log"
case_run intr 7102
wait "$SK2"

# link-local names: an echo on h2's fe80:: address, scoped to its ib0
ll() {	# HOST: its link-local address on ib0
	ns "$1" ip -6 addr show dev ib0 scope link |
		sed -n 's/.*inet6 \(fe80[^/]*\).*/\1/p'
}
L1=$(ll h1) L2=$(ll h2)
[ -n "$L1" ] && [ -n "$L2" ] || fail "no link-local addresses on ib0"
pre_bg EL h2 "$RS" echo "$L2%ib0" 7103 >"$T/echo6.log" 2>&1
bound "$T/echo6.log"
out=$(pre h1 timeout 60 "$RS" linklocal "$L1%ib0" "$L2%ib0" 7103 2>&1)
case $out in
*"ok: linklocal:"*) echo "$out" | grep "^ok: linklocal:" ;;
*) echo "FAILED: linklocal: $out"; failed="$failed linklocal" ;;
esac

# last: h2's ipoibd stopped while h1's socket fills
pre h1 timeout 10 "$RS" shutdown $A1 $A2 7100 >/dev/null 2>&1	# connected
kill -STOP "$h2_PID"
case_run sndtimeo 7100
kill -CONT "$h2_PID"

[ -z "$failed" ] || fail "cases failed:$failed"
ok "every case as the kernel's RDS"
