#!/usr/bin/env python3
# mcast6_recv.py GROUP PORT IFNAME SIZE: join the IPv6 GROUP on IFNAME,
# print "listening", then count the datagrams of SIZE bytes to PORT until
# 4 s pass without one, and print "received N" (gateway.sh, ipoib_cm.sh:
# multicast above an MTU crossing in fragments).
import socket
import struct
import sys

s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("::", int(sys.argv[2])))
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
             socket.inet_pton(socket.AF_INET6, sys.argv[1]) +
             struct.pack("@I", socket.if_nametoindex(sys.argv[3])))
print("listening", flush=True)
s.settimeout(4)
n = 0
try:
    while True:
        if len(s.recv(65535)) == int(sys.argv[4]):
            n += 1
except socket.timeout:
    pass
print("received", n, flush=True)
