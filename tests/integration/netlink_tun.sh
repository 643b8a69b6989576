#!/bin/bash
# netlink/nl_link through tests/nltest, in a network namespace of its own:
# a TUN device with an MTU, IPv4 and IPv6 (nodad) addresses, set up, as
# `ip -j` sees it; packets reaching its fd; the device going away with its
# process (exit, SIGKILL) or when deleted; route lookups on and off link;
# change notifications; link and address changes; clear one-line errors
# with exit status 2 (bad arguments) or 1 (refused by the kernel).  Traffic
# goes only to addresses inside the namespace, which is deleted at the end
# whatever happens.
. "$(dirname "$0")/lib.bash"

NLTEST=$BIN/tests/nltest
[ -x "$NLTEST" ] || skip "no $NLTEST (build it first)"
[ "$(id -u)" -eq 0 ] || skip "needs root"
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
command -v ip >/dev/null || skip "no ip (iproute2)"
command -v python3 >/dev/null || skip "no python3"

NS=ibgw-nl-$$-$RANDOM
ns_cleanup() {
	cleanup			# lib.bash: ends PIDS, removes $T
	ip netns del "$NS" 2>/dev/null
	return 0
}
trap ns_cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
ip netns add "$NS" || skip "cannot create a network namespace"
echo "namespace $NS"

nsx() {
	ip netns exec "$NS" "$@"
}

nlt() {
	ip netns exec "$NS" "$NLTEST" "$@"
}

# start_tun NAME [nltest tun options...]: a holder process in the
# background (output $T/NAME.out, pid in NAME_PID), waited for until ready
start_tun() {
	local name=$1 pid i
	shift
	# not through nlt(): $! must be nltest itself (ip netns exec execs it)
	ip netns exec "$NS" "$NLTEST" tun "$name" "$@" >"$T/$name.out" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	eval "${name}_PID=$pid"
	for i in $(seq 1 200); do
		grep -q '^ready$' "$T/$name.out" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	cat "$T/$name.out"
	fail "tun $name did not become ready"
}

# stop_tun NAME SIGNAL WANT_STATUS: signal the holder, check its exit status
stop_tun() {
	local pid rc
	eval "pid=\$${1}_PID"
	kill "-$2" "$pid"
	wait "$pid" 2>/dev/null	# without bash's "Killed" notice
	rc=$?
	[ "$rc" = "$3" ] || { cat "$T/$1.out"; fail "tun $1 holder exited $rc after SIG$2, want $3"; }
}

link_exists() {
	nsx ip link show dev "$1" >/dev/null 2>&1
}

link_gone() {
	! link_exists "$1"
}

# jlink NAME EXPR: EXPR (python) on d, the `ip -j -d link` object of NAME
jlink() {
	nsx ip -j -d link show dev "$1" |
		python3 -c "import json, sys; d = json.load(sys.stdin)[0]; print($2)"
}

# addrs NAME: "FAMILY ADDR/LEN [flags]" lines from `ip -j addr`, in one
# write (so that a grep -q reading them cannot break the pipe early)
addrs() {
	nsx ip -j addr show dev "$1" | python3 -c '
import json, sys
out = []
for l in json.load(sys.stdin):
    for a in l.get("addr_info", []):
        fl = [k for k in ("nodad", "tentative", "dadfailed") if a.get(k)]
        out.append(" ".join([a["family"], "%s/%d" % (a["local"], a["prefixlen"])] + fl))
sys.stdout.write("".join(x + "\n" for x in out))'
}

# field LINE KEY: the value of KEY=VALUE in an nltest output line
field() {
	sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"
}

