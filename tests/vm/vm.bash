# The guest tier's harness (sourced).  Boots Debian's own kernel package
# under QEMU (software emulation) with this machine's root filesystem as
# the guest's, read-only under a writable overlay, runs a script inside and
# brings its output and exit status back.  Guests talk to each other only
# through QEMU unix-socket netdevs (-netdev stream); no user-mode network,
# no host interface.
#
#   vm_prepare                   kernel + initramfs in $VM_CACHE (once)
#   vm_guest NAME OPTS...        declare a guest (see below)
#   vm_link A B                  one virtio-net link between guests A and B
#   vm_run [SECONDS]             boot them all, wait, 0 when every script
#                                exited 0; outputs in $VM_DIR/NAME/
#
# Each QEMU's human monitor is on $VM_DIR/NAME/monitor.sock (with
# KEEP_TEST_DIR=1 the directory stays), e.g. a virtio-net queue's state:
#   echo 'info virtio-queue-status /machine/peripheral-anon/device[2]/virtio-backend 1' |
#     socat - UNIX-CONNECT:$VM_DIR/a/monitor.sock
#
# vm_guest options: --script 'PATH ARGS' (run inside, by bash), --addr
# CIDR (one per link, in vm_link order), --modprobe MOD, --rxe rxeN:ethN,
# --timeout SECONDS, --shell (an interactive shell on this terminal),
# --systemd (systemd as PID 1 runs the script, as a unit; guest-init).
set -u

VM_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VM_CACHE=${IBGW_VM_CACHE:-/var/cache/ibgw-vm}
VM_MEM=${IBGW_VM_MEM:-1024}
VM_DIR=${VM_DIR:-$(mktemp -d /tmp/ibgw-vm.XXXXXX)}
VM_GUESTS=()
declare -A VM_OPT_SCRIPT VM_OPT_ADDRS VM_OPT_MOD VM_OPT_RXE VM_OPT_TMO \
	VM_OPT_SHELL VM_OPT_SYSTEMD VM_NETDEVS VM_NICS
VM_NLINKS=0

# modules the initramfs loads to reach the root filesystem
VM_BOOT_MODS="virtio_pci virtio_net 9p 9pnet_virtio overlay"

vm_die() {
	echo "vm: $*" >&2
	return 1
}

# vm_kernel_version: the linux-image-6.1.0-NN-amd64 that linux-image-amd64
# depends on today, as a kernel release string.
vm_kernel_version() {
	local pkg try
	for try in 1 2; do
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: linux-image-\([0-9].*\)$/\1/p' |
			head -n1)
		[ -n "$pkg" ] && break
		# package lists never fetched on this machine
		[ $try = 1 ] && apt-get update -q >&2
	done
	[ -n "$pkg" ] || { vm_die "apt-cache knows no linux-image-amd64"; return 1; }
	echo "$pkg"
}

vm_prepare() {
	local need
	for need in qemu-system-x86_64 busybox depmod modprobe cpio; do
		command -v "$need" >/dev/null ||
			{ vm_die "no $need (run 'make deps')"; return 1; }
	done
	VM_KVER=${IBGW_VM_KVER:-$(vm_kernel_version)} || return 1
	local kd=$VM_CACHE/$VM_KVER
	VM_KERNEL=$kd/root/boot/vmlinuz-$VM_KVER
	VM_MODULES=$kd/root/lib/modules/$VM_KVER
	VM_INITRD=$kd/initrd.img
	mkdir -p "$kd"
	if [ ! -e "$kd/unpacked" ]; then
		local deb
		deb=$(ls "$kd"/linux-image-"$VM_KVER"_*.deb 2>/dev/null | head -n1)
		if [ -z "$deb" ]; then
			echo "vm: fetching linux-image-$VM_KVER into $kd" >&2
			# apt drops privileges to _apt for downloads; give it the folder
			chown _apt "$kd" 2>/dev/null
			(cd "$kd" && apt-get download -q "linux-image-$VM_KVER") >&2 ||
				{ vm_die "apt-get download linux-image-$VM_KVER failed"; return 1; }
			deb=$(ls "$kd"/linux-image-"$VM_KVER"_*.deb | head -n1)
		fi
		rm -rf "$kd/root"
		dpkg-deb -x "$deb" "$kd/root" || { vm_die "cannot unpack $deb"; return 1; }
		depmod -b "$kd/root" "$VM_KVER" || { vm_die "depmod failed"; return 1; }
		touch "$kd/unpacked"
	fi
	# the initramfs is rebuilt whenever its /init or the boot modules change
	local stamp
	stamp=$(cat "$VM_TOP/tests/vm/initramfs-init" <(echo "$VM_BOOT_MODS") |
		sha256sum | cut -c1-16)
	if [ "$(cat "$kd/initrd.stamp" 2>/dev/null)" != "$stamp" ]; then
		vm_build_initrd "$kd" || return 1
		echo "$stamp" >"$kd/initrd.stamp"
	fi
}

