#!/bin/bash
# systemd units: systemd-analyze verify accepts both as make install writes
# them (pointing at this build's programs), with the hardening the gateway
# is meant to run under; and the notification protocol against a socket of
# ours standing for systemd (notify_listen.py; no systemd needed):
# ibgwd tells systemd it is ready (READY=1 on $NOTIFY_SOCKET, as
# Type=notify needs) once its partitions are up, and that it is stopping;
# ibfabricd says READY=1 only once its socket takes connections; ibgwd's
# watchdog pings come at half $WATCHDOG_USEC while its data paths live,
# stop when a partition's tap or TUN is deleted under it, and come back
# when that partition is removed; reloads are RELOADING=1 ... READY=1.
# (The units under a real systemd: tests/vm/systemd_units.sh.)
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
command -v systemd-analyze >/dev/null || fail "systemd-analyze not installed (make deps)"

for u in ibfabricd ibgwd; do
	sed "s|@SBINDIR@|$BIN|g" "$TOP/systemd/$u.service" >"$T/$u.service"
done
# (the man pages named in Documentation= are not installed here: --man=no)
systemd-analyze verify --man=no "$T/ibfabricd.service" "$T/ibgwd.service" >"$T/verify.out" 2>&1 ||
	{ cat "$T/verify.out"; fail "systemd-analyze verify"; }
[ -s "$T/verify.out" ] && { cat "$T/verify.out"; fail "systemd-analyze verify printed warnings"; }
ok "systemd-analyze verify: ibfabricd.service, ibgwd.service"

for k in "Type=notify" "ExecStartPre=$BIN/ibgwd -n" "ExecReload=" "Restart=on-failure" \
	 "WatchdogSec=" \
	 "ProtectSystem=strict" "ProtectHome=yes" "NoNewPrivileges=yes" "PrivateTmp=yes" \
	 "CapabilityBoundingSet=CAP_NET_ADMIN CAP_NET_RAW CAP_NET_BIND_SERVICE CAP_IPC_LOCK" \
	 "RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_PACKET AF_INET AF_INET6" \
	 "LimitMEMLOCK="; do
	grep -q "^$k" "$T/ibgwd.service" || fail "ibgwd.service lacks $k"
done
ok "ibgwd.service: notify, check before start, reload, restart, hardening"

# the notification protocol, against a socket of ours
start_fabric
ns_add gw
cat >"$T/gw.conf" <<CONF
[gateway]
fabric = soft:$SOCK
node = gw
control = $T/ctl.sock
[partition a]
pkey = 0x7fff
mode = router
address = 10.66.0.254/24
CONF
python3 - "$T/notify.sock" >"$T/notify.out" 2>&1 <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
print("bound", flush=True)
try:
    while True:
        m = s.recv(4096).decode()
        print(m.replace("\n", " | "), flush=True)
        if "STOPPING=1" in m:
            break
except socket.timeout:
    print("timeout", flush=True)
PY
LISTENER=$!
PIDS+=("$LISTENER")
bound() { grep -q bound "$T/notify.out"; }
eventually bound || fail "notify listener"
# ibgwd's stderr is a datagram socket connected to the listener, so its
# log lines and its notifications arrive through one queue in the order
# ibgwd sent them (the wrapper execs ibgwd: the pid stays ours)
cat >"$T/stderr_to.py" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.connect(sys.argv[1])
os.dup2(s.fileno(), 2)
os.execv(sys.argv[2], sys.argv[2:])
PY
NOTIFY_SOCKET="$T/notify.sock" ns_bg GW gw python3 "$T/stderr_to.py" "$T/notify.sock" \
	"$BIN/ibgwd" -f -c "$T/gw.conf" >"$T/gw.log"
ready() { grep -q "READY=1" "$T/notify.out"; }
eventually ready || { cat "$T/gw.log" "$T/notify.out"; fail "no READY=1"; }
awk '/ready: 1 partition/ && !l { l = NR } /READY=1/ && !r { r = NR }
     END { exit !(l && r && l < r) }' "$T/notify.out" ||
	{ cat "$T/notify.out"; fail "READY=1 before the ready line"; }
