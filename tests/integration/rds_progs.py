#!/usr/bin/env python3
# Small unmodified AF_RDS programs for rds_preload.sh: plain python3
# socket calls, as against the kernel's RDS; run under
# LD_PRELOAD=libibgw_preload.so.  Each prints what it checked and exits
# non-zero on the first thing that is not as the kernel's RDS does it.
#   echo-server ADDR PORT N       answer N datagrams (0: until killed)
#                                 to their senders, print each sender
#   echo-client LADDR[:PORT] RADDR RPORT SIZE...  send each size, check
#                                 the echo (bytes, sender address and
#                                 port); bound to PORT, else to port 0
#   multi-server ADDR PORT0 N M   N sockets on PORT0.., M echoes each
#   multi-client LADDR RADDR PORT0 N M  N sockets to those, M each
#   flood-send LADDR RADDR RPORT COUNT SIZE  COUNT numbered datagrams
#   flood-recv ADDR PORT COUNT DELAY  sleep DELAY s, then receive COUNT
#                                 in order, none lost
#   ready LADDR RADDR RPORT       poll, select, epoll readiness against
#                                 an echo server; MSG_PEEK, MSG_TRUNC;
#                                 non-blocking EAGAIN; writev, readv
#                                 (RDS_KERNEL=1 in the environment:
#                                 writev EOPNOTSUPP, as the kernel's)
#   errors LADDR FOREIGN          the kernel's error codes
#   fork LADDR RADDR RPORT        a forked child uses the parent's socket
#   ping LADDR RADDR              an RDS ping (port 0) and its pong
#   exec LADDR RADDR RPORT        the socket after os.dup and in an
#                                 exec()ed program (socket(fileno=...))
#   fd-use FD RADDR RPORT         (exec's child) use the inherited fd
#   sink ADDR PORT SECONDS        bind, read nothing, exit
#   nb-cong LADDR RADDR RPORT     non-blocking 64 KiB datagrams to a
#                                 sink until ENOBUFS (the congested port)
#   orphan ADDR PORT              bind, block in recv until the service
#                                 goes: ECONNRESET
#   udp-loop N                    no AF_RDS: UDP over the loopback
#   bench-recv KIND ADDR PORT     (rds_bench.sh; KIND rds or udp) count
#                                 datagrams until 2 s idle, print the rate
#   bench-send KIND LADDR RADDR RPORT SECS SIZE  send for SECS seconds
#   bench-rr KIND LADDR RADDR RPORT N  N round trips against echo-server
#                                 (udp: a UDP echo), print the mean
import errno
import os
import select
import socket
import struct
import sys
import time

MIB = 1 << 20


def rds():
    return socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)


def big(s):
    # as an RDS program must, for messages past rds_sk_sndbuf
    # (SO_SNDBUF/2): root's FORCE forms lift net.core.wmem_max
    s.setsockopt(socket.SOL_SOCKET, 32, 4 * MIB)   # SO_SNDBUFFORCE
    s.setsockopt(socket.SOL_SOCKET, 33, 4 * MIB)   # SO_RCVBUFFORCE


def die(msg):
    print("FAIL:", msg, flush=True)
    sys.exit(1)


