# Inside a guest booted with --systemd: ibfabricd.service and ibgwd.service
# as make install writes them, under the guest's systemd (PID 1).
#   systemd_units.sh BUILD_DIR
# Both started by systemctl and active after READY=1, ibgwd only once
# ibfabricd was ready; STATUS= in the units' status; the hardening in
# force, seen from inside the services (capabilities, no_new_privs,
# seccomp, read-only and private paths in their mount namespaces);
# systemctl reload re-reads the configuration; a data path stopped (the
# tap deleted) stops the watchdog pings and systemd restarts ibgwd.
. "$(dirname "$0")/../guest.bash"
B=$1
[ "$(cat /proc/1/comm)" = systemd ] || gfail "PID 1 is $(cat /proc/1/comm), not systemd"

# make install, into the overlay (the host's root stays read-only); -o all:
# the build is the host's, nothing is rebuilt here
make -s -C "$G_TOP" -o all install PREFIX=/usr/local BUILD="$B" >/tmp/install.out 2>&1 ||
	{ cat /tmp/install.out; gfail "make install"; }
U=/usr/local/lib/systemd/system
[ -f $U/ibgwd.service ] && [ -f $U/ibfabricd.service ] || gfail "no units in $U"
grep -q "^ExecStart=/usr/local/sbin/ibgwd -f" $U/ibgwd.service || gfail "ibgwd.service: @SBINDIR@ not filled in"
gok "make install PREFIX=/usr/local: units in $U"

mkdir -p /etc/ibgw /etc/systemd/system/ibfabricd.service.d
cat >/etc/ibgw/partitions.conf <<'CONF'
Default=0x7fff, ipoib : ALL=full;
t=0x8001, ipoib : gw=full;
r=0x8002, ipoib : gw=full;
CONF
# the subnet's partitions, as an administrator would give them: a drop-in
cat >/etc/systemd/system/ibfabricd.service.d/partitions.conf <<'CONF'
[Service]
ExecStart=
ExecStart=/usr/local/sbin/ibfabricd -f -s /run/ibgw/fabric.sock -P /etc/ibgw/partitions.conf \
	--lid-file /var/lib/ibgw/guid2lid
CONF
cat >/etc/ibgw/ibgw.conf <<'CONF'
[gateway]
fabric = soft:/run/ibgw/fabric.sock
node = gw

[partition t]
pkey = 0x8001
tap = ibgwt0
CONF
systemctl daemon-reload || gfail "daemon-reload"

# --- started by systemctl: ibgwd waits for ibfabricd's READY=1 --------------
# one transaction for both, as at boot when both are enabled: After=
# orders jobs that exist together (systemctl start A B makes one
# transaction per unit, and ibgwd's job may run before ibfabricd's is
# queued; ibgwd does not pull ibfabricd in: on hardware there is none)
cat >/etc/systemd/system/ibgw-pair.target <<'UNIT'
[Unit]
Description=ibfabricd and ibgwd in one transaction, as at boot
Wants=ibgwd.service ibfabricd.service
UNIT
systemctl daemon-reload || gfail "daemon-reload"
timeout 120 systemctl start ibgw-pair.target ||
	{ systemctl status --no-pager ibfabricd ibgwd; journalctl --no-pager -n 40; gfail "systemctl start"; }
for u in ibfabricd ibgwd; do
	[ "$(systemctl is-active $u)" = active ] || gfail "$u is $(systemctl is-active $u)"
done
show() { systemctl show -p "$2" --value "$1"; }
fab_ready=$(show ibfabricd ActiveEnterTimestampMonotonic)
gw_start=$(show ibgwd InactiveExitTimestampMonotonic)
gw_ready=$(show ibgwd ActiveEnterTimestampMonotonic)
[ "$fab_ready" -gt 0 ] && [ "$gw_start" -ge "$fab_ready" ] && [ "$gw_ready" -ge "$gw_start" ] ||
	gfail "order: ibfabricd ready at $fab_ready, ibgwd started at $gw_start, ready at $gw_ready"
gok "systemctl start: both active; ibgwd started $(( (gw_start - fab_ready) / 1000 )) ms after ibfabricd's READY=1, ready $(( (gw_ready - gw_start) / 1000 )) ms later"
st=$(show ibfabricd StatusText)
[ "$st" = "serving /run/ibgw/fabric.sock, 3 partition(s)" ] || gfail "ibfabricd status: '$st'"
st=$(show ibgwd StatusText)
[ "$st" = "1 of 1 partition(s) with carrier" ] || gfail "ibgwd status: '$st'"
[ "$(show ibgwd WatchdogUSec)" = 15s ] || gfail "ibgwd WatchdogUSec: $(show ibgwd WatchdogUSec)"
gok "status: ibfabricd '$(show ibfabricd StatusText)', ibgwd '$st'; watchdog 15s"