grep -q "STATUS=1 of 1 partition(s) with carrier" "$T/notify.out" ||
	{ cat "$T/notify.out"; fail "no STATUS= with the partitions that have carrier"; }
kill -TERM "$GW"
wait "$GW" || fail "ibgwd exit status"
wait "$LISTENER"
grep -q "STOPPING=1" "$T/notify.out" || { cat "$T/notify.out"; fail "no STOPPING=1"; }
ok "ibgwd: READY=1 once ready, STATUS=1 of 1 partition(s) with carrier, STOPPING=1 on SIGTERM"
grep -q "^Type=notify" "$T/ibfabricd.service" || fail "ibfabricd.service is not Type=notify"

# --- ibfabricd: READY=1 once its socket listens ----------------------------
L="$TOP/tests/integration/notify_listen.py"
WSOCK=$T/wd-fabric.sock
python3 "$L" "$T/fab-notify.sock" --probe "$WSOCK" >"$T/fab-notify.out" 2>&1 &
FLISTENER=$!
PIDS+=("$FLISTENER")
fbound() { grep -q bound "$T/fab-notify.out"; }
eventually fbound || fail "notify listener (ibfabricd)"
cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
t=0x8001, ipoib : wgw=full;
CONF
NOTIFY_SOCKET="$T/fab-notify.sock" "$BIN/ibfabricd" -f -s "$WSOCK" \
	-P "$T/partitions.conf" >"$T/wfab.log" 2>&1 &
WFAB=$!
PIDS+=("$WFAB")
fready() { grep -q "probe" "$T/fab-notify.out"; }
eventually fready || { cat "$T/wfab.log" "$T/fab-notify.out"; fail "ibfabricd: no READY=1"; }
grep -q "probe connected" "$T/fab-notify.out" ||
	{ cat "$T/fab-notify.out"; fail "ibfabricd: READY=1 before its socket took connections"; }
grep -q "READY=1 | STATUS=serving $WSOCK, 2 partition(s)" "$T/fab-notify.out" ||
	{ cat "$T/fab-notify.out"; fail "ibfabricd: no STATUS= naming its socket"; }
ok "ibfabricd: READY=1 once its socket takes connections (a connect on READY=1 succeeds), STATUS="

# --- ibgwd: watchdog, reloads, a broken data path --------------------------
ns_add wd
cat >"$T/wd.conf" <<CONF
[gateway]
fabric = soft:$WSOCK
node = wgw
control = $T/wd-ctl.sock
[partition t]
pkey = 0x8001
tap = wdtap0
[partition r]
pkey = 0x7fff
mode = router
ifname = wdib0
address = 10.67.0.254/24
CONF
python3 "$L" "$T/wd-notify.sock" >"$T/wd-notify.out" 2>&1 &
WLISTENER=$!
PIDS+=("$WLISTENER")
wbound() { grep -q bound "$T/wd-notify.out"; }
eventually wbound || fail "notify listener (watchdog)"
# 1 s: a ping every 0.5 s
WATCHDOG_USEC=1000000 NOTIFY_SOCKET="$T/wd-notify.sock" ns_bg WGW wd \
	"$BIN/ibgwd" -f -c "$T/wd.conf" 2>"$T/wgw.log"
wready() { grep -q " READY=1" "$T/wd-notify.out"; }
eventually wready || { cat "$T/wgw.log" "$T/wd-notify.out"; fail "watchdog ibgwd: no READY=1"; }
sleep 3.2
# pings: in the 3 s after READY=1, 5 to 7 of them, none more than 0.8 s apart
awk '/ READY=1/ && !r { r = $1 } r && / WATCHDOG=1/ && $1 <= r + 3 {
	n++; if (p && $1 - p > gap) gap = $1 - p; p = $1 }
     END { printf "%d %.3f\n", n, gap }' "$T/wd-notify.out" >"$T/pings"
read -r npings gap <"$T/pings"
[ "$npings" -ge 5 ] && [ "$npings" -le 7 ] ||
	{ cat "$T/wd-notify.out"; fail "$npings WATCHDOG=1 in 3 s, for WATCHDOG_USEC=1000000"; }