# expect_err STATUS PATTERN NLTEST-ARGS...: exit status, one line, text
expect_err() {
	local want=$1 pat=$2 rc
	shift 2
	timeout 10 ip netns exec "$NS" "$NLTEST" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	[ "$rc" = "$want" ] || { cat "$T/out" "$T/err"; fail "nltest $*: exit $rc, want $want"; }
	[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err"; fail "nltest $*: not one line"; }
	grep -q -- "$pat" "$T/err" || { cat "$T/err"; fail "nltest $*: message lacks '$pat'"; }
	ok "nltest $* -> exit $rc: $(cat "$T/err")"
}

# route_get ARGS...: one "route ..." line, or fail
route_get() {
	local out
	out=$(nlt route-get "$@") || fail "route-get $*: exit $?"
	grep -q '^route ' <<<"$out" || fail "route-get $*: '$out'"
	echo "$out"
}

# --- a TUN with an MTU, addresses, up ---------------------------------------
start_tun ib0 --mtu 2044 --addr 10.1.0.1/24 --addr fd00::1/64 --up --hold 120
out=$(cat "$T/ib0.out")
tunline=$(grep '^tun ' <<<"$out")
IFX=$(field "$tunline" ifindex)
expect_eq "nltest name" "$(field "$tunline" name)" ib0
expect_eq "tun fd non-blocking" "$(field "$tunline" nonblock)" 1
expect_eq "nltest ifindex = ip's" "$IFX" "$(jlink ib0 'd["ifindex"]')"
grep -qx 'addr fd00::1/64 nodad' <<<"$out" || fail "nltest did not add fd00::1/64 nodad"
expect_eq "nltest link line mtu" "$(field "$(grep '^link ' <<<"$out")" mtu)" 2044

expect_eq "ip mtu" "$(jlink ib0 'd["mtu"]')" 2044
expect_eq "ip flags UP LOWER_UP" "$(jlink ib0 '"UP" in d["flags"] and "LOWER_UP" in d["flags"]')" True
expect_eq "ip operstate" "$(jlink ib0 'd["operstate"] in ("UNKNOWN", "UP")')" True
expect_eq "ip link kind" "$(jlink ib0 'd["linkinfo"]["info_kind"]')" tun
expect_eq "ip tun type, pi, persist" \
	"$(jlink ib0 '(d["linkinfo"]["info_data"]["type"], d["linkinfo"]["info_data"]["pi"], d["linkinfo"]["info_data"]["persist"])')" \
	"('tun', False, False)"
addrs ib0 >"$T/addrs"
grep -qx 'inet 10.1.0.1/24' "$T/addrs" || { cat "$T/addrs"; fail "no 10.1.0.1/24"; }
ok "ip addr: inet 10.1.0.1/24"
grep -qx 'inet6 fd00::1/64 nodad' "$T/addrs" || { cat "$T/addrs"; fail "no fd00::1/64 nodad (or tentative)"; }
ok "ip addr: inet6 fd00::1/64 nodad, not tentative"

line=$(nlt link ib0) || fail "nltest link ib0"
expect_eq "nltest link ifindex" "$(field "$line" ifindex)" "$IFX"
expect_eq "nltest link up" "$(field "$line" up)" 1
line=$(nlt link --index "$IFX") || fail "nltest link --index $IFX"
expect_eq "nltest link --index name" "$(field "$line" name)" ib0

# packets sent to the link come out of the fd (no ARP, no DAD on fd00::1)
nsx ping -c 1 -W 1 10.1.0.2 >/dev/null 2>&1
nsx ping -6 -c 1 -W 1 fd00::2 >/dev/null 2>&1
eventually grep -q '^rx queue=0 len=84 ipv4 src=10.1.0.1 dst=10.1.0.2 proto=1$' "$T/ib0.out" ||
	{ cat "$T/ib0.out"; fail "IPv4 echo request not read from the tun fd"; }
ok "IPv4 packet read from the tun fd"
eventually grep -q '^rx queue=0 len=104 ipv6 src=fd00::1 dst=fd00::2 next=58$' "$T/ib0.out" ||
	{ cat "$T/ib0.out"; fail "IPv6 echo request not read from the tun fd"; }
ok "IPv6 packet from fd00::1 (usable at once: nodad) read from the tun fd"

# --- route lookups ------------------------------------------------------------
r=$(route_get 10.1.0.5)
expect_eq "on-link 10.1.0.5 gateway" "$(field "$r" gateway)" none
expect_eq "on-link 10.1.0.5 oif" "$(field "$r" oif)" "$IFX"
expect_eq "on-link 10.1.0.5 dev" "$(field "$r" dev)" ib0
expect_eq "on-link 10.1.0.5 prefsrc" "$(field "$r" prefsrc)" 10.1.0.1
r=$(route_get fd00::5)
expect_eq "on-link fd00::5 gateway" "$(field "$r" gateway)" none
expect_eq "on-link fd00::5 oif" "$(field "$r" oif)" "$IFX"
expect_eq "on-link fd00::5 prefsrc" "$(field "$r" prefsrc)" fd00::1
r=$(route_get 10.1.0.1)
expect_eq "own address 10.1.0.1 type" "$(field "$r" type)" local

# a change notification for a new route, then the route through a gateway
ip netns exec "$NS" "$NLTEST" monitor --watch route,addr --until route \
	--timeout 10 >"$T/mon.out" 2>&1 &
MON_PID=$!
PIDS+=("$MON_PID")
eventually grep -q '^ready$' "$T/mon.out" || { cat "$T/mon.out"; fail "monitor not ready"; }
nsx ip route add 10.2.0.0/16 via 10.1.0.254 || fail "ip route add 10.2.0.0/16"
wait "$MON_PID" || { cat "$T/mon.out"; fail "monitor saw no route change"; }
grep -q '^changed route$' "$T/mon.out" || { cat "$T/mon.out"; fail "no 'changed route'"; }
ok "monitor: 'changed route' after ip route add"

r=$(route_get 10.2.0.5)
expect_eq "off-link 10.2.0.5 gateway" "$(field "$r" gateway)" 10.1.0.254
expect_eq "off-link 10.2.0.5 oif" "$(field "$r" oif)" "$IFX"
expect_eq "off-link 10.2.0.5 prefsrc" "$(field "$r" prefsrc)" 10.1.0.1
r=$(route_get 10.2.0.5 --oif ib0)
expect_eq "off-link 10.2.0.5 --oif ib0 gateway" "$(field "$r" gateway)" 10.1.0.254
nsx ip -6 route add fd01::/64 via fd00::fe || fail "ip -6 route add fd01::/64"
r=$(route_get fd01::5)
expect_eq "off-link fd01::5 gateway" "$(field "$r" gateway)" fd00::fe
expect_eq "off-link fd01::5 oif" "$(field "$r" oif)" "$IFX"
expect_eq "off-link fd01::5 prefsrc" "$(field "$r" prefsrc)" fd00::1
expect_err 1 "route get 10.200.0.1: Network is unreachable" route-get 10.200.0.1

# address changes are notified too
ip netns exec "$NS" "$NLTEST" monitor --watch addr --until addr \
	--timeout 10 >"$T/mon2.out" 2>&1 &
MON_PID=$!
PIDS+=("$MON_PID")
eventually grep -q '^ready$' "$T/mon2.out" || { cat "$T/mon2.out"; fail "monitor not ready"; }
nlt addr-add ib0 10.9.0.1/24 >/dev/null || fail "nltest addr-add ib0 10.9.0.1/24"
wait "$MON_PID" || { cat "$T/mon2.out"; fail "monitor saw no address change"; }
ok "monitor: 'changed addr' after nltest addr-add"

# --- link and address changes through the API ---------------------------------
addrs ib0 | grep -qx 'inet 10.9.0.1/24' || fail "10.9.0.1/24 not on ib0"
ok "addr-add 10.9.0.1/24 seen by ip"
nlt addr-del ib0 10.9.0.1/24 >/dev/null || fail "nltest addr-del ib0 10.9.0.1/24"
addrs ib0 | grep -q '10.9.0.1/24' && fail "10.9.0.1/24 still on ib0"
ok "addr-del 10.9.0.1/24 seen by ip"
nlt addr-add ib0 fd02::1/64 >/dev/null || fail "nltest addr-add ib0 fd02::1/64"
addrs ib0 | grep -qx 'inet6 fd02::1/64 nodad' || fail "fd02::1/64 nodad not on ib0"
ok "addr-add fd02::1/64 seen by ip, nodad"
nlt addr-del ib0 fd02::1/64 >/dev/null || fail "nltest addr-del ib0 fd02::1/64"
expect_err 1 "add address 10.1.0.1/24 on ifindex $IFX: File exists" addr-add ib0 10.1.0.1/24
expect_err 1 "delete address 10.9.0.1/24 on ifindex $IFX: Cannot assign requested address" addr-del ib0 10.9.0.1/24
expect_err 1 "set mtu 70000 on ifindex $IFX: Invalid argument" mtu ib0 70000
nlt mtu ib0 1500 >/dev/null || fail "nltest mtu ib0 1500"
expect_eq "ip mtu after nltest mtu" "$(jlink ib0 'd["mtu"]')" 1500
nlt down ib0 >/dev/null || fail "nltest down ib0"
expect_eq "ip flags after down: UP" "$(jlink ib0 '"UP" in d["flags"]')" False
line=$(nlt up ib0) || fail "nltest up ib0"
expect_eq "nltest up ib0" "$(field "$line" up)" 1
expect_eq "ip flags after up: UP" "$(jlink ib0 '"UP" in d["flags"]')" True

# --- the device goes with its process -----------------------------------------
stop_tun ib0 TERM 0
grep -q '^closed$' "$T/ib0.out" || fail "holder did not close"
eventually link_gone ib0 || fail "ib0 still there after its process exited"
ok "ib0 gone after its process exited"
expect_err 1 "route get 10.2.0.5: Network is unreachable" route-get 10.2.0.5

nlt tun ib1 --addr 10.4.0.1/24 --up >"$T/ib1.out" 2>&1 || { cat "$T/ib1.out"; fail "tun ib1 without --hold"; }
grep -q '^ready$' "$T/ib1.out" || fail "tun ib1: no ready"
link_gone ib1 || fail "ib1 still there after nltest returned"
ok "ib1 (no --hold) gone when nltest returned"

start_tun ib2 --up --hold 120
stop_tun ib2 KILL 137
eventually link_gone ib2 || fail "ib2 still there after SIGKILL"
ok "ib2 gone after its process was SIGKILLed"

start_tun ib3 --up --hold 120
line=$(nlt link-del ib3) || fail "nltest link-del ib3"
grep -q '^deleted name=ib3 ' <<<"$line" || fail "link-del: '$line'"
link_gone ib3 || fail "ib3 still there after link-del"
wait "$ib3_PID" || { cat "$T/ib3.out"; fail "ib3 holder exited $?"; }
grep -q '^gone queue=0' "$T/ib3.out" || { cat "$T/ib3.out"; fail "holder did not see ib3 go"; }
ok "link-del ib3: gone, its holder noticed and exited 0"

start_tun mq0 --multi-queue --queues 2 --vnet-hdr --up --hold 120
expect_eq "mq0 queues" "$(field "$(grep '^tun ' "$T/mq0.out")" queues)" 2
expect_eq "mq0 vnet_hdr size" "$(field "$(grep '^tun ' "$T/mq0.out")" vnet_hdr)" 10
expect_eq "ip mq0 multi_queue, numqueues, vnet_hdr" \
	"$(jlink mq0 '(d["linkinfo"]["info_data"]["multi_queue"], d["linkinfo"]["info_data"]["numqueues"], d["linkinfo"]["info_data"]["vnet_hdr"])')" \
	"(True, 2, True)"
stop_tun mq0 TERM 0
eventually link_gone mq0 || fail "mq0 still there after its process exited"
ok "mq0 gone after its process exited"

# --- errors --------------------------------------------------------------------
expect_err 2 "bad interface name 'a/b'" tun a/b
expect_err 2 "bad interface name 'a b'" tun 'a b'
expect_err 2 "bad interface name 'abcdefghijklmnop': longer than 15" tun abcdefghijklmnop
expect_err 2 "bad CIDR '10.1.0.1/33'" tun ib9 --addr 10.1.0.1/33
expect_err 2 "bad CIDR 'fd00::1/129'" tun ib9 --addr fd00::1/129
expect_err 2 "bad CIDR '10.1.0.1': missing /prefix length" tun ib9 --addr 10.1.0.1
expect_err 2 "bad CIDR '10.1.0.300/24'" tun ib9 --addr 10.1.0.300/24
expect_err 2 "bad CIDR '10.1.0.1/2x'" addr-add lo 10.1.0.1/2x
expect_err 2 "mtu 'big': not a number" tun ib9 --mtu big
expect_err 2 "bad address '10.1.2'" route-get 10.1.2
expect_err 2 "unknown command 'frob'" frob
expect_err 1 "create tun 'lo' (TUNSETIFF): Device or resource busy" tun lo
expect_err 1 "get link 'nosuch0': No such device" link nosuch0
expect_err 1 "get link 'nosuch0': No such device" mtu nosuch0 1500
expect_err 1 "set mtu 20 on ifindex" tun ib9 --mtu 20
link_gone ib9 || fail "ib9 left behind by a failed nltest tun"
left=$(nsx ip -j link show | python3 -c 'import json, sys; print(" ".join(l["ifname"] for l in json.load(sys.stdin)))')
expect_eq "links left in the namespace" "$left" lo

# --- teardown: the namespace goes (the EXIT trap does the same on failure) ----
ns_cleanup
ip netns list | grep -qw "$NS" && fail "namespace $NS still there"
ok "namespace $NS deleted"
ok "netlink_tun"
