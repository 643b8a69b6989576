# Inside one of two guests of tests/vm/rds_ipv6_kernel.sh: RDS over IPv6
# between our RDS and the kernel's RDS/IB, one C program on the AF_RDS
# socket API at both ends (tests/rds_sock_bench, sockaddr_in6; python3's
# socket module takes only IPv4 addresses for AF_RDS).
#   a  fd00:77::1: no rds module; ipoibd --sdp-only --fabric
#      verbs:rxe0:1:ipv6 (the host's RDS service, owning the port's global
#      IPv6 address) and rds_sock_bench under
#      libibgw_preload.so
#   b  fd00:77::2: the kernel's rds_rdma and rds_sock_bench as it is
# Phase 1, a -> b: b runs a sink (5001) and echoes (5002 to 5004); a makes
# round trips of 64 B, 9000 B (3 fragments) and 1 MiB (256 fragments)
# through them, each echo checked to come from b's address and port, then
# sends 2000 messages of 3000 B to b's sink, which must count them all.
# Phase 2, b -> a: the same with the roles swapped (a's sink and echo
# under the preload).  b captures eth0 (UDP 4791) into
# /ibgw-run/rds6.pcap and prints its dmesg's RDS/IB lines.
#   rds_ipv6_peer.sh a|b BIN
. "$(dirname "$0")/../guest.bash"
FETCH_TRIES=400
role=$1 BIN=$2
A4=10.77.0.1 B4=10.77.0.2 A6=fd00:77::1 B6=fd00:77::2
SB=$BIN/tests/rds_sock_bench
PRE=$BIN/libibgw_preload.so
[ -x "$SB" ] && [ -f "$PRE" ] || gfail "no $SB or $PRE"
T=$(mktemp -d)
# a 1 MiB message needs a send buffer over 2 MiB (the kernel refuses one
# larger than half of sk_sndbuf); rds_sock_bench asks for 4 MiB
sysctl -qw net.core.wmem_max=8388608 net.core.rmem_max=8388608
if [ "$role" = a ]; then
	me=$A6 peer=$B6 peer4=$B4 W="env LD_PRELOAD=$PRE"
else
	me=$B6 peer=$A6 peer4=$A4 W=
fi
ip -6 addr add $me/64 dev eth0 nodad || gfail "ip -6 addr add $me"
wait_peer "$peer4"
wait_active rxe0
# rxe0's GID table takes the address from eth0
g=$(python3 -c 'import ipaddress,sys; print(ipaddress.IPv6Address(sys.argv[1]).exploded)' "$me")
for i in $(seq 1 50); do
	grep -qx "$g" /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null && break
	sleep 0.2
