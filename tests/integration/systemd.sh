#!/bin/bash
# systemd units: systemd-analyze verify accepts both as make install writes
# them (pointing at this build's programs), with the hardening the gateway
# is meant to run under; and ibgwd tells systemd it is ready (READY=1 on
# $NOTIFY_SOCKET, as Type=notify needs) once its partitions are up, and
# that it is stopping.
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
	 "ProtectSystem=strict" "ProtectHome=yes" "NoNewPrivileges=yes" "PrivateTmp=yes" \
	 "CapabilityBoundingSet=CAP_NET_ADMIN CAP_NET_RAW CAP_IPC_LOCK" \
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
grep -q "STATUS=1 partition(s)" "$T/notify.out" || fail "no STATUS"
kill -TERM "$GW"
wait "$GW" || fail "ibgwd exit status"
wait "$LISTENER"
grep -q "STOPPING=1" "$T/notify.out" || { cat "$T/notify.out"; fail "no STOPPING=1"; }
ok "ibgwd: READY=1 once ready, STOPPING=1 on SIGTERM"
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
