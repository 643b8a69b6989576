#!/bin/bash
# IPoIB hosts on the software subnet: ipoibd in network namespaces, real
# programs on top.
# - a child interface: a second ipoibd on h3's port in another P_Key
# - h1, h2, h5 in the default partition (10.1.0.0/24, fd01::/64), h3, h4 in
#   P_Key 0x8001 (10.2.0.0/24): ping over IPv4 and IPv6 within a partition,
#   nothing across partitions, and a host outside 0x8001 gets an interface
#   in it that stays without carrier;
# - h2's ipoibd restarted (a new QPN): h1 reaches it again within 5 s over
#   IPv4, its link-local and its global IPv6 address, and h1's neighbour
#   entries hold the new address; in the capture, h2's unsolicited
#   Neighbour Advertisements (to all nodes, Override, its 20-byte address),
#   fd01::2's only after its duplicate address detection;
# - iperf3 TCP for 5 s with a non-zero rate, and a CLIENT_REREGISTER in the
#   middle of another run does not end the transfer;
# - UDP multicast reaches only the host that joined the group;
# - an MTU set above the link's (ip link set mtu 4000 on a 2044 link) is
#   put back and logged, as the Linux driver refuses it: a 3000-byte ping
#   with DF then fails at the sender (message too long); 1500 stays;
# - the capture decodes in tshark as IPoIB ARP (hardware type 32, length
#   20, QPN and GID in the sender's address) sent to the broadcast MGID;
# - a port taken down and up again (ibfabricctl port) drops and restores
#   the carrier and traffic: the interface shows NO-CARRIER meanwhile (as
#   it does before the first join), IPv4 and IPv6 work again after; an MTU
#   the operator set stays;
# - a clean stop leaves the groups and removes the interface; a killed
#   ipoibd's memberships are dropped by ibfabricd.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
for t in ping iperf3 python3 tshark; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done

cat >"$T/partitions.conf" <<CONF
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : h3=full, h4=full;
CONF
start_fabric -P "$T/partitions.conf" --pcap "$T/cap.pcap"

# host NAME PKEY ADDR...: namespace NAME with ipoibd attached as node NAME
host() {
	ns_add "$1"
	ipoibd_start "$@"
}

# ipoibd_start NAME PKEY ADDR...: ipoibd in namespace NAME, until ready
ipoibd_start() {
	local name=$1 pkey=$2 args=() a
	shift 2
	for a in "$@"; do args+=(--address "$a"); done
	ns_bg "${name}_PID" "$name" "$BIN/ipoibd" -f -F "soft:$SOCK" -n "$name" \
		-p "$pkey" -i ib0 "${args[@]}" >"$T/$name.log" 2>&1
	local i
	for i in $(seq 1 100); do
		grep -q "ready:" "$T/$name.log" && return 0
		sleep 0.05
	done
	cat "$T/$name.log"
	fail "ipoibd $name did not become ready"
}
host h1 0xffff 10.1.0.1/24 fd01::1/64
host h2 0xffff 10.1.0.2/24 fd01::2/64
host h5 0xffff 10.1.0.5/24 10.2.0.9/24
host h3 0x8001 10.2.0.3/24
host h4 0x8001 10.2.0.4/24

# the interface as the host sees it: up, MTU of the 2048-byte group - 4
mtu=$(ns h1 cat /sys/class/net/ib0/mtu)
expect_eq "ib0 MTU" "$mtu" 2044
grep -q "ready: ib0 up, MTU 2044, address 00:00:00:" "$T/h1.log" || fail "ready line"

# --- ping, IPv4 and IPv6, both ways ---------------------------------------
ns h1 ping -c 2 -W 3 10.1.0.2 >"$T/p1" || { cat "$T/p1" "$T/h1.log"; fail "h1 -> h2 IPv4"; }
ns h2 ping -c 2 -W 3 10.1.0.1 >/dev/null || fail "h2 -> h1 IPv4"
ns h1 ping -c 2 -W 3 fd01::2 >/dev/null || fail "h1 -> h2 IPv6"
ns h2 ping -c 2 -W 3 fd01::1 >/dev/null || fail "h2 -> h1 IPv6"
ns h3 ping -c 2 -W 3 10.2.0.4 >/dev/null || fail "h3 -> h4 in 0x8001"
ok "ping within partitions, IPv4 and IPv6"

