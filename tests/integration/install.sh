#!/bin/bash
# make install honours DESTDIR and PREFIX and installs working programs
# and man pages.
. "$(dirname "$0")/lib.bash"

make -s -C "$TOP" install DESTDIR="$T/root" PREFIX=/opt/ibgw >"$T/make.log" 2>&1 || { cat "$T/make.log"; fail "make install"; }
for f in sbin/ibfabricd bin/ibfabricctl sbin/ipoibd sbin/ibgwd bin/ibgwctl lib/systemd/system/ibgwd.service lib/systemd/system/ibfabricd.service; do
	[ -e "$T/root/opt/ibgw/$f" ] || fail "$f not installed"
done
"$T/root/opt/ibgw/sbin/ibfabricd" --version | grep -q '^ibfabricd ' || fail "installed ibfabricd does not run"
n=$(ls "$TOP"/docs/*.8 2>/dev/null | wc -l)
expect_eq "man pages installed" "$(ls "$T/root/opt/ibgw/share/man/man8" 2>/dev/null | wc -l)" "$n"
n5=$(ls "$TOP"/docs/*.5 2>/dev/null | wc -l)
expect_eq "section 5 pages installed" "$(ls "$T/root/opt/ibgw/share/man/man5" 2>/dev/null | wc -l)" "$n5"
"$T/root/opt/ibgw/sbin/ibgwd" -n -c "$T/root/opt/ibgw/share/doc/ibgw/ibgw.conf.example" | grep -qx "configuration OK" || fail "installed example configuration does not check"
grep -q "^ExecStart=/opt/ibgw/sbin/ibgwd -f" "$T/root/opt/ibgw/lib/systemd/system/ibgwd.service" || fail "ibgwd.service: ExecStart not under PREFIX"
[ -e /opt/ibgw ] && fail "install escaped DESTDIR"
ok "install"
