#!/usr/bin/env python3
# The LAN host of rds_gateway_kernel.sh: plain UDP (python3 sockets) in a
# network namespace behind ibgwd.
#
#   rds_gw_lan.py [--echo IP:PORT:COUNT:SRC_IP:SRC_PORT]...
#       [--client IP:PORT:DST_IP:DST_PORT:COUNT]... [--ready FILE]
#       [--timeout SEC]
#
# --echo: a UDP echo on IP:PORT; every datagram must be rds_gw_ib.py's
# payload, index 0, 1, 2 ... in order (none lost, duplicated or corrupt),
# from SRC_IP:SRC_PORT (what the gateway documents: its LAN address and
# the mapping's port, the IB sender's own when free), never over 65507
# bytes; done after COUNT.
# --client: from IP:PORT, COUNT datagrams (the same payload and sizes) to
# DST_IP:DST_PORT (the gateway's export), at most 8 unanswered; each
# answer must come from DST_IP:DST_PORT, byte for byte, in order.
import argparse
import os
import selectors
import socket
import struct
import sys
import time

HDR = struct.Struct("!4sII")
SIZES = [16, 100, 1400, 4095, 4096, 4097, 8192, 12289, 30000, 65507]
WINDOW = 8
PAT = bytes(i & 0xFF for i in range(256 + 70000))


def die(msg):
    print("rds_gw_lan: FAIL: " + msg, flush=True)
    sys.exit(1)


def payload(index, size):
    o = (index * 13 + 12) & 0xFF
    return HDR.pack(b"RGWP", index, size) + PAT[o:o + size - 12]


def udp(ip, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 23)
    s.bind((ip, port))
    s.setblocking(False)
    return s


class Echo:
    def __init__(self, sel, spec):
        f = spec.split(":")
        self.me = (f[0], int(f[1]))
        self.count = int(f[2])
        self.src = (f[3], int(f[4]))
        self.sock = udp(*self.me)
        self.got = 0
        sel.register(self.sock, selectors.EVENT_READ, self)

    def pump(self):
        pass

    def rx(self):
        data, src = self.sock.recvfrom(1 << 17)
        if src != self.src:
            die("echo %d: a datagram from %r, not %r" %
                (self.me[1], src, self.src))
        i = self.got
        if len(data) < 12:
            die("echo %d: a %d-byte datagram" % (self.me[1], len(data)))
        magic, idx, ln = HDR.unpack(data[:12])
        if idx >= 0xFFFF0000:
            die("echo %d: oversize datagram %d (%d bytes) got through" %
                (self.me[1], idx & 0xFFFF, len(data)))
        if data != payload(i, SIZES[i % len(SIZES)]):
            die("echo %d: datagram %d: index %d, %d bytes: lost, reordered "
                "or corrupt" % (self.me[1], i, idx, len(data)))
        self.sock.sendto(data, src)
        self.got += 1

    def done(self):
        return self.got >= self.count

    def report(self):
        return ("echo %s:%d: %d datagrams from %s:%d intact and in order" %
                (self.me + (self.got,) + self.src))


class Client:
    def __init__(self, sel, spec):
        f = spec.split(":")
        self.me = (f[0], int(f[1]))
        self.dst = (f[2], int(f[3]))
        self.count = int(f[4])
        self.sock = udp(*self.me)
        self.sent = self.got = 0
        sel.register(self.sock, selectors.EVENT_READ, self)

    def pump(self):
        while self.sent < self.count and self.sent - self.got < WINDOW:
            i = self.sent
            self.sock.sendto(payload(i, SIZES[i % len(SIZES)]), self.dst)
            self.sent += 1

    def rx(self):
        data, src = self.sock.recvfrom(1 << 17)
        if src != self.dst:
            die("client %d: an answer from %r, not %r" %
                (self.me[1], src, self.dst))
        i = self.got
        if data != payload(i, SIZES[i % len(SIZES)]):
            die("client %d: answer %d: %d bytes: lost, reordered or "
                "corrupt" % (self.me[1], i, len(data)))
        self.got += 1

    def done(self):
        return self.got >= self.count

    def report(self):
        return ("client %s:%d -> %s:%d: %d datagrams answered intact and in "
                "order from %s:%d" % (self.me + self.dst + (self.got,) +
                                      self.dst))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--echo", action="append", default=[])
    ap.add_argument("--client", action="append", default=[])
    ap.add_argument("--ready")
    ap.add_argument("--go", help="clients start once this file exists")
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    sel = selectors.DefaultSelector()
    every = [Echo(sel, s) for s in a.echo] + [Client(sel, s)
                                               for s in a.client]
    if a.ready:
        open(a.ready, "w").write("ready\n")
    end = time.time() + a.timeout
    while not all(x.done() for x in every):
        if not a.go or os.path.exists(a.go):
            for x in every:
                x.pump()
        left = end - time.time()
        if left <= 0:
            die("timeout: " + "; ".join(x.report() for x in every))
        for key, _ in sel.select(min(left, 0.5)):
            try:
                key.data.rx()
            except BlockingIOError:
                pass
    for x in every:
        print("rds_gw_lan: ok " + x.report(), flush=True)


main()