# --- h2's ipoibd restarted: a new QPN, found again at once ----------------------
# The new queue pair is a new 20-byte address, and h1 holds the old one for
# h2's addresses.  IPv4 has the gratuitous ARP; IPv6 the unsolicited
# Neighbour Advertisement (to all nodes, Override, target link-layer option)
# that goes out once an address is usable: the link-local one at once,
# fd01::2 when the kernel's duplicate address detection is done.  Without
# it h1 sends to the old QPN until its entry ages out (60 s).

# neigh_of HOST IP: "HW STATE" of IP in HOST's neighbour cache, as its
# ipoibd reports it on SIGUSR1 (the report ends with rx_coalesced)
neigh_of() {
	local n
	n=$(grep -c "stats rx_coalesced" "$T/$1.log")
	eval "kill -USR1 \"\$${1}_PID\""
	for _ in $(seq 1 100); do
		[ "$(grep -c "stats rx_coalesced" "$T/$1.log")" -gt "$n" ] && break
		sleep 0.05
	done
	sed -n "s/^ipoibd: neighbors $2 \([^ ]* [^ ]*\) .*/\1/p" "$T/$1.log" | tail -1
}
ms_now() { echo $(($(date +%s%N) / 1000000)); }
# reach_ms ADDR: ms from h2's restart (t_up) to h1's first answered ping to
# ADDR, if within 5 s
reach_ms() {
	while [ $(($(ms_now) - t_up)) -lt 5000 ]; do
		if ns h1 ping -c 1 -W 0.5 "$1" >/dev/null 2>&1; then
			echo $(($(ms_now) - t_up))
			return 0
		fi
		sleep 0.1
	done
	return 1
}
h2_ll=$(ns h2 ip -6 -o addr show dev ib0 scope link | awk '{print $4}' | cut -d/ -f1)
[ -n "$h2_ll" ] || fail "h2 has no IPv6 link-local address"
ns h1 ping -c 1 -W 3 "$h2_ll%ib0" >/dev/null || fail "h1 -> h2 link-local"
old_hw=$(sed -n 's/.*ready: .* address //p' "$T/h2.log")
expect_eq "h1's entry for fd01::2 before" "$(neigh_of h1 fd01::2)" \
	"$old_hw REACHABLE"
expect_eq "h1's entry for $h2_ll before" "$(neigh_of h1 "$h2_ll")" \
	"$old_hw REACHABLE"
kill -TERM "$h2_PID"; wait "$h2_PID" || fail "h2's ipoibd exit status"
ipoibd_start h2 0xffff 10.1.0.2/24 fd01::2/64
t_up=$(ms_now)
new_hw=$(sed -n 's/.*ready: .* address //p' "$T/h2.log")
[ "$new_hw" != "$old_hw" ] || fail "h2's address unchanged by the restart"
ms4=$(reach_ms 10.1.0.2) || fail "h1 -> h2 IPv4: not within 5 s of the restart"
msll=$(reach_ms "$h2_ll%ib0") || { cat "$T/h2.log"; neigh_of h1 "$h2_ll";
	fail "h1 -> h2 $h2_ll: not within 5 s of the restart"; }
ms6=$(reach_ms fd01::2) || { cat "$T/h2.log"; neigh_of h1 fd01::2;
	fail "h1 -> h2 fd01::2: not within 5 s of the restart"; }
ok "h2 restarted: h1 reaches 10.1.0.2 after $ms4 ms, $h2_ll after $msll ms, fd01::2 after $ms6 ms"
expect_eq "h1's entry for fd01::2 after" "$(neigh_of h1 fd01::2)" \
	"$new_hw REACHABLE"
expect_eq "h1's entry for $h2_ll after" "$(neigh_of h1 "$h2_ll")" \
	"$new_hw REACHABLE"

# --- isolation ------------------------------------------------------------
# h5 has an address in 10.2.0.0/24 but sits in the default partition: its
# ARP for h3 goes to the default broadcast group, which h3 is not in
ns h5 ping -c 2 -W 1 10.2.0.3 >/dev/null 2>&1 && fail "h5 reached h3 across partitions"
ok "no traffic across partitions"

