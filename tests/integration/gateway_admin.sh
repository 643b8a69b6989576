#!/bin/bash
# Administering a running gateway: ibgwctl partition add/del while traffic
# flows on another partition (an iperf3 that must not notice), changes
# written back to the configuration and kept across a restart, reload by
# SIGHUP and by ibgwctl (a bad file changes nothing and says why), and the
# daemon's refusals reaching the user verbatim.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
for t in ping iperf3 python3; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done

cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : ALL=full;
p2=0x8002, ipoib : ALL=full;
p3=0x8003, ipoib : ALL=full;
CONF
start_fabric -P "$T/partitions.conf"
ib() {	# NAME PKEY ADDR
	ns_add "$1"
	ns_bg "${1}_PID" "$1" "$BIN/ipoibd" -f -F "soft:$SOCK" -n "$1" -p "$2" \
		-i ib0 --address "$3" >"$T/$1.log" 2>&1
}
ib ib1 0x8001 10.51.0.1/24
ib ib2 0x8002 10.52.0.2/24
ib ib3 0x8003 10.53.0.3/24
ns_add gw
ns_add lan1
ns_add lan2
for b in br1 br2; do ns gw ip link add $b type bridge; ns gw ip link set $b up; done
ns_veth gw v1 lan1 eth0
ns_veth gw v2 lan2 eth0
ns gw ip link set v1 master br1
ns gw ip link set v2 master br2
ns lan1 ip addr add 10.51.0.50/24 dev eth0
ns lan2 ip addr add 10.52.0.50/24 dev eth0

CONFF=$T/ibgw.conf
# the control socket where other users could reach it but for its mode
RUN=$(mktemp -d /tmp/ibgw-run.XXXXXX)
chmod 755 "$RUN"
_prev_trap=$(trap -p EXIT | sed "s/^trap -- '\(.*\)' EXIT$/\1/")
trap "rm -rf '$RUN'; ${_prev_trap:-:}" EXIT
cat >"$CONFF" <<CONF
# the operator's file
[gateway]
fabric = soft:$SOCK
node = gw
control = $RUN/ctl.sock
metrics = 127.0.0.1:9477

[partition p1]
pkey = 0x8001
tap = gwtap1
bridge = br1
CONF
start_gw() {
	ns_bg GW_PID gw "$BIN/ibgwd" -f -c "$CONFF" >>"$T/gw.log" 2>&1
	local n=$1
	gw_ready() { [ "$(grep -c "ready: " "$T/gw.log")" -ge "$n" ]; }
	eventually gw_ready || { cat "$T/gw.log"; fail "ibgwd not ready"; }
}
start_gw 1
C() { "$BIN/ibgwctl" -s "$RUN/ctl.sock" "$@"; }
for h in ib1 ib2 ib3; do
	hr() { grep -q "ready:" "$T/$h.log"; }
	eventually hr || fail "ipoibd $h"
done
ns lan1 ping -c 3 -W 2 10.51.0.1 >/dev/null || fail "lan1 -> ib1 through p1"

# --- least privilege: CAP_NET_ADMIN, CAP_NET_BIND_SERVICE, the socket for root's group
for k in CapEff CapPrm CapBnd; do
	v=$(sed -n "s/^$k:\t//p" /proc/$GW_PID/status)
	expect_eq "ibgwd $k" "$v" 0000000000001400	# CAP_NET_ADMIN (12), CAP_NET_BIND_SERVICE (10)
done
for k in CapInh CapAmb; do
	expect_eq "ibgwd $k" "$(sed -n "s/^$k:\t//p" /proc/$GW_PID/status)" 0000000000000000
done
expect_eq "control socket mode" "$(stat -c %a "$RUN/ctl.sock")" 660
setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN/ibgwctl" -s "$RUN/ctl.sock" show summary >/dev/null 2>"$T/err" &&
	fail "a user outside the socket's group got an answer"
