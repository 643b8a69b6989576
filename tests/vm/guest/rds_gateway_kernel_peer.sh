# Inside one of the two guests of tests/vm/rds_gateway_kernel.sh.
#   rds_gateway_kernel_peer.sh a|b PEER BIN
# a (10.77.0.1): the IB host, the kernel's RDS/IB (rds_rdma over rxe0 on
#   eth0), tests/vm/guest/rds_gw_ib.py (socket.AF_RDS); 10.2.0.0/24 is
#   routed via b.
# b (10.77.0.2): the gateway, ibgwd on verbs:rxe0 (rxe on eth0, the link
#   to a), rds = on; its LAN a veth (10.2.0.1) into the namespace "lan"
#   holding the LAN host (10.2.0.2 and 10.2.0.3): rds_gw_lan.py (python3
#   UDP) and socat.
# On RoCE rdma_cm on a puts the destination's IP in the DGID (and the IP
# header) and only the next hop's MAC is b's: b must own those GIDs
# without taking the LAN addresses for its own (docs/ibgwd.8, "RDS on
# RoCE"): ibgwd does it for rds_gids = 10.2.0.2, 10.2.0.3 (each LAN
# address on eth0 as a /32, rxe makes its GID; its entry in the local
# table deleted, b still routes it to the LAN; UDP 4791 that arrives on
# eth0 for them delivered locally by a policy rule), and undoes it when it
# stops.
# b captures eth0 (UDP 4791) into /ibgw-run/gw.pcap.  Lines "ok(x): ...".
. "$(dirname "$0")/../guest.bash"
FETCH_TRIES=400
role=$1 peer=$2 BIN=$3
T=$(mktemp -d)
GUEST=$G_TOP/tests/vm/guest
sysctl -qw net.core.wmem_max=8388608 net.core.rmem_max=8388608
wait_peer "$peer"
wait_active rxe0


# what a failure leaves to look at
diag() {
	local rc=$?
	[ $rc -eq 0 ] && return
	echo "--- diagnostics ($VM_NAME, exit $rc)"
	[ -s $T/gw.log ] && tail -n 40 $T/gw.log | sed 's/^/  gw| /'
	[ -S $T/ibgwd.sock ] && $BIN/ibgwctl -s $T/ibgwd.sock show stats 2>&1 |
		grep ' rds ' | grep -v ' 0$' | sed 's/^/  stats| /'
	dmesg | tail -n 25 | sed 's/^/  dmesg| /'
	rdma resource show cm_id 2>&1 | head -20 | sed 's/^/  cm_id| /'
	ip rule | sed 's/^/  rule| /'
	[ -s /ibgw-run/gw.pcap ] && tcpdump -nr /ibgw-run/gw.pcap 2>/dev/null |
		head -n 30 | sed 's/^/  pcap| /'
	for c in sent_pkts rcvd_pkts rcvd_seq_err ack_deferred; do
		echo "  rxe0 $c $(rxe_counter rxe0 $c)"
	done
	ip -s link show eth0 | sed 's/^/  eth0| /'
	nstat -az 2>/dev/null | grep -Ei 'udp|InAddrErrors|InNoRoutes|Forw' | sed 's/^/  nstat| /'
}
trap diag EXIT

if [ "$role" = a ]; then
	A=10.77.0.1 B=$peer
	ip route add 10.2.0.0/24 via "$B" || gfail "route to the LAN via b"
	grep -q '^rds_rdma ' /proc/modules || gfail "no rds_rdma on a"
	fetch "$B" 7001 >/dev/null	# the gateway is ready
	# flows: to the python3 echo (300 datagrams, 16 B .. 65507, and
	# the oversize ones) and to socat's (40); the export's echo on 7000
	python3 $GUEST/rds_gw_ib.py --addr $A \
		--flow 4000:10.2.0.2:5000:300:oversize \
		--flow 4001:10.2.0.2:5001:40:w1 \
		--export 7000:10.2.0.3:210 \
		--ready $T/ib.ready --timeout 200 >$T/ib.out 2>&1 &
	IB=$!
	wait_file $T/ib.ready $IB
	tell 7002 bound
	wait $IB
	rc=$?
	sed 's/^/  ib| /' $T/ib.out
	[ $rc -eq 0 ] || gfail "rds_gw_ib.py exited $rc"
	grep '^rds_gw_ib: ok ' $T/ib.out | sed 's/^rds_gw_ib: ok /ok(a): /'
	dmesg | grep 'RDS/IB' | sed 's/^/  dmesg| /'
	n=$(dmesg | grep -Ec "RDS/IB: (Active|Passive) conn connected <::ffff:$A,::ffff:10\.2\.0\.[23],0> version 3\.1")
	[ "$n" -ge 2 ] || gfail "dmesg: $n RDS/IB connections $A <-> 10.2.0.2/3 (2 expected)"
	gok "dmesg: $(dmesg | grep -Eo "RDS/IB: (Active|Passive) conn connected <::ffff:$A,::ffff:10\.2\.0\.[23],0> version 3\.1" | sort -u | tr '\n' ';')"
	# UDP from the IB side to a mapping's port (the gateway's socket
	# for a's 4000): not the LAN's, dropped (drop_not_lan)
	python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("'$A'", 4999)); s.sendto(b"not from the LAN", ("'$B'", 4000))' ||
		gfail "UDP to the gateway's mapping port"
	tell 7004 sent
	gok "rxe0 sent_pkts $(rxe_counter rxe0 sent_pkts) rcvd_pkts $(rxe_counter rxe0 rcvd_pkts)"
	fetch "$B" 7003 >/dev/null	# b has its counters
	exit 0