# --- the hardening, from inside the services -----------------------------------
# capabilities as hex masks: CAP_NET_BIND_SERVICE 10, CAP_NET_ADMIN 12,
# CAP_NET_RAW 13, CAP_IPC_LOCK 14
cap() { printf '%d' "0x$(awk -v k="$2:" '$1 == k { print $2 }' /proc/"$1"/status)"; }
GPID=$(show ibgwd MainPID)
FPID=$(show ibfabricd MainPID)
allowed=$(( (1 << 10) | (1 << 12) | (1 << 13) | (1 << 14) ))
for k in CapEff CapPrm CapBnd; do
	v=$(cap "$GPID" $k)
	[ $((v & ~allowed)) -eq 0 ] || gfail "ibgwd $k $(printf %x $v): more than NET_BIND_SERVICE, NET_ADMIN, NET_RAW, IPC_LOCK"
done
# what it keeps once set up (gw_caps.c): CAP_NET_ADMIN and
# CAP_NET_BIND_SERVICE alone on soft:
for k in CapEff CapPrm; do
	[ "$(cap "$GPID" $k)" -eq $(( (1 << 12) | (1 << 10) )) ] ||
		gfail "ibgwd $k $(printf %x "$(cap "$GPID" $k)"), not CAP_NET_ADMIN and CAP_NET_BIND_SERVICE alone"
done
journalctl --no-pager -u ibgwd | grep -q "keeping all capabilities" &&
	gfail "ibgwd could not drop its capabilities under the unit"
for k in CapEff CapPrm CapBnd; do
	[ "$(cap "$FPID" $k)" -eq 0 ] || gfail "ibfabricd $k is not empty"
done
for p in "$GPID" "$FPID"; do
	grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$p/status || gfail "pid $p: no_new_privs not set"
	grep -q '^Seccomp:[[:space:]]*2' /proc/$p/status || gfail "pid $p: no seccomp filter"
done
gok "capabilities: ibgwd CapEff=$(awk '$1 == "CapEff:" { print $2 }' /proc/$GPID/status) CapBnd=$(awk '$1 == "CapBnd:" { print $2 }' /proc/$GPID/status), ibfabricd none; no_new_privs and seccomp in both"
# made after the services started: a private /tmp or a hidden /home
# (mounts of their own) does not show them
echo mark >/tmp/host-tmp-mark
mkdir -p /home && echo mark >/home/host-home-mark
for p in "$GPID" "$FPID"; do
	n=$(cat /proc/$p/comm)
	nsenter -t "$p" -m touch /usr/ibgw-probe 2>/dev/null && gfail "$n: /usr writable (ProtectSystem=strict)"
	nsenter -t "$p" -m touch /etc/ibgw-probe 2>/dev/null && gfail "$n: /etc writable"
	nsenter -t "$p" -m test -e /home/host-home-mark && gfail "$n: /home visible (ProtectHome)"
	nsenter -t "$p" -m test -e /tmp/host-tmp-mark && gfail "$n: the host's /tmp visible (PrivateTmp)"
	nsenter -t "$p" -m touch /run/ibgw/probe || gfail "$n: its RuntimeDirectory not writable"
	rm -f /run/ibgw/probe
done
nsenter -t "$GPID" -m touch /etc/ibgw/probe || gfail "ibgwd: /etc/ibgw not writable (ReadWritePaths)"
rm -f /etc/ibgw/probe
nsenter -t "$GPID" -m sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward' || gfail "ibgwd: /proc/sys/net/ipv4 not writable"
nsenter -t "$FPID" -m sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward' 2>/dev/null &&
	gfail "ibfabricd: /proc/sys writable (ProtectKernelTunables)"
gok "mount namespaces: /usr and /etc read-only, /home hidden, /tmp private, /run/ibgw writable; ibgwd: /etc/ibgw and /proc/sys/net writable, ibfabricd: /proc/sys not"

# --- systemctl reload re-reads the configuration ---------------------------------
cat >>/etc/ibgw/ibgw.conf <<'CONF'