# --- a child interface: a second link on h3's port, in the default P_Key ----
ns_bg h3c_PID h3 "$BIN/ipoibd" -f -F "soft:$SOCK" -n h3 -p 0xffff \
	-i ib0.ffff --address 10.1.0.3/24 >"$T/h3c.log" 2>&1
eventually grep -q "ready:" "$T/h3c.log" || { cat "$T/h3c.log"; fail "child interface not ready"; }
ns h3 ping -c 2 -W 3 10.1.0.1 >/dev/null || fail "h3 (ib0.ffff) -> h1"
ns h1 ping -c 2 -W 3 10.1.0.3 >/dev/null || fail "h1 -> h3 (ib0.ffff)"
ns h3 ping -c 2 -W 3 10.2.0.4 >/dev/null || fail "h3 (ib0) -> h4 with the child up"
# one port (one GID), two queue pairs
gid_parent=$(sed -n 's/.*ready: .* address \(.*\)$/\1/p' "$T/h3.log" | cut -c13-)
gid_child=$(sed -n 's/.*ready: .* address \(.*\)$/\1/p' "$T/h3c.log" | cut -c13-)
expect_eq "child's port GID" "$gid_child" "$gid_parent"
kill -TERM "$h3c_PID"; wait "$h3c_PID" || fail "child ipoibd exit status"
ns h3 ip link show dev ib0.ffff >/dev/null 2>&1 && fail "ib0.ffff left behind"
ns h3 ping -c 1 -W 3 10.2.0.4 >/dev/null || fail "h3 (ib0) after the child stopped"
ok "child interface: one port, a link per P_Key"
# h1 is not a member of 0x8001: the interface stays, without carrier, as
# the kernel's waits for the SM to add the key (pkey_reload.sh adds it)
ns_bg h1p_PID h1 "$BIN/ipoibd" -f -F "soft:$SOCK" -n h1 -p 0x8001 -i ib1 >"$T/h1-8001.log" 2>&1
h1p_waits() { grep -q "P_Key 0x8001 is not in the port's table: no carrier" "$T/h1-8001.log"; }
eventually h1p_waits || { cat "$T/h1-8001.log"; fail "unclear message"; }
kill -0 "$h1p_PID" 2>/dev/null || { cat "$T/h1-8001.log"; fail "ipoibd in a foreign partition exited"; }
grep -q "carrier up" "$T/h1-8001.log" && fail "carrier in a foreign partition"
# the interface is up, without carrier, as the kernel's before its join
ns h1 ip link show dev ib1 >"$T/ib1.link" 2>&1
grep -q "NO-CARRIER.*UP" "$T/ib1.link" || { cat "$T/ib1.link"; fail "ib1 not up with NO-CARRIER"; }
expect_eq "ib1 carrier before the P_Key is added" "$(ns h1 cat /sys/class/net/ib1/carrier 2>&1)" 0
kill -TERM "$h1p_PID"; wait "$h1p_PID" || { cat "$T/h1-8001.log"; fail "foreign ipoibd exit status"; }
ok "ipoibd in a foreign partition stays up without carrier"

# the capture so far has the ARP and ND the tshark checks below look at; a
# bulk transfer would make it hundreds of MB that tshark reads for minutes
ctl capture off | grep -q "capture paused" || fail "capture off"

