#!/bin/bash
# Stage two of a guest of the test tier, PID 1 on this machine's root
# filesystem (read-only, under a tmpfs overlay).  Reads the run's settings
# from the 9p share "ibgwrun" (the host's run directory for this guest),
# sets up the kernel's filesystems, the modules of the unpacked Debian
# kernel, the network, then runs the test's script and leaves its output
# and exit status in the share.  Powers the guest off in every case.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Never on a host: it mounts over /proc, /dev and /run and powers off.
[ $$ -eq 1 ] || { echo "guest-init.sh: a guest's PID 1 only" >&2; exit 2; }
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

cd "$VM_CWD" 2>/dev/null || cd /
if [ -n "${VM_SHELL:-}" ]; then
	echo "guest-init: shell on the console; exit to power off"
	setsid -c bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
	echo 0 >$R/rc
	exit 0
fi
export VM_NAME VM_PEER_ADDRS VM_RUN=$R
timeout "$VM_TIMEOUT" bash $VM_SCRIPT >$R/out 2>&1
echo $? >$R/rc
