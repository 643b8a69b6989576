# Shared by the guest tier's tests (sourced on the host).  A missing qemu or
# kernel package fails the test, it does not skip it.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/vm.bash"
BIN=${IBGW_BIN:-build}
case "$BIN" in /*) ;; *) BIN=$VM_TOP/$BIN ;; esac

fail() {
	echo "FAIL: $*"
	exit 1
}

ok() {
	echo "ok: $*"
}

trap vm_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
[ "$(id -u)" -eq 0 ] || fail "the guest tier needs root (9p as root, QEMU)"
vm_prepare || fail "cannot prepare the guest kernel"

# vm_run_checked [SECONDS]: vm_run, every guest's output shown, fail unless
# every guest's script exited 0
vm_run_checked() {
	local rc n
	vm_run "${1:-240}"
	rc=$?
	for n in "${VM_GUESTS[@]}"; do
		echo "--- guest $n (exit $(cat "$VM_DIR/$n/rc" 2>/dev/null || echo none))"
		vm_output "$n" | sed 's/^/  /'
	done
	[ $rc -eq 0 ] || fail "a guest's script failed"
}
