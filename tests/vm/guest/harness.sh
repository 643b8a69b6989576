# Inside a guest: what the harness promises a test's script.
#   harness.sh PROBE_PATH EXIT_CODE
. "$(dirname "$0")/../guest.bash"
echo "kernel $(uname -r) name $(hostname)"
echo "args $*"
# the host's root is the lower layer: a write lands in the overlay only
echo "written in the guest" >"$1" && gok "wrote $1 in the overlay"
[ -w /ibgw-run ] && echo "run share" >/ibgw-run/from-guest
ip -br addr show eth0
exit "$2"