def payload(n, seed=0):
    b = bytes((i * 7 + seed) & 0xFF for i in range(min(n, 4096)))
    return (b * (n // 4096 + 1))[:n]


def echo_server(addr, port, n):
    s = rds()
    big(s)
    s.bind((addr, int(port)))
    print("bound", s.getsockname(), flush=True)
    i = 0
    while int(n) == 0 or i < int(n):   # 0: until killed
        i += 1
        data, src = s.recvfrom(MIB + 1)
        print("from %s:%d %d" % (src[0], src[1], len(data)), flush=True)
        s.sendto(data, src)


def echo_client(laddr, raddr, rport, *sizes):
    s = rds()
    big(s)
    laddr, _, lport = laddr.partition(":")
    s.bind((laddr, int(lport or 0)))
    me = s.getsockname()
    if me[0] != laddr or me[1] == 0 or (lport and me[1] != int(lport)):
        die("getsockname after bind port %s: %r" % (lport or 0, me))
    s.settimeout(20)
    for i, n in enumerate(int(x) for x in sizes):
        p = payload(n, i)
        if s.sendto(p, (raddr, int(rport))) != n:
            die("sendto of %d bytes" % n)
        data, src = s.recvfrom(MIB + 1)
        if src != (raddr, int(rport)):
            die("echo from %r, not %s:%s" % (src, raddr, rport))
        if data != p:
            die("echo of %d bytes: %d bytes back, differing" % (n, len(data)))
    print("echoed %d sizes from %s port %d" % (len(sizes), me[0], me[1]))


def multi_server(addr, port0, n, m):
    ss = []
    for i in range(int(n)):
        s = rds()
        s.bind((addr, int(port0) + i))
        ss.append(s)
    left = int(n) * int(m)
    while left:
        r, _, _ = select.select(ss, [], [], 30)
        if not r:
            die("multi-server: %d echoes left" % left)
        for s in r:
            data, src = s.recvfrom(65536)
            s.sendto(data + b"/%d" % s.getsockname()[1], src)
            left -= 1
    print("multi-server: done")


def multi_client(laddr, raddr, port0, n, m):
    ss = []
    for i in range(int(n)):
        s = rds()
        s.bind((laddr, 0))
        ss.append(s)
    ports = set(s.getsockname()[1] for s in ss)
    if len(ports) != int(n):
        die("port 0 binds gave %d distinct ports of %s" % (len(ports), n))
    for j in range(int(m)):
        for i, s in enumerate(ss):
            s.sendto(b"m%d.%d" % (i, j), (raddr, int(port0) + i))
    for i, s in enumerate(ss):
        s.settimeout(30)
        got = sorted(s.recvfrom(65536)[0] for _ in range(int(m)))
        want = sorted(b"m%d.%d/%d" % (i, j, int(port0) + i)
                      for j in range(int(m)))
        if got != want:
            die("socket %d: %r" % (i, got[:3]))
    print("multi-client: %d sockets x %s echoes right" % (len(ss), m))


def flood_send(laddr, raddr, rport, count, size):
    s = rds()
    big(s)
    s.bind((laddr, 0))
    size = int(size)
    t = time.time()
    for i in range(int(count)):
        s.sendto(struct.pack("!I", i) + payload(size - 4, i),
                 (raddr, int(rport)))
    print("flood-send: %s sent in %.2f s" % (count, time.time() - t))
    time.sleep(1)   # closing drops nothing, but let the counters settle


def flood_recv(addr, port, count, delay):
    s = rds()
    s.bind((addr, int(port)))
    print("bound", flush=True)
    time.sleep(float(delay))
    s.settimeout(30)
    for i in range(int(count)):
        data = s.recv(MIB)
        (seq,) = struct.unpack("!I", data[:4])
        if seq != i:
            die("datagram %d is number %d" % (i, seq))
        if data[4:] != payload(len(data) - 4, i):
            die("datagram %d's payload differs" % i)
    s.setblocking(False)
    try:
        s.recv(MIB)
        die("a datagram past the last")
    except BlockingIOError:
        pass
    print("flood-recv: %s in order, none lost" % count)


def ready(laddr, raddr, rport):
    s = rds()
    s.bind((laddr, 0))
    s.setblocking(False)
    try:
        s.recv(100)
        die("non-blocking recv on an empty socket returned")
    except BlockingIOError as e:
        if e.errno != errno.EAGAIN:
            die("non-blocking recv: %s" % e)
    r, w, _ = select.select([s], [s], [], 0)
    if r:
        # the kernel's rds_poll() says readable once after a congestion
        # map update anywhere on the host, with nothing to read: a program
        # tries, gets EAGAIN and looks again (ours never says it)
        try:
            s.recv(100)
            die("a recv after select on an empty socket returned")
        except BlockingIOError:
            pass
        r, w, _ = select.select([s], [s], [], 0)
    if r or not w:
        die("select on an empty socket: r %r w %r" % (r, w))
    dst = (raddr, int(rport))
    p = select.poll()
    p.register(s, select.POLLIN)
    s.sendto(b"p" * 100, dst)
    ev = p.poll(20000)
    if not ev or not ev[0][1] & select.POLLIN:
        die("poll: %r" % ev)
    peek, src = s.recvfrom(1000, socket.MSG_PEEK)
    data, src2 = s.recvfrom(1000)
    if peek != data or src != src2 or src != dst:
        die("MSG_PEEK %r/%r then %r/%r" % (peek[:8], src, data[:8], src2))
    s.sendto(b"s" * 100, dst)
    r, _, _ = select.select([s], [], [], 20)
    if not r:
        die("select: not readable")
    data, anc, flags, src = s.recvmsg(10)
    if len(data) != 10 or not flags & socket.MSG_TRUNC:
        die("recvmsg(10) of 100: %d bytes, flags 0x%x" % (len(data), flags))
    ep = select.epoll()
    ep.register(s.fileno(), select.EPOLLIN)
    s.sendto(b"e" * 100, dst)
    ev = ep.poll(20)
    if not ev:
        die("epoll: nothing")
    buf = bytearray(10)
    n = s.recv_into(buf, 10, socket.MSG_TRUNC)
    if n != 100 or bytes(buf) != b"e" * 10:
        die("recv_into(10, MSG_TRUNC) of 100: %d" % n)
    if ep.poll(0.2):
        die("epoll readable after the last datagram")
    # writev and readv (connected: writev names no destination)
    s.connect(dst)
    s.setblocking(True)
    if os.environ.get("RDS_KERNEL"):
        # the kernel's own (the guest tier's oracle run): writev adds
        # MSG_EOR (sock_write_iter), which rds_sendmsg() refuses; ours
        # sends it as one datagram (docs/rds.md)
        expect_err("writev", errno.EOPNOTSUPP,
                   lambda: os.writev(s.fileno(), [b"v"]))
        if s.sendmsg([b"v" * 30, b"w" * 70]) != 100:
            die("sendmsg of two buffers: not 100 bytes")
    elif os.writev(s.fileno(), [b"v" * 30, b"w" * 70]) != 100:
        die("writev: not 100 bytes")
    a, b = bytearray(40), bytearray(100)
    n = os.readv(s.fileno(), [a, b])
    if n != 100 or bytes(a) + bytes(b[:60]) != b"v" * 30 + b"w" * 70:
        die("readv of the echo: %d bytes %r" % (n, bytes(a[:8])))
    print("ready: poll, select, epoll, MSG_PEEK, MSG_TRUNC, EAGAIN, "
          "writev, readv right")


def expect_err(what, code, fn):
    try:
        fn()
    except OSError as e:
        if e.errno != code:
            die("%s: %s, not %s" % (what, e, errno.errorcode[code]))
        print("%s: %s" % (what, errno.errorcode[code]))
        return
    die("%s: no error (want %s)" % (what, errno.errorcode[code]))


def errors(laddr, foreign):
    s = rds()
    # rds_getname(): unbound and unconnected, AF_UNSPEC and zeros
    if s.getsockname() != (0, bytes(14)):
        die("unbound getsockname %r" % (s.getsockname(),))
    expect_err("sendto before bind", errno.ENOTCONN,
               lambda: s.sendto(b"x", (laddr, 4000)))
    expect_err("bind 0.0.0.0", errno.EINVAL, lambda: s.bind(("0.0.0.0", 1)))
    expect_err("bind 224.0.0.1", errno.EINVAL,
               lambda: s.bind(("224.0.0.1", 1)))
    expect_err("bind a foreign address", errno.EADDRNOTAVAIL,
               lambda: s.bind((foreign, 4000)))
    s.bind((laddr, 4000))
    if s.getsockname() != (laddr, 4000):
        die("getsockname %r" % (s.getsockname(),))
    expect_err("bind twice", errno.EINVAL, lambda: s.bind((laddr, 4001)))
    t = rds()
    expect_err("bind a taken port", errno.EADDRINUSE,
               lambda: t.bind((laddr, 4000)))
    expect_err("send unconnected", errno.ENOTCONN, lambda: s.send(b"x"))
    expect_err("sendto multicast", errno.EINVAL,
               lambda: s.sendto(b"x", ("224.0.0.1", 1)))
    # the default sndbuf: net.core.wmem_default as it is (sock_init_data;
    # only a value set is doubled); rds_sk_sndbuf is half of SO_SNDBUF
    sb = s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    wdef = int(open("/proc/sys/net/core/wmem_default").read())
    if sb != wdef:
        die("the default SO_SNDBUF reads %d, net.core.wmem_default %d" %
            (sb, wdef))
    expect_err("sendto past sndbuf/2", errno.EMSGSIZE,
               lambda: s.sendto(b"x" * (sb // 2 + 1), (laddr, 4000)))
    big(s)
    if s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) != 8 * MIB:
        die("SO_SNDBUFFORCE 4 MiB reads back %d" %
            s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF))
    expect_err("sendto past 1 MiB", errno.EMSGSIZE,
               lambda: s.sendto(b"x" * (MIB + 1), (laddr, 4000)))
    expect_err("MSG_OOB", errno.EOPNOTSUPP,
               lambda: s.sendto(b"x", socket.MSG_OOB, (laddr, 4000)))
    expect_err("SOL_RDS unknown option", errno.ENOPROTOOPT,
               lambda: s.setsockopt(276, 99, 1))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    if s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) != 131072:
        die("SO_SNDBUF 65536 reads back %d" %
            s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF))
    if s.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN) != socket.AF_RDS:
        die("SO_DOMAIN is not AF_RDS")
    if s.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE) != \
            socket.SOCK_SEQPACKET:
        die("SO_TYPE is not SOCK_SEQPACKET")
    expect_err("socket(AF_RDS, SOCK_DGRAM)", errno.ESOCKTNOSUPPORT,
               lambda: socket.socket(socket.AF_RDS, socket.SOCK_DGRAM))
    # RDS_CANCEL_SENT_TO takes a sockaddr_in
    s.setsockopt(276, 1, struct.pack("=HH4s8x", socket.AF_INET,
                                     socket.htons(4000),
                                     socket.inet_aton(laddr)))
    print("RDS_CANCEL_SENT_TO: 0")
    expect_err("RDS_CANCEL_SENT_TO unbound", errno.ENOTCONN,
               lambda: t.setsockopt(276, 1, struct.pack(
                   "=HH4s8x", socket.AF_INET, socket.htons(4000),
                   socket.inet_aton(laddr))))
    s.connect((laddr, 4000))
    if s.getpeername() != (laddr, 4000):
        die("getpeername after connect %r" % (s.getpeername(),))
    print("errors: as the kernel's RDS")


