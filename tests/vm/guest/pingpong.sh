# Inside a guest: rdma-core's ibv_rc_pingpong and ibv_ud_pingpong over rxe
# between two guests.  pingpong.sh server|client PEER
. "$(dirname "$0")/../guest.bash"
role=$1 peer=$2
wait_peer "$peer"
gid=$(gid_index rxe0 "RoCE v2" 4) || gfail "no IPv4 RoCE v2 GID on rxe0"
gok "RoCE v2 IPv4 GID index $gid"
for prog in ibv_rc_pingpong ibv_ud_pingpong; do
	args=(-d rxe0 -g "$gid" -n 200)
	[ $prog = ibv_ud_pingpong ] && args+=(-s 512)
	if [ "$role" = server ]; then
		timeout 60 $prog "${args[@]}" >/tmp/$prog.out 2>&1
	else
		retry 40 timeout 60 $prog "${args[@]}" "$peer" >/tmp/$prog.out 2>&1
	fi
	rc=$?
	cat /tmp/$prog.out
	[ $rc -eq 0 ] || gfail "$prog exited $rc"
	grep -Eq '^[0-9]+ bytes in [0-9.]+ seconds' /tmp/$prog.out ||
		gfail "$prog printed no transfer figure"
	grep -Eq '^200 iters in ' /tmp/$prog.out ||
		gfail "$prog did not complete 200 iterations"
	gok "$prog: 200 iterations"
	sleep 1	# the server of the next program must listen first
done
