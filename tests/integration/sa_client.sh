#!/bin/bash
# The SA client's transactions: with 40% of packets lost in the subnet
# every request still gets its answer through retries (same TID, so a late
# answer to an earlier try also counts); with the port down nothing comes
# back and each request ends in a clear timeout after the configured tries,
# without hanging; bad requests are refused before anything is sent.
. "$(dirname "$0")/lib.bash"

BC=ff12:401b:ffff::ffff:ffff
SATEST=$BIN/tests/satest

# --- loss: answers arrive after retries ------------------------------------
start_fabric --loss 0.4 --seed 11
ops=()
for i in $(seq 1 12); do ops+=("join ff15:1234::$i full create qkey=0x1234 pkey=0xffff"); done
for i in $(seq 1 12); do ops+=("path fe80::1:$i"); done
"$SATEST" -s "$SOCK" --timeout 150 --retries 12 --show-tries h1 "${ops[@]}" \
	>"$T/loss.out" 2>&1 || { cat "$T/loss.out"; fail "satest under loss"; }
cat "$T/loss.out"
expect_eq "joins answered OK" "$(grep -c '^join .*: OK status=0x0000 tries=' "$T/loss.out")" 12
expect_eq "paths answered NO_RECORDS" "$(grep -c '^path .*: NO_RECORDS (0x0300) status=0x0300 tries=' "$T/loss.out")" 12
retried=$(grep -c 'tries=[2-9]' "$T/loss.out")
[ "$retried" -gt 0 ] || fail "no request needed a retry at 40% loss"
ok "$retried of 24 requests needed retries"
[ "$(counter drop.fault_loss)" -gt 0 ] || fail "no loss injected"
# duplicates of an answer (a retry answered twice) are ignored, not
# mistaken for the answer to the next request: every join got its own MGID
for i in $(seq 1 12); do
	grep -q "^join ff15:1234::$i .* mgid=ff15:1234::$i " "$T/loss.out" || fail "join $i got another answer"
done
stop_fabric

# --- no SA reachable: bounded timeout, clear error -------------------------
start_fabric
"$SATEST" -s "$SOCK" --timeout 200 --retries 2 --show-tries h1 "notices 3000" \
	"join $BC full" "path fe80::1" >"$T/down.out" 2>&1 &
sat=$!
PIDS+=("$sat")
h1_attached() { ctl nodes | grep -q "^h1 "; }
eventually h1_attached || fail "h1 did not attach"
ctl port h1 down >/dev/null
t0=$(date +%s%N)
wait "$sat"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
cat "$T/down.out"
expect_eq "satest exit status when the SA is unreachable" "$rc" 1
expect_eq "timed-out requests" "$(grep -c 'no answer from the SA after 3 tries' "$T/down.out")" 2
# 3 s of notices + 2 requests x 3 tries x 200 ms, with slack; not minutes
[ "$ms" -lt 10000 ] || fail "timeouts took $ms ms"
ok "timeouts bounded ($ms ms)"
[ "$(counter drop.port_down)" -ge 6 ] || fail "the tries did not reach the switch"
fabric_alive
stop_fabric

# --- refused before sending -------------------------------------------------
start_fabric
"$SATEST" -s "$SOCK" h1 "join not-a-gid full" >"$T/bad.out" 2>&1
expect_eq "bad MGID: usage error" "$?" 2
grep -q "MGID expected" "$T/bad.out" || { cat "$T/bad.out"; fail "unclear error"; }
"$SATEST" -s "$SOCK" h1 "join $BC sometimes" >"$T/bad.out" 2>&1
expect_eq "bad JoinState: usage error" "$?" 2
"$SATEST" -s "$SOCK" --timeout 0 h1 "join $BC full" >"$T/bad.out" 2>&1
expect_eq "bad --timeout: usage error" "$?" 2
expect_eq "nothing reached the SA" "$(counter sa_requests)" 0
stop_fabric
ok "sa_client"
