#!/usr/bin/env python3
# Send one unsolicited Neighbour Advertisement (RFC 4861 4.4) to all nodes:
#   na_send.py IFACE TARGET [--override] [--mac MAC]
# From the interface's link-local address, hop limit 255, the Solicited
# flag clear; with --mac a target link-layer option with that Ethernet
# address (without one, ipoibd puts its own 20-byte address in).  The
# kernel computes the ICMPv6 checksum of a raw ICMPv6 socket.
import argparse
import socket
import struct

ap = argparse.ArgumentParser()
ap.add_argument("iface")
ap.add_argument("target")
ap.add_argument("--override", action="store_true")
ap.add_argument("--mac")
a = ap.parse_args()

flags = 0x20 if a.override else 0
msg = struct.pack("!BBHB3x16s", 136, 0, 0, flags,
                  socket.inet_pton(socket.AF_INET6, a.target))
if a.mac:
    msg += bytes([2, 1]) + bytes(int(x, 16) for x in a.mac.split(":"))
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
idx = socket.if_nametoindex(a.iface)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, idx)
s.sendto(msg, ("ff02::1", 0, 0, idx))
