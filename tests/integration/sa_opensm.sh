#!/bin/bash
# Differential test of subnet administration: one scenario of SA requests
# goes through our SA client (satest) twice, once against OpenSM on ibsim
# (umad provider under libumad2sim) and once against ibfabricd, and every
# answer must agree in status and in the fields that carry meaning.  LIDs
# and GIDs differ between the two fabrics by construction, so each is
# replaced by the name of the node that owns it before comparing; MLIDs are
# compared as they are (both SMs allocate them from 0xC000 in order).
# ibfabricd runs with --mtu 2048, the MTU of ibsim's links.
# One difference is by design and kept out of the scenario: ibfabricd
# drops a port's memberships when the node's last process exits (as the
# kernel leaves for a client that goes away); OpenSM on ibsim never learns
# that a umad client exited, so its groups outlive the process.
#   IBGW_BIN=build bash tests/integration/sa_opensm.sh
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/ibsim.bash"

ibsim_require
SATEST=$BIN/tests/satest
[ -x "$SATEST" ] || fail "no $SATEST"

BC=ff12:401b:ffff::ffff:ffff		# Default's IPoIB broadcast group
BC1=ff12:401b:8001::ffff:ffff		# p1's
IP4=ff12:401b:ffff::1:2			# an IPv4 group of the Default partition
ORD=ff15:1234::1			# an ordinary (non-IPoIB) group

# the scenario; @h2@/@h3@ stand for the nodes' GIDs
H1_OPS=(
	"join $BC full"
	"join $BC1 full"
	"get $BC1"
	"join $IP4 full create qkey=0x1234 pkey=0xffff"
	"join $IP4 full create qkey=0xb1b pkey=0xffff"
	"join $ORD full create qkey=0x1234 pkey=0xffff"
	"join $ORD non"
	"join ff15:1234::2 full"
	"join ff15:1234::3 non create qkey=0x1234 pkey=0xffff"
	"join ff15:1234::4 full create qkey=0x1234 pkey=0x8001 mtu=2:4 rate=2:3"
	"join ff15:1234::5 full create qkey=0x1234 pkey=0xffff mtu=0:5"
	"leave $ORD full"
	"leave $ORD full"
	"join $BC sonon"
	"join $BC sofull"
	"leave $BC non"
	"leave $BC sonon"
	"get ff15:9999::1"
	"path @h2@"
	"path @h2@ pkey=0xffff"
	"path @h2@ pkey=0x8001"
	"path @h3@ pkey=0x8001"
	"path @h3@"
	"path fe80::dead:beef"
)
H3_OPS=(
	"join $BC1 full"
	"join $BC non"
	"join $BC sofull"
	"get $BC"
	"path @h1@ pkey=0x8001"
	"path @h2@"
)

