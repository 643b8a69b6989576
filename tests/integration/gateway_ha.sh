#!/bin/bash
# Two router-mode gateways for one partition with a virtual IP each side,
# held by keepalived (VRRP, unmodified): the IB hosts' default route and
# the LAN's route to the partition go through the virtual addresses, and
# survive the master's loss.
#
#   h1 (P_Key 0x8003, 10.43.0.1) == gw1: ib8003 10.43.0.252, e0 10.44.0.252
#                                == gw2: ib8003 10.43.0.253, e0 10.44.0.253
#   VIPs 10.43.0.254 (ib8003) and 10.44.0.254 (e0), gw1 priority 150,
#   gw2 100;  e0 of both in the lan's bridge, lan 10.44.0.1
#
#  a) VRRP over IPoIB: the advertisements cross the partition (IPv4
#     multicast 224.0.0.18: the router interface follows keepalived's
#     IGMP join), so gw2 stays backup: the VIPs on gw1 alone; h1 reaches
#     lan through 10.43.0.254, its neighbour entry gw1's 20-byte address
#  b) gw1's keepalived stopped (maintenance): gw2 takes both VIPs; its
#     ibgwd answers for 10.43.0.254 and announces it (a gratuitous ARP
#     from the address keepalived added: ibgwd follows the interface's
#     addresses), so h1's entry moves to gw2 within a few seconds; a TCP
#     connection from h1 to lan made before it goes on
#  c) gw1's keepalived back: gw1 master again (preemption), h1's entry
#     back to gw1
#  d) gw1's ibgwd killed (SIGKILL, a crash: its interface gone): gw2 takes
#     over within VRRP's master-down interval, h1 reaches lan through it
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
for t in keepalived ping python3; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done

cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p3=0x8003, ipoib : h1=full, gw1=full, gw2=full;
CONF
start_fabric -P "$T/partitions.conf"
ns_add lan
ns lan ip link add br0 type bridge
ns lan ip link set br0 up
ns lan ip addr add 10.44.0.1/24 dev br0
ns lan ip route add 10.43.0.0/24 via 10.44.0.254

# gateway N: its namespace, LAN port and ibgwd; keepalived's file
gateway() {
	local g=$1 pr=$2
	ns_add gw$g
	ns_veth gw$g e0 lan p$g
	ns lan ip link set p$g master br0
	ns gw$g ip addr add "10.44.0.25$((g + 1))/24" dev e0
	ns gw$g sysctl -qw net.ipv4.ip_forward=1
	cat >"$T/gw$g.conf" <<CONF
[gateway]
fabric = soft:$SOCK
node = gw$g
control = $T/gw$g.sock

[partition p3]
pkey = 0x8003
mode = router
ifname = ib8003
address = 10.43.0.25$((g + 1))/24
CONF
	: >"$T/gw$g.log"
	ns_bg GW${g}_PID gw$g "$BIN/ibgwd" -f -c "$T/gw$g.conf" >>"$T/gw$g.log" 2>&1
	cat >"$T/ka$g.conf" <<CONF
global_defs {
  router_id gw$g
}
vrrp_sync_group G {
  group {
    IB
    LAN
  }
}
vrrp_instance IB {
  state BACKUP
  interface ib8003
  virtual_router_id 51
  priority $pr
  advert_int 1
  virtual_ipaddress {
    10.43.0.254/24 dev ib8003
  }
}
vrrp_instance LAN {
  state BACKUP
  interface e0
  virtual_router_id 52
  priority $pr
  advert_int 1
  virtual_ipaddress {
    10.44.0.254/24 dev e0
  }
}
CONF
}

keepalived_start() {	# N
	ns_bg KA${1}_PID gw$1 keepalived -n -l -D -f "$T/ka$1.conf" \
		-p "$T/ka$1.pid" -r "$T/vrrp$1.pid" >>"$T/ka$1.log" 2>&1
}

gw_ready() {	# N
	local i
	for i in $(seq 1 100); do
		grep -q "ready: 1 partition" "$T/gw$1.log" && return 0
		sleep 0.1
	done
	cat "$T/gw$1.log"
	fail "ibgwd gw$1 not ready"
}

has_vip() {	# N: both VIPs on gw N
	ns gw$1 ip -4 -o addr show dev ib8003 2>/dev/null | grep -q " 10.43.0.254/" &&
		ns gw$1 ip -4 -o addr show dev e0 | grep -q " 10.44.0.254/"
}

# the 20-byte address of gw N's partition (its ready line), without the
# flags byte
gw_hw() {
	sed -n 's/.*partition p3: router, ib8003 up, .* address ..:\(.*\)$/\1/p' \
		"$T/gw$1.log" | tail -n1
}

# h1's entry for the IB-side VIP, without the flags byte
vip_neigh() {
	kill -USR1 "$h1_PID"
	sleep 0.3
	grep "neighbors 10.43.0.254 " "$T/h1.log" | tail -n1 |
		sed -n 's/.*neighbors 10.43.0.254 ..:\([0-9a-f:]*\) .*/\1/p'
}

