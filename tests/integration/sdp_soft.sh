#!/bin/bash
# SDP between IB hosts of the software subnet (issue 14, items 1-3, 5):
# unmodified programs under LD_PRELOAD=libibgw_preload.so on h1 and h2
# (each an ipoibd host with its SDP service), no libsdp.conf (every TCP
# socket 'both'):
#  - iperf3 h1 -> h2, and the evidence that SDP carried it: the SDP
#    services' byte counters against iperf3's, the IPoIB link's against
#    them (no TCP over IPoIB), ibfabricd's CM report (service 0x10000|port);
#    a second test against the same server (it listens anew: the bind
#    that finds the port held by the service's old TCP listener gets it);
#  - socat both ways, sha256 of 20 MB; a half-close (the server answers
#    after the client's EOF);
#  - curl against python3's http.server on h2, sha256;
#  - python3 asyncio (epoll) echo server with 20 concurrent clients; a
#    forking server (socketserver.ForkingTCPServer) with threaded clients;
#    8 threads writing on one socket;
#  - getsockname/getpeername as TCP would give them, both sides; a
#    non-blocking connect (EINPROGRESS or at once, writable, SO_ERROR 0);
#  - a 'both' listener whose program exits frees its port (the service
#    holds its TCP socket) within seconds, for programs without the preload;
#  - fallback: h3 has no SDP service (--no-sdp): a preloaded client
#    reaches a server there over TCP; with libsdp.conf 'use sdp client'
#    the same connect fails (no TCP), with 'use tcp' it never asks SDP;
#  - ipoibd --sdp-only refused on the subnet's InfiniBand ports;
#  - tshark on the capture: the CM REQ's SDP Hello (version, IP version,
#    port, addresses) and REP's HelloAck, the BSDH of single-packet
#    messages; nothing malformed but tshark 4.0's false alarm on
#    credit-only Data (see test_sdp_tshark.c), with its RPC-over-RDMA
#    heuristic off (it claims reassembled SDP messages).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
for t in socat iperf3 curl tshark python3; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done
PY=$TOP/tests/integration/sdp_progs.py
start_fabric --pcap "$T/cap.pcap"

host() {	# NAME ADDR [ARGS]
	local n=$1 a=$2
	shift 2
	sdp_host "$n" --address "$a" "$@"
}
host h1 10.1.0.1/24
host h2 10.1.0.2/24
host h3 10.1.0.3/24 --no-sdp
grep -q "SDP service on @ibgw-sdp" "$T/h1.log" || fail "h1 has no SDP service"
# --sdp-only is for RoCE: on the subnet's InfiniBand ports it is refused
ns_add h9
ns h9 timeout 20 "$BIN/ipoibd" --sdp-only -F "soft:$SOCK" -n h9 -f >"$T/h9.log" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q -- "--sdp-only: .* is an InfiniBand port" "$T/h9.log" ||
	{ cat "$T/h9.log"; fail "ipoibd --sdp-only on InfiniBand: exit $rc"; }
ok "ipoibd --sdp-only on an InfiniBand port: $(sed -n 's/^ipoibd: //p' "$T/h9.log" | head -n1)"


# 1: iperf3, and what carried it
pre_bg IPS h2 iperf3 -s -p 5201
wait_port h2 5201
sleep 0.3
ipo_before=$(stat_of h1 tx_bytes)
pre h1 iperf3 -c 10.1.0.2 -p 5201 -t 3 -J >"$T/iperf.json" 2>"$T/iperf.err" ||
	{ cat "$T/iperf.err"; tail -20 "$T/iperf.json"; fail "iperf3 under the preload"; }
