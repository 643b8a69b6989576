#!/bin/bash
# A hostile RDS peer (rdspeer --evil, the raw fabric API) against an RDS
# endpoint (rdspeer, ulp/rds/rds_ep.h) on the software subnet:
#  - REQs with no private data, a short one, all zeros, version 3.0, an
#    RDS address the victim lacks, a loopback source address (127.0.0.1:
#    its datagrams would look local): each rejected, reason 28 with the
#    host-endian int 1 (never more), counted in rejected;
#  - on a connection: a bad header checksum, a SEND under 48 and one over
#    4144 bytes, a SEND shorter than its h_len, mismatched fragments, an
#    h_len over 1 MiB: each drops the connection, counted by reason;
#  - the first fragment of a message and then nothing (a stopped queue
#    pair): the victim (--stall-ms 2000) waits, then drops the
#    connection, counted in stalls;
#  - an h_ack past anything the victim sent: clamped and counted, the
#    connection kept; a retransmitted duplicate: not delivered twice;
#  - meanwhile a good peer streams 150,000 messages to the victim, and
#    another good peer 1,000 after it all: every one in order, intact;
#    the victim never crashes (it prints its counters at the end).
. "$(dirname "$0")/lib.bash"
RP=$BIN/tests/rdspeer
[ -x "$RP" ] || fail "no $RP (make all)"
start_fabric
gid_of() { fabtest info "$1" | sed -n 's/^gid //p'; }
GV=$(gid_of victim)
GG=$(gid_of good)
GE=$(gid_of evil)
[ -n "$GV" ] && [ -n "$GG" ] && [ -n "$GE" ] || fail "no GIDs"
S=soft:$SOCK
V=10.1.0.2
"$RP" --fabric "$S" --node victim --addr $V --route 10.1.0.3="$GG" \
	--route 10.1.0.9="$GE" --bind 4000 --log "$T/victim.log" \
	--expect 10.1.0.3:100:200:150000 --expect 10.1.0.3:101:200:1000 \
	--stall-ms 2000 \
	--linger 300 --timeout 120 --stats >"$T/victim.out" 2>&1 &
VP=$!
PIDS+=("$VP")
sleep 0.2
"$RP" --fabric "$S" --node good --addr 10.1.0.3 --route $V="$GV" \
	--send $V:200:100:150000:16-1500 --timeout 100 >"$T/good1.out" 2>&1 &
GP=$!
PIDS+=("$GP")

evil() {	# MODE
	"$RP" --fabric "$S" --node evil --addr 10.1.0.9 --route $V="$GV" \
		--dst $V --evil "$1" --timeout 10 >"$T/evil-$1.out" 2>&1
	local rc=$?
	cat "$T/evil-$1.out"
	kill -0 $VP 2>/dev/null || { cat "$T/victim.out"; fail "$1: the victim died"; }
	[ $rc -eq 0 ] || fail "$1: exit $rc"
}
for m in req-none req-short req-zero req-v30 req-addr req-lo bad-csum short long \
	 bad-len frag-mismatch too-big ack-beyond dup stall; do
	evil $m
done
wait $GP
rc=$?
[ $rc -eq 0 ] || { cat "$T/good1.out"; fail "the good peer's stream: exit $rc"; }
"$RP" --fabric "$S" --node good --addr 10.1.0.3 --route $V="$GV" \
	--send $V:200:101:1000:16-9000 --timeout 60 >"$T/good2.out" 2>&1 ||
	{ cat "$T/good2.out"; fail "the good peer after the evil ones"; }
kill -TERM $VP
wait $VP
rc=$?
cat "$T/victim.out" | grep -v ' 0$'
[ $rc -eq 0 ] || fail "victim exit $rc"
grep -q '^rdspeer: ok' "$T/victim.out" || fail "the victim's expects"
cnt() { sed -n "s/^$1 //p" "$T/victim.out"; }
expect_eq rejected "$(cnt rejected)" 6
expect_eq drop.bad_csum "$(cnt drop.bad_csum)" 1
expect_eq drop.short "$(cnt drop.short)" 1
expect_eq drop.bad_len "$(cnt drop.bad_len)" 1
expect_eq drop.frag_mismatch "$(cnt drop.frag_mismatch)" 1
expect_eq drop.too_big "$(cnt drop.too_big)" 1
expect_eq stalls "$(cnt stalls)" 1
[ "$(cnt qp_errors)" -ge 1 ] || fail "the long SEND: no qp_errors"
ok "the long SEND failed the victim's receive: qp_errors $(cnt qp_errors)"
[ "$(cnt acks_beyond)" -ge 1 ] || fail "acks_beyond not counted"
ok "acks_beyond $(cnt acks_beyond)"
[ "$(cnt dups)" -ge 1 ] || fail "the duplicate not counted"
ok "dups $(cnt dups)"
# nothing from the evil peer delivered twice (its source port is the mode's)
d=$(awk '$1 == "10.1.0.9" {print $2, $4}' "$T/victim.log" | sort | uniq -d | wc -l)
expect_eq "messages from the evil peer delivered twice" "$d" 0
n=$(awk '$1 == "10.1.0.9" && $2 == 22 {print $4}' "$T/victim.log" | tr '\n' ' ')
expect_eq "dup mode's messages delivered" "$n" "0 1 "
ok "victim survived 15 hostile modes and delivered 151,000 good messages (the stream beside them: $(sed -n "s/^rdspeer: sent //p" "$T/good1.out"))"
