# Inside one of two guests (a 10.77.0.1 the servers, b 10.77.0.2 the
# clients; rxe0 on eth0 each): the host's SDP service without IPoIB
# (ipoibd --sdp-only on verbs:rxe0, rdma_cm's profile) and unmodified
# programs under libibgw_preload.so.  sdp_peer.sh a|b PEER BIN
#   both  ipoibd --sdp-only --fabric verbs:rxe0 -f; a libsdp.conf that
#         makes every client connect to 10.77.0.0/24 SDP only (no TCP
#         fallback to hide a failure), servers 'both'
#   a     preloaded servers: socat into a file (7000), socat out of a file
#         (7002), iperf3 -s -1 (5201); "ready" on TCP 7001 once all listen;
#         after them the sha256 sums and its service's counters (SIGUSR1)
#   b     captures eth0 (UDP 4791) into /ibgw-run/sdp.pcap, then the
#         preloaded clients: socat b -> a, socat a -> b, iperf3 -c; sums
#         and counters
# Then the compatibility table (issue 14, item 6): the same unmodified
# servers on a and clients on b, once under rdma-core's librspreload
# (rsockets) and once under ours; b prints one line per row,
#   compat PROGRAM rsockets RESULT ours RESULT
# (ok,RDMA:N or ok,TCP:N with the packets rxe0 moved meanwhile, or why
# not).  a serves "ready2" on TCP 7011 once its servers
# listen and stays until b serves "done" on TCP 7012.
. "$(dirname "$0")/../guest.bash"
role=$1 peer=$2 BIN=$3
export IBGW_BIN=$BIN
. "$(dirname "$0")/verbs_lib.bash"
PRE=$BIN/libibgw_preload.so
[ -f "$PRE" ] || gfail "no $PRE"
T=$(mktemp -d)
wait_peer "$peer"
wait_active rxe0

sdp_only "$BIN" $T/ipoibd.log --fabric verbs:rxe0 --sdp-keepalive 1
expect $T/ipoibd.log 'SDP service on @ibgw-sdp, over rdma_cm on RoCE from 10\.77\.0\.[12] ' \
	"ipoibd --sdp-only did not start its service"
gok "service: $(sed -n 's/.*\(SDP service on .*\)/\1/p' $T/ipoibd.log)"
cat >$T/sdp.conf <<-CONF
	use sdp client * 10.77.0.0/24:*
	use both server * *:*