read -r bytes bps < <(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["end"]["sum_received"]; print(e["bytes"], int(e["bits_per_second"]))' "$T/iperf.json")
sdp_tx=$(stat_of h1 sdp.tx_bytes)
sdp_rx=$(stat_of h2 sdp.rx_bytes)
ipo_after=$(stat_of h1 tx_bytes)
[ "${sdp_tx:-0}" -ge "$bytes" ] && [ "${sdp_rx:-0}" -ge "$bytes" ] ||
	fail "iperf3 moved $bytes bytes but SDP carried tx $sdp_tx rx $sdp_rx"
ipo=$(( ${ipo_after:-0} - ${ipo_before:-0} ))
[ "$ipo" -lt $((bytes / 100)) ] ||
	fail "IPoIB carried $ipo bytes during the SDP run of $bytes"
ctl cm >"$T/cm.txt"
grep -q "service 0x0000000000011451" "$T/cm.txt" ||
	{ cat "$T/cm.txt"; fail "no CM listener/connection on SDP's service ID for port 5201"; }
ok "iperf3 over SDP: $bytes bytes at $((bps / 1000000)) Mb/s, SDP counters tx $sdp_tx rx $sdp_rx, IPoIB $ipo bytes meanwhile"
# iperf3 -s closes its listener after each test and listens again: the
# service still holds the old one's TCP socket until the bind asks
c_before=$(stat_of h1 sdp_service.connects)
pre h1 iperf3 -c 10.1.0.2 -p 5201 -t 1 >"$T/iperf2.log" 2>&1 ||
	{ cat "$T/iperf2.log"; fail "a second iperf3 test against the same server"; }
c_after=$(stat_of h1 sdp_service.connects)
[ "$((c_after - c_before))" -ge 2 ] ||
	fail "the second iperf3 test made $((c_after - c_before)) SDP connections"
ok "a second iperf3 test against the re-listening server, over SDP again"


# 2: socat both ways, sha256
head -c 20000000 /dev/urandom >"$T/data"
pre_bg S1 h2 socat -u TCP-LISTEN:7000,reuseaddr OPEN:"$T/up",creat,trunc
wait_port h2 7000
pre h1 socat -u OPEN:"$T/data" TCP:10.1.0.2:7000 || fail "socat h1 -> h2"
for i in $(seq 1 100); do
	[ "$(stat -c %s "$T/up" 2>/dev/null)" = 20000000 ] && break
	sleep 0.1
done
[ "$(sha256sum <"$T/up")" = "$(sha256sum <"$T/data")" ] || fail "h1 -> h2: sha256 differs"
pre_bg S2 h1 socat -u OPEN:"$T/data" TCP-LISTEN:7001,reuseaddr
wait_port h1 7001
pre h2 socat -u TCP:10.1.0.1:7001 OPEN:"$T/down",creat,trunc || fail "socat h2 <- h1"
[ "$(sha256sum <"$T/down")" = "$(sha256sum <"$T/data")" ] || fail "h1 -> h2 (download): sha256 differs"
pre_bg S3 h2 python3 "$PY" halfclose-server 7002
wait_port h2 7002
out=$(pre h1 python3 "$PY" halfclose-client 10.1.0.2 7002 3000000) ||
	fail "half-close: $out"
ok "socat 20 MB each way, sha256 equal; half-close: $out"

# 3: curl and a real HTTP server
mkdir -p "$T/www"
head -c 5000000 /dev/urandom >"$T/www/f.bin"
pre_bg HTTP h2 python3 -m http.server 8080 --directory "$T/www"
wait_port h2 8080
pre h1 curl -sS --max-time 20 -o "$T/f.got" http://10.1.0.2:8080/f.bin \
	2>"$T/curl.err" || fail "curl over SDP: $(cat "$T/curl.err")"
cmp -s "$T/f.got" "$T/www/f.bin" || fail "curl: the file differs"
ok "curl from python3 http.server: 5 MB, equal"

# 4: event loops, forks, threads
pre_bg AS h2 python3 "$PY" asyncio-server 7003
pre_bg FS h2 python3 "$PY" fork-server 7004
pre_bg CS h2 python3 "$PY" count-server 7005
wait_port h2 7003
wait_port h2 7004
wait_port h2 7005
out=$(pre h1 python3 "$PY" asyncio-client 10.1.0.2 7003 20 50) || fail "asyncio: $out"
out2=$(pre h1 python3 "$PY" thread-client 10.1.0.2 7004 8 100) || fail "forking server, threaded client: $out2"
out3=$(pre h1 python3 "$PY" shared-client 10.1.0.2 7005 8 500) || fail "threads on one socket: $out3"
ok "$out; forking server with $out2; $out3"

# 5: names, non-blocking connect
pre_bg NS h2 python3 "$PY" names-server 7006 >"$T/names_srv" 2>&1
wait_port h2 7006
pre h1 python3 "$PY" names 10.1.0.2 7006 >"$T/names_cli" 2>&1 || { cat "$T/names_cli"; fail "names"; }
sleep 0.3
cli_local=$(sed -n 's/^local //p' "$T/names_cli")
expect_eq "client's peer" "$(sed -n 's/^peer //p' "$T/names_cli")" 10.1.0.2:7006
case "$cli_local" in 10.1.0.1:*) ;; *) fail "client's own name $cli_local" ;; esac
expect_eq "family/type" "$(sed -n 's/^family //p' "$T/names_cli")" "2 type 1"
expect_eq "server's peer" "$(sed -n 's/^peer //p' "$T/names_srv")" "$cli_local"
expect_eq "server's accept address" "$(sed -n 's/^accepted //p' "$T/names_srv")" "$cli_local"
expect_eq "server's own" "$(sed -n 's/^local //p' "$T/names_srv")" 10.1.0.2:7006
pre_bg HC2 h2 python3 "$PY" halfclose-server 7007
wait_port h2 7007
out=$(pre h1 python3 "$PY" nb-connect 10.1.0.2 7007) || fail "non-blocking connect: $out"
ok "names as TCP's: client $cli_local -> 10.1.0.2:7006 on both sides; non-blocking connect: $(echo $out)"

