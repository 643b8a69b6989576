# Inside a guest: librdmacm's rping (rdmacm-utils) over rxe between two
# guests, 10 pings, verbose.  rping.sh server ADDR | client SERVER
. "$(dirname "$0")/../guest.bash"
role=$1 addr=$2
count=10
if [ "$role" = server ]; then
	# one connection, then rping exits; no -C: the server counts what
	# the client sent
	timeout 90 rping -s -a "$addr" -v >/tmp/rping.out 2>&1
else
	wait_peer "$addr"
	retry 40 timeout 30 rping -c -a "$addr" -C $count -v \
		>/tmp/rping.out 2>&1
fi
rc=$?
cat /tmp/rping.out
[ $rc -eq 0 ] || gfail "rping -$role exited $rc"
n=$(grep -c 'ping data: rdma-ping-' /tmp/rping.out)
[ "$n" -eq $count ] || gfail "rping printed $n 'ping data' lines, not $count"
# each line names its ping by number, 0 .. count-1, in order
for i in $(seq 0 $((count - 1))); do
	grep 'ping data: ' /tmp/rping.out | sed -n "$((i + 1))p" |
		grep -q "ping data: rdma-ping-$i: " ||
		gfail "ping $i missing or out of order"
done
gok "rping $role: $count pings"
