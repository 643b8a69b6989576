#!/bin/bash
# RC reliability on the software subnet (issue 13, item 4), with rctest's
# streams between two soft nodes:
#  1. RC_FAULT_BYTES (default 1 GiB) through ibfabricd --loss 0.02
#     --reorder 0.02 --dup 0.01 arrive intact (sha256 of what was sent and
#     what was received), and the transport's counters show
#     retransmissions, duplicates and RNR (the receiver posts its buffers
#     late);
#  2. a receiver that posts no buffers for 1.5 s: RNR NAKs, then the
#     stream completes;
#  3. a peer whose port goes down for good mid-transfer: the sender's
#     request fails with "transport retry counter exceeded" within the
#     retry budget (7 retries of a 67 ms timeout), and it says so;
#  4. a peer killed mid-transfer: its node's CM disconnects it (DREQ) and
#     the survivor reports the end;
#  5. a port down and up again within the timeout (150 ms, under the
#     retry budget of 8 x 67 ms) mid-stream: the stream recovers;
#  6. ibfabricd stopped mid-stream: the client's connection ends, reported.
. "$(dirname "$0")/lib.bash"
RT=$BIN/tests/rctest
[ -x "$RT" ] || fail "no $RT (make all)"
BYTES=${RC_FAULT_BYTES:-1073741824}
SPEC=soft:$SOCK
gid_of() { fabtest info "$1" | sed -n 's/^gid //p'; }
# rc_counter FILE NAME: a transport counter from rctest's "rc ..." line
rc_counter() {
	sed -n 's/^rc .*\b'"$2"' \([0-9]*\).*/\1/p' "$1" | tail -n1
}
# server NAME PORT [rctest options]: a stream server in the background
server() {
	local name=$1 port=$2
	shift 2
	"$RT" -F "$SPEC" --node srv stream-server --port "$port" \
		--timeout 60000 "$@" >"$T/$name.out" 2>&1 &
	eval "${name}_PID=$!"
	PIDS+=("$!")
	local i
	for i in $(seq 1 200); do
		grep -q "^listening port $port\$" "$T/$name.out" && return 0
		sleep 0.05
	done
	cat "$T/$name.out"
	fail "stream server $name does not listen"
}
client() {	# PORT [rctest options]: a stream client in the foreground
	local port=$1
	shift
	"$RT" -F "$SPEC" --node cli stream-client --dst "$srv_gid" \
		--port "$port" --timeout 60000 "$@"
}

# 1: a gigabyte through loss, reordering and duplication
start_fabric --loss 0.02 --reorder 0.02 --dup 0.01 --seed 7
srv_gid=$(gid_of srv)
server s1 7101 --out >(sha256sum | cut -d' ' -f1 >"$T/out.sha") --recv-delay 300
t0=$(date +%s%N)
head -c "$BYTES" /dev/urandom | tee >(sha256sum | cut -d' ' -f1 >"$T/in.sha") |
	client 7101 --in /dev/stdin >"$T/c1.out" 2>&1 ||
	{ cat "$T/c1.out" "$T/s1.out"; fail "1: client failed"; }
wait "$s1_PID" || { cat "$T/s1.out"; fail "1: server failed"; }
ms=$((($(date +%s%N) - t0) / 1000000))
cat "$T/c1.out" "$T/s1.out"
grep -q "^stream sent bytes $BYTES " "$T/c1.out" || fail "1: not all sent"
grep -q "^stream recv bytes $BYTES " "$T/s1.out" || fail "1: not all received"
for i in $(seq 1 100); do
	[ -s "$T/in.sha" ] && [ -s "$T/out.sha" ] && break
	sleep 0.1
done
expect_eq "1: sha256 of the stream" "$(cat "$T/out.sha")" "$(cat "$T/in.sha")"
retx=$(rc_counter "$T/c1.out" retransmits)
dups=$(rc_counter "$T/s1.out" dup_requests)
rnr=$(rc_counter "$T/c1.out" rnr_naks_rcvd)
naks=$(rc_counter "$T/c1.out" seq_naks_rcvd)
lost=$(counter drop.fault_loss)
[ "${retx:-0}" -gt 0 ] || fail "1: no retransmissions counted"
[ "${dups:-0}" -gt 0 ] || fail "1: no duplicate requests counted at the responder"
[ "${rnr:-0}" -gt 0 ] || fail "1: no RNR NAK counted"
[ "${naks:-0}" -gt 0 ] || fail "1: no NAK (PSN sequence error) counted"
[ "$lost" -gt 0 ] || fail "1: the fabric lost nothing"
ok "1: $BYTES bytes intact in $ms ms through loss/reorder/dup: $lost packets lost by the fabric, $retx retransmitted, $naks sequence NAKs, $dups duplicates, $rnr RNR NAKs"
stop_fabric

start_fabric
srv_gid=$(gid_of srv)

