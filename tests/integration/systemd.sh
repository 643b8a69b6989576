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
NOTIFY_SOCKET="$T/notify.sock" ns_bg GW gw "$BIN/ibgwd" -f -c "$T/gw.conf" >"$T/gw.log" 2>&1
ready() { grep -q "READY=1" "$T/notify.out"; }
eventually ready || { cat "$T/gw.log" "$T/notify.out"; fail "no READY=1"; }
grep -q "ready: 1 partition" "$T/gw.log" || fail "READY=1 before the ready line"
grep -q "STATUS=1 partition(s)" "$T/notify.out" || fail "no STATUS"
kill -TERM "$GW"
wait "$GW" || fail "ibgwd exit status"
wait "$LISTENER"
grep -q "STOPPING=1" "$T/notify.out" || { cat "$T/notify.out"; fail "no STOPPING=1"; }
ok "ibgwd: READY=1 once ready, STOPPING=1 on SIGTERM"
ok "systemd"
