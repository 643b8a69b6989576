#!/bin/bash
# Bad options and bad partitions files give one clear line naming the
# culprit and exit status 2; runtime failures exit 1; nothing hangs.
. "$(dirname "$0")/lib.bash"

# expect_err STATUS PATTERN cmd...: exit status, one line, text
expect_err() {
	local want=$1 pat=$2
	shift 2
	timeout 10 "$@" >"$T/out" 2>"$T/err" </dev/null
	local rc=$?
	[ "$rc" = "$want" ] || { cat "$T/err"; fail "$*: exit $rc, want $want"; }
	[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err"; fail "$*: not one line"; }
	grep -q -- "$pat" "$T/err" || { cat "$T/err"; fail "$*: message lacks '$pat'"; }
	ok "$* -> $(cat "$T/err")"
}

D="$BIN/ibfabricd"
expect_err 2 "\-\-loss '2'" "$D" -f -s "$SOCK" --loss 2
expect_err 2 "\-\-socket: an empty path" "$D" -f -s ""
expect_err 2 "\-\-dup 'abc'" "$D" -f -s "$SOCK" --dup abc
expect_err 2 "\-\-reorder '0.5x'" "$D" -f -s "$SOCK" --reorder 0.5x
expect_err 2 "\-\-seed '-1'" "$D" -f -s "$SOCK" --seed -1
expect_err 2 "unexpected argument 'extra'" "$D" -f -s "$SOCK" extra
expect_err 2 "missing.conf" "$D" -f -s "$SOCK" -P "$T/missing.conf"
expect_err 2 "\-\-mtu '3000'" "$D" -f -s "$SOCK" --mtu 3000

# ipoibd: its options, before it touches the fabric or the kernel
P="$BIN/ipoibd"
expect_err 2 "\-\-fabric and \-\-node are required" "$P" -f -n h1
expect_err 2 "\-\-pkey '0x8000'" "$P" -f -F "soft:$SOCK" -n h1 --pkey 0x8000
expect_err 2 "\-\-pkey 'zz'" "$P" -f -F "soft:$SOCK" -n h1 --pkey zz
expect_err 2 "\-\-address: bad CIDR '10.1.0.1'" "$P" -f -F "soft:$SOCK" -n h1 --address 10.1.0.1
expect_err 2 "\-\-address: bad CIDR '10.1.0.1/33'" "$P" -f -F "soft:$SOCK" -n h1 --address 10.1.0.1/33
# a node name or fabric spec that cannot work: usage errors (before: exit 1
# at the attach)
expect_err 2 "\-\-node 'bad name'" "$P" -f -F "soft:$SOCK" -n "bad name"
expect_err 2 "\-\-node ''" "$P" -f -F "soft:$SOCK" -n ""
for f in soft foo:bar "" verbs:; do
	expect_err 2 "\-\-fabric '$f'" "$P" -f -F "$f" -n h1
done
# addresses no interface can have (before: taken, the kernel refused some,
# and ipoibd said ready all the same)
for a in 0.0.0.0/0 224.0.0.1/4 255.255.255.255/32 ::1/128 127.0.0.5/8 ff02::1/64; do
	expect_err 2 "\-\-address $a: .*not an interface's address" "$P" -f -F "soft:$SOCK" -n h1 --address "$a"
done
expect_err 2 "\-\-address 10.1.0.1/0: a prefix of length 0" "$P" -f -F "soft:$SOCK" -n h1 --address 10.1.0.1/0
expect_err 2 "\-\-mtu 68: IPv6 (\-\-address fd00::1/64) needs 1280" "$P" -f -F "soft:$SOCK" -n h1 --mtu 68 --address fd00::1/64
expect_err 2 "\-\-ifname" "$P" -f -F "soft:$SOCK" -n h1 --ifname way-too-long-a-name
expect_err 2 "\-\-mtu '40'" "$P" -f -F "soft:$SOCK" -n h1 --mtu 40
expect_err 1 "soft:$T/none.sock" "$P" -f -F "soft:$T/none.sock" -n h1

# ibgwd: options and configurations
G="$BIN/ibgwd"
expect_err 2 "bad option '-x'" "$G" -x
expect_err 2 "unexpected argument 'extra'" "$G" -n extra
cat >"$T/gw-bad.conf" <<'CONF'
[gateway]
fabric = soft:/run/x.sock
[partition a]
pkey = 0x8001
mode = router
tap = t1
[partition b]
pkey = 0x0001
vlan = 5
bogus = 1
[partition c]
pkey = 8002
mtu = 70000
CONF
timeout 10 "$G" -n -c "$T/gw-bad.conf" >"$T/out" 2>"$T/err"
expect_eq "ibgwd -n on a bad file" $? 2
for want in "gw-bad.conf:10: \[partition b\] bogus: unknown key" \
	    "gw-bad.conf:12: \[partition c\] pkey:" \
	    "gw-bad.conf:13: \[partition c\] mtu:" \
	    "gw-bad.conf:6: \[partition a\] tap: only for mode = router\|gw-bad.conf:6: \[partition a\] tap: only for mode = transparent" \
	    "gw-bad.conf:3: \[partition a\] address: router mode needs" \
	    "gw-bad.conf:9: \[partition b\] vlan: needs trunk" \
	    "gw-bad.conf:7: \[partition b\] pkey: 0x0001 is partition a's already" \
	    "\[gateway\] node: a soft fabric needs the node's name" \
	    "gw-bad.conf:11: \[partition c\] transparent mode takes tap" \
	    "ibgwd: .*gw-bad.conf: 9 error(s)"; do
	grep -q -- "$want" "$T/err" || { cat "$T/err"; fail "ibgwd -n: no line '$want'"; }
done
expect_eq "ibgwd -n error lines" "$(wc -l <"$T/err")" 10
ok "ibgwd -n: every error of a bad file, file:line first"
printf '[gateway]\nfabric = soft:/x.sock\nnode = g\nmetrics = localhost\n[partition a]\npkey = 0x8001\ntap = t\n' >"$T/gw-metrics.conf"
timeout 10 "$G" -n -c "$T/gw-metrics.conf" >/dev/null 2>"$T/err"
expect_eq "ibgwd -n with a bad metrics address" $? 2
grep -q "gw-metrics.conf:4: \[gateway\] metrics: 'localhost': ADDRESS:PORT wanted" "$T/err" || fail "metrics error: $(cat "$T/err")"
head -c 3000 /dev/urandom >"$T/gw-binary.conf"
timeout 10 "$G" -n -c "$T/gw-binary.conf" >/dev/null 2>&1
expect_eq "ibgwd -n on a binary file" $? 2
# a device that never ends (before: read for ever, no output) and a NUL
timeout 10 "$G" -n -c /dev/zero >/dev/null 2>"$T/err"
expect_eq "ibgwd -n on /dev/zero" $? 2
grep -q "/dev/zero: not a regular file" "$T/err" || fail "/dev/zero: $(cat "$T/err")"
printf '[gateway]\nfabric = soft:/x.sock\nnode = g\0w\n[partition a]\npkey = 0x8001\ntap = t\n' >"$T/gw-nul.conf"
timeout 10 "$G" -n -c "$T/gw-nul.conf" >/dev/null 2>"$T/err"
expect_eq "ibgwd -n with a NUL byte" $? 2
grep -q "gw-nul.conf:3: a NUL byte in the line" "$T/err" || fail "NUL byte: $(cat "$T/err")"
# node names as the soft fabric takes them (before: "configuration OK",
# then ibgwd -f failed at the attach)
for node in "bad name" "$(printf 'n%.0s' $(seq 64))" "g/w"; do
	printf '[gateway]\nfabric = soft:/x.sock\nnode = %s\n[partition a]\npkey = 0x8001\ntap = t\n' "$node" >"$T/gw-node.conf"
	timeout 10 "$G" -n -c "$T/gw-node.conf" >/dev/null 2>"$T/err"
	expect_eq "ibgwd -n, node = '$node'" $? 2
	grep -q "gw-node.conf:3: \[gateway\] node: " "$T/err" || fail "node '$node': $(cat "$T/err")"
	expect_eq "ibgwd -n, node = '$node': error lines" "$(wc -l <"$T/err")" 2
done
printf '[gateway]\nfabric = soft:/x.sock\nnode = %s\n[partition a]\npkey = 0x8001\ntap = t\n' "$(printf 'n%.0s' $(seq 63))" >"$T/gw-node.conf"
timeout 10 "$G" -n -c "$T/gw-node.conf" >/dev/null 2>"$T/err" || fail "a 63-character node name refused: $(cat "$T/err")"
printf '[gateway]\nfabric = soft:/x.sock\nnode = g\n[partition a]\npkey = 0x8001\nmode = router\naddress = 224.0.0.1/24\n' >"$T/gw-mc.conf"
timeout 10 "$G" -n -c "$T/gw-mc.conf" >/dev/null 2>"$T/err"
expect_eq "ibgwd -n with a multicast address" $? 2
expect_eq "ibgwd -n with a multicast address: error lines" "$(wc -l <"$T/err")" 2
grep -q "gw-mc.conf:7: \[partition a\] address: '224.0.0.1/24': a multicast address" "$T/err" || fail "multicast address: $(cat "$T/err")"
# names and addresses that cannot work together (before: "configuration
# OK"): a tap that is its own bridge, one address on two router
# partitions, exports to addresses no IB host has
cat >"$T/gw-clash.conf" <<'CONF'
[gateway]
fabric = soft:/x.sock
node = g
[partition a]
pkey = 0x8001
tap = t1
bridge = t1
sdp = on
sdp_exports = 80=0.0.0.0:80
[partition b]
pkey = 0x8002
mode = router
address = 10.9.0.1/24
rds = on
rds_exports = 5000=224.0.0.1:5000
[partition c]
pkey = 0x8003
mode = router
address = 10.9.0.1/16
CONF
timeout 10 "$G" -n -c "$T/gw-clash.conf" >/dev/null 2>"$T/err"
expect_eq "ibgwd -n with clashing names and addresses" $? 2
for want in "\[partition a\] bridge: 't1' is the tap's name too" \
	    "\[partition a\] sdp_exports: '80=0.0.0.0:80': IBADDR: not an IB host's address" \
	    "\[partition b\] rds_exports: '5000=224.0.0.1:5000': IBADDR: not an IB host's address" \
	    "\[partition c\] address: 10.9.0.1 is partition b's already"; do
	grep -q -- "$want" "$T/err" || { cat "$T/err"; fail "ibgwd -n: no '$want'"; }
done
timeout 10 "$G" -n -c "$T/none.conf" >/dev/null 2>"$T/err"
expect_eq "ibgwd -n on a missing file" $? 2
grep -q "none.conf: No such file" "$T/err" || fail "missing file: $(cat "$T/err")"
# a good file checks without root: as nobody, from a readable place
pub=$(mktemp -d /tmp/ibgw-pub.XXXXXX)
chmod 755 "$pub"
cp "$TOP/conf/ibgw.conf" "$pub/"
chmod 644 "$pub/ibgw.conf"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$G" -n -c "$pub/ibgw.conf" 2>&1)
rc=$?
rm -rf "$pub"
[ "$rc" = 0 ] && [ "$out" = "configuration OK" ] || fail "ibgwd -n as nobody: exit $rc: $out"
ok "ibgwd -n as nobody on conf/ibgw.conf: configuration OK"
printf '[gateway]\nfabric = soft:%s\nnode = gw\n[partition a]\npkey = 0x8001\ntap = t1\n' "$T/none.sock" >"$T/gw-nofab.conf"
timeout 10 "$G" -f -c "$T/gw-nofab.conf" >/dev/null 2>"$T/err"
expect_eq "ibgwd without a fabric" $? 1
grep -q "none.sock" "$T/err" || fail "ibgwd without a fabric: $(cat "$T/err")"

printf 'Default=0x7fff : ALL=full ;\nstorage=0x8001 : h1=full\n' >"$T/noend.conf"
expect_err 2 "noend.conf:2" "$D" -f -s "$SOCK" -P "$T/noend.conf"
printf 'Default=0x7fff : ALL=full ;\nbad=0x8001, mtu=9 : h1 ;\n' >"$T/mtu.conf"
expect_err 2 "mtu.conf:2" "$D" -f -s "$SOCK" -P "$T/mtu.conf"
printf 'Default=0x7fff : ALL=full ;\nzero=0x0000 : h1 ;\n' >"$T/zero.conf"
expect_err 2 "zero.conf:2" "$D" -f -s "$SOCK" -P "$T/zero.conf"
# a file with many errors reports each on a line of its own, file:line first
head -c 3000 /dev/urandom >"$T/binary.conf"
timeout 10 "$D" -f -s "$SOCK" -P "$T/binary.conf" >/dev/null 2>"$T/err"
expect_eq "binary partitions file exit" $? 2
grep -qv "binary.conf:[0-9]*: " "$T/err" && { cat "$T/err"; fail "an error line without file:line"; }
ok "binary file: $(wc -l <"$T/err") error line(s), each with file:line"
expect_err 1 "pcap" "$D" -f -s "$SOCK" --pcap /nonexistent/dir/x.pcap

# ibgwctl: usage errors (2), no daemon (1)
expect_err 2 "no command" "$BIN/ibgwctl"
expect_err 2 "unknown command 'frob'" "$BIN/ibgwctl" frob
expect_err 2 "bad option '-x'" "$BIN/ibgwctl" -x show stats
expect_err 1 "connect to ibgwd at $T/none.sock" "$BIN/ibgwctl" -s "$T/none.sock" show stats
# usage errors are the program's, before any daemon (before: asked, and
# exit 1 for the daemon's refusal)
expect_err 2 "usage: show " "$BIN/ibgwctl" -s "$T/none.sock" show
expect_err 2 "usage: show " "$BIN/ibgwctl" -s "$T/none.sock" show bogus
expect_err 2 "usage: partition " "$BIN/ibgwctl" -s "$T/none.sock" partition
expect_err 2 "usage: partition " "$BIN/ibgwctl" -s "$T/none.sock" partition del
expect_err 2 "usage: reload" "$BIN/ibgwctl" -s "$T/none.sock" reload extra

# tools against a subnet that is not running
expect_err 1 "connect to ibfabricd" "$BIN/ibfabricctl" -s "$T/none.sock" stats
expect_err 2 "unknown command 'frob'" "$BIN/ibfabricctl" -s "$SOCK" frob
# arguments the daemon would split again (before: 'port "h1 down" ""'
# took h1's port down)
expect_err 2 "bad argument 'h1 down'" "$BIN/ibfabricctl" -s "$SOCK" port "h1 down" ""
expect_err 2 "bad argument ''" "$BIN/ibfabricctl" -s "$SOCK" port h1 ""

# a second ibfabricd on a live socket refuses to steal it
start_fabric
expect_err 1 "not a GID: 'notagid'" "$BIN/ibfabricctl" -s "$SOCK" groups notagid
expect_err 1 "another ibfabricd" "$D" -f -s "$SOCK"
fabric_alive
# a node name the subnet refuses
expect_err 1 "invalid node name" "$BIN/tests/fabtest" -s "$SOCK" info 'bad name!'
# a soft provider's RC ACK delay that is not a number of microseconds
for v in abc -1 1000001 ''; do
	expect_err 1 "IBGW_SOFT_ACK_DELAY_US '$v'" env IBGW_SOFT_ACK_DELAY_US="$v" \
		"$BIN/tests/fabtest" -s "$SOCK" info h1
done
# replaying a file that is not a capture
head -c 100 /dev/urandom >"$T/junk.pcap"
expect_err 2 "junk.pcap" "$BIN/ibfabricctl" -s "$SOCK" replay "$T/junk.pcap" h1
# damaged pcapng (the seed is editcap's rewrite of a one-packet capture):
# cut in its headers it does not open (2), cut in its packet it stops (1)
NG="$TOP/tests/fuzz/seeds/pcap/forged.pcapng"
head -c 40 "$NG" >"$T/head.pcapng"
expect_err 2 "head.pcapng: truncated pcapng" "$BIN/ibfabricctl" -s "$SOCK" replay "$T/head.pcapng" h1
head -c $(( $(stat -c %s "$NG") - 10 )) "$NG" >"$T/cut.pcapng"
expect_err 1 "cut.pcapng: record 1: truncated pcapng" "$BIN/ibfabricctl" -s "$SOCK" replay "$T/cut.pcapng" h1
stop_fabric

# a --lid-file that could never be written: refused at start (before:
# taken, the first node's save failed and no LID was kept)
expect_err1() {	# PATTERN CMD...: exit 1, the pattern among its lines
	local pat=$1
	shift
	timeout 10 "$@" >"$T/out" 2>"$T/err" </dev/null
	[ $? = 1 ] || { cat "$T/err"; fail "$*: not exit 1"; }
	grep -q -- "$pat" "$T/err" || { cat "$T/err"; fail "$*: no '$pat'"; }
	ok "$* -> $(head -n1 "$T/err")"
}
expect_err1 "lid-file $T: not a regular file" "$D" -f -s "$SOCK" --lid-file "$T"
expect_err1 "its directory $T/nodir" "$D" -f -s "$SOCK" --lid-file "$T/nodir/lids"

# a damaged --lid-file: every bad line ignored and named, the good one
# kept, the subnet up and handing out LIDs around the kept one
{
	echo "not a guid2lid line"
	echo "0x1 0x0000 0x0000"		# LID 0
	echo "0x2 0xc000 0xc000"		# a multicast LID
	echo "0x3 0x0005 0x0005"		# kept
	echo "0x3 0x0006 0x0006"		# the same GUID again
	echo "0x4 0x0005 0x0005"		# the same LID again
	echo "0x0 0x0007 0x0007"		# GUID 0
	head -c 600 /dev/zero | tr '\0' 'x'; echo
	head -c 200 /dev/urandom | tr -d '\n'; echo
} >"$T/bad.lids"
start_fabric --lid-file "$T/bad.lids"
n=$(grep -c "bad.lids:[0-9]*: ignored" "$T/fabric.log")
[ "$n" -ge 8 ] || { cat "$T/fabric.log"; fail "lid file: $n lines ignored, want 8 or more"; }
grep -q "bad.lids: 1 LIDs kept" "$T/fabric.log" ||
	{ cat "$T/fabric.log"; fail "lid file: the good line not kept"; }
lid=$("$BIN/tests/fabtest" -s "$SOCK" info h1 | sed -n 's/^lid //p')
case "$lid" in
0x0000|0x0005|"") fail "lid file: h1 got LID '$lid'" ;;
esac
fabric_alive
stop_fabric
ok "damaged --lid-file: $n lines ignored and named, 1 kept, h1 got LID $lid"

"$D" --help | grep -q "usage: ibfabricd" || fail "--help"
"$D" --version | grep -q "^ibfabricd [0-9]" || fail "--version"
ok "bad_input"
