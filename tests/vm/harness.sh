#!/bin/bash
# The guest tier's harness itself: a script's output and exit status come
# back to the host, arguments reach it, the host's root stays untouched
# by what a guest writes, the run share carries files out, a guest that
# hangs is stopped at its timeout and reported, and a kernel package that
# cannot be had fails the test rather than skipping it.
. "$(dirname "$0")/lib.bash"
probe=$BIN/.vm-write-probe.$$	# a folder of the host that exists
rm -f "$probe"
vm_guest a --addr 10.70.0.1/24 --script "tests/vm/guest/harness.sh $probe 7"
vm_guest b --addr 10.70.0.2/24 --timeout 8 --script "$VM_DIR/hang.sh"
echo 'echo hanging; sleep 600' >"$VM_DIR/hang.sh"
vm_link a b
vm_run 120 && fail "vm_run succeeded although a script exited 7"
[ "$(cat "$VM_DIR/a/rc")" = 7 ] || fail "exit status 7 not returned"
vm_output a | grep -q "^kernel $VM_KVER name a$" || fail "no output from a"
vm_output a | grep -q "^args $probe 7$" || fail "arguments lost"
vm_output a | grep -q "^ok(a): wrote $probe" || fail "no write in the guest"
[ -e "$probe" ] && { rm -f "$probe"; fail "a guest wrote to the host's root"; }
[ "$(cat "$VM_DIR/a/from-guest" 2>/dev/null)" = "run share" ] ||
	fail "the run share did not carry a file out"
vm_output a | grep -q "^eth0 .*10.70.0.1/24" || fail "eth0 not addressed"
ok "exit status, output, arguments, read-only host root, run share"
# b's own timeout (8 s) ended its script: status 124 from timeout(1)
[ "$(cat "$VM_DIR/b/rc")" = 124 ] ||
	fail "hanging script: status '$(cat "$VM_DIR/b/rc" 2>/dev/null)', not 124"
vm_output b | grep -q '^hanging$' || fail "hanging script's output lost"
ok "a hanging script is stopped at its timeout and reported (124)"

# a kernel release apt does not know: a clear failure, never a skip
mkdir -p "$VM_DIR/neg"
out=$(IBGW_VM_KVER=0.0.0-nosuch-amd64 IBGW_VM_CACHE=$VM_DIR/cache \
	VM_DIR=$VM_DIR/neg bash -c '. tests/vm/vm.bash; vm_prepare' 2>&1) &&
	fail "vm_prepare succeeded without a kernel package"
echo "$out" | grep -q "apt-get download linux-image-0.0.0-nosuch-amd64 failed" ||
	fail "unclear error: $out"
ok "no kernel package: '$(echo "$out" | tail -n1)'"
