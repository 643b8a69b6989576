#!/usr/bin/env python3
# The IB host of rds_gateway_kernel.sh: the kernel's RDS (socket.AF_RDS,
# rds_rdma over rxe) talking through ibgwd to UDP programs on the LAN.
#
#   rds_gw_ib.py --addr IP --flow SPORT:LAN_IP:LAN_PORT:COUNT[:oversize][:w1]...
#       --export PORT:CLIENT_IP:COUNT --ready FILE [--timeout SEC]
#
# --flow: from IP:SPORT, COUNT datagrams to LAN_IP:LAN_PORT (a UDP echo on
# the LAN), sizes cycling through SIZES (16 B to 65507, the UDP limit),
# at most WINDOW unanswered; each echo must come back from LAN_IP:LAN_PORT,
# byte for byte, in order.  ":oversize": also 65508 and 100000 bytes after
# datagrams 10 and 20, which the gateway must drop (never echoed; the
# datagrams after them still are).  ":w1": one unanswered at a time (an
# echo that does not keep datagram boundaries when several wait: socat's
# PIPE).
# --export: a socket on IP:PORT that echoes every datagram to its sender;
# each must come from CLIENT_IP (the LAN client's own address, which the
# gateway gives as the RDS source); done after COUNT.
# Payload: 0-3 "RGWP", 4-7 index, 8-11 length; byte k (k >= 12) =
# (index * 13 + k) & 0xff.
# Prints "rds_gw_ib: ok ..." lines, exits 0 when every flow and the export
# are complete.
import argparse
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
    print("rds_gw_ib: FAIL: " + msg, flush=True)
    sys.exit(1)


def payload(index, size):
    o = (index * 13 + 12) & 0xFF
    return HDR.pack(b"RGWP", index, size) + PAT[o:o + size - 12]


class Flow:
    def __init__(self, sel, addr, spec):
        f = spec.split(":")
        self.sport, self.dst = int(f[0]), (f[1], int(f[2]))
        self.count = int(f[3])
        self.oversize = "oversize" in f[4:]
        self.window = 1 if "w1" in f[4:] else WINDOW
        self.sock = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.sock.bind((addr, self.sport))
        self.sent = self.got = self.bytes = 0
        self.big = 0
        sel.register(self.sock, selectors.EVENT_READ, self)

    def size(self, i):
        return SIZES[i % len(SIZES)]

    def pump(self):
        while self.sent < self.count and self.sent - self.got < self.window:
            i = self.sent
            self.sock.sendto(payload(i, self.size(i)), self.dst)
            self.sent += 1
            if self.oversize and i in (10, 20):
                n = 65508 if i == 10 else 100000
                self.sock.sendto(payload(0xFFFF0000 + i, n), self.dst)
                self.big += 1

    def rx(self):
        data, src = self.sock.recvfrom(1 << 20)
        if src != self.dst:
            die("flow %d: an answer from %r, not %r" %
                (self.sport, src, self.dst))
        i = self.got
        want = payload(i, self.size(i))
        if data != want:
            magic, idx, ln = HDR.unpack(data[:12]) if len(data) >= 12 \
                else (b"", -1, -1)
            die("flow %d: echo %d: %d bytes (index %d, length %d), "
                "wanted %d bytes" % (self.sport, i, len(data), idx, ln,
                                     len(want)))
        self.got += 1
        self.bytes += len(data)

    def done(self):
        return self.got == self.count


class Export:
    def __init__(self, sel, addr, spec):
        f = spec.split(":")
        self.port, self.client, self.count = int(f[0]), f[1], int(f[2])
        self.sock = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.sock.bind((addr, self.port))
        self.got = 0
        self.peers = set()
        sel.register(self.sock, selectors.EVENT_READ, self)

    def pump(self):
        pass

    def rx(self):
        data, src = self.sock.recvfrom(1 << 20)
        if src[0] != self.client:
            die("export %d: a datagram from %r, not from %s" %
                (self.port, src, self.client))
        self.peers.add(src)
        self.sock.sendto(data, src)
        self.got += 1

    def done(self):
        return self.got >= self.count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", required=True)
    ap.add_argument("--flow", action="append", default=[])
    ap.add_argument("--export", action="append", default=[])
    ap.add_argument("--ready")
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    sel = selectors.DefaultSelector()
    flows = [Flow(sel, a.addr, s) for s in a.flow]
    exps = [Export(sel, a.addr, s) for s in a.export]
    if a.ready:
        open(a.ready, "w").write("ready\n")
    t0 = time.time()
    end = t0 + a.timeout
    every = flows + exps
    while not all(x.done() for x in every):
        for x in flows:
            x.pump()
        left = end - time.time()
        if left <= 0:
            die("timeout: " + ", ".join(
                "flow %d %d/%d" % (f.sport, f.got, f.count) for f in flows) +
                "; " + ", ".join("export %d %d/%d" % (e.port, e.got, e.count)
                                 for e in exps))
        for key, _ in sel.select(min(left, 1.0)):
            key.data.rx()
    dt = time.time() - t0
    for f in flows:
        print("rds_gw_ib: ok flow %s:%d -> %s:%d: %d datagrams (%d..%d B, "
              "%d bytes) echoed intact and in order from %s:%d%s" %
              (a.addr, f.sport, f.dst[0], f.dst[1], f.got, min(SIZES),
               max(SIZES), f.bytes, f.dst[0], f.dst[1],
               ", %d oversize sent" % f.big if f.oversize else ""),
              flush=True)
    for e in exps:
        print("rds_gw_ib: ok export %s:%d: %d datagrams from %s echoed" %
              (a.addr, e.port, e.got,
               " ".join("%s:%d" % p for p in sorted(e.peers))), flush=True)
    print("rds_gw_ib: ok in %.1f s" % dt, flush=True)


main()
