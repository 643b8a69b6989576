#!/bin/bash
# Partition enforcement from an OpenSM-syntax partitions.conf: full and
# limited members, node names as members, a node outside the partition can
# neither send nor receive in it, two limited members cannot talk, and the
# Q_Key rules of the receiving QP (mismatch, controlled keys).
. "$(dirname "$0")/lib.bash"

cat >"$T/partitions.conf" <<'CONF'
# default partition, everyone a full member
Default=0x7fff, ipoib : ALL=full ;
# storage: full members h1 h2, limited h3 h4; h5 is outside
storage=0x8001, ipoib, mtu=4 :
	h1=full, h2=full,
	h3=limited, h4 ;
CONF
start_fabric -P "$T/partitions.conf"

for h in h1 h3 h5; do fabtest info $h >"$T/info-$h"; done
grep -q '^pkeys 0xffff 0x8001$' "$T/info-h1" || { cat "$T/info-h1"; fail "h1 table"; }
grep -q '^pkeys 0xffff 0x0001$' "$T/info-h3" || { cat "$T/info-h3"; fail "h3 table (limited)"; }
grep -q '^pkeys 0xffff$' "$T/info-h5" || { cat "$T/info-h5"; fail "h5 table"; }
ok "P_Key tables"

# full <-> full and full <-> limited work
start_recv r1 h2 --pkey 0x8001 --qkey 0x1111 --count 1
fabtest send h1 --pkey 0x8001 --dlid $r1_LID --dqpn $r1_QPN --qkey 0x1111 --data full-full >/dev/null
wait_recv r1
expect_eq "full to full" "$(received r1)" 1
start_recv r2 h3 --pkey 0x0001 --qkey 0x1111 --count 1
fabtest send h1 --pkey 0x8001 --dlid $r2_LID --dqpn $r2_QPN --qkey 0x1111 --data full-limited >/dev/null
wait_recv r2
expect_eq "full to limited" "$(received r2)" 1

# limited <-> limited is dropped at the receiving QP
start_recv r3 h4 --pkey 0x0001 --qkey 0x1111 --timeout 60000
before=$(counter drop.pkey_mismatch)
fabtest send h3 --pkey 0x0001 --dlid $r3_LID --dqpn $r3_QPN --qkey 0x1111 --data ll >/dev/null
wait_counter drop.pkey_mismatch $((before + 1))
stop_recv r3
expect_eq "limited to limited" "$(rx_count r3)" 0

# h5 is outside: it cannot make a QP in the partition, so cannot receive
fabtest recv h5 --pkey 0x8001 --timeout 100 >"$T/h5.out" 2>&1 && fail "h5 made a QP in 0x8001"
grep -q "not in h5's table" "$T/h5.out" || { cat "$T/h5.out"; fail "h5: unclear error"; }
# a default-partition QP of h5 does not receive 0x8001 traffic either
start_recv r5 h5 --qkey 0x1111 --timeout 60000
before=$(counter drop.pkey_mismatch)
fabtest send h1 --pkey 0x8001 --dlid $r5_LID --dqpn $r5_QPN --qkey 0x1111 --data nope >/dev/null
wait_counter drop.pkey_mismatch $((before + 1))
stop_recv r5
expect_eq "h5 receives from 0x8001" "$(rx_count r5)" 0
# and a forged 0x8001 packet from h5 (replayed as h5) is refused at the switch
before=$(counter drop.send_pkey)
python3 "$TOP/tests/integration/mkpcap.py" forge "$T/forged.pcap" \
	--slid "$(sed -n 's/^lid //p' "$T/info-h5")" --dlid "$(sed -n 's/^lid //p' "$T/info-h1")" --pkey 0x8001
ctl replay "$T/forged.pcap" h5 >/dev/null || fail "replay"
expect_eq "send_pkey counted" "$(counter drop.send_pkey)" $((before + 1))

# Q_Key: a wrong key is dropped and counted
start_recv r6 h2 --qkey 0x2222 --timeout 60000
before=$(counter drop.qkey_mismatch)
fabtest send h1 --dlid $r6_LID --dqpn $r6_QPN --qkey 0x3333 --data badkey >/dev/null
wait_counter drop.qkey_mismatch $((before + 1))
stop_recv r6
expect_eq "wrong Q_Key delivered" "$(rx_count r6)" 0

# a controlled Q_Key (high bit) from an ordinary QP is refused: the verbs
# rule substitutes the QP's own key, so forge it in a capture instead
before=$(counter drop.qkey_privileged)
python3 "$TOP/tests/integration/mkpcap.py" forge "$T/ctl.pcap" \
	--slid "$(sed -n 's/^lid //p' "$T/info-h1")" --dlid "$(sed -n 's/^lid //p' "$T/info-h1")" \
	--pkey 0xffff --qkey 0x80010000
ctl replay "$T/ctl.pcap" h1 >/dev/null || fail "replay"
expect_eq "qkey_privileged counted" "$(counter drop.qkey_privileged)" $((before + 1))
# nor can an ordinary process create a QP with a controlled Q_Key
fabtest recv h1 --qkey 0x80010000 --timeout 100 >"$T/cq.out" 2>&1 && fail "controlled Q_Key QP created"
grep -q "controlled" "$T/cq.out" || { cat "$T/cq.out"; fail "unclear error"; }

fabric_alive
stop_fabric
ok "partitions"