# run_ops OUT NODE GIDMAP RUNNER...: satest with the scenario of NODE
run_ops() {
	local out=$1 node=$2 map=$3 ops=() op g n
	shift 3
	if [ "$node" = h1 ]; then ops=("${H1_OPS[@]}"); else ops=("${H3_OPS[@]}"); fi
	for i in "${!ops[@]}"; do
		op=${ops[$i]}
		while read -r n g; do op=${op//@$n@/$g}; done <"$map"
		ops[$i]=$op
	done
	"$@" --timeout 2000 --retries 2 "$node" "${ops[@]}" >"$out" 2>&1 ||
		{ cat "$out"; fail "satest as $node"; }
}

# normalize RAW MAP LIDMAP: GIDs and LIDs to node names, ops to their index
normalize() {
	local raw=$1 map=$2 lids=$3 n g l
	local sedf=$T/norm.sed
	: >"$sedf"
	while read -r n g; do echo "s/=$g\\b/=$n/g; s/ $g\\b/ @$n@/g" >>"$sedf"; done <"$map"
	while read -r n l; do echo "s/lid=$l\\b/lid=$n/g" >>"$sedf"; done <"$lids"
	grep -v '^self ' "$raw" | sed -f "$sedf"
}

# --- OpenSM on ibsim --------------------------------------------------------
# ibsim's port GUIDs follow the order of tests/integration/ibsim/fabric.net
cat >"$T/osm-partitions.conf" <<CONF
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : 0x0000000000100003=full, 0x0000000000100005=full;
CONF
cat >"$T/osm.gids" <<MAP
h1 fe80::10:3
h2 fe80::10:5
h3 fe80::10:7
MAP
ibsim_start "$IBSIM_NET" "$T/osm-partitions.conf"
ok "OpenSM up in ${OPENSM_START_MS} ms"
DEV=$(ibsim_run h1 ibstat -l) || fail "ibstat -l"
DEV=${DEV%%$'\n'*}
SPEC=umad:$DEV:1
run_ops "$T/osm-h1.raw" h1 "$T/osm.gids" ibsim_run h1 "$SATEST" -F "$SPEC"
run_ops "$T/osm-h3.raw" h3 "$T/osm.gids" ibsim_run h3 "$SATEST" -F "$SPEC"
# each node's LID as the SM gave it: from the "self" lines and a path
: >"$T/osm.lids"
for n in h1 h3; do
	sed -n "s/^self gid=[^ ]* lid=\([^ ]*\) .*/$n \1/p" "$T/osm-$n.raw" >>"$T/osm.lids"
done
sed -n 's/^path fe80::10:5: OK .* dlid=\(0x[0-9a-f]*\) .*/h2 \1/p' "$T/osm-h1.raw" | head -1 >>"$T/osm.lids"
ibsim_stop

# --- ibfabricd ----------------------------------------------------------------
cat >"$T/partitions.conf" <<CONF
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : h1=full, h2=full;
CONF
start_fabric -P "$T/partitions.conf" --mtu 2048
: >"$T/ours.gids"
: >"$T/ours.lids"
for n in h1 h2 h3; do	# the nodes exist once attached, as ports do on ibsim
	"$BIN/tests/fabtest" -s "$SOCK" info $n >"$T/info-$n" || fail "fabtest info $n"
	echo "$n $(sed -n 's/^gid //p' "$T/info-$n")" >>"$T/ours.gids"
	echo "$n $(sed -n 's/^lid //p' "$T/info-$n")" >>"$T/ours.lids"
done
run_ops "$T/ours-h1.raw" h1 "$T/ours.gids" "$SATEST" -s "$SOCK"
run_ops "$T/ours-h3.raw" h3 "$T/ours.gids" "$SATEST" -s "$SOCK"
fabric_alive
stop_fabric

# --- compare -------------------------------------------------------------------
fails=0
for n in h1 h3; do
	normalize "$T/osm-$n.raw" "$T/osm.gids" "$T/osm.lids" >"$T/osm-$n.txt"
	normalize "$T/ours-$n.raw" "$T/ours.gids" "$T/ours.lids" >"$T/ours-$n.txt"
	echo "--- $n: OpenSM"
	cat "$T/osm-$n.txt"
	if ! diff -u "$T/osm-$n.txt" "$T/ours-$n.txt" >"$T/diff-$n"; then
		echo "--- $n: differences (- OpenSM, + ibfabricd)"
		cat "$T/diff-$n"
		fails=$((fails + 1))
	fi
done
[ "$fails" = 0 ] || fail "ibfabricd's SA answers differ from OpenSM's"
# the scenario really exercised both outcomes
for s in "OK status" "REQ_INVALID (0x0200)" "NO_RECORDS (0x0300)" "INSUFFICIENT_COMPS (0x0600)"; do
	grep -qF "$s" "$T/osm-h1.txt" "$T/osm-h3.txt" || fail "no answer '$s' in the scenario"
done
ok "sa_opensm: $(cat "$T"/osm-h1.txt "$T"/osm-h3.txt | wc -l) answers agree"