# --- iperf3, and a CLIENT_REREGISTER in the middle ---------------------------
ns_bg srv h2 iperf3 -s >"$T/iperf-s.log" 2>&1
sleep 0.5
ns h1 iperf3 -c 10.1.0.2 -t 5 -J >"$T/iperf1.json" || { cat "$T/iperf1.json"; fail "iperf3"; }
rate=$(python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['end']['sum_received']['bits_per_second']))" "$T/iperf1.json")
[ "$rate" -gt 0 ] || fail "iperf3 rate $rate"
ok "iperf3 TCP 5 s: $((rate / 1000000)) Mb/s"
# over IPv6 too; the hosts' TCP used the offloads: super-packets cut by
# h1, segments coalesced by h2
ns h1 iperf3 -6 -c fd01::2 -t 2 -J >"$T/iperf6.json" || { cat "$T/iperf6.json"; fail "iperf3 over IPv6"; }
rate6=$(python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['end']['sum_received']['bits_per_second']))" "$T/iperf6.json")
[ "$rate6" -gt 0 ] || fail "iperf3 IPv6 rate $rate6"
ok "iperf3 TCP over IPv6 2 s: $((rate6 / 1000000)) Mb/s"
stat_of() {	# HOST NAME: the value in the host's latest report
	local h=$1 n
	n=$(grep -c "stats rx_coalesced" "$T/$h.log")
	eval "kill -USR1 \"\$${h}_PID\""
	for _ in $(seq 1 100); do
		[ "$(grep -c "stats rx_coalesced" "$T/$h.log")" -gt "$n" ] && break
		sleep 0.05
	done
	sed -n "s/^ipoibd: stats $2 //p" "$T/$h.log" | tail -1
}
tso=$(stat_of h1 tx_super_packets)
gro=$(stat_of h2 rx_coalesced)
[ "${tso:-0}" -gt 0 ] || fail "h1 cut no TCP super-packets (TSO unused)"
[ "${gro:-0}" -gt 0 ] || fail "h2 coalesced no segments (GRO unused)"
expect_eq "h2 segments with bad checksums" "$(stat_of h2 rx_bad_checksum)" 0
expect_eq "h1 super-packets dropped" "$(stat_of h1 drop.tx_offload_bad)" 0
ok "offloads: $tso super-packets cut, $gro segments coalesced"
ns_bg cli h1 iperf3 -c 10.1.0.2 -t 6 -J >"$T/iperf2.json" 2>&1
( sleep 2; ctl rereg >/dev/null ) &
wait "$cli" || fail "iperf3 ended when the SM asked to reregister"
grep -q "port event CLIENT_REREGISTER" "$T/h1.log" || fail "h1 did not see CLIENT_REREGISTER"
ns h1 ping -c 1 -W 3 10.1.0.2 >/dev/null || fail "h1 -> h2 after reregister"
ok "transfer survived CLIENT_REREGISTER"

# --- UDP multicast: only the host that joined receives ------------------------
for h in h1 h2 h5; do ns $h ip route add 224.0.0.0/4 dev ib0; done
cat >"$T/mrecv.py" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("239.1.2.3", 5000))
if sys.argv[1] == "join":
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                 struct.pack("4s4s", socket.inet_aton("239.1.2.3"), socket.inet_aton("0.0.0.0")))
print("listening", flush=True)
s.settimeout(6)
n = 0
try:
    while True:
        s.recv(2000)
        n += 1
except socket.timeout:
    pass
print("received", n, flush=True)
PY
ns_bg mj h2 python3 "$T/mrecv.py" join >"$T/mj.out"
ns_bg mn h5 python3 "$T/mrecv.py" nojoin >"$T/mn.out"
eventually grep -q listening "$T/mj.out" || fail "receiver"
# the joined host's kernel reports the group; ipoibd joins it
sleep 1
ns h1 python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
for i in range(5):
    s.sendto(b"mc-%d" % i, ("239.1.2.3", 5000)); time.sleep(0.1)'
ctl groups ff12:401b:ffff::f01:203 | grep -q "h2:F" || { ctl groups; fail "h2 is not a full member of 239.1.2.3's group"; }
wait "$mj"; wait "$mn"
expect_eq "multicast to the host that joined" "$(sed -n 's/^received //p' "$T/mj.out")" 5
expect_eq "multicast to a host that did not" "$(sed -n 's/^received //p' "$T/mn.out")" 0
# the receiver closed its socket: the kernel reports the leave, ipoibd
# leaves the group
h2_left() { ! ctl groups ff12:401b:ffff::f01:203 | grep -q "h2:F"; }
eventually h2_left || { ctl groups; fail "h2 still a full member after its listener left"; }
ok "IGMP leave seen: h2 left the group"

