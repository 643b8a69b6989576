#!/usr/bin/env python3
# The kernel-side twin of tests/tools/rdspeer: the same command line, the
# same payload and the same --send/--expect/--echo/--ping semantics, over
# the kernel's RDS (socket.AF_RDS, SOCK_SEQPACKET; rds + rds_rdma loaded).
#
#   rds_kpeer.py --addr IP [--bind PORT]... [--send DST:DPORT:SPORT:COUNT:SIZE[-MAX]]...
#       [--expect SRC:SPORT:DPORT:COUNT[:FIRST]]... [--echo PORT]...
#       [--ping DST[:SPORT]]... [--timeout SEC] [--linger SEC] [--stats] [-v]
#       [--rcvbuf BYTES] [--sndbuf BYTES] [--hold SEC] [--after-pong]
#       [--rtt DST:DPORT:SPORT:COUNT:SIZE] [--wait-acked] [--ready FILE]
#       [--go FILE]
#
# Payload, big-endian: 0-3 "RDSP", 4-5 sport, 6-7 dport, 8-11 index,
# 12-15 total length; byte k (k >= 16) = (index * 7 + k) & 0xff; sizes
# uniform in SIZE..MAX from a generator seeded by the ports.
#
# --expect: the flow's messages arrive in order, index 0 (or FIRST) to
# COUNT-1, none lost, duplicated or corrupt; indices below FIRST are
# tolerated and counted as "resent" (what a peer resends after the
# kernel's restart).  Anything else on a bound port fails the run.
# --echo PORT: every message to PORT goes back to its sender, from PORT.
# --ping DST[:SPORT]: a zero-length message to DST port 0, from SPORT (an
# ephemeral port if none); answered by an empty message from DST port 0
# (net/rds/recv.c rds_recv_incoming -> rds_send_pong).  Repeated every
# 2 s until answered.
# Kernel-side extras: --rcvbuf/--sndbuf set SO_RCVBUF/SO_SNDBUF on every
# socket; --hold SEC reads nothing for SEC after the first message comes
# (a burst beyond the receive buffer: the kernel marks the port congested
# and tells the sender); --after-pong starts the sends once every ping is
# answered (the peer is up, its ports bound); --rtt: first of all, COUNT
# messages one at a time to an echo port, each waited for, the round
# trips reported; --ready FILE: written once every socket is bound;
# --go FILE: the sends start once FILE exists (and the pings are answered);
# --wait-acked: before exiting, wait until the kernel holds no message
# unsent (RDS_INFO_SEND_MESSAGES empty) and none unacknowledged
# (_RETRANS_MESSAGES empty, or unchanged for 2 s: see wait_acked), so
# that closing the socket drops nothing the peer did not take.
#
# Exits 0 when every send is through, every expect complete, every ping
# answered; prints "rds_kpeer: ok ..." and with --stats the kernel's RDS
# counters "name value", one per line.
import argparse
import ctypes
import os
import random
import selectors
import socket
import struct
import sys
import time

SOL_RDS = 276
RDS_INFO_COUNTERS = 10000
RDS_INFO_SEND_MESSAGES = 10003
RDS_INFO_RETRANS_MESSAGES = 10004
HDR = struct.Struct("!4sHHII")
PAT = bytes(i & 0xFF for i in range(256 + (1 << 20) + 16))
VERBOSE = False
LIBC = ctypes.CDLL(None, use_errno=True)


def log(msg):
    if VERBOSE:
        print("rds_kpeer: " + msg, file=sys.stderr, flush=True)


def die(msg):
    print("rds_kpeer: FAIL: " + msg, flush=True)
    sys.exit(1)


def payload(sport, dport, index, size):
    size = max(size, 16)
    o = (index * 7 + 16) & 0xFF
    return HDR.pack(b"RDSP", sport, dport, index, size) + PAT[o:o + size - 16]


