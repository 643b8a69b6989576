# Helpers of the SDP tests (sourced after lib.bash and netns.bash): IB
# hosts with their SDP service, programs under the preload, the hosts'
# counters.
PRE=$BIN/libibgw_preload.so
[ -f "$PRE" ] || fail "no $PRE (make)"

# sdp_host NAME IPOIBD-ARGS...: an ipoibd host (its SDP service on unless
# --no-sdp) in namespace NAME, its PID in NAME_PID, its log in
# $T/NAME.log; returns once it is ready and its IPv6 addresses, if any,
# are past duplicate address detection (bindable)
sdp_host() {
	local n=$1 i
	shift
	ns_add "$n"
	ns_bg "${n}_PID" "$n" "$BIN/ipoibd" -f -F "soft:$SOCK" -n "$n" \
		-i ib0 "$@" >"$T/$n.log" 2>&1
	for i in $(seq 1 200); do
		grep -q "ready:" "$T/$n.log" && break
		sleep 0.05
	done
	grep -q "ready:" "$T/$n.log" ||
		{ cat "$T/$n.log"; fail "ipoibd $n did not become ready"; }
	for i in $(seq 1 100); do
		[ -z "$(ns "$n" ip -6 addr show dev ib0 tentative)" ] && return 0
		sleep 0.1
	done
	fail "$n's IPv6 address stays tentative"
}

# pre NS PROGRAM...: under the preload; no libsdp.conf (every TCP
# socket 'both') unless LIBSDP_CONFIG_FILE is given
pre() {
	local n=$1
	shift
	ns "$n" env LD_PRELOAD="$PRE" \
		LIBSDP_CONFIG_FILE="${LIBSDP_CONFIG_FILE:-$T/none.conf}" "$@"
}

# pre_bg VAR NS PROGRAM...: the same in the background, its PID in VAR
pre_bg() {
	local v=$1 n=$2
	shift 2
	ns_bg "$v" "$n" env LD_PRELOAD="$PRE" \
		LIBSDP_CONFIG_FILE="${LIBSDP_CONFIG_FILE:-$T/none.conf}" "$@"
}

# stat_of HOST NAME: a counter from ipoibd's SIGUSR1 report
# ("sdp.tx_bytes", "sdp_service.connects", "tx_bytes" ...)
stat_of() {
	kill -USR1 "$(eval echo \$${1}_PID)"
	sleep 0.3
	sed -n "s/.*stats $2 \\([0-9]*\\)\$/\\1/p" "$T/$1.log" | tail -n1
}

# delta HOST COUNTER BEFORE: the counter's rise since BEFORE
delta() {
	echo $(($(stat_of "$1" "$2") - $3))
}

# wait_port NS PORT: a TCP listener there (a 'both' listener's, which
# the service holds once it has made the SDP one)
wait_port() {
	local i
	for i in $(seq 1 100); do
		ns "$1" ss -ltn "sport = :$2" | grep -q LISTEN && return 0
		sleep 0.1
	done
	fail "nothing listens on $1:$2"
}