fi

# ---- b: the gateway -----------------------------------------------------------
A=$peer B=10.77.0.2
ip link add veth0 type veth peer name lan0 || gfail "veth"
ip netns add lan
ip link set lan0 netns lan
ip addr add 10.2.0.1/24 dev veth0
ip link set veth0 up
ip -n lan link set lo up
ip -n lan addr add 10.2.0.2/24 dev lan0
ip -n lan addr add 10.2.0.3/24 dev lan0
ip -n lan link set lan0 up
ip -n lan route add default via 10.2.0.1
gid_of() {
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $(echo $1 | tr . ' ')
}
for x in 10.2.0.2 10.2.0.3; do
	grep -rqx "$(gid_of $x)" /sys/class/infiniband/rxe0/ports/1/gids/ &&
		gfail "GID of $x on rxe0 before ibgwd"
done
ping -c1 -W2 10.2.0.2 >/dev/null || gfail "b cannot reach the LAN host"

tcpdump -i eth0 -s 512 -B 65536 -U -w /ibgw-run/gw.pcap udp port 4791 2>$T/tcpdump.err &
TPID=$!
for i in $(seq 1 50); do
	grep -q 'listening on' $T/tcpdump.err && break
	sleep 0.2
done

cat >$T/ibgw.conf <<CONF
[gateway]
fabric = verbs:rxe0
control = $T/ibgwd.sock
metrics = 127.0.0.1:9478

[partition p1]
pkey = 0x7fff
mode = router
address = 10.77.0.2/24
rds = on
rds_exports = 9000=$A:7000
rds_gids = 10.2.0.2, 10.2.0.3
CONF
$BIN/ibgwd -n -c $T/ibgw.conf >$T/check.out 2>&1 || { cat $T/check.out; gfail "ibgwd -n"; }
$BIN/ibgwd -f -v -c $T/ibgw.conf >$T/gw.log 2>&1 &
GW=$!
for i in $(seq 1 200); do
	grep -q 'ready: 1 partition' $T/gw.log && break
	kill -0 $GW 2>/dev/null || break
	sleep 0.1
done
grep -q 'ready: 1 partition' $T/gw.log || { sed 's/^/  gw| /' $T/gw.log; gfail "ibgwd not ready"; }
grep -q 'partition p1: RDS on, up to .* 1 export' $T/gw.log || { sed 's/^/  gw| /' $T/gw.log; gfail "no RDS on p1"; }
gok "ibgwd: $(grep -o 'partition p1: RoCE port.*' $T/gw.log)"
grep -q 'partition p1: rds_gids: 2 LAN address(es) are GIDs' $T/gw.log ||
	{ sed 's/^/  gw| /' $T/gw.log; gfail "ibgwd: no rds_gids line"; }
# RoCE: the LAN addresses' GIDs on rxe0 (ibgwd's rds_gids), not b's own
# addresses
for i in $(seq 1 50); do
	grep -rqx "$(gid_of 10.2.0.3)" /sys/class/infiniband/rxe0/ports/1/gids/ 2>/dev/null && break
	sleep 0.1
done
gok "rxe0 GIDs: $(cat /sys/class/infiniband/rxe0/ports/1/gids/* | grep -v '^0000:0000:0000:0000:0000:0000:0000:0000$' | sort -u | tr '\n' ' ')"
for x in 10.2.0.2 10.2.0.3; do
	grep -rqx "$(gid_of $x)" /sys/class/infiniband/rxe0/ports/1/gids/ || gfail "no GID $(gid_of $x) ($x) on rxe0"
	ip route get $x | grep -q 'dev veth0' || gfail "b routes $x elsewhere than the LAN: $(ip route get $x)"
done
ping -c1 -W2 10.2.0.2 >/dev/null || gfail "b cannot reach the LAN host with the GIDs"
gok "rds_gids: 10.2.0.2 and 10.2.0.3 are GIDs of rxe0 (ibgwd made them), routed to veth0 (the LAN), not local"
C() { $BIN/ibgwctl -s $T/ibgwd.sock "$@"; }

