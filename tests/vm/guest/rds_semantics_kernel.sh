# Inside one of two guests: tests/rds_semantics, the C program whose cases
# tests/integration/rds_semantics.sh runs under libibgw_preload.so, run
# here against the kernel's RDS/IB (rds_rdma over rxe0), no preload: the
# kernel is the oracle for what the cases expect.  Then rds_preload.sh's
# python3 programs the same way (errors, echoes up to 1 MiB, readiness,
# fork, exec, ping).
#   rds_semantics_kernel.sh a|b PEER BIN
# b: an echo on port 7100 ("ready" on TCP 7001 once bound), one on its
# link-local eth0 address, port 7103 (the address on TCP 7003) and, each when
# a asks, two sinks (7101, 7102: read nothing for 3 s); waits for a's
# "done" on TCP 7002.  a: every case against b, one line each,
# "ok(a): CASE: ..." or "FAIL(a) CASE: ..." (all run; the host's script
# tells which failed).
. "$(dirname "$0")/../guest.bash"
role=$1 peer=$2 BIN=$3
RS=$BIN/tests/rds_semantics
PY=$G_TOP/tests/integration/rds_progs.py
[ -x "$RS" ] || gfail "no $RS"
wait_peer "$peer"
wait_active rxe0
# the 1 MiB echoes want send buffers over 2 MiB (rds_sendmsg: EMSGSIZE
# past half of sk_sndbuf, which wmem_max caps)
sysctl -qw net.core.wmem_max=8388608 net.core.rmem_max=8388608
# the guest's link-local address on eth0, once past duplicate address
# detection (the kernel's RDS binds no tentative address)
ll() {
	local i
	for i in $(seq 1 100); do
		[ -z "$(ip -6 addr show dev eth0 scope link tentative)" ] && break
		sleep 0.1
	done
	ip -6 addr show dev eth0 scope link |
		sed -n 's/.*inet6 \(fe80[^/]*\).*/\1/p'
}
if [ "$role" = b ]; then
	"$RS" echo 10.77.0.2 7100 >/tmp/echo.log 2>&1 &
	L=$(ll)
	[ -n "$L" ] || gfail "no link-local address on eth0"
	"$RS" echo "$L%eth0" 7103 >/tmp/echo6.log 2>&1 &
	python3 "$PY" echo-server 10.77.0.2 5000 0 >/tmp/pyecho.log 2>&1 &
	for i in $(seq 1 50); do
		grep -q bound /tmp/echo.log && grep -q bound /tmp/pyecho.log && break
		sleep 0.1
	done
	grep -q bound /tmp/echo.log || gfail "echo not bound: $(cat /tmp/echo.log)"
	for i in $(seq 1 50); do
		grep -q bound /tmp/echo6.log && break
		sleep 0.1
	done
	grep -q bound /tmp/echo6.log || gfail "link-local echo not bound: $(cat /tmp/echo6.log)"
	tell 7003 "$L"
	grep -q bound /tmp/pyecho.log || gfail "python echo not bound: $(cat /tmp/pyecho.log)"
	tell 7001 ready
	# a sink that reads nothing for 3 s from when a asks for it (on TCP
	# PORT-94; "ready" on PORT-95 once it is bound)
	for port in 7101 7102; do
		FETCH_TRIES=600 fetch 10.77.0.1 $((port - 94)) >/dev/null
		"$RS" sink 10.77.0.2 $port 3 >/tmp/sink$port.log 2>&1 &
		for i in $(seq 1 50); do
			grep -q bound /tmp/sink$port.log && break
			sleep 0.1
		done
		tell $((port - 95)) ready
	done
	FETCH_TRIES=600 fetch 10.77.0.1 7002 >/dev/null
	gok "b served the echo and the sinks"
	exit 0
fi
# the case "transport" wants a transport that is not there (ENOPROTOOPT):
# the kernel would load rds_tcp for SO_RDS_TRANSPORT 2
echo "install rds_tcp /bin/false" >/etc/modprobe.d/ibgw-no-rds-tcp.conf
[ "$(fetch "$peer" 7001)" = ready ] || gfail "b not ready"
for c in mmsg shutdown listen names cancel transport loopback peercred ioctl \
	 rcvtimeo congmon tstamp tstamp-rds cmsg read0 oob levels zerocopy \
	 recverr restart intr; do
	port=7100
	[ $c = restart ] && port=7101
	[ $c = intr ] && port=7102
	if [ $port != 7100 ]; then
		tell $((port - 94)) go
		[ "$(fetch "$peer" $((port - 95)))" = ready ] || gfail "no sink on $port"
	fi
	out=$(timeout 60 "$RS" $c 10.77.0.1 "$peer" $port 2>&1)
	case $out in
	*"ok: $c:"*) gok "$(echo "$out" | grep "^ok: $c:" | sed 's/^ok: //')" ;;
	*) echo "FAIL(a) $c: $(echo "$out" | tr '\n' ' ')" ;;
	esac
done
# link-local names, against b's echo on its fe80:: address
L=$(ll) PL=$(fetch "$peer" 7003)
out=$(timeout 60 "$RS" linklocal "$L%eth0" "$PL%eth0" 7103 2>&1)
case $out in
*"ok: linklocal:"*) gok "$(echo "$out" | grep "^ok: linklocal:" | sed 's/^ok: //')" ;;
*) echo "FAIL(a) linklocal: $(echo "$out" | tr '\n' ' ')" ;;
esac
# rds_preload.sh's python3 programs (tests/integration/rds_progs.py)
for c in "errors 10.77.0.1 $peer" \
	 "echo-client 10.77.0.1 $peer 5000 1 2 100 4095 4096 4097 8192 65536 100000 1000000 1048576" \
	 "ready 10.77.0.1 $peer 5000" "fork 10.77.0.1 $peer 5000" \
	 "exec 10.77.0.1 $peer 5000" "ping 10.77.0.1 $peer"; do
	name=${c%% *}
	# shellcheck disable=SC2086
	if out=$(RDS_KERNEL=1 timeout 60 python3 "$PY" $c 2>&1); then
		gok "py-$name: $(echo "$out" | tail -n1)"
	else
		echo "FAIL(a) py-$name: $(echo "$out" | tail -n3 | tr '\n' ' ')"
	fi
done
tell 7002 done
wait	# until b has fetched it: b's peers live until then
gok "cases done"