grep -q "Permission denied" "$T/err" || fail "outsider: $(cat "$T/err")"
setpriv --reuid=65534 --regid=65534 --groups="$(stat -c %g "$RUN/ctl.sock")" "$BIN/ibgwctl" -s "$RUN/ctl.sock" show summary >/dev/null ||
	fail "a member of the socket's group was refused"
ok "least privilege: only CAP_NET_ADMIN and CAP_NET_BIND_SERVICE left; the socket refuses users outside its group"

# --- add and delete p2 while an iperf3 runs on p1 ------------------------------
ns_bg SRV lan1 iperf3 -s -1 >/dev/null 2>&1
sleep 0.5
ns_bg CLI ib1 iperf3 -c 10.51.0.50 -t 8 -J >"$T/iperf.json" 2>&1
sleep 1.5
C partition add p2 pkey=0x8002 tap=gwtap2 bridge=br2 >"$T/add.out" || fail "partition add p2"
grep -q "partition p2 added" "$T/add.out" || fail "add: $(cat "$T/add.out")"
ns gw ip link show gwtap2 | grep -q "master br2" || fail "gwtap2 not created in br2"
up2() { C -j show partitions | python3 -c 'import json,sys; p = {x["name"]: x for x in json.load(sys.stdin)["partitions"]}; sys.exit(0 if p["p2"]["carrier"] else 1)'; }
eventually up2 || fail "p2 has no carrier"
ns lan2 ping -c 3 -W 2 10.52.0.2 >/dev/null || fail "lan2 -> ib2 through the new p2"
grep -q "^\[partition p2\]" "$CONFF" || fail "p2 not written to the configuration"
# written in the canonical form, every key spelled out as p1's (before:
# only the keys given on the command line)
python3 - "$CONFF" <<'PY' || { cat "$CONFF"; fail "p2 not written with every key"; }
import re, sys
keys, sec = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"\[partition (\S+)\]", line)
    if m:
        sec = keys.setdefault(m.group(1), set())
    elif sec is not None and "=" in line and not line.lstrip().startswith("#"):
        sec.add(line.split("=")[0].strip())
assert len(keys["p2"]) > 4 and keys["p2"] == keys["p1"], keys
PY
C partition del p2 >/dev/null || fail "partition del p2"
ns gw ip link show gwtap2 >/dev/null 2>&1 && fail "gwtap2 left behind"
grep -q "p2" "$CONFF" && fail "p2 still in the configuration"
ns lan2 ping -c 1 -W 1 10.52.0.2 >/dev/null 2>&1 && fail "lan2 still reaches ib2"
wait "$CLI" || { cat "$T/iperf.json"; fail "iperf3 on p1 ended while p2 came and went"; }
rate=$(python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['end']['sum_received']['bits_per_second']))" "$T/iperf.json")
[ "$rate" -gt 0 ] || fail "iperf3 rate $rate"
ok "p2 added and deleted while iperf3 on p1 ran on ($((rate / 1000000)) Mb/s)"

# --- metrics: Prometheus text on the configured address ---------------------------
ctl rereg >/dev/null || fail "rereg"
rer() { grep -q "port event CLIENT_REREGISTER" "$T/gw.log"; }
eventually rer || fail "the gateway saw no CLIENT_REREGISTER"
ns gw curl -sf --max-time 5 -D "$T/hdr" http://127.0.0.1:9477/metrics >"$T/metrics" || fail "GET /metrics"
grep -qi "^content-type: text/plain; version=0.0.4" "$T/hdr" || { cat "$T/hdr"; fail "content type"; }
python3 "$TOP/tests/integration/prom_check.py" "$T/metrics" ||
	{ cat "$T/metrics"; fail "metrics: not Prometheus's text format"; }
