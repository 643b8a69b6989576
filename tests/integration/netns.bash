# Network namespaces for integration tests (sourced after lib.bash).
#
#   ns_add NAME        create namespace NAME (really ibgw<pid>-NAME) with lo up;
#                      its name is in NS_NAME
#   ns NAME CMD...     run CMD inside namespace NAME
#   ns_bg VAR NAME CMD...  the same in the background; pid in VAR, in PIDS
#   ns_veth A IFA B IFB    a veth pair between namespaces A and B
#
# Every namespace made here is deleted on exit, after the processes still
# running in it are killed, so a failing test leaves nothing behind.  The
# namespace names carry the test's pid, so tests can run side by side.
NS_LIST=()
NS_NAME=""

_ns_real() {
	echo "ibgw$$-$1"
}

ns_add() {
	local n
	n=$(_ns_real "$1")
	ip netns add "$n" || fail "ip netns add $n"
	NS_LIST+=("$n")
	ip netns exec "$n" ip link set lo up || fail "lo up in $n"
	NS_NAME=$n
}

ns() {
	local n
	n=$(_ns_real "$1")
	shift
	ip netns exec "$n" "$@"
}

ns_bg() {
	local var=$1 n
	n=$(_ns_real "$2")
	shift 2
	ip netns exec "$n" "$@" &
	PIDS+=("$!")
	eval "$var=$!"
}

ns_veth() {	# A IFA B IFB
	ip link add "$2" netns "$(_ns_real "$1")" type veth peer name "$4" \
		netns "$(_ns_real "$3")" || fail "veth $1:$2 - $3:$4"
	ns "$1" ip link set "$2" up
	ns "$3" ip link set "$4" up
}

_ns_cleanup() {
	local n p
	for n in "${NS_LIST[@]}"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do
			kill -TERM "$p" 2>/dev/null
		done
	done
	sleep 0.2
	for n in "${NS_LIST[@]}"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
		ip netns delete "$n" 2>/dev/null
	done
}

# run before lib.bash's cleanup (which kills PIDS and removes $T)
_ns_prev_trap=$(trap -p EXIT | sed "s/^trap -- '\(.*\)' EXIT$/\1/")
trap "_ns_cleanup; ${_ns_prev_trap:-:}" EXIT
