#!/bin/bash
# RC through ibfabricd beside UD and a unix stream socket, measured in the
# same run (a benchmark: figures and ratios, no assertion on speed).
#   tests/bench/rc_bench.sh [--build DIR] [--seconds N]
# Throughput: rctest stream-client sends N x 512 MiB from /dev/zero in
# messages of 4 KiB, 64 KiB and 1 MiB (32 in flight), beside bench_ud's UD
# at 4096 bytes and its unix-socket baseline for N seconds; then 64 KiB
# messages through an ibfabricd dropping 0.1 % of the packets (the cost of
# go-back-N).  Latency: rctest pingpong vs bench_ud --pingpong, N x 1000
# round trips at 64 and 4096 bytes.  Every step has a timeout; the exit is
# non-zero only when a step failed outright (its output is then shown).
set -u
cd "$(dirname "$0")/../.."
build=build secs=3
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	*) echo "rc_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
case "$secs" in ''|*[!0-9]*|0) echo "rc_bench.sh: --seconds takes a whole number > 0" >&2; exit 2 ;; esac
RT=$build/tests/rctest BUD=$build/tests/bench_ud
for b in "$build/ibfabricd" "$RT" "$BUD" "$build/tests/fabtest"; do
	[ -x "$b" ] || { echo "rc_bench.sh: no $b (make all)" >&2; exit 1; }
done
d=$(mktemp -d /tmp/ibgw-rcbench.XXXXXX)
fpid= spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	[ -n "$fpid" ] && kill "$fpid" 2>/dev/null && wait "$fpid" 2>/dev/null
	rm -rf "$d"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

failed=0
bad() {	# step, file to show
	echo "rc_bench.sh: FAILED: $1" >&2
	[ -n "${2:-}" ] && [ -f "$2" ] && sed 's/^/  | /' "$2" >&2
	failed=1
}

sock=
start_fab() {	# ibfabricd options...
	sock=$d/fabric$((++nfab)).sock
	"$build/ibfabricd" -f -s "$sock" "$@" >"$d/fabric$nfab.log" 2>&1 &
	fpid=$!
	local i
	for i in $(seq 1 100); do
		grep -q ready "$d/fabric$nfab.log" && return 0
		kill -0 "$fpid" 2>/dev/null || break
		sleep 0.05
	done
	bad "ibfabricd $* did not become ready" "$d/fabric$nfab.log"
	return 1
}
stop_fab() {
	kill "$fpid" 2>/dev/null
	wait "$fpid" 2>/dev/null
	fpid=
}
nfab=0 port=7500
gid_of() { timeout 10 "$build/tests/fabtest" -s "$sock" info "$1" | sed -n 's/^gid //p'; }

# start_srv MODE [rctest options...]: a server on a port of its own,
# waited for until it listens
start_srv() {
	local mode=$1 i
	shift
	port=$((port + 1))
	srv_out=$d/srv$port.out
	timeout $tmo "$RT" -F "soft:$sock" --node srv --timeout 20000 "$mode" \
		--port $port "$@" >"$srv_out" 2>&1 &
	spid=$!
	for i in $(seq 1 200); do
		grep -q '^listening port' "$srv_out" && return 0
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	bad "rctest $mode does not listen" "$srv_out"
	return 1
}
wait_srv() {
	wait "$spid"
	local rc=$?
	spid=
	[ $rc -eq 0 ] || { bad "rctest server exited $rc" "$srv_out"; return 1; }
}

mib=$((secs * 512))
bytes=$((mib * 1048576))
tmo=$((60 + secs * 30))
# rc_stream SIZE BYTES: sets st_mbs st_gbs st_retx, or returns 1
rc_stream() {
	local size=$1 n=$2 out=$d/stream$1.$port.out line ms
	start_srv stream-server --sizes "$size" || return 1
	head -c "$n" /dev/zero | timeout $tmo "$RT" -F "soft:$sock" --node cli \
		--timeout 20000 stream-client --dst "$gid" --port $port \
		--sizes "$size" >"$out" 2>&1 ||
		{ bad "RC stream of $size-byte messages" "$out"; wait_srv; return 1; }
	wait_srv || return 1
	line=$(grep '^stream sent bytes' "$out")
	set -- $line	# stream sent bytes B msgs M ms T
	ms=$8
	[ "$4" = "$n" ] && [ "$ms" -gt 0 ] 2>/dev/null ||
		{ bad "RC stream of $size-byte messages: '$line'" "$out"; return 1; }
	grep -q "^stream recv bytes $n " "$srv_out" ||
		{ bad "RC stream: the server did not get $n bytes" "$srv_out"; return 1; }
	st_mbs=$(awk -v b="$n" -v ms="$ms" 'BEGIN { printf "%.1f", b / ms / 1000 }')
	st_gbs=$(awk -v b="$n" -v ms="$ms" 'BEGIN { printf "%.3f", b * 8 / ms / 1e6 }')
	st_retx=$(sed -n 's/^rc .* retransmits \([0-9]*\) .*/\1/p' "$out")
	st_retx=${st_retx:-?}
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }

start_fab || exit 1
gid=$(gid_of srv)
[ -n "$gid" ] || { bad "no GID for node srv"; exit 1; }