CONF
pre() {
	env LD_PRELOAD="$PRE" LIBSDP_CONFIG_FILE=$T/sdp.conf "$@"
}
# counters STAT...: the service's report (SIGUSR1), the last value of each
counters() {
	local s out=""
	kill -USR1 $IPID
	sleep 1
	for s in "$@"; do
		out="$out $s $(sed -n "s/.*stats $s \([0-9]*\)\$/\1/p" $T/ipoibd.log | tail -n1)"
	done
	echo "${out# }"
}
RS=$(dpkg -L librdmacm1 2>/dev/null | grep '/librspreload\.so$' | head -n1)
PY=$G_TOP/tests/integration/sdp_progs.py
# rs PROGRAM...: under rsockets' preload
rs() {
	env LD_PRELOAD="$RS" "$@"
}
# the rows' ports: ours 7601.., rsockets' 7701.. (both preloads listen in
# rdma_cm's TCP port space: they must not share one)
ROWS="socat iperf3 curl asyncio forking lighttpd node"
row_port() {	# ROW BASE
	local i=0 r
	for r in $ROWS; do
		[ "$r" = "$1" ] && { echo $(($2 + i)); return; }
		i=$((i + 1))
	done
}
compat_data() {	# FILE: the same bytes on both guests
	seq 1 60000 >"$1"
}
compat_servers() {	# WRAPPER BASE
	local w=$1 b=$2 D=$T/www-$2
	mkdir -p $D
	compat_data $D/seq.txt
	$w socat -u OPEN:$D/seq.txt TCP-LISTEN:$(row_port socat $b),reuseaddr \
		>$T/cs-socat-$b.log 2>&1 &
	$w iperf3 -s -1 -p $(row_port iperf3 $b) >$T/cs-iperf3-$b.log 2>&1 &
	$w python3 -m http.server $(row_port curl $b) --directory $D \
		>$T/cs-curl-$b.log 2>&1 &
	$w python3 "$PY" asyncio-server $(row_port asyncio $b) \
		>$T/cs-asyncio-$b.log 2>&1 &
	$w python3 "$PY" fork-server $(row_port forking $b) \
		>$T/cs-forking-$b.log 2>&1 &
	# lighttpd (its own event loop on epoll, sendfile) for wget
	cat >$T/lighttpd-$b.conf <<-CONF
		server.document-root = "$D"
		server.port = $(row_port lighttpd $b)
		server.bind = "0.0.0.0"
		server.modules = ()
	CONF
	$w lighttpd -D -f $T/lighttpd-$b.conf >$T/cs-lighttpd-$b.log 2>&1 &
	# node's http (libuv on epoll), server and client
	cat >$T/node-srv-$b.js <<-JS
		const fs = require('fs');
		require('http').createServer((q, r) => fs.createReadStream('$D/seq.txt').pipe(r))
			.listen($(row_port node $b), '0.0.0.0');
	JS
	$w node $T/node-srv-$b.js >$T/cs-node-$b.log 2>&1 &
}
# compat_client WRAPPER BASE ROW: ok, or what went wrong
compat_client() {
	local w=$1 p r=$3 out rc
	p=$(row_port $r $2)
	case $r in
	socat)
		out=$($w timeout 30 socat -u TCP:$peer:$p OPEN:$T/got-$p,creat,trunc 2>&1)
		rc=$?
		[ $rc -eq 0 ] && cmp -s $T/got-$p $T/seq.txt && { echo ok; return; } ;;
	iperf3)
		out=$($w timeout 30 iperf3 -c $peer -p $p -t 2 2>&1)
		rc=$?
		[ $rc -eq 0 ] && echo "$out" | grep -q receiver && { echo ok; return; } ;;
	curl)
		out=$($w timeout 30 curl -sSf --max-time 25 -o $T/got-$p http://$peer:$p/seq.txt 2>&1)
		rc=$?
		[ $rc -eq 0 ] && cmp -s $T/got-$p $T/seq.txt && { echo ok; return; } ;;
	asyncio)
		out=$($w timeout 30 python3 "$PY" asyncio-client $peer $p 5 20 2>&1)
		rc=$?
		[ $rc -eq 0 ] && echo "$out" | grep -q '^asyncio ok' && { echo ok; return; } ;;
	forking)
		out=$($w timeout 30 python3 "$PY" thread-client $peer $p 4 20 2>&1)
		rc=$?
		[ $rc -eq 0 ] && echo "$out" | grep -q '^threads ok' && { echo ok; return; } ;;
	lighttpd)
		out=$($w timeout 30 wget -q -T 25 -t 1 -O $T/got-$p http://$peer:$p/seq.txt 2>&1)
		rc=$?
		[ $rc -eq 0 ] && cmp -s $T/got-$p $T/seq.txt && { echo ok; return; } ;;
	node)
		out=$($w timeout 30 node -e "
			const f = require('fs').createWriteStream('$T/got-$p');
			require('http').get('http://$peer:$p/', r => { r.pipe(f); f.on('finish', () => process.exit(0)); })
				.on('error', e => { console.log(String(e)); process.exit(1); });" 2>&1)
		rc=$?
		[ $rc -eq 0 ] && cmp -s $T/got-$p $T/seq.txt && { echo ok; return; } ;;
	esac
	case $rc in
	124) echo "timeout" ;;
	139) echo "segfault" ;;
	0) echo "wrong-data" ;;
	*) echo "exit-$rc:$(echo "$out" | tail -n1 | tr -c 'A-Za-z0-9.,:()/-' '_' | cut -c1-60)" ;;
	esac
	echo "$r $w rc $rc: $out" >>$T/compat-detail.log
}

wait_listen() {	# PORT
	local i
	for i in $(seq 1 100); do
		ss -ltn "sport = :$1" | grep -q LISTEN && return 0
		sleep 0.2
	done
	gfail "nothing listens on $1"
}

if [ "$role" = a ]; then
	head -c 3000000 /dev/urandom >$T/adata
	pre socat -u TCP-LISTEN:7000,reuseaddr OPEN:$T/up,creat,trunc 2>$T/s1.err &
	S1=$!
	pre socat -u OPEN:$T/adata TCP-LISTEN:7002,reuseaddr 2>$T/s2.err &
	S2=$!
	pre iperf3 -s -1 -p 5201 >$T/iperf-s.log 2>&1 &
	S3=$!
	wait_listen 7000
	wait_listen 7002
	wait_listen 5201
	echo ready >$T/ready
	serve 7001 $T/ready
	wait $S1 || { cat $T/s1.err; gfail "socat server 7000 failed"; }
	gok "sha256 up $(sha256sum <$T/up | cut -c1-64) bytes $(stat -c %s $T/up)"
	wait $S2 || { cat $T/s2.err; gfail "socat server 7002 failed"; }
	gok "sha256 down $(sha256sum <$T/adata | cut -c1-64) bytes $(stat -c %s $T/adata)"
	wait $S3 || { cat $T/iperf-s.log; gfail "iperf3 server failed"; }
	gok "iperf3 server done"
	gok "counters $(counters sdp.conns_passive sdp.rx_bytes sdp.tx_bytes sdp_service.accepted_sdp sdp_service.accepted_tcp sdp.keepalive_probes sdp.keepalive_dead)"
	grep -E 'stats sdp|^ipoibd: sdp ' $T/ipoibd.log | tail -n 40
	[ -n "$RS" ] || gfail "no librspreload.so (dpkg -L librdmacm1)"
	compat_servers rs 7701
	compat_servers pre 7601
	for r in $ROWS; do
		wait_listen $(row_port $r 7601)
		# rsockets' listeners are rdma_cm's, not the kernel's: ss
		# may not show them; give them the time
	done
	sleep 3
	echo ready2 >$T/ready2
	serve 7011 $T/ready2
	for i in $(seq 1 400); do
		out=$(socat -u TCP:$peer:7012 STDOUT 2>/dev/null) &&
			[ -n "$out" ] && break
		sleep 1
	done
	gok "compat: b is done ($out)"
	for r in $ROWS; do
		echo "--- $r servers: rsockets"
		tail -n 3 $T/cs-$r-7701.log
	done
	kill $IPID
	wait $IPID
	exit 0