python3 - "$T/metrics" <<'PY' || { cat "$T/metrics"; fail "metrics format or values"; }
import re, sys
sample = re.compile(r'^([a-z_]+)(\{([a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*)\})? ([0-9]+)$')
vals, typed = {}, set()
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("# TYPE "):
        typed.add(line.split()[2]); continue
    if line.startswith("# HELP "):
        continue
    m = sample.match(line)
    assert m, "bad line: " + line
    assert m.group(1) in typed, "no TYPE for " + m.group(1)
    vals[m.group(1) + (m.group(2) or "")] = int(m.group(5))
assert vals["ibgw_up"] == 1
assert vals['ibgw_partition_carrier{partition="p1",pkey="0x8001",mode="transparent"}'] == 1
assert vals['ibgw_packets_total{partition="p1",side="eth",direction="rx"}'] > 1000
assert vals['ibgw_bytes_total{partition="p1",side="ib",direction="tx"}'] > 1000000
assert 'ibgw_drops_total{partition="p1",side="eth",reason="eth_malformed"}' in vals
assert vals['ibgw_neighbors{partition="p1",side="ib"}'] >= 1
assert vals['ibgw_groups{partition="p1"}'] >= 1
assert 'p2' not in "".join(vals)   # deleted: gone from the metrics
assert vals['ibgw_fabric_events_total{event="CLIENT_REREGISTER"}'] >= 1
assert 'ibgw_fabric_send_errors_total{partition="p1"}' in vals
PY
code=$(ns gw curl -s -o /dev/null -w '%{http_code}' --max-time 5 http://127.0.0.1:9477/)
expect_eq "HTTP status of /" "$code" 404
ok "metrics: Prometheus text at /metrics, counters moving"

# --- refusals come through verbatim -----------------------------------------------
expect_refusal() {	# PATTERN ibgwctl-args...
	local pat=$1
	shift
	C "$@" >"$T/out" 2>"$T/err" && fail "ibgwctl $* succeeded"
	grep -q -- "$pat" "$T/err" || { cat "$T/err"; fail "ibgwctl $*: no '$pat'"; }
}
expect_refusal "partition p1 exists" partition add p1 pkey=0x8005 tap=x1
expect_refusal "0x8001 is partition p1's already" partition add p9 pkey=0x8001 tap=x9
expect_refusal "bogus: unknown key" partition add p9 pkey=0x8009 tap=x9 bogus=1
expect_refusal "needs trunk" partition add p9 pkey=0x8009 vlan=7
# the reasons as the operator wrote them: no temporary file or its lines
# (before: "gw.conf.new:24: ..."), "; " between two
expect_refusal "^ibgwctl: \[partition p9\] bogus: unknown key; \[partition p9\] mtu: " partition add p9 pkey=0x8009 tap=x9 bogus=1 mtu=70000
grep -q "\.new" "$T/err" && fail "the refusal names the temporary file: $(cat "$T/err")"
expect_refusal "no partition nosuch" partition del nosuch
expect_refusal "KEY=VALUE wanted" partition add p9 pkey
# what the file could not hold as given is refused, not cut (before: a
# partition with tap "x" was added and written, the '#' read as a comment)
expect_refusal "tap: 'x#9': '#' cannot be in a value" partition add p9 pkey=0x8009 'tap=x#9'
expect_refusal "bridge: 'br2;x': ';' cannot be in a value" partition add p9 pkey=0x8009 tap=x9 'bridge=br2;x'
expect_refusal "a quote cannot be" partition add p9 pkey=0x8009 'tap="x9"'
expect_refusal "a backslash cannot be" partition add p9 pkey=0x8009 'tap=x9\'
# a key given twice says so (before: "duplicate key (first at line N)",
# a line of a file the operator never saw)
expect_refusal "^ibgwctl: pkey: given twice$" partition add p9 pkey=0x8009 tap=x9 pkey=0x800a
expect_refusal "'p-key': not a key" partition add p9 p-key=0x8009 tap=x9
[ -e "$CONFF.new" ] && fail "a refused change left $CONFF.new"
grep -q "^\[partition p9\]" "$CONFF" && fail "a refused partition was written"
ok "refusals reach ibgwctl with exit status 1; nothing written"

# garbage on the control socket: an ERR answer or a closed connection,
# never a crash
python3 - "$RUN/ctl.sock" >"$T/ctlg.out" 2>&1 <<'PY' || { cat "$T/ctlg.out"; fail "control socket garbage"; }
import socket, sys
for req in (b"bogus", b"json", b"text", b"\x00\x01\x02", b"text show " + b"x" * 5000,
            b"text partition", b"text partition add", b"json show stats extra words"):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    s.send(req)
    s.settimeout(5)
    a = s.recv(300000)
    assert a == b"" or a.startswith(b"ERR "), (req[:20], a[:60])
    s.close()
print("ok")
PY
C show summary >/dev/null || fail "ibgwd gone after control-socket garbage"
ok "garbage on the control socket answered with ERR, daemon fine"

# --- a router partition, kept across a restart ------------------------------------
C partition add p3 pkey=0x8003 mode=router address=10.53.0.254/24 >/dev/null || fail "add router p3"
up3() { ns gw ip -4 addr show dev ib8003 2>/dev/null | grep -q 10.53.0.254; }
eventually up3 || fail "ib8003 not configured"
ns gw ping -c 2 -W 2 10.53.0.3 >/dev/null || fail "gateway -> ib3 on the new router partition"
kill -TERM "$GW_PID"; wait "$GW_PID" || fail "ibgwd exit"
ns gw ip link show ib8003 >/dev/null 2>&1 && fail "ib8003 left after stop"
start_gw 2
C show partitions | grep -q "^p3 *0x8003 router *ib8003 *up" || { C show partitions; fail "p3 not back after the restart"; }
ns gw ping -c 2 -W 2 10.53.0.3 >/dev/null || fail "p3 after the restart"
ok "changes persist: p3 back after a restart"

# --- reload ------------------------------------------------------------------------
cp "$CONFF" "$T/good.conf"
printf '\n[partition p4]\npkey = 0x8004\nvlan = 4\nnonsense = 1\n' >>"$CONFF"
kill -HUP "$GW_PID"
bad_logged() { grep -q "reload: .* has errors, the running configuration stays" "$T/gw.log"; }
eventually bad_logged || { tail "$T/gw.log"; fail "bad reload not logged"; }
grep "reload: .* has errors" "$T/gw.log" | grep -q "nonsense: unknown key" || fail "the reason is not in the log"
printf 'mtu = 70000\n' >>"$CONFF"
expect_refusal "has errors, nothing changed" reload
# the reasons on one line, "; " between them, none after the last
# (before: ";" between them and one at the end)
grep -q "nonsense: unknown key; .*mtu: " "$T/err" && ! grep -q ';$' "$T/err" ||
	fail "reload's reasons: $(cat "$T/err")"
expect_eq "partitions after a bad reload" "$(C -j show summary | python3 -c 'import json,sys; print(json.load(sys.stdin)["partitions"])')" 2
# a good file without p3: reload removes it
grep -v "^$" "$T/good.conf" | awk '/^\[partition p3\]/{skip=1; next} /^\[/{skip=0} !skip' >"$CONFF"
C reload >/dev/null || fail "ibgwctl reload"
gone3() { ! ns gw ip link show ib8003 >/dev/null 2>&1; }
eventually gone3 || fail "reload kept ib8003"
expect_eq "partitions after reload" "$(C -j show summary | python3 -c 'import json,sys; print(json.load(sys.stdin)["partitions"])')" 1
ns lan1 ping -c 2 -W 2 10.51.0.1 >/dev/null || fail "p1 after the reloads"
ok "reload: a bad file changes nothing and says why; a good one applies"
# the last partition: refused with the reason (before: "[partition p1]:
# required section missing")
expect_refusal "partition p1 is the last one" partition del p1
ns lan1 ping -c 1 -W 2 10.51.0.1 >/dev/null || fail "p1 after its refused deletion"
ok "the last partition's deletion refused: $(cat "$T/err")"
ok "gateway_admin"
