#!/bin/bash
# SA MADs in an ibfabricd capture decode in tshark (an independent
# dissector) as infiniband.mad.* and infiniband.mcmemberrecord.* with the
# values that were sent and answered: a join of the ffff broadcast group,
# its answer with OpenSM's parameters, a leave, and a PathRecord query.
. "$(dirname "$0")/lib.bash"
command -v tshark >/dev/null || skip "tshark not installed"

BCAST=ff12:401b:ffff::ffff:ffff
start_fabric --pcap "$T/sa.pcap"
"$BIN/tests/satest" -s "$SOCK" h1 "join $BCAST full" "leave $BCAST full" \
	"path fe80::1:2:3:4" >"$T/sa.out" || { cat "$T/sa.out"; fail "satest"; }
cat "$T/sa.out"
gid=$(sed -n 's/^self gid=\([^ ]*\) .*/\1/p' "$T/sa.out")
lid=$(sed -n 's/^self .* lid=\([^ ]*\) .*/\1/p' "$T/sa.out")
stop_fabric

tshark -r "$T/sa.pcap" -Y 'infiniband.mad.mgmtclass == 0x03' -T fields \
	-E separator=' ' -E occurrence=f \
	-e infiniband.lrh.slid -e infiniband.lrh.dlid -e infiniband.bth.destqp \
	-e infiniband.deth.srcqp -e infiniband.mad.method \
	-e infiniband.mad.status -e infiniband.mad.attributeid \
	-e infiniband.sa.componentmask -e infiniband.mcmemberrecord.mgid \
	-e infiniband.mcmemberrecord.portgid -e infiniband.mcmemberrecord.q_key \
	-e infiniband.mcmemberrecord.mlid -e infiniband.mcmemberrecord.mtu \
	-e infiniband.mcmemberrecord.p_key -e infiniband.mcmemberrecord.rate \
	-e infiniband.mcmemberrecord.sl -e infiniband.mcmemberrecord.joinstate \
	>"$T/fields" 2>"$T/tshark.err" || { cat "$T/tshark.err"; fail "tshark"; }
cat "$T/fields"
expect_eq "SA MADs in the capture" "$(wc -l <"$T/fields")" 6
# and nothing else: closing a MAD agent must not feed the switch anything
expect_eq "packets in the capture" "$(tshark -r "$T/sa.pcap" 2>/dev/null | wc -l)" 6
grep -qi "malformed\|expert" "$T/tshark.err" && { cat "$T/tshark.err"; fail "tshark warnings"; }

# tshark prints numbers in hex of varying width: compare numerically
check() {	# line-number what field-index want
	local v
	v=$(sed -n "${1}p" "$T/fields" | cut -d' ' -f"$3")
	[ -n "$v" ] && [ "$((v))" = "$(($4))" ] || fail "$2: got '$v', want $4"
	ok "$2 = $4"
}
checks() {	# line what field-index want (strings)
	expect_eq "$2" "$(sed -n "${1}p" "$T/fields" | cut -d' ' -f"$3")" "$4"
}
# 1: the join request, from our QP1 to the SM's (LID 1, QP1)
check 1 "join SLID" 1 "$lid"
check 1 "join DLID (SM)" 2 1
check 1 "join DestQP" 3 1
check 1 "join SrcQP" 4 1
check 1 "join method (Set)" 5 0x02
check 1 "join attribute (MCMemberRecord)" 7 0x0038
check 1 "join ComponentMask" 8 0x10003
checks 1 "join MGID" 9 "$BCAST"
checks 1 "join PortGID" 10 "$gid"
check 1 "join JoinState" 17 1
# 2: the answer, with the broadcast group's parameters
check 2 "answer SLID (SM)" 1 1
check 2 "answer DLID" 2 "$lid"
check 2 "answer method (GetResp)" 5 0x81
check 2 "answer status" 6 0
checks 2 "answer MGID" 9 "$BCAST"
check 2 "answer Q_Key" 11 0x0b1b
check 2 "answer MLID" 12 0xc000
check 2 "answer MTU (2048)" 13 4
check 2 "answer P_Key" 14 0xffff
check 2 "answer rate (10 Gb/s)" 15 3
check 2 "answer SL" 16 0
check 2 "answer JoinState" 17 1
# 3, 4: leave (Delete) and its DeleteResp
check 3 "leave method (Delete)" 5 0x15
check 4 "leave answer method" 5 0x95
check 4 "leave answer JoinState" 17 0
# 5, 6: PathRecord to a GID nobody has: NO_RECORDS
check 5 "path method (Get)" 5 0x01
check 5 "path attribute (PathRecord)" 7 0x0035
check 6 "path answer status (NO_RECORDS)" 6 0x0300
ok "sa_capture"