# 2: a receiver without buffers
server s2 7102 --recv-delay 1500
head -c 4194304 /dev/urandom >"$T/4m"
client 7102 --in "$T/4m" >"$T/c2.out" 2>&1 || { cat "$T/c2.out" "$T/s2.out"; fail "2: client failed"; }
wait "$s2_PID" || { cat "$T/s2.out"; fail "2: server failed"; }
cat "$T/c2.out" "$T/s2.out"
rnr=$(rc_counter "$T/c2.out" rnr_naks_rcvd)
sent_rnr=$(rc_counter "$T/s2.out" rnr_naks_sent)
[ "${rnr:-0}" -gt 0 ] && [ "${sent_rnr:-0}" -gt 0 ] || fail "2: no RNR NAKs (sent $sent_rnr, received $rnr)"
grep -q '^stream recv bytes 4194304 ' "$T/s2.out" || fail "2: not all received"
ok "2: no receive posted for 1.5 s: $sent_rnr RNR NAKs, then all 4 MiB"

# 3: the peer's port goes down for good mid-transfer
server s3 7103
( head -c 2147483648 /dev/zero | client 7103 --in /dev/stdin >"$T/c3.out" 2>&1; echo $? >"$T/c3.rc" ) &
CP=$!
sleep 1
ctl port srv down >/dev/null
t0=$(date +%s%N)
wait $CP
ms=$((($(date +%s%N) - t0) / 1000000))
cat "$T/c3.out"
expect_eq "3: client exit" "$(cat "$T/c3.rc")" 3
grep -q '^error stream: transport retry counter exceeded after' "$T/c3.out" ||
	fail "3: not RETRY_EXC_ERR"
[ $ms -lt 5000 ] || fail "3: the error took $ms ms (budget: 8 x 67 ms)"
timeouts=$(rc_counter "$T/c3.out" timeouts)
[ "${timeouts:-0}" -ge 7 ] || fail "3: $timeouts retransmission timeouts, expected 7 retries and the last"
ok "3: peer's port down: retry counter exceeded after $ms ms, $timeouts timeouts"
ctl port srv up >/dev/null
kill "$s3_PID" 2>/dev/null
wait "$s3_PID" 2>/dev/null

# 4: the peer killed mid-transfer
server s4 7104
( head -c 2147483648 /dev/zero | client 7104 --in /dev/stdin >"$T/c4.out" 2>&1; echo $? >"$T/c4.rc" ) &
CP=$!
sleep 1
kill -KILL "$s4_PID"
t0=$(date +%s%N)
wait $CP
ms=$((($(date +%s%N) - t0) / 1000000))
cat "$T/c4.out"
expect_eq "4: client exit" "$(cat "$T/c4.rc")" 3
grep -Eq '^error stream: (disconnected by the peer|transport retry counter exceeded|work request flushed)' "$T/c4.out" ||
	fail "4: the survivor did not report the end"
[ $ms -lt 5000 ] || fail "4: the survivor took $ms ms"
ok "4: peer killed: $(sed -n 's/^error stream: //p' "$T/c4.out") ($ms ms)"

# 5: a port down and up within the timeout, mid-stream
server s5 7105 --out >(sha256sum | cut -d' ' -f1 >"$T/out5.sha")
( head -c 1073741824 /dev/urandom | tee >(sha256sum | cut -d' ' -f1 >"$T/in5.sha") |
	client 7105 --in /dev/stdin >"$T/c5.out" 2>&1; echo $? >"$T/c5.rc" ) &
CP=$!
sleep 0.7
ctl port srv down >/dev/null
sleep 0.15
ctl port srv up >/dev/null
wait $CP
cat "$T/c5.out"
wait "$s5_PID" || { cat "$T/s5.out"; fail "5: server failed"; }
expect_eq "5: client exit" "$(cat "$T/c5.rc")" 0
for i in $(seq 1 100); do
	[ -s "$T/in5.sha" ] && [ -s "$T/out5.sha" ] && break
	sleep 0.1
done
expect_eq "5: sha256 of the stream" "$(cat "$T/out5.sha")" "$(cat "$T/in5.sha")"
to=$(rc_counter "$T/c5.out" timeouts)
[ "${to:-0}" -ge 1 ] || fail "5: no retransmission timeout: the port went down when nothing was in flight"
ok "5: port down 150 ms and up mid-stream: 1 GiB intact, $to timeouts, $(rc_counter "$T/c5.out" retransmits) retransmitted"

# 6: ibfabricd itself goes away mid-stream: the node's CM and what it
# knew are gone, so the survivor's connection ends (DISCONNECTED, made by
# the provider) and it says so, instead of waiting for ever
server s6 7106
( head -c 4294967296 /dev/zero | client 7106 --in /dev/stdin >"$T/c6.out" 2>&1; echo $? >"$T/c6.rc" ) &
CP=$!
sleep 1
stop_fabric
t0=$(date +%s%N)
wait $CP
ms=$((($(date +%s%N) - t0) / 1000000))
cat "$T/c6.out"
expect_eq "6: client exit" "$(cat "$T/c6.rc")" 3
grep -Eq '^error stream: (disconnected by the peer|work request flushed)' "$T/c6.out" ||
	fail "6: the client did not report the end of its connection"
[ $ms -lt 5000 ] || fail "6: the client took $ms ms to notice"
ok "6: ibfabricd stopped mid-stream: the client saw $(sed -n "s/^error stream: //p" "$T/c6.out") ($ms ms to exit)"
wait "$s6_PID" 2>/dev/null