def fork(laddr, raddr, rport):
    s = rds()
    s.bind((laddr, 0))
    s.settimeout(20)
    pid = os.fork()
    if pid == 0:
        try:
            s.sendto(b"from the child", (raddr, int(rport)))
            data, src = s.recvfrom(100)
            os._exit(0 if data == b"from the child" else 3)
        except Exception as e:  # noqa: BLE001
            print("child:", e, flush=True)
            os._exit(2)
    _, st = os.waitpid(pid, 0)
    if os.WEXITSTATUS(st) != 0:
        die("the child failed: %d" % os.WEXITSTATUS(st))
    s.sendto(b"from the parent", (raddr, int(rport)))
    data, _ = s.recvfrom(100)
    if data != b"from the parent":
        die("parent's echo %r" % data)
    print("fork: the child and then the parent used the socket")


def fd_use(fd, raddr, rport):
    # as for the kernel's RDS, whose getsockname says AF_INET, python3
    # must be told the family
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0,
                      fileno=int(fd))
    if s.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN) != socket.AF_RDS:
        die("inherited fd: SO_DOMAIN is not AF_RDS")
    s.settimeout(20)
    s.sendto(b"after exec", (raddr, int(rport)))
    data, src = s.recvfrom(100)
    if data != b"after exec" or src != (raddr, int(rport)):
        die("after exec: %r from %r" % (data, src))
    print("fd-use: bound to %r" % (s.getsockname(),))