# --- an MTU above the link's is put back, one below stays ---------------------
# the Linux driver refuses ip link set mtu above IPOIB_UD_MTU in datagram
# mode (EINVAL); a TUN takes it, so ipoibd puts the link MTU back
ns h1 ip link set ib0 mtu 4000 || fail "ip link set ib0 mtu 4000"
mtu_is() { [ "$(ns "$1" cat /sys/class/net/ib0/mtu)" = "$2" ]; }
for _ in $(seq 1 40); do mtu_is h1 2044 && break; sleep 0.05; done
mtu_is h1 2044 || fail "MTU 4000 on a 2044 link not put back within 2 s: $(ns h1 cat /sys/class/net/ib0/mtu)"
grep -q "ib0: MTU 4000 refused: the link carries at most 2044 (datagram mode); MTU 2044 again" "$T/h1.log" ||
	{ tail "$T/h1.log"; fail "no log line for the refused MTU"; }
# nothing above the link MTU leaves: the kernel refuses it at the sender
ns h1 ping -c 1 -W 2 -M do -s 3000 10.1.0.2 >"$T/big" 2>&1 && { cat "$T/big"; fail "3000-byte ping with DF succeeded"; }
grep -qi "message too long" "$T/big" || { cat "$T/big"; fail "3000-byte ping with DF: no local error"; }
ns h1 ping -6 -c 1 -W 2 -M do -s 3000 fd01::2 >"$T/big6" 2>&1 && { cat "$T/big6"; fail "IPv6 3000-byte ping with DF succeeded"; }
grep -qi "message too long" "$T/big6" || { cat "$T/big6"; fail "IPv6 3000-byte ping with DF: no local error"; }
ns h1 ping -c 1 -W 2 -M do -s 2016 10.1.0.2 >/dev/null || fail "a ping of the link MTU"
ok "MTU 4000 put back to 2044 and logged; 3000 bytes with DF: message too long"
# a smaller MTU is the operator's: it stays
ns h1 ip link set ib0 mtu 1500 || fail "ip link set ib0 mtu 1500"
sleep 1
expect_eq "h1's MTU set to 1500" "$(ns h1 cat /sys/class/net/ib0/mtu)" 1500
grep -q "MTU 1500 refused" "$T/h1.log" && fail "MTU 1500 refused"
ns h1 ping -c 1 -W 2 -M do -s 1600 10.1.0.2 >"$T/big" 2>&1 && fail "1628 bytes with DF through MTU 1500"
grep -qi "message too long" "$T/big" || { cat "$T/big"; fail "1628 bytes with DF at MTU 1500: no local error"; }
ns h1 ping -c 1 -W 2 10.1.0.2 >/dev/null || fail "ping at MTU 1500"
ns h1 ip link set ib0 mtu 2044
ok "an MTU below the link's stays"

# --- a port down and up again: carrier follows, traffic resumes ---------------
ns h2 ip link set ib0 mtu 1500	# the operator's, kept as the kernel keeps it
ctl port h2 down >/dev/null || fail "port h2 down"
eventually grep -q "port event PORT_ERR" "$T/h2.log" || fail "h2 did not see PORT_ERR"
# the interface shows it, as the kernel's IPoIB (netif_carrier_off)
carrier_is() { [ "$(ns h2 cat /sys/class/net/ib0/carrier 2>&1)" = "$1" ]; }
eventually carrier_is 0 || fail "h2's carrier while its port is down: $(ns h2 cat /sys/class/net/ib0/carrier 2>&1)"
ns h2 ip link show dev ib0 >"$T/ib0.link"
grep -q "NO-CARRIER" "$T/ib0.link" || { cat "$T/ib0.link"; fail "h2's ib0 without NO-CARRIER while its port is down"; }
ns h1 ping -c 1 -W 1 10.1.0.2 >/dev/null 2>&1 && fail "reached h2 while its port was down"
# the addresses stay
ns h2 ip addr show dev ib0 | grep -q "inet 10.1.0.2/24" || fail "h2's IPv4 address gone without carrier"
ns h2 ip addr show dev ib0 | grep -q "inet6 fd01::2/64" || fail "h2's IPv6 address gone without carrier"
ctl port h2 up >/dev/null || fail "port h2 up"
eventually grep -q "port event PORT_ACTIVE" "$T/h2.log" || fail "h2 did not see PORT_ACTIVE"
eventually carrier_is 1 || { cat "$T/h2.log"; fail "h2's carrier after its port came back"; }
ns h2 ip link show dev ib0 | grep -q "LOWER_UP" || fail "h2's ib0 without LOWER_UP after its port came back"
h2_back() { ns h1 ping -c 1 -W 1 10.1.0.2 >/dev/null 2>&1; }
eventually h2_back || { cat "$T/h2.log"; fail "h2 unreachable after its port came back"; }
h2_back6() { ns h1 ping -c 1 -W 1 fd01::2 >/dev/null 2>&1; }
eventually h2_back6 || { ns h2 ip addr show dev ib0; cat "$T/h2.log"; fail "h2 unreachable over IPv6 after its port came back"; }
ns h2 ping -c 1 -W 2 10.1.0.1 >/dev/null || fail "h2 -> h1 IPv4 after its port came back"
ns h2 ping -c 1 -W 2 fd01::1 >/dev/null || fail "h2 -> h1 IPv6 after its port came back"
ns h2 ip -6 addr show dev ib0 | grep "fd01::2/64" | grep -q "tentative\|dadfailed" && fail "h2's IPv6 address tentative or dadfailed after the carrier came back"
expect_eq "h2's MTU set before the port went down" "$(ns h2 cat /sys/class/net/ib0/mtu)" 1500
ns h2 ip link set ib0 mtu 2044
ok "port down/up: carrier off and back, traffic resumes"