def check(data, sport, dport):
    """the index of a well-formed message from sport to dport, else why not"""
    if len(data) < 16:
        return None, "%d bytes, shorter than the header" % len(data)
    magic, hs, hd, index, total = HDR.unpack_from(data)
    if magic != b"RDSP":
        return None, "no RDSP magic"
    if (hs, hd) != (sport, dport):
        return None, "header ports %d:%d, not %d:%d" % (hs, hd, sport, dport)
    if total != len(data):
        return None, "index %d: %d bytes, header says %d" % (index, len(data), total)
    o = (index * 7 + 16) & 0xFF
    if data[16:] != PAT[o:o + total - 16]:
        return None, "index %d (%d bytes): wrong contents" % (index, total)
    return index, None


class Flow:
    """one --expect"""

    def __init__(self, spec):
        f = spec.split(":")
        if len(f) not in (4, 5):
            die("--expect SRC:SPORT:DPORT:COUNT[:FIRST], not %s" % spec)
        self.src, self.sport, self.dport = f[0], int(f[1]), int(f[2])
        self.count = int(f[3])
        self.first = int(f[4]) if len(f) == 5 else 0
        self.next = self.first
        self.resent = 0
        self.bytes = 0
        self.t0 = self.t1 = None

    def done(self):
        return self.next >= self.count

    def take(self, data):
        index, why = check(data, self.sport, self.dport)
        if why:
            die("from %s:%d to %d: %s" % (self.src, self.sport, self.dport, why))
        if index < self.first:
            self.resent += 1
            return
        if index != self.next:
            die("from %s:%d to %d: index %d, expected %d (%s)" %
                (self.src, self.sport, self.dport, index, self.next,
                 "lost" if index > self.next else "duplicate or reordered"))
        now = time.monotonic()
        if self.t0 is None:
            self.t0 = now
        self.t1 = now
        self.next += 1
        self.bytes += len(data)


class Send:
    """one --send: COUNT messages, blocking sendto (the kernel waits for
    acknowledgements when the send buffer is full, and for the port when
    the peer says it is congested)"""

    def __init__(self, spec):
        f = spec.split(":")
        if len(f) != 5:
            die("--send DST:DPORT:SPORT:COUNT:SIZE[-MAX], not %s" % spec)
        self.dst, self.dport, self.sport = f[0], int(f[1]), int(f[2])
        self.count = int(f[3])
        lo, _, hi = f[4].partition("-")
        self.lo, self.hi = int(lo), int(hi or lo)
        if not 0 <= self.lo <= self.hi <= (1 << 20):
            die("--send sizes %s: 0..1048576" % f[4])
        self.rng = random.Random((self.sport << 16) | self.dport)
        self.index = 0
        self.bytes = 0

    def next_size(self):
        return self.rng.randint(self.lo, self.hi)


