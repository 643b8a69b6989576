#!/bin/bash
# The units under a real systemd: a guest boots with systemd as PID 1
# (vm_guest --systemd), installs the build (make install PREFIX=/usr/local,
# into its overlay) and drives ibfabricd.service and ibgwd.service with
# systemctl (tests/vm/guest/systemd_units.sh): readiness and ordering,
# status, hardening seen from inside the services, reload, and the
# watchdog restarting ibgwd when a partition's data path stops.
. "$(dirname "$0")/lib.bash"
vm_guest a --systemd --timeout 420 --script "tests/vm/guest/systemd_units.sh $BIN"
vm_run_checked 540
for w in "make install PREFIX=/usr/local" "systemctl start: both active" \
	 "status: ibfabricd" "capabilities:" "mount namespaces:" \
	 "systemctl reload: partition r" "tap deleted: " "systemctl stop:"; do
	vm_output a | grep -q "^ok(a): $w" || fail "guest did not report '$w'"
done
ok "ibfabricd.service and ibgwd.service under systemd: start order, status, hardening, reload, watchdog restart, stop"