awk -v g="$gap" 'BEGIN { exit !(g < 0.8) }' || fail "WATCHDOG=1 pings $gap s apart"
grep -q "STATUS=2 of 2 partition(s) with carrier" "$T/wd-notify.out" ||
	{ cat "$T/wd-notify.out"; fail "no STATUS=2 of 2"; }
ok "watchdog: $npings WATCHDOG=1 in 3 s for a 1 s WatchdogSec (at most $gap s apart); STATUS=2 of 2 partition(s) with carrier"

# reloads, by SIGHUP and by ibgwctl: RELOADING=1 (with MONOTONIC_USEC) ...
# READY=1
kill -HUP "$WGW"
reloads() { [ "$(grep -c ' RELOADING=1 | MONOTONIC_USEC=[0-9]' "$T/wd-notify.out")" -ge "$1" ]; }
eventually reloads 1 || { cat "$T/wd-notify.out"; fail "SIGHUP: no RELOADING=1"; }
"$BIN/ibgwctl" -s "$T/wd-ctl.sock" reload >/dev/null || fail "ibgwctl reload"
eventually reloads 2 || { cat "$T/wd-notify.out"; fail "ibgwctl reload: no RELOADING=1"; }
sleep 0.3
awk '/ RELOADING=1/ { r++; open = 1 } / READY=1/ && open { d++; open = 0 }
     END { exit !(r == 2 && d == 2) }' "$T/wd-notify.out" ||
	{ cat "$T/wd-notify.out"; fail "a reload not closed by READY=1"; }
ok "reload (SIGHUP, ibgwctl reload): RELOADING=1 with MONOTONIC_USEC, then READY=1"

# a tap deleted under the daemon: its descriptor reads EBADFD for good;
# the pings stop, the status says why, and the loop does not spin on it
cputicks() { awk '{ print $14 + $15 }' "/proc/$WGW/stat"; }
ns wd ip link del wdtap0 || fail "ip link del wdtap0"
stopped() { grep -q " STATUS=partition $1: data path stopped" "$T/wd-notify.out"; }
eventually stopped t || { cat "$T/wgw.log" "$T/wd-notify.out"; fail "no STATUS= for the stopped data path"; }
grep -q "partition t: data path stopped (tap wdtap0: File descriptor in bad state): no more watchdog pings" "$T/wgw.log" ||
	{ cat "$T/wgw.log"; fail "the stopped data path not logged"; }
c0=$(cputicks)
sleep 2.5
c1=$(cputicks)
[ $((c1 - c0)) -lt 50 ] || fail "ibgwd spins on the deleted tap ($((c1 - c0)) ticks in 2.5 s)"
after() {	# the WATCHDOG=1 after the last line matching $1
	awk -v pat="$1" '$0 ~ pat { n = 0; seen = 1; next } seen && / WATCHDOG=1/ { n++ }
	     END { print n + 0 }' "$T/wd-notify.out"
}
[ "$(after "data path stopped")" = 0 ] ||
	{ cat "$T/wd-notify.out"; fail "WATCHDOG=1 after partition t's tap was deleted"; }
ok "tap deleted: STATUS= says so, no WATCHDOG=1 for 2.5 s (twice the interval), $((c1 - c0)) CPU ticks"

# the broken partition removed: alive again, the pings resume
"$BIN/ibgwctl" -s "$T/wd-ctl.sock" partition del t >/dev/null || fail "partition del t"
resumed() { [ "$(after "data path stopped")" -ge 2 ]; }
eventually resumed || { cat "$T/wd-notify.out"; fail "no WATCHDOG=1 once partition t was removed"; }
grep -q "STATUS=1 of 1 partition(s) with carrier" "$T/wd-notify.out" ||
	{ cat "$T/wd-notify.out"; fail "no STATUS=1 of 1 after the removal"; }
ok "broken partition removed: WATCHDOG=1 again, STATUS=1 of 1 partition(s) with carrier"

# router mode: the TUN deleted under the daemon
ns wd ip link del wdib0 || fail "ip link del wdib0"
eventually stopped r || { cat "$T/wgw.log" "$T/wd-notify.out"; fail "TUN deleted: no STATUS="; }
grep -q "partition r: data path stopped (wdib0: File descriptor in bad state)" "$T/wgw.log" ||
	{ cat "$T/wgw.log"; fail "the stopped TUN not logged"; }