fi

tcpdump -i eth0 -B 131072 -U -w /ibgw-run/sdp.pcap udp port 4791 2>$T/tcpdump.err &
TPID=$!
for i in $(seq 1 50); do
	grep -q 'listening on' $T/tcpdump.err && break
	sleep 0.2
done
head -c 4000000 /dev/urandom >$T/bdata
fetch "$peer" 7001 >/dev/null || gfail "servers never ready"
# connected, then idle for 3 s before the data: keepalive probes (rxe
# takes a zero-length RDMA WRITE without an R_Key, IBA C9-88) go over
# it and must leave it working
(sleep 3; cat $T/bdata) | pre socat -u STDIN TCP:$peer:7000 2>$T/c1.err ||
	{ cat $T/c1.err $T/ipoibd.log; gfail "socat b -> a"; }
gok "sha256 up $(sha256sum <$T/bdata | cut -c1-64) bytes $(stat -c %s $T/bdata)"
pre socat -u TCP:$peer:7002 OPEN:$T/down,creat,trunc 2>$T/c2.err ||
	{ cat $T/c2.err; gfail "socat a -> b"; }
gok "sha256 down $(sha256sum <$T/down | cut -c1-64) bytes $(stat -c %s $T/down)"
before=$(counters sdp.tx_bytes | cut -d' ' -f2)
pre iperf3 -c "$peer" -p 5201 -t 3 -J >$T/iperf.json 2>$T/iperf.err ||
	{ cat $T/iperf.err; tail -n 20 $T/iperf.json; gfail "iperf3 client"; }
# (no process substitution: the guest's /dev has no /dev/fd)
set -- $(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["end"]["sum_received"]; print(e["bytes"], int(e["bits_per_second"]))' $T/iperf.json)
bytes=${1:-0} bps=${2:-0}
after=$(counters sdp.tx_bytes | cut -d' ' -f2)
gok "iperf3 bytes $bytes bps $bps sdp.tx_bytes during it $((after - before))"
gok "counters $(counters sdp.conns_active sdp.tx_bytes sdp.rx_bytes sdp.connect_failed sdp_service.connects sdp_service.connect_failures sdp.keepalive_probes sdp.keepalive_dead)"
grep -E 'stats sdp' $T/ipoibd.log | tail -n 30
sleep 1
kill -INT $TPID
wait $TPID
cat $T/tcpdump.err
gok "capture: $(grep -o '[0-9]* packets captured' $T/tcpdump.err)"

[ -n "$RS" ] || gfail "no librspreload.so (dpkg -L librdmacm1)"
compat_data $T/seq.txt
fetch "$peer" 7011 >/dev/null || gfail "compat servers never ready"
# rdma_pkts: packets rxe0 sent and received so far (its hw counters):
# what a row moved over RDMA, since rsockets falls back to a kernel TCP
# socket when its rdma_cm connect fails, and a program may work that way
rdma_pkts() {
	cat /sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts \
	    /sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts 2>/dev/null |
		awk '{ s += $1 } END { print s + 0 }'
}
# via RESULT BEFORE: ok,RDMA:N or ok,TCP:N (N packets of rxe0 during the
# row; under 60 is no more than failed connection attempts), else RESULT
via() {
	local n=$(($(rdma_pkts) - $2))
	case $1 in
	ok) [ $n -ge 60 ] && echo "ok,RDMA:$n" || echo "ok,TCP:$n" ;;
	*) echo "$1" ;;
	esac
}
[ -r /sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts ] ||
	gfail "no hw counters for rxe0"
for r in $ROWS; do
	p0=$(rdma_pkts)
	a=$(compat_client rs 7701 $r)
	a=$(via "$a" $p0)
	p0=$(rdma_pkts)
	b=$(compat_client pre 7601 $r)
	b=$(via "$b" $p0)
	gok "compat $r rsockets $a ours $b"
done
[ -s $T/compat-detail.log ] && sed 's/^/  detail: /' $T/compat-detail.log | head -n 40
echo done >$T/done
serve 7012 $T/done
DPID=$!
for i in $(seq 1 60); do	# until a has fetched it
	kill -0 $DPID 2>/dev/null || break
	sleep 0.5
done
kill $IPID
wait $IPID
exit 0