vm_build_initrd() {	# KDIR
	local d m f list=""
	d=$(mktemp -d)
	mkdir -p "$d/bin" "$d/modules"
	cp "$(command -v busybox)" "$d/bin/busybox"
	ln -s busybox "$d/bin/sh"
	for m in $VM_BOOT_MODS; do
		for f in $(modprobe -d "$1/root" -S "$VM_KVER" --show-depends "$m" |
			awk '$1 == "insmod" { print $2 }'); do
			case " $list " in *" $(basename "$f") "*) continue ;; esac
			cp "$f" "$d/modules/"
			list="$list $(basename "$f")"
		done
	done
	echo "$list" >"$d/modules.list"
	install -m 0755 "$VM_TOP/tests/vm/initramfs-init" "$d/init"
	(cd "$d" && find . | cpio -o -H newc --quiet | gzip -1) >"$1/initrd.img.new" ||
		{ rm -rf "$d"; vm_die "cpio failed"; return 1; }
	mv "$1/initrd.img.new" "$1/initrd.img"
	rm -rf "$d"
}

vm_guest() {	# NAME OPTIONS...
	local n=$1
	shift
	VM_GUESTS+=("$n")
	VM_OPT_SCRIPT[$n]="" VM_OPT_ADDRS[$n]="" VM_OPT_MOD[$n]="" VM_OPT_RXE[$n]=""
	VM_OPT_TMO[$n]=${IBGW_VM_TIMEOUT:-240} VM_OPT_SHELL[$n]=""
	VM_OPT_SYSTEMD[$n]=""
	VM_NETDEVS[$n]="" VM_NICS[$n]=0
	while [ $# -gt 0 ]; do
		case "$1" in
		--script) VM_OPT_SCRIPT[$n]=$2; shift 2 ;;
		--addr) VM_OPT_ADDRS[$n]="${VM_OPT_ADDRS[$n]} $2"; shift 2 ;;
		--modprobe) VM_OPT_MOD[$n]="${VM_OPT_MOD[$n]} $2"; shift 2 ;;
		--rxe) VM_OPT_RXE[$n]="${VM_OPT_RXE[$n]} $2"; shift 2 ;;
		--timeout) VM_OPT_TMO[$n]=$2; shift 2 ;;
		--shell) VM_OPT_SHELL[$n]=1; shift ;;
		--systemd) VM_OPT_SYSTEMD[$n]=1; shift ;;
		*) vm_die "vm_guest: unknown option '$1'"; return 1 ;;
		esac
	done
}

# vm_link A B: A listens on the link's unix socket, B connects; each gets
# its next ethN.  Guests that listen are started first.
vm_link() {	# A B
	local s=$VM_DIR/link$VM_NLINKS.sock id=l$VM_NLINKS
	local ma mb
	ma=$(printf '52:54:00:12:%02x:01' "$VM_NLINKS")
	mb=$(printf '52:54:00:12:%02x:02' "$VM_NLINKS")
	VM_NETDEVS[$1]="${VM_NETDEVS[$1]} -netdev stream,id=$id,server=on,addr.type=unix,addr.path=$s -device virtio-net-pci,netdev=$id,mac=$ma,romfile="
	VM_NETDEVS[$2]="${VM_NETDEVS[$2]} -netdev stream,id=$id,server=off,addr.type=unix,addr.path=$s -device virtio-net-pci,netdev=$id,mac=$mb,romfile="
	VM_NICS[$1]=$((VM_NICS[$1] + 1))
	VM_NICS[$2]=$((VM_NICS[$2] + 1))
	VM_NLINKS=$((VM_NLINKS + 1))
}