# the LAN host: python3's echo on 5000 (from the gateway's LAN address and
# the IB sender's port 4000), socat's echo on 5001 (UDP4-LISTEN: the
# first sender's, 10.2.0.1:4001, datagrams piped back), python3's client
# of the export from 10.2.0.3:6000, then socat's (UDP4-CONNECT: answers
# only from the export's address and port) from 10.2.0.3:6100
ip netns exec lan python3 $GUEST/rds_gw_lan.py \
	--echo 10.2.0.2:5000:300:10.2.0.1:4000 \
	--client 10.2.0.3:6000:10.2.0.1:9000:200 --go $T/go \
	--ready $T/lan.ready --timeout 200 >$T/lan.out 2>&1 &
LAN=$!
ip netns exec lan socat -b 65536 -T 200 UDP4-LISTEN:5001,bind=10.2.0.2 PIPE \
	>/dev/null 2>$T/socat.err &
SOCAT=$!
wait_file $T/lan.ready $LAN
tell 7001 ready
fetch "$A" 7002 >/dev/null	# a's export socket is bound
touch $T/go
# socat as the export's client too: 10 datagrams one by one (up to 60
# KB), answers compared (socat waits -t after its input ends: the answer
# comes within it)
ok_socat=0
for i in $(seq 1 10); do
	msg="socat datagram $i $(head -c $((i * 5999)) /dev/zero | tr '\0' x)"
	got=$(printf '%s' "$msg" | ip netns exec lan socat -b 65536 -t 4 - \
		UDP4-CONNECT:10.2.0.1:9000,bind=10.2.0.3:6100 2>>$T/socatc.err)
	[ "$got" = "$msg" ] && ok_socat=$((ok_socat + 1))
done
[ $ok_socat -eq 10 ] || gfail "socat through the export: $ok_socat of 10 answered"
gok "socat 10.2.0.3:6100 -> export 10.2.0.1:9000: 10 of 10 datagrams (up to 60 KB) answered by a's AF_RDS echo"
wait $LAN
rc=$?
sed 's/^/  lan| /' $T/lan.out
[ $rc -eq 0 ] || { C show stats | grep ' rds ' | sed 's/^/  /'; sed 's/^/  gw| /' $T/gw.log | tail -30; gfail "rds_gw_lan.py exited $rc"; }
grep '^rds_gw_lan: ok ' $T/lan.out | sed 's/^rds_gw_lan: ok /ok(b): lan: /'
# socat's echo is done when a is: a's flow to 5001 ends when it has all
# 40 echoes, then a sends UDP from the IB side to the mapping's port
fetch "$A" 7004 >/dev/null
sleep 1
C show stats >$T/stats.txt || gfail "ibgwctl show stats"
sed -n 's/^p1 *rds *//p' $T/stats.txt | tr -s ' ' | tr '\n' ';' | sed 's/^/ok(b): stats rds: /; s/;$/\n/'
C -j show stats >$T/stats.json || gfail "ibgwctl -j show stats"
python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9478/metrics", timeout=10).read().decode())' >$T/metrics.txt ||
	gfail "GET /metrics"
grep '^ibgw_rds_' $T/metrics.txt | sed 's/{partition="p1"}//' | tr '\n' ';' | sed 's/^/ok(b): metrics: /; s/;$/\n/'
C show partitions | sed 's/^/  partitions| /'
dmesg | grep -q 'changed security contexts' &&
	gfail "dmesg: $(dmesg | grep 'changed security contexts')"
gok "no 'changed security contexts' from rdma_cm (ibgwd dropped its capabilities before opening it)"
# the capture ends before ibgwd does (a's kernel reconnects at once
# when the gateway's DREQs come)
kill -INT $TPID
wait $TPID
kill -USR1 $GW
sleep 1
kill $GW
wait $GW
sed 's/^/  gw| /' $T/gw.log | grep -v ' stats ' | tail -40
for x in 10.2.0.2 10.2.0.3; do
	grep -rqx "$(gid_of $x)" /sys/class/infiniband/rxe0/ports/1/gids/ &&
		gfail "GID of $x still on rxe0 after ibgwd stopped"
	ip -o addr show dev eth0 | grep -q " $x/" && gfail "$x still on eth0 after ibgwd stopped"
done
ip rule | grep -q 18634 && gfail "ibgwd's rule left: $(ip rule | grep 18634)"
[ -z "$(ip route show table 18634)" ] || gfail "routes left in table 18634"
gok "ibgwd stopped: the GIDs, addresses, rule and routes of rds_gids are gone"
kill $SOCAT 2>/dev/null
gok "capture: $(grep -o '[0-9]* packets captured' $T/tcpdump.err)"
tell 7003 done
sleep 3
exit 0