def exec_(laddr, raddr, rport):
    import subprocess
    s = rds()
    s.bind((laddr, 0))
    me = s.getsockname()
    d = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0,
                      fileno=os.dup(s.fileno()))
    if d.getsockname() != me:
        die("dup: name %r" % (d.getsockname(),))
    d.settimeout(20)
    d.sendto(b"dup", (raddr, int(rport)))
    if d.recvfrom(100) != (b"dup", (raddr, int(rport))):
        die("dup: the echo")
    d.close()
    r = subprocess.run([sys.executable, sys.argv[0], "fd-use",
                        str(s.fileno()), raddr, rport],
                       pass_fds=[s.fileno()], capture_output=True, text=True)
    if r.returncode != 0 or ("'%s', %d" % me) not in r.stdout:
        die("exec: %s %s" % (r.stdout, r.stderr))
    print("exec: the socket after os.dup and in an exec()ed python3 (%s)"
          % r.stdout.strip())


def ping(laddr, raddr):
    s = rds()
    s.bind((laddr, 0))
    s.settimeout(10)
    t = time.time()
    s.sendto(b"", (raddr, 0))
    data, src = s.recvfrom(100)
    if data != b"" or src != (raddr, 0):
        die("pong %r from %r" % (data, src))
    print("ping: pong from %s:0 in %.1f ms" % (raddr, (time.time() - t) * 1e3))


def sink(addr, port, secs):
    s = rds()
    s.bind((addr, int(port)))
    print("bound", flush=True)
    time.sleep(float(secs))