vm_start() {	# NAME
	local n=$1 d=$VM_DIR/$1
	mkdir -p "$d"
	rm -f "$d/rc" "$d/out"
	cat >"$d/guest.env" <<-ENV
	VM_NAME='$n'
	VM_ADDRS='${VM_OPT_ADDRS[$n]}'
	VM_MODPROBE='${VM_OPT_MOD[$n]}'
	VM_RXE='${VM_OPT_RXE[$n]}'
	VM_SCRIPT='${VM_OPT_SCRIPT[$n]}'
	VM_TIMEOUT='${VM_OPT_TMO[$n]}'
	VM_SHELL='${VM_OPT_SHELL[$n]}'
	VM_SYSTEMD='${VM_OPT_SYSTEMD[$n]}'
	VM_MODULES='$VM_MODULES'
	VM_CWD='$VM_TOP'
	export IBGW_BIN='${BIN:-}'
	ENV
	local console=(-serial "file:$d/console.log")
	# an interactive guest has this terminal (a background job would
	# otherwise read /dev/null)
	exec 3<&0 4>&1
	if [ -n "${VM_OPT_SHELL[$n]}" ]; then
		console=(-serial mon:stdio)
	else
		exec 3</dev/null 4>"$d/qemu.log"
	fi
	# shellcheck disable=SC2086
	qemu-system-x86_64 -accel tcg -m "$VM_MEM" -smp 1 -nodefaults \
		-display none -no-reboot "${console[@]}" \
		-monitor unix:"$d/monitor.sock",server=on,wait=off \
		-kernel "$VM_KERNEL" -initrd "$VM_INITRD" \
		-append "console=ttyS0 quiet panic=-1 ibgw_init=$VM_TOP/tests/vm/guest-init" \
		-fsdev local,id=r,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=r,mount_tag=hostroot \
		-fsdev local,id=w,path="$d",security_model=none \
		-device virtio-9p-pci,fsdev=w,mount_tag=ibgwrun \
		${VM_NETDEVS[$n]} <&3 >&4 2>&1 &
	VM_PID[$n]=$!
	exec 3<&- 4>&-
}

declare -A VM_PID
vm_run() {	# [SECONDS]
	local limit=${1:-300} n s i rc=0
	# listeners first; a connecting guest needs the socket to exist
	for n in "${VM_GUESTS[@]}"; do
		case "${VM_NETDEVS[$n]}" in *server=off*) continue ;; esac
		vm_start "$n"
	done
	for n in "${VM_GUESTS[@]}"; do
		case "${VM_NETDEVS[$n]}" in *server=off*) ;; *) continue ;; esac
		for s in $(echo "${VM_NETDEVS[$n]}" |
			grep -o 'server=off,addr.type=unix,addr.path=[^ ]*' |
			sed 's/.*addr.path=//'); do
			for i in $(seq 1 100); do
				[ -S "$s" ] && break
				sleep 0.1
			done
		done
		vm_start "$n"
	done
	local end=$((SECONDS + limit))
	for n in "${VM_GUESTS[@]}"; do
		while kill -0 "${VM_PID[$n]}" 2>/dev/null; do
			if [ $SECONDS -ge $end ]; then
				echo "vm: $n still running after ${limit}s: killed" >&2
				kill "${VM_PID[$n]}" 2>/dev/null
				break
			fi
			sleep 0.5
		done
		wait "${VM_PID[$n]}" 2>/dev/null
		# the others of an interactive session go when its shell does
		if [ -n "${VM_OPT_SHELL[$n]}" ]; then
			local o
			for o in "${VM_GUESTS[@]}"; do
				kill "${VM_PID[$o]}" 2>/dev/null
			done
			return 0
		fi
	done
	for n in "${VM_GUESTS[@]}"; do
		local r
		r=$(cat "$VM_DIR/$n/rc" 2>/dev/null)
		if [ -z "$r" ]; then
			echo "vm: $n left no exit status; its console and init log:" >&2
			tail -n 30 "$VM_DIR/$n/console.log" "$VM_DIR/$n/qemu.log" \
				"$VM_DIR/$n/init.log" 2>/dev/null | sed 's/^/    | /' >&2
			rc=1
		elif [ "$r" != 0 ]; then
			rc=1
		fi
	done
	return $rc
}

# vm_output NAME: what the guest's script printed
vm_output() {
	cat "$VM_DIR/$1/out" 2>/dev/null
}

vm_cleanup() {
	local n
	for n in "${!VM_PID[@]}"; do
		kill "${VM_PID[$n]}" 2>/dev/null
	done
	if [ -n "${KEEP_TEST_DIR:-}" ]; then
		echo "vm dir kept: $VM_DIR"
	else
		rm -rf "$VM_DIR"
	fi
}