done
grep -qx "$g" /sys/class/infiniband/rxe0/ports/1/gids/* ||
	gfail "no GID $g on rxe0"
ping -6 -c1 -W3 "$peer" >/dev/null || gfail "ping -6 $peer"

IPID=
if [ "$role" = a ]; then
	grep -Eq '^rds(_rdma)? ' /proc/modules && gfail "rds is loaded on a"
	# the service's one local address is the port's GID that the
	# fabric spec picks: the global IPv6 one
	sdp_only "$BIN" $T/ipoibd.log --fabric verbs:rxe0:1:ipv6
	rds_service_up $T/ipoibd.log
else
	modprobe rds_rdma || gfail "modprobe rds_rdma"
	tcpdump -i eth0 -s 512 -B 65536 -U -w /ibgw-run/rds6.pcap udp port 4791 2>$T/tcpdump.err &
	TPID=$!
	for i in $(seq 1 50); do
		grep -q 'listening on' $T/tcpdump.err && break
		sleep 0.2
	done
fi

# what to look at when a step fails (once seen: a 1 MiB round trip that
# hung until the 300 s alarm): rxe0's counters that moved, on a the
# service's RDS counters and connection lines, on b the kernel's RDS
# counters, connections and queues (rds_sock_bench info), before gfail
diag() {
	local f
	for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
		[ "$(cat $f 2>/dev/null)" != 0 ] && echo "  diag| rxe0 $(basename $f) $(cat $f)"
	done
	if [ -n "$IPID" ]; then
		kill -USR1 $IPID
		sleep 1
		grep -iE 'rds' $T/ipoibd.log | tail -n 80 | sed 's/^/  diag| /'
	else
		$SB info 2>&1 | head -n 120 | sed 's/^/  diag| /'
	fi
	rdma res show qp 2>&1 | sed 's/^/  diag| /'
	rdma res show cm_id 2>&1 | sed 's/^/  diag| /'
	# is the guest link itself still passing packets both ways?
	ip -s link show eth0 2>&1 | sed 's/^/  diag| /'
	tc -s qdisc show dev eth0 2>&1 | sed 's/^/  diag| /'
	ping -6 -c 2 -W 2 "$peer" 2>&1 | tail -n 2 | sed 's/^/  diag| /'
	rdma res show cm_id 2>&1 | grep -v LISTEN | sed 's/^/  diag| after the ping: /'
	dmesg | grep -i 'rds\|rxe\|virtio\|eth0\|watchdog' | tail -n 20 | sed 's/^/  diag| dmesg /'
}
# the round trips' sizes, each through an echo port of its own (an echo
# exits at the QUIT that ends a round-trip run): 64 B, 9000 B (3
# fragments), 1 MiB (256 fragments)
SIZES="5002:64:200 5003:9000:200 5004:1048576:5"
# serve_side PHASE: a sink and the echoes on our address until the peer's
# programs are through (the sink exits after the FIN, each echo after its
# QUIT)
serve_side() {
	local x pids=""
	$W $SB -t 300 sink $me 5001 >$T/sink$1.out 2>&1 &
	local sp=$!
	for x in $SIZES; do
		$W $SB -t 300 echo $me ${x%%:*} >$T/echo$1.${x%%:*}.out 2>&1 &
		pids="$pids $!:${x%%:*}"
	done
	sleep 1
	tell $((7000 + $1)) ready
	for x in $pids; do
		wait ${x%%:*} || { cat $T/echo$1.${x#*:}.out; diag; gfail "phase $1: the echo on ${x#*:} failed"; }
	done
	wait $sp || { cat $T/sink$1.out; gfail "phase $1: the sink failed"; }
	sed 's/^/  sink| /' $T/sink$1.out
	gok "phase $1: served the peer's round trips and messages"
}
# client_side PHASE: round trips through the peer's echoes, then 2000
# messages of 3000 B to its sink
client_side() {
	local x s n
	fetch "$peer4" $((7000 + $1)) >/dev/null
	for x in $SIZES; do
		s=${x#*:} n=${s#*:} s=${s%%:*}
		$W $SB -t 300 rr $me $peer ${x%%:*} $n $s >$T/rr$1.$s.out 2>&1 ||
			{ cat $T/rr$1.$s.out; diag; gfail "phase $1: round trips of $s B failed"; }
		gok "phase $1: $(grep 'round trips' $T/rr$1.$s.out)"
	done
	$W $SB -t 300 send $me $peer 5001 2000 3000 >$T/send$1.out 2>&1 ||
		{ cat $T/send$1.out; diag; gfail "phase $1: sending 2000 messages failed"; }
	gok "phase $1: $(grep 'sent' $T/send$1.out)"
}
if [ "$role" = a ]; then
	client_side 1
	serve_side 2
else
	serve_side 1
	client_side 2
fi

if [ -n "$IPID" ]; then
	kill -USR1 $IPID
	sleep 1
	gok "service: $(sed -n 's/.*stats \(rds_service\.[rt]x_msgs\) \([0-9]*\)$/\1 \2/p' \
		$T/ipoibd.log | tail -n2 | tr '\n' ' ')"
	grep -Eq '^rds(_rdma)? ' /proc/modules && gfail "rds was loaded on a"
	tell 7020 done
	fetch "$B4" 7021 >/dev/null	# b has its capture
	kill $IPID
	wait $IPID 2>/dev/null
	exit 0
fi
fetch "$A4" 7020 >/dev/null
cap_stop $TPID /ibgw-run/rds6.pcap $T/tcpdump.err
dmesg | grep 'RDS/IB' | sed 's/^/  dmesg| /'
v=$(dmesg | sed -n "s/.*RDS\/IB: \(Active\|Passive\) conn connected <$B6,$A6,0> version \([0-9.]*\).*/\2/p" | head -n1)
[ -n "$v" ] || gfail "dmesg: no RDS/IB connection <$B6,$A6,0>"
gok "dmesg: RDS/IB conn connected <$B6,$A6,0> version $v"
tell 7021 done
wait $!		# until a has it: this guest powers off when the script ends
exit 0