# --- malformed IPoIB frames replayed into the subnet: counted, no harm --------
mal_lid=$(fabtest info mallory | sed -n 's/^lid //p')
h1_lid=$(ctl nodes | awk '$1 == "h1" {print $3}')
h1_qpn=$(sed -n 's/.*address 00:\(..\):\(..\):\(..\):.*/0x\1\2\3/p' "$T/h1.log")
nbad=$(python3 "$TOP/tests/integration/mkpcap.py" ipoib-garbage "$T/ipoib-bad.pcap" \
	--slid "$mal_lid" --dlid "$h1_lid" --dqpn "$h1_qpn") || fail "mkpcap"
malformed() {
	kill -USR1 "$h1_PID"
	sleep 0.3
	sed -n 's/.*stats drop.rx_malformed //p' "$T/h1.log" | tail -1
}
before=$(malformed)
ctl replay "$T/ipoib-bad.pcap" mallory | grep -q "replayed $nbad packet" || fail "replay"
after=$(malformed)
[ "$((after - before))" -ge $((nbad - 4)) ] || fail "rx_malformed went from $before to $after for $nbad bad frames"
kill -0 "$h1_PID" || fail "ipoibd died on malformed frames"
ns h1 ping -c 1 -W 3 10.1.0.2 >/dev/null || fail "h1 unusable after malformed frames"
ok "$((after - before)) of $nbad malformed frames counted, ipoibd fine"

# --- clean stop and a killed ipoibd -------------------------------------------
kill -TERM "$h2_PID"; wait "$h2_PID"
expect_eq "ipoibd exit status on SIGTERM" "$?" 0
ns h2 ip link show ib0 >/dev/null 2>&1 && fail "ib0 still exists after ipoibd stopped"
grep -q "leaving the groups" "$T/h2.log" || fail "no leave on stop"
ctl groups | grep -q "h2:" && { ctl groups; fail "h2 still a member after a clean stop"; }
kill -KILL "$h5_PID"; wait "$h5_PID" 2>/dev/null
h5_gone() { ! ctl groups | grep -q "h5:"; }
eventually h5_gone || { ctl groups; fail "killed ipoibd's memberships stayed"; }
ok "clean stop and killed ipoibd"
kill -TERM "$h1_PID" "$h3_PID" "$h4_PID"; wait "$h1_PID" "$h3_PID" "$h4_PID"
fabric_alive
stop_fabric

# --- the capture, through tshark -----------------------------------------------
h1_gid=$(sed -n 's/.*address 00:\(..\):\(..\):\(..\):\(.*\)$/\4/p' "$T/h1.log" | tr -d ':')
tshark -r "$T/cap.pcap" -Y 'arp && arp.opcode == 1 && arp.src.proto_ipv4 == 10.1.0.1' -T fields \
	-E separator=' ' -E occurrence=f -e arp.hw.type -e arp.hw.size -e arp.src.hw \
	-e infiniband.grh.dgid -e infiniband.bth.destqp >"$T/arp" 2>/dev/null