[partition r]
pkey = 0x8002
mode = router
ifname = ibgwr0
address = 10.68.0.254/24
CONF
timeout 60 systemctl reload ibgwd || gfail "systemctl reload ibgwd"
[ "$(systemctl is-active ibgwd)" = active ] || gfail "ibgwd $(systemctl is-active ibgwd) after the reload"
[ "$(show ibgwd MainPID)" = "$GPID" ] || gfail "the reload restarted ibgwd"
carrier2() { [ "$(show ibgwd StatusText)" = "2 of 2 partition(s) with carrier" ]; }
retry 40 carrier2 || gfail "after the reload: status '$(show ibgwd StatusText)'"
ibgwctl show partitions >/tmp/parts.out || gfail "ibgwctl show partitions"
grep -qw r /tmp/parts.out && grep -qw 0x8002 /tmp/parts.out ||
	{ cat /tmp/parts.out; gfail "partition r not shown after the reload"; }
ip link show ibgwr0 >/dev/null 2>&1 || gfail "no ibgwr0 after the reload"
journalctl --no-pager -u ibgwd | grep -q "reload: 1 added" || gfail "journal: no 'reload: 1 added'"
gok "systemctl reload: partition r (0x8002, router, ibgwr0) added, same pid, status '2 of 2 partition(s) with carrier'"

# --- a stopped data path: the watchdog restarts ibgwd -------------------------------
[ "$(show ibgwd NRestarts)" = 0 ] || gfail "NRestarts $(show ibgwd NRestarts) before the test"
t0=$SECONDS
ip link del ibgwt0 || gfail "ip link del ibgwt0"
restarted() { [ "$(show ibgwd NRestarts)" -ge 1 ]; }
retry 120 restarted || { journalctl --no-pager -u ibgwd | tail -20; gfail "no restart within 60 s"; }
dt=$((SECONDS - t0))
journalctl --no-pager -u ibgwd >/tmp/gw.journal
grep -q "partition t: data path stopped (tap ibgwt0: File descriptor in bad state): no more watchdog pings" /tmp/gw.journal ||
	{ tail -20 /tmp/gw.journal; gfail "journal: the stopped data path not logged"; }
grep -qi "watchdog timeout" /tmp/gw.journal || { tail -20 /tmp/gw.journal; gfail "journal: no watchdog timeout"; }
# the last ping came up to 7.5 s before the tap went: the 15 s ran out
# 7.5 to 15 s after it
[ "$dt" -ge 6 ] || gfail "restarted after $dt s: not by the 15 s watchdog"
active() { [ "$(systemctl is-active ibgwd)" = active ]; }
retry 120 active || gfail "ibgwd not active again: $(systemctl is-active ibgwd)"
[ "$(show ibgwd MainPID)" != "$GPID" ] || gfail "same pid after the restart"
ip link show ibgwt0 >/dev/null 2>&1 || gfail "no ibgwt0 after the restart"
retry 40 carrier2 || gfail "after the restart: status '$(show ibgwd StatusText)'"
gok "tap deleted: '$(grep -io 'watchdog timeout[^!]*' /tmp/gw.journal | head -n1)' after ${dt}s, NRestarts=$(show ibgwd NRestarts), active again with ibgwt0, '$(show ibgwd StatusText)'"

# --- the subnet restarts under ibgwd: LIDs kept in the state directory ---------------
L=/var/lib/ibgw/guid2lid
[ -s $L ] || gfail "no $L after the start"
cp $L /tmp/guid2lid.before
GPID=$(show ibgwd MainPID)
timeout 60 systemctl restart ibfabricd || gfail "systemctl restart ibfabricd"
retry 40 carrier2 || gfail "after ibfabricd's restart: status '$(show ibgwd StatusText)'"
[ "$(systemctl is-active ibgwd)" = active ] || gfail "ibgwd $(systemctl is-active ibgwd) after ibfabricd's restart"
[ "$(show ibgwd MainPID)" = "$GPID" ] || gfail "ibgwd restarted with the subnet"
cmp -s $L /tmp/guid2lid.before || { diff /tmp/guid2lid.before $L; gfail "$L changed"; }
gok "systemctl restart ibfabricd: ibgwd stays (same pid), carrier back, $L ($(wc -l <$L) port(s)) unchanged"

# --- stop ------------------------------------------------------------------------------
timeout 60 systemctl stop ibgwd ibfabricd || gfail "systemctl stop"
for u in ibgwd ibfabricd; do
	[ "$(systemctl is-active $u)" = inactive ] || gfail "$u $(systemctl is-active $u) after stop"
done
ip link show ibgwt0 >/dev/null 2>&1 && gfail "ibgwt0 left behind"
[ -e /run/ibgw/fabric.sock ] && gfail "fabric.sock left behind"
gok "systemctl stop: both inactive, taps and sockets gone"
