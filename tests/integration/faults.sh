#!/bin/bash
# Fault injection: with --loss 0.05 losses are counted and nothing else
# breaks; the same seed gives the same losses; --dup delivers extra copies
# and --reorder changes the order, each counted.
. "$(dirname "$0")/lib.bash"

N=1000
run_loss() {	# seed -> prints received count and fault_loss
	start_fabric --loss 0.05 --seed "$1"
	start_recv r h2 --count $N --timeout 30000 --idle 1500
	fabtest send h1 --dlid $r_LID --dqpn $r_QPN --count $N --interval-us 200 --data l-%n >/dev/null || fail "send"
	wait_recv r
	local got lost
	got=$(received r)
	lost=$(counter drop.fault_loss)
	[ "$((got + lost))" = $N ] || ctl stats >&2
	fabric_alive
	stop_fabric
	echo "$got $lost"
}

read -r got lost < <(run_loss 7)
echo "seed 7: received $got, fault_loss $lost"
[ "$lost" -gt 10 ] && [ "$lost" -lt 120 ] || fail "loss $lost of $N is not about 5%"
expect_eq "received + lost" $((got + lost)) $N
read -r got2 lost2 < <(run_loss 7)
expect_eq "same seed, same losses" "$lost2" "$lost"
read -r got3 lost3 < <(run_loss 8)
[ "$lost3" != "$lost" ] || echo "note: seeds 7 and 8 lost the same number"
expect_eq "seed 8 received + lost" $((got3 + lost3)) $N

# duplication
start_fabric --dup 0.1 --seed 3
start_recv d h2 --count 0 --timeout 30000 --idle 1500
fabtest send h1 --dlid $d_LID --dqpn $d_QPN --count 300 --interval-us 200 --data d-%n >/dev/null
wait_recv d
dups=$(counter fault_dup)
[ "$dups" -gt 5 ] || fail "no duplicates injected ($dups)"
expect_eq "received with duplicates" "$(received d)" $((300 + dups))
stop_fabric

# reordering: some message arrives after its successor, none is lost
start_fabric --reorder 0.1 --seed 5
start_recv o h2 --count 300 --timeout 30000
fabtest send h1 --dlid $o_LID --dqpn $o_QPN --count 300 --interval-us 200 --data o-%n >/dev/null
wait_recv o
expect_eq "received with reordering" "$(received o)" 300
held=$(counter fault_reorder)
[ "$held" -gt 5 ] || fail "nothing reordered ($held)"
inversions=$(sed -n 's/.*data=o-//p' "$T/o.out" | awk 'NR > 1 && $1 < prev {n++} {prev = $1} END {print n + 0}')
[ "$inversions" -gt 0 ] || fail "arrival order unchanged"
expect_eq "distinct messages" "$(sed -n 's/.*data=o-//p' "$T/o.out" | sort -un | wc -l)" 300
stop_fabric
ok "faults"