via() {	# N: h1's entry for the VIP is gw N's address
	[ "$(vip_neigh)" = "$(gw_hw "$1")" ]
}

reach() { ns h1 ping -c 1 -W 1 10.44.0.1 >/dev/null 2>&1; }

gateway 1 150
gateway 2 100
sdp_host h1 -p 0x8003 --address 10.43.0.1/24 --no-sdp --no-rds
gw_ready 1
gw_ready 2
ns h1 ip route add default via 10.43.0.254
keepalived_start 1
keepalived_start 2

# --- a) ---------------------------------------------------------------------------
m1() { has_vip 1; }
eventually m1 || { tail -n 20 "$T/ka1.log"; fail "a) gw1 never took the VIPs"; }
sleep 4		# three advertisement intervals: a gw2 that hears none takes over
has_vip 2 && { tail -n 20 "$T/ka2.log"; fail "a) gw2 took the VIPs too: no VRRP across IPoIB"; }
eventually reach || fail "a) h1 cannot reach lan through 10.43.0.254"
via 1 || fail "a) h1's entry for 10.43.0.254 is $(vip_neigh), not gw1's $(gw_hw 1)"
ok "a) VRRP across the partition: gw1 master, gw2 backup; h1 reaches lan through gw1"

# a TCP connection through the VIPs, kept across the failover
cat >"$T/echo.py" <<'PY'
import socket, sys, threading
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("10.44.0.1", 7600))
ls.listen()
print("listening", flush=True)
def serve(c):
    while True:
        b = c.recv(4096)
        if not b:
            return
        c.sendall(b)
while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
cat >"$T/client.py" <<'PY'
# one connection; a line echoed each time the fifo says "go", 20 s to answer
import socket, sys
c = socket.create_connection(("10.44.0.1", 7600), timeout=20)
n = 0
for cmd in open(sys.argv[1]):
    n += 1
    c.sendall(b"line %d\n" % n)
    got = b""
    while not got.endswith(b"\n"):
        b = c.recv(100)
        if not b:
            print("closed", flush=True)
            sys.exit(1)
        got += b
    print("echo %s" % got.decode().strip(), flush=True)
PY
ns_bg ECHO lan python3 "$T/echo.py" >"$T/echo.log" 2>&1
lst() { grep -q listening "$T/echo.log"; }
eventually lst || fail "the lan echo server"
mkfifo "$T/go"
ns_bg CLI h1 python3 "$T/client.py" "$T/go" >"$T/client.log" 2>&1
exec 7>"$T/go"
echo go >&7
e1() { grep -q "echo line 1" "$T/client.log"; }
eventually e1 || fail "a) no echo over TCP: $(cat "$T/client.log")"

# --- b) ---------------------------------------------------------------------------
kill "$KA1_PID"
wait "$KA1_PID" 2>/dev/null
m2() { has_vip 2; }
eventually m2 || { tail -n 20 "$T/ka2.log"; fail "b) gw2 did not take the VIPs"; }
has_vip 1 && fail "b) gw1 kept a VIP after its keepalived stopped"
v2() { via 2; }
eventually v2 || fail "b) h1's entry for 10.43.0.254 stayed $(vip_neigh), not gw2's $(gw_hw 2)"
eventually reach || fail "b) h1 cannot reach lan through gw2"
echo go >&7
e2() { grep -q "echo line 2" "$T/client.log"; }
eventually e2 || fail "b) the TCP connection did not survive: $(cat "$T/client.log")"
ok "b) gw1's keepalived stopped: gw2 holds the VIPs, h1's entry moved to it, the TCP connection goes on"

# --- c) ---------------------------------------------------------------------------
keepalived_start 1
eventually m1 || fail "c) gw1 did not take the VIPs back"
v1() { via 1; }
eventually v1 || fail "c) h1's entry for 10.43.0.254 stayed $(vip_neigh), not gw1's"
echo go >&7
e3() { grep -q "echo line 3" "$T/client.log"; }
eventually e3 || fail "c) the TCP connection did not survive: $(cat "$T/client.log")"
ok "c) gw1's keepalived back: gw1 master again, h1's entry back to it"

# --- d) ---------------------------------------------------------------------------
kill -KILL "$GW1_PID"
wait "$GW1_PID" 2>/dev/null
t0=$(date +%s)
for i in $(seq 1 100); do
	has_vip 2 && via 2 && reach && break
	sleep 0.2
done
has_vip 2 || fail "d) gw2 did not take over when gw1's ibgwd died"
via 2 || fail "d) h1's entry for 10.43.0.254 stayed $(vip_neigh)"
reach || fail "d) h1 cannot reach lan through gw2"
echo go >&7
e4() { grep -q "echo line 4" "$T/client.log"; }
eventually e4 || fail "d) the TCP connection did not survive: $(cat "$T/client.log")"
exec 7>&-
ok "d) gw1's ibgwd killed: gw2 took over in $(($(date +%s) - t0)) s, the TCP connection goes on"