class Peer:
    def __init__(self, a):
        self.a = a
        self.sel = selectors.DefaultSelector()
        self.socks = {}
        self.flows = {}
        self.echo = set(a.echo)
        self.pings = []
        for p in a.bind + a.echo:
            self.sock(p)
        for spec in a.expect:
            fl = Flow(spec)
            self.flows[(fl.src, fl.sport, fl.dport)] = fl
            self.sock(fl.dport)
        self.sends = [Send(s) for s in a.send]
        for s in self.sends:
            self.sock(s.sport)
        for spec in a.ping:
            dst, _, sp = spec.partition(":")
            port = self.sock(int(sp) if sp else 0)
            self.pings.append({"dst": dst, "sport": port, "sent": 0,
                               "last": 0.0, "rtt": None})
        if a.rtt:
            self.sock(int(a.rtt.split(":")[2]))
        self.echoed = 0
        self.unacked = 0

    def sock(self, port):
        if port and port in self.socks:
            return port
        s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
        if self.a.rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.a.rcvbuf)
        if self.a.sndbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.a.sndbuf)
        try:
            s.bind((self.a.addr, port))
        except OSError as e:
            die("bind %s:%d: %s" % (self.a.addr, port, e))
        port = s.getsockname()[1]
        self.socks[port] = s
        self.sel.register(s, selectors.EVENT_READ, port)
        log("bound %s:%d" % (self.a.addr, port))
        return port

    def deadline_left(self):
        left = self.deadline - time.monotonic()
        if left <= 0:
            die("timed out: " + self.pending())
        return left

    def pending(self):
        out = []
        for fl in self.flows.values():
            if not fl.done():
                out.append("expect %s:%d:%d at %d of %d" %
                           (fl.src, fl.sport, fl.dport, fl.next, fl.count))
        for s in self.sends:
            if s.index < s.count:
                out.append("send to %s:%d at %d of %d" %
                           (s.dst, s.dport, s.index, s.count))
        for p in self.pings:
            if p["rtt"] is None:
                out.append("ping %s unanswered" % p["dst"])
        return "; ".join(out) or "nothing"

    def on_message(self, port, data, addr):
        src, sport = addr[0], addr[1]
        if sport == 0 and len(data) == 0:
            for p in self.pings:
                if p["dst"] == src and p["sport"] == port and p["rtt"] is None:
                    p["rtt"] = time.monotonic() - p["last"]
                    log("pong from %s to %d" % (src, port))
                    return
            log("a pong from %s to %d nobody waits for" % (src, port))
            return
        if port in self.echo:
            self.socks[port].sendto(data, (src, sport))
            self.echoed += 1
            return
        fl = self.flows.get((src, sport, port))
        if fl is None:
            die("a message of %d bytes from %s:%d to %d nobody expects" %
                (len(data), src, sport, port))
        fl.take(data)

    def poll(self, timeout):
        """read what is there (or wait up to timeout for it)"""
        for key, _ in self.sel.select(timeout):
            s = key.fileobj
            while True:
                try:
                    data, _, flags, addr = s.recvmsg(1 << 20 | 64, 0,
                                                     socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                if flags & socket.MSG_TRUNC:
                    die("a message over 1 MiB from %s" % (addr,))
                self.on_message(key.data, data, addr)

    def ping_all(self):
        now = time.monotonic()
        for p in self.pings:
            if p["rtt"] is None and now - p["last"] >= 2.0:
                p["last"] = now
                p["sent"] += 1
                self.socks[p["sport"]].sendto(b"", (p["dst"], 0))

    def pings_done(self):
        return all(p["rtt"] is not None for p in self.pings)

    def all_done(self):
        return (self.pings_done() and
                all(fl.done() for fl in self.flows.values()) and
                all(s.index >= s.count for s in self.sends))

    def send_some(self, budget):
        """up to budget messages, round robin over the sends"""
        n = 0
        for s in self.sends:
            sk = self.socks[s.sport]
            while s.index < s.count and n < budget:
                size = s.next_size()
                msg = payload(s.sport, s.dport, s.index, size)
                try:
                    sk.sendto(msg, socket.MSG_DONTWAIT, (s.dst, s.dport))
                except (BlockingIOError, OSError) as e:
                    if isinstance(e, BlockingIOError) or e.errno in (11, 105):
                        # EAGAIN (send buffer half full) or ENOBUFS
                        # (congested port): the sizes' generator rewinds
                        s.rng.setstate(self.rngstate[s])
                        return n, True
                    die("sendto %s:%d: %s" % (s.dst, s.dport, e))
                self.rngstate[s] = s.rng.getstate()
                s.index += 1
                s.bytes += len(msg)
                n += 1
        return n, False

    def run(self):
        a = self.a
        self.deadline = time.monotonic() + a.timeout
        self.rngstate = {s: s.rng.getstate() for s in self.sends}
        if a.ready:
            open(a.ready, "w").write("ready\n")
        if a.rtt:
            self.rtt_run(a.rtt)
        t0 = time.monotonic()
        first_msg = None
        sending = not a.after_pong and not a.go
        while True:
            self.deadline_left()
            self.ping_all()
            if not sending and self.pings_done() and (
                    not a.go or os.path.exists(a.go)):
                sending = True
                t0 = time.monotonic()
            blocked = False
            if sending and self.sends:
                _, blocked = self.send_some(64)
            if a.hold and first_msg is None:
                if self.sel.select(0.05):
                    first_msg = time.monotonic()
                    log("holding the receive queue for %.1f s" % a.hold)
                    while time.monotonic() - first_msg < a.hold:
                        self.ping_all()
                        if sending:
                            self.send_some(64)
                        time.sleep(0.05)
                continue
            if self.all_done():
                break
            busy = sending and not blocked and any(
                s.index < s.count for s in self.sends)
            self.poll(0 if busy else (0.01 if blocked else 0.2))
        if a.wait_acked:
            self.wait_acked()
        # with --wait-acked: until every message is acknowledged, as
        # rdspeer counts
        t_sent = time.monotonic() - t0
        if a.linger:
            end = time.monotonic() + a.linger
            while time.monotonic() < end:
                self.poll(max(0.0, end - time.monotonic()))
        self.report(t_sent)

    def rtt_run(self, spec):
        f = spec.split(":")
        dst, dport, sport, count, size = f[0], int(f[1]), int(f[2]), int(f[3]), int(f[4])
        self.sock(sport)
        sk = self.socks[sport]
        self.sel.unregister(sk)
        sk.settimeout(self.deadline_left())
        rtts = []
        for i in range(count):
            msg = payload(sport, dport, i, size)
            t = time.monotonic()
            sk.sendto(msg, (dst, dport))
            while True:
                try:
                    data, addr = sk.recvfrom(1 << 20)
                except socket.timeout:
                    die("rtt: no echo of %d" % i)
                if addr[1] == dport:
                    break
            rtts.append(time.monotonic() - t)
            if data != msg:
                die("rtt: echo %d differs" % i)
        rtts.sort()
        print("rds_kpeer: rtt %d msgs of %d bytes median_us %d p90_us %d min_us %d"
              % (count, size, rtts[len(rtts) // 2] * 1e6,
                 rtts[len(rtts) * 9 // 10] * 1e6, rtts[0] * 1e6), flush=True)

    def info(self, opt):
        """RDS_INFO_* through libc (Python's getsockopt stops at 1024
        bytes); a too small buffer gets ENOSPC and the length needed"""
        fd = next(iter(self.socks.values())).fileno()
        size = 1 << 14
        while True:
            buf = ctypes.create_string_buffer(size)
            n = ctypes.c_uint32(size)
            if LIBC.getsockopt(fd, SOL_RDS, opt, buf, ctypes.byref(n)) >= 0:
                return buf.raw[:n.value]
            err = ctypes.get_errno()
            if err != 28 or size >= 1 << 26:	# ENOSPC
                die("getsockopt RDS_INFO %d: %s" % (opt, os.strerror(err)))
            size = max(size * 2, n.value)

    def wait_acked(self):
        """until the kernel has sent everything and the peer acknowledged
        it, or the unacknowledged rest has not changed for 2 s: the
        kernel sends a lone ACK only for a message flagged ACK_REQUIRED
        (ib_recv.c, rds_ib_set_ack/rds_ib_attempt_ack), so a burst's
        unflagged tail waits for an h_ack that no data carries back"""
        last, since = None, time.monotonic()
        while True:
            queued = self.info(RDS_INFO_SEND_MESSAGES)
            retrans = self.info(RDS_INFO_RETRANS_MESSAGES)
            if not queued and not retrans:
                return
            if not queued:
                if retrans != last:
                    last, since = retrans, time.monotonic()
                elif time.monotonic() - since >= 2.0:
                    self.unacked = len(retrans) // 26
                    log("%d messages sent, never acknowledged" % self.unacked)
                    return
            if time.monotonic() >= self.deadline:
                die("waiting for acknowledgements: %s unsent, %s unacknowledged"
                    % (self.describe(queued), self.describe(retrans)))
            self.poll(0.1)

    @staticmethod
    def describe(buf):
        """rds_info_message items: seq, len, laddr, faddr, lport, fport,
        flags, tos (26 bytes each, big-endian)"""
        items = [struct.unpack_from("!QI4s4sHHBB", buf, o)
                 for o in range(0, len(buf) - 25, 26)]
        if not items:
            return "none"
        return "%d (seq %d..%d, first %d bytes %d->%d flags %#x)" % (
            len(items), min(i[0] for i in items), max(i[0] for i in items),
            items[0][1], items[0][4], items[0][5], items[0][6])

    def counters(self):
        buf = self.info(RDS_INFO_COUNTERS)
        out = []
        for off in range(0, len(buf) - 39, 40):
            name = buf[off:off + 32].split(b"\0")[0].decode()
            out.append((name, struct.unpack_from("=Q", buf, off + 32)[0]))
        return out

    def report(self, t_sent):
        parts = []
        fls = list(self.flows.values())
        if fls:
            resent = sum(fl.resent for fl in fls)
            parts.append("expected %d msgs (%d flows%s)" %
                         (sum(fl.count - fl.first for fl in fls), len(fls),
                          ", %d resent" % resent if resent else ""))
        if self.sends:
            parts.append("sent %d msgs (%d flows)" %
                         (sum(s.count for s in self.sends), len(self.sends)))
        for p in self.pings:
            parts.append("ping %s rtt_us %d" % (p["dst"], p["rtt"] * 1e6))
        if self.echoed:
            parts.append("echoed %d" % self.echoed)
        if self.unacked:
            parts.append("%d sent unacknowledged" % self.unacked)
        print("rds_kpeer: ok " + ", ".join(parts), flush=True)
        if self.sends:
            n = sum(s.count for s in self.sends)
            b = sum(s.bytes for s in self.sends)
            print("rds_kpeer: sent %d msgs %d bytes in %.3f s" % (n, b, t_sent),
                  flush=True)
        for fl in self.flows.values():
            if fl.t0 is not None:
                print("rds_kpeer: received %s:%d:%d %d msgs %d bytes in %.3f s"
                      % (fl.src, fl.sport, fl.dport, fl.count - fl.first,
                         fl.bytes, fl.t1 - fl.t0), flush=True)
        if self.a.stats:
            for name, v in self.counters():
                print("%s %d" % (name, v))


def main():
    global VERBOSE
    p = argparse.ArgumentParser(prog="rds_kpeer.py")
    p.add_argument("--fabric", help="ignored (the kernel's RDS)")
    p.add_argument("--node", help="ignored")
    p.add_argument("--route", action="append", default=[], help="ignored")
    p.add_argument("--addr", required=True)
    p.add_argument("--bind", type=int, action="append", default=[])
    p.add_argument("--send", action="append", default=[])
    p.add_argument("--expect", action="append", default=[])
    p.add_argument("--echo", type=int, action="append", default=[])
    p.add_argument("--ping", action="append", default=[])
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--linger", type=float, default=0)
    p.add_argument("--stats", action="store_true")
    p.add_argument("-v", action="store_true")
    p.add_argument("--rcvbuf", type=int, default=0)
    p.add_argument("--sndbuf", type=int, default=0)
    p.add_argument("--hold", type=float, default=0)
    p.add_argument("--after-pong", action="store_true")
    p.add_argument("--rtt")
    p.add_argument("--wait-acked", action="store_true")
    p.add_argument("--ready")
    p.add_argument("--go")
    a = p.parse_args()
    VERBOSE = a.v
    try:
        socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0).close()
    except OSError as e:
        die("no AF_RDS socket (modprobe rds_rdma): %s" % e)
    Peer(a).run()


main()
