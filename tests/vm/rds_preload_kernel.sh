#!/bin/bash
# The user's path against the kernel's RDS/IB: on guest a, with no rds
# module, an unmodified python3 AF_RDS program (tests/vm/guest/rds_kpeer.py)
# under libibgw_preload.so, the host's RDS service being ipoibd
# --sdp-only --fabric verbs:rxe0; on guest b the kernel's rds_rdma with
# the same program.  Every case and check of tests/vm/rds_kernel.sh
# (which this runs with --preload): 16 B to 1 MiB both ways, 16 ports,
# 10,000 messages on two, a burst past b's 16 KiB receive buffer, pings
# both ways, b's modules reloaded under traffic, the capture decoded by
# tshark, b's dmesg.
exec bash "$(dirname "$0")/rds_kernel.sh" --preload
