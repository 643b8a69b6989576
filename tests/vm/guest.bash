# Helpers for the scripts that run inside a guest (sourced there).
set -u
G_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

gfail() {
	echo "FAIL($VM_NAME): $*"
	exit 1
}

gok() {
	echo "ok($VM_NAME): $*"
}

# wait_peer ADDR: until the peer answers a ping (both guests boot at once)
wait_peer() {
	local i
	for i in $(seq 1 60); do
		ping -c1 -W1 "$1" >/dev/null 2>&1 && return 0
	done
	gfail "peer $1 never answered a ping"
}

# retry N CMD...: run CMD until it exits 0, at most N times, 0.5 s apart
# (a client started before its server is listening)
retry() {
	local n=$1 i
	shift
	for i in $(seq 1 "$n"); do
		"$@" && return 0
		sleep 0.5
	done
	return 1
}

# gid_index DEV TYPE FAMILY: the GID table index of DEV port 1 whose type is
# TYPE ("RoCE v2", "RoCE v1", "IB") and whose address is IPv4-mapped (4) or
# not (6), read from sysfs
gid_index() {
	local d=/sys/class/infiniband/$1/ports/1 f i t g
	for f in "$d"/gid_attrs/types/*; do
		i=${f##*/}
		t=$(cat "$f" 2>/dev/null) || continue
		[ "$t" = "$2" ] || continue
		g=$(cat "$d/gids/$i")
		case "$3:$g" in
		4:0000:0000:0000:0000:0000:ffff:*) echo "$i"; return 0 ;;
		6:0000:0000:0000:0000:0000:ffff:*) ;;
		6:0000:0000:0000:0000:0000:0000:0000:0000) ;;
		6:*) echo "$i"; return 0 ;;
		esac
	done
	return 1
}

# rxe_counter DEV NAME: DEV port 1's hw counter NAME (sent_pkts,
# rcvd_pkts...), 0 when it has none
rxe_counter() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0
}
