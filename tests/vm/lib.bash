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

# capture FILE: the guest link's capture that ts, cnt and no_malformed
# read (P); fails when it is missing or empty
capture() {
	P=$1
	[ -s "$P" ] || fail "no capture at $P"
}

# ts TSHARK-ARGS...: tshark on $P.  Two of tshark's heuristics on
# InfiniBand payloads take short ones for theirs and then call them
# malformed (RPC-over-RDMA any 1-byte SEND, Ethernet-over-IB a SEND
# starting 0x81 0x00: "VLAN"); they are off, the IB headers are
# dissected all the same.
ts() {
	tshark --disable-heuristic rpcrdma_infiniband \
		--disable-heuristic eth_over_ib -r "$P" "$@" 2>/dev/null
}

# cnt FILTER: how many packets of $P match the display filter
cnt() { ts -Y "$1" | wc -l; }

# no_malformed [FILTER]: fails when packets of $P match FILTER
# (_ws.malformed unless told), showing the first ones
no_malformed() {
	local f=${1:-_ws.malformed} bad
	bad=$(cnt "$f")
	[ "$bad" -eq 0 ] || { ts -Y "$f" | head; fail "capture: $bad malformed packets ($f)"; }
}
