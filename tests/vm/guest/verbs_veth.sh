# Inside one guest: the verbs provider between two Soft-RoCE devices, rxe1
# and rxe2 on the two ends of a veth pair, through fabtest.  Unicast both
# ways (RoCE v2 over IPv4 and over IPv6), multicast (an IPv4-mapped and an
# IPv6 MGID, two receiving QPs), a batched burst whose every payload is
# checked, and port events.
. "$(dirname "$0")/../guest.bash"
. "$(dirname "$0")/verbs_lib.bash"
T=$(mktemp -d)
veth_pair

# the port as the provider sees it, and the GID choice
$FT -F verbs:rxe1 info h1 >$T/info1 2>&1 || { cat $T/info1; gfail "info rxe1"; }
cat $T/info1
expect $T/info1 '^link_layer ethernet$' "rxe1: link layer not Ethernet"
expect $T/info1 '^sgid_type roce-v2$' "rxe1: default GID not RoCE v2"
expect $T/info1 '^sgid ::ffff:10\.78\.0\.1$' "rxe1: default GID not the IPv4 one"
expect $T/info1 '^lid 0x0000$' "rxe1: a LID on RoCE"
expect $T/info1 '^mtu 1024$' "rxe1: active MTU not 1024"
want=$(gid_index rxe1 "RoCE v2" 4)
expect $T/info1 "^sgid_index $want\$" "rxe1: default GID index not $want (sysfs)"
gok "rxe1 default: link_layer ethernet sgid ::ffff:10.78.0.1 index $want roce-v2"
$FT -F verbs:rxe1:1:ipv6 info h1 >$T/info6 2>&1 || { cat $T/info6; gfail "info ipv6"; }
g6=$(sed -n 's/^sgid //p' $T/info6)
i6=$(sed -n 's/^sgid_index //p' $T/info6)
[ "$(cat /sys/class/infiniband/rxe1/ports/1/gid_attrs/types/$i6)" = "RoCE v2" ] ||
	gfail "rxe1:1:ipv6 picked index $i6, not RoCE v2"
case "$g6" in fe80:*) ;; *) gfail "rxe1:1:ipv6 picked $g6" ;; esac
$FT -F verbs:rxe1:1:$want info h1 | grep -q '^sgid ::ffff:10.78.0.1$' ||
	gfail "rxe1:1:$want is not the IPv4 GID"
gok "rxe1:1:ipv6 -> index $i6 $g6; rxe1:1:$want -> ::ffff:10.78.0.1"
g6b=$($FT -F verbs:rxe2:1:ipv6 info h2 | sed -n 's/^sgid //p')

# unicast FROM TO DGID SPEC-SUFFIX TAG: 5 datagrams "TAG-n", checked
unicast() {
	local from=$1 to=$2 dgid=$3 sfx=$4 tag=$5 sgid=$6 q
	rm -f $T/q
	$FT -F verbs:$to$sfx recv r --count 5 --timeout 20000 \
		--qpn-file $T/q >$T/$tag.out 2>&1 &
	wait_file $T/q
	q=$(qpn_of $T/q)
	$FT -F verbs:$from$sfx send s --dgid "$dgid" --dqpn "$q" \
		--data "$tag-%n" --count 5 >$T/$tag.send 2>&1 ||
		{ cat $T/$tag.send; gfail "$tag: send failed"; }
	wait $! || { cat $T/$tag.out; gfail "$tag: recv failed"; }
	expect $T/$tag.out '^received 5$' "$tag: not 5 received"
	for n in 0 1 2 3 4; do
		expect $T/$tag.out "^rx slid=0x0000 src_qp=0x[0-9a-f]{6} pkey_index=0 grh=1 sgid=$sgid dgid=$dgid len=[0-9]+ data=$tag-$n\$" \
			"$tag: datagram $n missing or wrong"
	done
	gok "$tag: $from -> $to qpn $q, 5 datagrams, sgid $sgid dgid $dgid"
}
unicast rxe1 rxe2 ::ffff:10.78.0.2 "" uc12 ::ffff:10.78.0.1
unicast rxe2 rxe1 ::ffff:10.78.0.1 "" uc21 ::ffff:10.78.0.2
unicast rxe1 rxe2 "$g6b" ":1:ipv6" uc6 "$g6"
# an address handle naming its own source GID (--gid-index) on a port
# whose default is the IPv4 one
rm -f $T/q
$FT -F verbs:rxe2:1:ipv6 recv r --count 1 --timeout 20000 --qpn-file $T/q \
	>$T/gi.out 2>&1 &