sleep 1.5
[ "$(after "data path stopped")" = 0 ] ||
	{ cat "$T/wd-notify.out"; fail "WATCHDOG=1 after the TUN was deleted"; }
ok "TUN deleted (router mode): STATUS= says so, no WATCHDOG=1"
kill -TERM "$WGW"
wait "$WGW" || { cat "$T/wgw.log"; fail "watchdog ibgwd exit status"; }
wait "$WLISTENER"
grep -q " STOPPING=1" "$T/wd-notify.out" || fail "watchdog ibgwd: no STOPPING=1"
kill -TERM "$WFAB"
wait "$WFAB" || { cat "$T/wfab.log"; fail "ibfabricd (notify) exit status"; }
wait "$FLISTENER"
grep -q " STOPPING=1" "$T/fab-notify.out" || { cat "$T/fab-notify.out"; fail "ibfabricd: no STOPPING=1"; }
ok "ibfabricd, ibgwd: STOPPING=1 on SIGTERM, exit 0"
# detached (no -f): the starter's command returns once the daemon is up
# (ibgwd: once ready), and the event loop runs on in the child
# (daemon_detach reinitialises the base made before the fork)
"$BIN/ibfabricd" -s "$T/detached.sock" 2>"$T/dfab.log" || fail "ibfabricd (detached) exit status"
DFAB=$(pgrep -f "ibfabricd -s $T/detached.sock") || fail "no detached ibfabricd"
PIDS+=("$DFAB")
sed -e "s|^fabric = .*|fabric = soft:$T/detached.sock|" \
    -e "s|^control = .*|control = $T/detached-ctl.sock|" "$T/gw.conf" >"$T/gwd.conf"
ns gw "$BIN/ibgwd" -c "$T/gwd.conf" 2>"$T/dgw.log" || fail "ibgwd (detached) exit status"
DGW=$(pgrep -f "ibgwd -c $T/gwd.conf") || fail "no detached ibgwd"
PIDS+=("$DGW")
"$BIN/ibgwctl" -s "$T/detached-ctl.sock" show summary >"$T/dsum" ||
	fail "detached ibgwd does not answer"
grep -q "ready" "$T/dsum" || { cat "$T/dsum"; fail "detached ibgwd not ready"; }
"$BIN/ibfabricctl" -s "$T/detached.sock" stats >/dev/null ||
	fail "detached ibfabricd does not answer"
# two detached ipoibd hosts (ipoibd: once its interface is up) that
# still carry traffic after the fork: ARP, the SA's PathRecord and the
# ping itself all go through the children's event loops
for h in d1 d2; do
	ns_add "$h"
	ns "$h" "$BIN/ipoibd" -F "soft:$T/detached.sock" -n "$h" -i ib0 \
		--address "10.9.0.${h#d}/24" 2>"$T/$h.log" ||
		{ cat "$T/$h.log"; fail "ipoibd $h (detached) exit status"; }
	ns "$h" ip -o link show ib0 | grep -q 'UP' ||
		fail "ipoibd $h: ib0 not up when its starter returned"
done
DH1=$(pgrep -f "ipoibd -F soft:$T/detached.sock -n d1") || fail "no detached ipoibd d1"
DH2=$(pgrep -f "ipoibd -F soft:$T/detached.sock -n d2") || fail "no detached ipoibd d2"
PIDS+=("$DH1" "$DH2")
ns d1 ping -c 2 -W 3 10.9.0.2 >"$T/dping" 2>&1 ||
	{ cat "$T/dping"; fail "detached ipoibd hosts do not carry traffic"; }
kill -TERM "$DGW" "$DFAB" "$DH1" "$DH2"
gone() {
	local p
	for p in "$DGW" "$DFAB" "$DH1" "$DH2"; do
		kill -0 "$p" 2>/dev/null && return 1
	done
	return 0
}
eventually gone || fail "detached daemons did not stop on SIGTERM"
ok "detached ibfabricd, ibgwd and ipoibd: up when their starter returns, serving after the fork"
ok "systemd"