echo "== RC vs UD through ibfabricd, unix stream socket as baseline"
echo "   (RC: $mib MiB per size from /dev/zero, 32 messages in flight; UD and unix: ${secs}s at 4096 bytes)"
rx_drops() { timeout 10 "$build/ibfabricctl" -s "$sock" get drop.rx_overrun 2>/dev/null || echo 0; }
ud_out=$d/ud.out
ud_mbs= ud_gbs= ux_mbs= ux_gbs=
if timeout $tmo "$BUD" -s "$sock" --seconds "$secs" 4096 >"$ud_out" 2>&1; then
	# size fabric_msg/s Gb/s unix_msg/s Gb/s ratio
	read -r _ _ ud_gbs _ ux_gbs _ < <(awk '$1 == 4096' "$ud_out")
	ud_mbs=$(awk -v g="${ud_gbs:-0}" 'BEGIN { printf "%.1f", g * 1000 / 8 }')
	ux_mbs=$(awk -v g="${ux_gbs:-0}" 'BEGIN { printf "%.1f", g * 1000 / 8 }')
fi
[ -n "$ud_gbs" ] && [ -n "$ux_gbs" ] || bad "bench_ud 4096" "$ud_out"
drops_ud=$(rx_drops)
fmt="%-26s %8s %9s %8s %7s %8s %11s\n"
printf "$fmt" what "msg size" "MB/s" "Gb/s" RC/UD RC/unix retransmits
for size in 4096 65536 1048576; do
	if rc_stream "$size" "$bytes"; then
		printf "$fmt" "RC stream" "$size" "$st_mbs" "$st_gbs" \
			"$(ratio "$st_gbs" "$ud_gbs")" "$(ratio "$st_gbs" "$ux_gbs")" "$st_retx"
	else
		printf "$fmt" "RC stream" "$size" failed - - - -
	fi
done
drops_rc=$(($(rx_drops) - drops_ud))
printf "$fmt" "UD (bench_ud)" 4096 "${ud_mbs:--}" "${ud_gbs:--}" "" "" ""
printf "$fmt" "unix stream socket" 4096 "${ux_mbs:--}" "${ux_gbs:--}" "" "" ""
echo "   (packets ibfabricd dropped for full receive rings: $drops_ud during UD, $drops_rc during the RC"
echo "   streams, where each costs a go-back-N of up to the SOFT_RC_WINDOW (512) packets in flight)"

echo "== round-trip latency, one message at a time ($((secs * 1000)) round trips per size, us)"
n=$((secs * 1000))
lfmt="%-26s %6s %9s %9s %9s %7s\n"
printf "$lfmt" what size avg p50 p99 RC/UD
rc_pp=$d/rcpp.out ud_pp=$d/udpp.out
if start_srv pingpong-server --sizes 4096; then
	timeout $tmo "$RT" -F "soft:$sock" --node cli --timeout 20000 \
		pingpong-client --dst "$gid" --port $port --count $n \
		--sizes 64,4096 >"$rc_pp" 2>&1 || bad "RC pingpong" "$rc_pp"
	wait_srv
fi
timeout $tmo "$BUD" -s "$sock" --pingpong --count $n 64 4096 >"$ud_pp" 2>&1 ||
	bad "bench_ud --pingpong" "$ud_pp"
for size in 64 4096; do
	# pingpong size S count N rtt_us_avg A p50 B p99 C
	read -r _ _ _ _ _ _ rc_a _ rc_50 _ rc_99 < <(grep "^pingpong size $size " "$rc_pp")
	# size fabric_us p50 p99 unix_us p50 p99 ratio lost
	read -r _ ud_a ud_50 ud_99 ux_a ux_50 ux_99 _ ud_lost < <(awk -v s=$size '$1 == s' "$ud_pp")
	printf "$lfmt" "RC (rctest pingpong)" $size "${rc_a:--}" "${rc_50:--}" "${rc_99:--}" \
		"$(ratio "${rc_a:-0}" "${ud_a:-0}")"
	printf "$lfmt" "UD (bench_ud --pingpong)" $size "${ud_a:--}" "${ud_50:--}" "${ud_99:--}" ""
	printf "$lfmt" "unix stream socket" $size "${ux_a:--}" "${ux_50:--}" "${ux_99:--}" ""
	[ "${ud_lost:-0}" = 0 ] || echo "   (UD: $ud_lost datagrams of $size bytes lost and sent again)"
	unset rc_a rc_50 rc_99 ud_a ud_50 ud_99 ux_a ux_50 ux_99 ud_lost
done
stop_fab

echo "== RC under light loss: ibfabricd --loss 0.001 (go-back-N), $((mib / 4)) MiB"
printf "$fmt" what "msg size" "MB/s" "Gb/s" RC/UD RC/unix retransmits
if start_fab --loss 0.001 --seed 1 && gid=$(gid_of srv) && [ -n "$gid" ] &&
	rc_stream 65536 $((bytes / 4)); then
	printf "$fmt" "RC stream, 0.1 % loss" 65536 "$st_mbs" "$st_gbs" \
		"$(ratio "$st_gbs" "$ud_gbs")" "$(ratio "$st_gbs" "$ux_gbs")" "$st_retx"
else
	printf "$fmt" "RC stream, 0.1 % loss" 65536 failed - - - -
fi
stop_fab
exit $failed
