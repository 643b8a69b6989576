#!/bin/bash
# rctest's ping-pong mode between two soft nodes (the latency half of
# tests/bench/rc_bench.sh), as a functional test, not a timing one: 200
# round trips at each of 1, 4096 and 10000 bytes (multi-packet at the MTU
# of 4096) complete, every answer checked by the client, a line per size
# with the count asked for and round trips > 0 in order (avg, p50 <= p99);
# the server answers all 600, sees the client disconnect and exits 0.
. "$(dirname "$0")/lib.bash"
RT=$BIN/tests/rctest
[ -x "$RT" ] || fail "no $RT (make all)"
start_fabric
SPEC=soft:$SOCK
srv_gid=$(fabtest info srv | sed -n 's/^gid //p')
[ -n "$srv_gid" ] || fail "no GID for node srv"

"$RT" -F "$SPEC" --node srv pingpong-server --port 7480 --sizes 10000 \
	--timeout 30000 >"$T/srv.out" 2>&1 &
SPID=$!
PIDS+=("$SPID")
listening() { grep -q '^listening port 7480$' "$T/srv.out"; }
eventually listening || { cat "$T/srv.out"; fail "the server does not listen"; }

timeout 120 "$RT" -F "$SPEC" --node cli pingpong-client --dst "$srv_gid" \
	--port 7480 --count 200 --sizes 1,4096,10000 --timeout 30000 \
	>"$T/cli.out" 2>&1
rc=$?
cat "$T/cli.out"
[ $rc -eq 0 ] || { cat "$T/srv.out"; fail "the client exited $rc"; }
for size in 1 4096 10000; do
	line=$(grep "^pingpong size $size " "$T/cli.out")
	[ -n "$line" ] || fail "no pingpong line for size $size"
	echo "$line" | awk '
		$1 == "pingpong" && $2 == "size" && $4 == "count" &&
		$5 == 200 && $6 == "rtt_us_avg" && $8 == "p50" &&
		$10 == "p99" && NF == 11 &&
		$7 > 0 && $9 > 0 && $11 > 0 && $9 <= $11 { ok = 1 }
		END { exit !ok }' || fail "size $size: not sane: '$line'"
done
grep -q '^disconnected$' "$T/cli.out" || fail "the client saw no DISCONNECTED"
n=$(grep -c '^pingpong size ' "$T/cli.out")
[ "$n" -eq 3 ] || fail "$n pingpong lines, expected 3"
ok "200 round trips at 1, 4096, 10000 bytes: $(sed -n 's/^pingpong size \([0-9]*\) .* rtt_us_avg \([0-9.]*\) .*/\1:\2us/p' "$T/cli.out" | tr '\n' ' ')"

wait "$SPID"
rc=$?
cat "$T/srv.out"
[ $rc -eq 0 ] || fail "the server exited $rc"
grep -q '^pingpong served 600$' "$T/srv.out" || fail "the server did not answer 600"
grep -q '^disconnected$' "$T/srv.out" || fail "the server saw no DISCONNECTED"
ok "the server answered 600, saw the client disconnect, exited 0"
fabric_alive
stop_fabric