# 6: fallback to TCP, and the rules
ns_bg P3 h3 python3 "$PY" halfclose-server 7010
wait_port h3 7010
c_before=$(stat_of h1 sdp_service.connect_failures)
out=$(pre h1 python3 "$PY" halfclose-client 10.1.0.3 7010 100000) ||
	fail "fallback to TCP (h3 has no SDP): $out"
c_after=$(stat_of h1 sdp_service.connect_failures)
[ "${c_after:-0}" -gt "${c_before:-0}" ] || fail "the SDP attempt to h3 was not made"
printf 'use sdp client * 10.1.0.3:*\n' >"$T/sdp_only.conf"
if ns h1 env LD_PRELOAD="$PRE" LIBSDP_CONFIG_FILE="$T/sdp_only.conf" \
	python3 "$PY" halfclose-client 10.1.0.3 7010 1000 >"$T/o" 2>&1; then
	fail "'use sdp client' to a host without SDP connected (over TCP?)"
fi
printf 'use tcp client * 10.1.0.2:7002\n' >"$T/tcp.conf"
r_before=$(stat_of h1 sdp_service.requests)
ns h1 env LD_PRELOAD="$PRE" LIBSDP_CONFIG_FILE="$T/tcp.conf" \
	python3 "$PY" halfclose-client 10.1.0.2 7002 1000 >"$T/o" 2>&1 ||
	fail "'use tcp' connect: $(cat "$T/o")"
r_after=$(stat_of h1 sdp_service.requests)
expect_eq "requests for a 'use tcp' connect" "$r_after" "$r_before"
ok "fallback: TCP to h3 after the refused SDP attempt; 'use sdp' fails there; 'use tcp' never asks the service"

# 8: a 'both' listener's program exits: the service, which holds its TCP
# listener, lets go of the port within a few seconds, so that a program
# without the preload can listen there
pre h2 python3 -c 'import socket,time; s=socket.socket(); s.bind(("",7600)); s.listen(); time.sleep(0.5)'
for i in $(seq 1 40); do
	ns h2 python3 -c 'import socket; s=socket.socket(); s.bind(("",7600)); s.listen()' 2>/dev/null && break
	sleep 0.1
done
[ "$i" -lt 40 ] || fail "port 7600 still held 4 s after its preloaded listener exited"
ok "a closed 'both' listener's port is free again after $((i / 10)).$((i % 10)) s"

# 7: the capture as tshark decodes it
stop_fabric
TS="tshark -r $T/cap.pcap --disable-protocol rpcordma"
$TS -Y 'infiniband_sdp.hh.majv' -T fields -e infiniband_sdp.bsdh.mid \
	-e infiniband_sdp.hh.majv -e infiniband_sdp.hh.ipv \
	-e infiniband_sdp.hh.localport -e infiniband_sdp.hh.src_ip \
	-e infiniband_sdp.hh.dst_ip 2>/dev/null >"$T/hello.txt"
# tshark shows the 16-byte address fields as IPv6: ::a.b.c.d
grep -q "^0x00	0x02	0x04	[0-9]*	::10.1.0.1	::10.1.0.2$" "$T/hello.txt" ||
	{ head "$T/hello.txt"; fail "no SDP Hello from 10.1.0.1 to 10.1.0.2 in the capture"; }
nack=$($TS -Y 'infiniband_sdp.bsdh.mid == 0x01' 2>/dev/null | wc -l)
ndata=$($TS -Y 'infiniband_sdp.bsdh.mid == 0xff' 2>/dev/null | wc -l)
ndisc=$($TS -Y 'infiniband_sdp.bsdh.mid == 0x02' 2>/dev/null | wc -l)
# tshark's SDP heuristic also tries RC SEND Middle and Last packets (BTH
# opcodes 1, 2), whose payload is the inside of a message, not a BSDH:
# those false alarms, and its one on credit-only Data, are not ours
bad=$($TS -Y '_ws.malformed && !(infiniband_sdp.bsdh.mid == 0xff && infiniband_sdp.bsdh.len == 16) && !(infiniband.bth.opcode == 1 || infiniband.bth.opcode == 2)' 2>/dev/null | wc -l)
[ "$nack" -ge 1 ] && [ "$ndata" -ge 10 ] && [ "$ndisc" -ge 2 ] ||
	fail "tshark: HelloAck $nack, Data $ndata, DisConn $ndisc"
expect_eq "malformed frames (besides credit-only Data)" "$bad" 0
ok "tshark: $(grep -c "^0x00	0x02" "$T/hello.txt") Hellos (v2, IPv4, h1 -> h2), $nack HelloAcks, $ndata Data, $ndisc DisConn, none malformed"