wait_file $T/q
$FT -F verbs:rxe1 send s --dgid "$g6b" --gid-index "$i6" --dqpn "$(qpn_of $T/q)" \
	--data gi-0 >$T/gi.send 2>&1 || { cat $T/gi.send; gfail "gid-index: send"; }
wait $! || { cat $T/gi.out; gfail "gid-index: recv failed"; }
expect $T/gi.out "^rx .* grh=1 sgid=$g6 dgid=$g6b len=4 data=gi-0\$" \
	"gid-index: datagram missing or from the wrong GID"
gok "gid-index: rxe1 (default IPv4) sent from index $i6 $g6"

# multicast MGID SUFFIX TAG: two QPs on rxe2 attached, rxe1 sends 3
mcast() {
	local mgid=$1 sfx=$2 tag=$3 sgid=$4 p1 p2
	rm -f $T/m1 $T/m2
	$FT -F verbs:rxe2$sfx recv r1 --count 3 --timeout 20000 \
		--mcast "$mgid@0xc001" --qpn-file $T/m1 >$T/$tag.1 2>&1 &
	p1=$!
	$FT -F verbs:rxe2$sfx recv r2 --count 3 --timeout 20000 \
		--mcast "$mgid@0xc001" --qpn-file $T/m2 >$T/$tag.2 2>&1 &
	p2=$!
	wait_file $T/m1
	wait_file $T/m2
	$FT -F verbs:rxe1$sfx send s --mgid "$mgid" --data "$tag-%n" \
		--count 3 >$T/$tag.send 2>&1 ||
		{ cat $T/$tag.send; gfail "$tag: send failed"; }
	wait $p1 || { cat $T/$tag.1; gfail "$tag: receiver 1 failed"; }
	wait $p2 || { cat $T/$tag.2; gfail "$tag: receiver 2 failed"; }
	for r in 1 2; do
		expect $T/$tag.$r '^received 3$' "$tag: receiver $r: not 3"
		for n in 0 1 2; do
			expect $T/$tag.$r "^rx .* grh=1 sgid=$sgid dgid=$mgid len=[0-9]+ data=$tag-$n\$" \
				"$tag: receiver $r: datagram $n missing or wrong"
		done
	done
	gok "$tag: rxe1 -> $mgid, 3 datagrams at each of 2 QPs"
}
mcast ::ffff:239.1.2.3 "" mc4 ::ffff:10.78.0.1
mcast ff0e::1:2:3 ":1:ipv6" mc6 "$g6"
# the group memberships went with the processes
ip maddr show dev vb | grep -q 239.1.2.3 && gfail "239.1.2.3 still joined on vb"

# batched: 3000 datagrams of 1000 bytes, 32 per fab_qp_send, every
# payload checked at the receiver
rm -f $T/q
$FT -F verbs:rxe2 recv r --count 3000 --depth 4096 --verify --timeout 60000 \
	--qpn-file $T/q >$T/batch.out 2>&1 &
wait_file $T/q
$FT -F verbs:rxe1 send s --dgid ::ffff:10.78.0.2 --dqpn "$(qpn_of $T/q)" \
	--pattern --size 1000 --count 3000 --batch 32 --linger 5000 >$T/batch.send 2>&1 ||
	{ cat $T/batch.send; gfail "batch: send failed"; }
wait $! || { cat $T/batch.out; gfail "batch: recv failed"; }
cat $T/batch.send $T/batch.out
expect $T/batch.send '^sent 3000$' "batch: not 3000 sent"
expect $T/batch.out '^verify ok 3000 bad 0 dup 0 missing 0 bytes 3000000$' \
	"batch: not every datagram arrived intact"
gok "batch: $(grep '^send calls' $T/batch.send), $(grep '^verify' $T/batch.out)"

# port events through fab_get_event: the netdev down, then up
$FT -F verbs:rxe1 recv r --timeout 9000 >$T/ev.out 2>&1 &
sleep 2
ip link set va down
sleep 2
ip link set va up
wait $!
cat $T/ev.out
expect $T/ev.out '^event PORT_ERR$' "no PORT_ERR event"
expect $T/ev.out '^event PORT_ACTIVE$' "no PORT_ACTIVE event"
# rxe reports the netdev coming up and its carrier: PORT_ACTIVE once or twice
seq=$(grep '^event' $T/ev.out | tr '\n' ' ')
echo "$seq" | grep -Eq '^event PORT_ERR (event PORT_ACTIVE )+$' ||
	gfail "events not PORT_ERR then PORT_ACTIVE: $seq"
gok "events: PORT_ERR then PORT_ACTIVE ($seq)"