[ -s "$T/arp" ] || fail "no ARP request from h1 in the capture"
read -r htype hsize shw dgid destqp <"$T/arp"
expect_eq "arp.hw.type" "$htype" 32
expect_eq "arp.hw.size" "$hsize" 20
hw=$(echo "$shw" | tr -d ':')
expect_eq "QPN in arp.src.hw[1:3]" "0x${hw:2:6}" "$(sed -n 's/.*address 00:\(..\):\(..\):\(..\):.*/0x\1\2\3/p' "$T/h1.log")"
expect_eq "GID in arp.src.hw[4:16]" "${hw:8:32}" "$h1_gid"
expect_eq "ARP request to the broadcast MGID" "$dgid" ff12:401b:ffff::ffff:ffff
expect_eq "multicast DestQP" "$((destqp))" $((0xffffff))
# IPv6 neighbour solicitation for fd01::2 goes to its solicited-node MGID
tshark -r "$T/cap.pcap" -Y 'icmpv6.type == 135 && icmpv6.nd.ns.target_address == fd01::2' \
	-T fields -E occurrence=f -e infiniband.grh.dgid 2>/dev/null | head -1 >"$T/ns"
expect_eq "NS to the solicited-node MGID" "$(cat "$T/ns")" ff12:601b:ffff::1:ff00:2
# h2's unsolicited advertisements (one when it started, one after its
# restart): from the address to all nodes (their MGID), Override set, not
# Solicited, h2's 20-byte address in the target link-layer option (RFC 4391
# 9.1.1: type 2, 3 units, 2 bytes of padding first), the new one last
new_hex=$(echo "$new_hw" | tr -d ':')
for a in fd01::2 "$h2_ll"; do
	tshark -r "$T/cap.pcap" -Y "icmpv6.type == 136 && icmpv6.nd.na.target_address == $a && ipv6.dst == ff02::1" \
		-T fields -E separator=' ' -E occurrence=f -e ipv6.src \
		-e icmpv6.nd.na.flag.o -e icmpv6.nd.na.flag.s -e icmpv6.opt.type \
		-e icmpv6.opt.length -e infiniband.grh.dgid -e frame.time_epoch \
		-e icmpv6.opt.linkaddr >"$T/na" 2>/dev/null
	[ -s "$T/na" ] || fail "no unsolicited NA for $a in the capture"
	expect_eq "NAs for $a: source, O, S, option type and length, MGID" \
		"$(cut -d' ' -f1-6 "$T/na" | sort -u)" "$a 1 0 2 3 ff12:601b:ffff::1"
	read -r _ _ _ _ _ _ t_na lla < <(tail -1 "$T/na")
	expect_eq "last NA for $a: h2's new address" \
		"$(echo "$lla" | tr -d ':')" "0000$new_hex"
	[ "$a" = fd01::2 ] && t_na6=$t_na
done
# not while tentative: fd01::2's comes the kernel's DAD time (1 s) after
# its probe (an NS from ::); one sent while it was tentative would come
# before the probe, which the kernel delays by up to 1 s
t_ns=$(tshark -r "$T/cap.pcap" -Y 'icmpv6.type == 135 && ipv6.src == :: && icmpv6.nd.ns.target_address == fd01::2' \
	-T fields -e frame.time_epoch 2>/dev/null | tail -1)
[ -n "$t_ns" ] || fail "no DAD probe for fd01::2 in the capture"
python3 -c 'import sys; sys.exit(not float(sys.argv[2]) - float(sys.argv[1]) >= 0.5)' \
	"$t_ns" "$t_na6" || fail "fd01::2 advertised at $t_na6, its DAD probe at $t_ns"
ok "fd01::2 advertised $(python3 -c 'import sys; print("%.2f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$t_ns" "$t_na6") s after its DAD probe"
bad=$(tshark -r "$T/cap.pcap" -Y 'icmpv6.type == 136 && (_ws.malformed || _ws.expert.severity >= "error")' 2>/dev/null | wc -l)
expect_eq "malformed NAs" "$bad" 0
ok "ipoib_hosts"
