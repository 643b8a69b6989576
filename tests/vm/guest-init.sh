#!/bin/bash
# Stage two of a guest of the test tier, PID 1 on this machine's root
# filesystem (read-only, under a tmpfs overlay).  Reads the run's settings
# from the 9p share "ibgwrun" (the host's run directory for this guest),
# sets up the kernel's filesystems, the modules of the unpacked Debian
# kernel, the network, then runs the test's script and leaves its output
# and exit status in the share.  Powers the guest off in every case.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
R=/ibgw-run

halt() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 30
}
trap halt EXIT

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm /run /ibgw-run
mount -t devpts devpts /dev/pts
mount -t tmpfs shm /dev/shm
mount -t tmpfs run /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
echo 1 >/proc/sys/kernel/sysrq
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 ibgwrun $R || {
	echo "guest-init: no run share"
	exit 1
}
# shellcheck source=/dev/null
. $R/guest.env
echo "guest-init: $VM_NAME set up, log in $R/init.log"
exec >$R/init.log 2>&1

# The unpacked kernel's modules, where modprobe looks for them
kver=$(uname -r)
mkdir -p /lib/modules/$kver
mount --bind "$VM_MODULES" /lib/modules/$kver

hostname "$VM_NAME"
echo "127.0.0.1 localhost $VM_NAME" >/etc/hosts
ip link set lo up
i=0
for addr in $VM_ADDRS; do
	ip link set eth$i up
	ip addr add "$addr" dev eth$i
	i=$((i + 1))
done
for m in $VM_MODPROBE; do
	modprobe "$m" || echo "guest-init: modprobe $m failed"
done
# rdma_rxe needs a crc32 implementation it asks the crypto API for
[ -n "$VM_RXE" ] && modprobe crc32_generic
for n in $VM_RXE; do	# rxeN:ethN
	rdma link add "${n%%:*}" type rxe netdev "${n#*:}" ||
		echo "guest-init: rdma link add $n failed"
done

# --systemd: systemd as PID 1, on what was set up above, with one unit
# that runs the script as stage two would and powers the guest off when
# it is done.  Units that would wait for devices, ask on a terminal or
# reach outside (gettys, network set-up, time sync, timers, this
# machine's own services; tmpfiles-setup, which would empty the
# host's /tmp in the overlay, slowly, over 9p) are masked; journald,
# udev and the rest of basic.target run as on any Debian system.
boot_systemd() {
	local u=/etc/systemd/system
	mkdir -p $u
	for m in getty.target getty@tty1.service serial-getty@ttyS0.service \
		 console-getty.service systemd-firstboot.service \
		 systemd-remount-fs.service systemd-fsck-root.service \
		 systemd-timesyncd.service systemd-networkd.service \
		 networking.service timers.target remote-fs.target \
		 emergency.service rescue.service opensm.service \
		 postgresql.service systemd-pstore.service \
		 systemd-tmpfiles-setup.service; do
		rm -f $u/$m
		ln -s /dev/null $u/$m
	done
	cat >/etc/ibgw-test-run <<-RUN
	#!/bin/bash
	export PATH=$PATH VM_NAME='$VM_NAME' VM_RUN=$R
	cd '$VM_CWD' 2>/dev/null || cd /
	timeout '$VM_TIMEOUT' bash $VM_SCRIPT >$R/out 2>&1
	echo \$? >$R/rc
	sync
	RUN
	chmod 0755 /etc/ibgw-test-run
	cat >$u/ibgw-test.service <<-UNIT
	[Unit]
	Description=ibgw guest tier: the test's script
	After=basic.target
	SuccessAction=poweroff-force
	FailureAction=poweroff-force
	[Service]
	Type=oneshot
	ExecStart=/etc/ibgw-test-run
	TimeoutStartSec=infinity
	StandardOutput=journal+console
	UNIT
	cat >$u/ibgw-test.target <<-UNIT
	[Unit]
	Description=ibgw guest tier: basic system and the test
	Requires=basic.target ibgw-test.service
	After=basic.target
	AllowIsolate=yes
	UNIT
	echo "guest-init: systemd as PID 1, ibgw-test.target"
	exec /lib/systemd/systemd --unit=ibgw-test.target
}

cd "$VM_CWD" 2>/dev/null || cd /
if [ -n "${VM_SHELL:-}" ]; then
	echo "guest-init: shell on the console; exit to power off"
	setsid -c bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
	echo 0 >$R/rc
	exit 0
fi
export VM_NAME VM_RUN=$R
if [ -n "${VM_SYSTEMD:-}" ]; then
	boot_systemd	# does not return
fi
echo "guest-init: running $VM_SCRIPT"
timeout "$VM_TIMEOUT" bash $VM_SCRIPT >$R/out 2>&1
echo $? >$R/rc
