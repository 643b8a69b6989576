#!/bin/bash
# make demo: the software InfiniBand subnet at work.  Two IB nodes exchange
# UD datagrams and a multicast through ibfabricd; the capture is decoded by
# tshark; everything is removed afterwards.  (The gateway demo, IB hosts and
# a LAN host in namespaces, replaces this when ibgwd exists.)
set -eu
BIN=${1:-build}
d=$(mktemp -d /tmp/ibgw-demo.XXXXXX)
sock=$d/fabric.sock
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$d"
	echo "demo: cleaned up"
}
trap cleanup EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "start the software subnet: ibfabricd -s $sock --pcap $d/demo.pcap"
"$BIN/ibfabricd" -f -s "$sock" --pcap "$d/demo.pcap" 2>"$d/fabric.log" &
pids+=($!)
for _ in $(seq 1 100); do grep -q ready "$d/fabric.log" && break; sleep 0.05; done
cat "$d/fabric.log"

step "node h2 opens a UD queue pair and listens (also on multicast ff12:401b:ffff::1)"
"$BIN/tests/fabtest" -s "$sock" recv h2 --count 4 --timeout 5000 \
	--mcast ff12:401b:ffff::1@0xc001 --qpn-file "$d/h2.qpn" >"$d/h2.out" &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$d/h2.qpn" ] && break; sleep 0.05; done
read -r qpn lid <"$d/h2.qpn"
echo "h2: QPN $qpn, LID $lid"

step "node h1 sends three datagrams to h2 and one multicast"
"$BIN/tests/fabtest" -s "$sock" send h1 --dlid "$lid" --dqpn "$qpn" --count 3 --data "hello from h1 #%n"
"$BIN/tests/fabtest" -s "$sock" send h1 --dlid 0xc001 --mgid ff12:401b:ffff::1 --data "to the group"
wait "${pids[1]}" || true
cat "$d/h2.out"

step "ibfabricctl nodes / mcast / stats"
"$BIN/ibfabricctl" -s "$sock" nodes
"$BIN/ibfabricctl" -s "$sock" stats | grep -Ev ' 0$'

step "stop the subnet; tshark decodes the capture"
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true
if command -v tshark >/dev/null; then
	tshark -r "$d/demo.pcap" 2>/dev/null
else
	echo "(tshark not installed)"
fi