def nb_cong(laddr, raddr, rport):
    # a port nobody reads becomes congested; a non-blocking send to it
    # then fails with ENOBUFS, as the kernel's rds_cong_wait() answers
    # (EAGAIN from a burst the service has not read yet clears at once;
    # a lasting one is not the kernel's answer)
    s = rds()
    big(s)
    s.bind((laddr, 0))
    s.setblocking(False)
    p = payload(65536)
    t = time.time()
    bursts = 0
    for i in range(4000):
        try:
            s.sendto(p, (raddr, int(rport)))
            continue
        except BlockingIOError as e:
            if e.errno != errno.EAGAIN:
                die("non-blocking send: %s" % e)
        except OSError as e:
            if e.errno != errno.ENOBUFS:
                die("non-blocking send: %s" % e)
            # and again: the port stays congested while nobody reads
            try:
                s.sendto(b"x", (raddr, int(rport)))
                die("a send right after ENOBUFS went through")
            except OSError as e2:
                if e2.errno != errno.ENOBUFS:
                    die("the send after ENOBUFS: %s" % e2)
            print("nb-cong: ENOBUFS after %d datagrams (%.1f MiB, %d short "
                  "EAGAINs before) in %.1f s" % (i, i / 16, bursts,
                                                 time.time() - t))
            return
        _, w, _ = select.select([], [s], [], 2)
        if w:
            bursts += 1
            continue
        die("EAGAIN for 2 s after %d datagrams: no ENOBUFS" % i)
    die("4000 datagrams to a port nobody reads and no ENOBUFS")


def orphan(addr, port):
    s = rds()
    s.bind((addr, int(port)))
    print("bound", flush=True)
    try:
        s.recv(100)
    except ConnectionResetError:
        print("orphan: ECONNRESET when the service went")
        return
    die("recv on a socket whose service went: no ECONNRESET")


def udp_loop(n):
    a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    a.bind(("127.0.0.1", 0))
    b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    b.bind(("127.0.0.1", 0))
    an, bn = a.getsockname(), b.getsockname()
    for i in range(int(n)):
        a.sendto(b"%d" % i, bn)
        d, src = b.recvfrom(100)
        if d != b"%d" % i or src != an:
            die("udp %d" % i)
    print("udp-loop: %s datagrams" % n)


def bsock(kind):
    if kind == "rds":
        s = rds()
        big(s)
        return s
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, 33, 4 * MIB)
    return s


def bench_recv(kind, addr, port):
    s = bsock(kind)
    s.bind((addr, int(port)))
    print("bound", flush=True)
    n = b = 0
    t0 = t1 = None
    s.settimeout(30)
    while True:
        try:
            d = s.recv(MIB)
        except socket.timeout:
            break
        if t0 is None:
            t0 = time.time()
            s.settimeout(2)
        t1 = time.time()
        n += 1
        b += len(d)
    el = (t1 - t0) if t0 and t1 > t0 else 1e-9
    print("%s: %d datagrams, %d bytes in %.2f s: %.0f/s, %.1f Mb/s"
          % (kind, n, b, el, n / el, b * 8 / el / 1e6))


def bench_send(kind, laddr, raddr, rport, secs, size):
    s = bsock(kind)
    s.bind((laddr, 0))
    p = payload(int(size))
    end = time.time() + float(secs)
    n = 0
    while time.time() < end:
        for _ in range(64):
            s.sendto(p, (raddr, int(rport)))
        n += 64
    print("%s: sent %d of %s bytes" % (kind, n, size), flush=True)
    # as with the kernel's RDS, a close drops what is not yet sent
    time.sleep(2)


def bench_rr(kind, laddr, raddr, rport, n):
    s = bsock(kind)
    s.bind((laddr, 0))
    s.settimeout(5)
    t = time.time()
    for i in range(int(n)):
        s.sendto(b"%d" % i, (raddr, int(rport)))
        s.recvfrom(100)
    print("%s: %s round trips, %.1f us each"
          % (kind, n, (time.time() - t) / int(n) * 1e6))


def udp_echo(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, int(port)))
    print("bound", flush=True)
    while True:
        d, src = s.recvfrom(65536)
        s.sendto(d, src)


def main():
    cmds = {"echo-server": echo_server, "echo-client": echo_client,
            "multi-server": multi_server, "multi-client": multi_client,
            "flood-send": flood_send, "flood-recv": flood_recv,
            "ready": ready, "errors": errors, "fork": fork, "ping": ping,
            "sink": sink, "nb-cong": nb_cong, "orphan": orphan,
            "exec": exec_, "fd-use": fd_use,
            "bench-recv": bench_recv, "bench-send": bench_send,
            "bench-rr": bench_rr, "udp-echo": udp_echo,
            "udp-loop": udp_loop}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__ or "see the header", file=sys.stderr)
        sys.exit(2)
    cmds[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
