# Inside a guest: the kernel's RDS over IB (rds_rdma) on rxe, datagrams both
# ways with python3's AF_RDS (rds.py), then the kernel's own word that the
# RDS/IB connection came up.  rds.sh initiator|responder MY_IPV4 PEER_IPV4
. "$(dirname "$0")/../guest.bash"
role=$1 me=$2 peer=$3
wait_peer "$peer"
python3 "$(dirname "$0")/rds.py" "$role" "$me" "$peer" ||
	gfail "rds.py $role failed"
dmesg | grep 'RDS/IB' || true
# rds_ib_cm_connect_complete(): "RDS/IB: Active|Passive conn connected
# <laddr,faddr,tos> version 3.1"
dmesg | grep -Eq "RDS/IB: (Active|Passive) conn connected <::ffff:$me,::ffff:$peer,0> version" ||
	gfail "dmesg shows no RDS/IB connection $me -> $peer"
gok "dmesg: RDS/IB conn connected <::ffff:$me,::ffff:$peer,0>"
