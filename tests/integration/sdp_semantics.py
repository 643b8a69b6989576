#!/usr/bin/env python3
# Program semantics over the real SDP service between two IB hosts, for
# tests/integration/sdp_semantics.sh (preload_mock.sh proves the same
# against the mock).  Plain socket code, nothing preload-aware.
#
#   server PORT [ADDR]    an accept loop: a non-blocking listener (accept
#                         gives EAGAIN when idle, select says when not),
#                         accept4 with rotating flags checked, a thread per
#                         connection serving the first line's command
#   client MODE ADDR PORT one semantic; prints "OK ..." or "BAD ..."
import ctypes
import errno
import fcntl
import hashlib
import os
import select
import signal
import socket
import struct
import sys
import termios
import threading
import time

libc = ctypes.CDLL(None, use_errno=True)


def die(msg):
    print("BAD:", msg, flush=True)
    sys.exit(1)


def recv_all(s):
    out = bytearray()
    while True:
        b = s.recv(65536)
        if not b:
            return bytes(out)
        out += b


def read_line(s):
    b = bytearray()
    while not b.endswith(b"\n"):
        c = s.recv(1)
        if not c:
            break
        b += c
    return b.decode().strip()


# --- the server --------------------------------------------------------------

def serve(c, log):
    try:
        cmd = read_line(c).split()
        if not cmd:
            return
        if cmd[0] == "echo":            # until EOF, then half-close
            while True:
                b = c.recv(65536)
                if not b:
                    break
                c.sendall(b)
            c.shutdown(socket.SHUT_WR)
        elif cmd[0] == "digest":        # sha256 and length of the rest
            d = recv_all(c)
            c.sendall(("%s %d\n" % (hashlib.sha256(d).hexdigest(),
                                    len(d))).encode())
        elif cmd[0] == "shutrd":        # stop reading; later still send
            c.shutdown(socket.SHUT_RD)
            time.sleep(1.0)
            c.sendall(b"alive\n")
            time.sleep(1.5)
        elif cmd[0] == "script":        # send N, wait S, ... ; "fin": half-close
            for step in cmd[1:]:
                if step == "fin":
                    c.shutdown(socket.SHUT_WR)
                elif step.startswith("w"):
                    time.sleep(float(step[1:]))
                else:
                    c.sendall(b"d" * int(step))
            recv_all(c)                 # until the client closes
        c.close()
    except (BrokenPipeError, ConnectionResetError):
        pass                    # a client that had what it wanted
    except Exception as e:  # noqa: BLE001
        log.write("serve %r: %r\n" % (cmd, e))
        log.flush()


def server(port, addr=""):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    ls = socket.socket(fam, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, int(port)))
    ls.listen(64)
    ls.setblocking(False)
    log = sys.stdout
    try:
        ls.accept()
        die("accept on an idle non-blocking listener succeeded")
    except BlockingIOError:
        pass
    print("listening; idle accept: EAGAIN", flush=True)
    flags = [0, socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC,
             socket.SOCK_CLOEXEC, socket.SOCK_NONBLOCK]
    n = 0
    while True:
        r, _, _ = select.select([ls], [], [], 60)
        if not r:
            continue
        f = flags[n % len(flags)]
        fd = libc.accept4(ls.fileno(), None, None, f)
        if fd < 0:
            e = ctypes.get_errno()
            if e == 11:
                log.write("spurious readiness (EAGAIN)\n")
                continue
            log.write("BAD accept4: %s\n" % os.strerror(e))
            continue
        n += 1
        nb = bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK)
        ce = bool(fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC)
        if (nb, ce) != (bool(f & socket.SOCK_NONBLOCK),
                        bool(f & socket.SOCK_CLOEXEC)):
            log.write("BAD accept4 flags %#x: nonblock %s cloexec %s\n" %
                      (f, nb, ce))
        log.write("accept4 %#x ok\n" % f)
        log.flush()
        c = socket.socket(fileno=fd)
        c.setblocking(True)
        threading.Thread(target=serve, args=(c, log), daemon=True).start()


# --- the client's modes ------------------------------------------------------

def conn(addr, port, cmd):
    c = socket.create_connection((addr, int(port)))
    c.sendall((cmd + "\n").encode())
    return c


def m_fork(addr, port):
    """Parent and child both use one socket: the child writes, the parent
    writes after it, the parent reads both echoed."""
    c = conn(addr, port, "echo")
    pid = os.fork()
    if pid == 0:
        try:
            c.sendall(b"from the child;")
            os._exit(0)
        except Exception:  # noqa: BLE001
            os._exit(1)
    _, st = os.waitpid(pid, 0)
    if st:
        die("the child's write failed")
    c.sendall(b"from the parent")
    c.shutdown(socket.SHUT_WR)
    got = recv_all(c)
    if got != b"from the child;from the parent":
        die("echo %r" % got)
    # and a child that reads: the parent writes, the child reads the echo
    c = conn(addr, port, "echo")
    c.sendall(b"x" * 100000)
    c.shutdown(socket.SHUT_WR)
    pid = os.fork()
    if pid == 0:
        os._exit(0 if recv_all(c) == b"x" * 100000 else 1)
    _, st = os.waitpid(pid, 0)
    if st:
        die("the child did not read the echo")
    print("OK fork: child and parent wrote on one socket, a child read")


def m_dup(addr, port):
    c = conn(addr, port, "echo")
    fd = c.detach()
    d = os.dup(fd)
    os.dup2(fd, 77)
    fd3 = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 90)
    os.write(d, b"dup;")
    os.close(fd)
    os.write(77, b"dup2;")
    os.write(fd3, b"F_DUPFD_CLOEXEC;")
    if not fcntl.fcntl(fd3, fcntl.F_GETFD) & fcntl.FD_CLOEXEC:
        die("F_DUPFD_CLOEXEC without FD_CLOEXEC")
    s = socket.socket(fileno=d)
    if s.getpeername()[1] != int(port):
        die("dup'd peer %r" % (s.getpeername(),))
    s.shutdown(socket.SHUT_WR)
    got = recv_all(s)
    if got != b"dup;dup2;F_DUPFD_CLOEXEC;":
        die("echo %r" % got)
    os.close(77)
    os.close(fd3)
    print("OK dup, dup2, F_DUPFD_CLOEXEC after connect, the original closed")


def m_dupearly(addr, port):
    """duplicates made before connect (dup, dup2, F_DUPFD_CLOEXEC) are the
    same socket: each carries data, keeps its FD_CLOEXEC, and knows the
    peer; a duplicate made before listen accepts"""
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    fd = socket.socket(fam, socket.SOCK_STREAM).detach()
    d = os.dup(fd)
    os.dup2(fd, 78)
    fd3 = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 91)
    c = socket.socket(fileno=fd)
    c.connect((addr, int(port)))
    c.sendall(b"echo\n")
    os.write(d, b"dup;")
    os.write(78, b"dup2;")
    os.write(fd3, b"F_DUPFD_CLOEXEC;")
    if not fcntl.fcntl(fd3, fcntl.F_GETFD) & fcntl.FD_CLOEXEC:
        die("F_DUPFD_CLOEXEC lost FD_CLOEXEC")
    if fcntl.fcntl(78, fcntl.F_GETFD) & fcntl.FD_CLOEXEC:
        die("dup2's duplicate got FD_CLOEXEC")
    for f in (d, 78, fd3):
        p = socket.socket(fileno=os.dup(f))
        if p.getpeername()[1] != int(port):
            die("fd %d: peer %r" % (f, p.getpeername()))
        p.close()
    c.close()
    s = socket.socket(fileno=d)
    s.shutdown(socket.SHUT_WR)
    got = recv_all(s)
    if got != b"dup;dup2;F_DUPFD_CLOEXEC;":
        die("echo %r" % got)
    os.close(78)
    os.close(fd3)
    s.close()
    # a listener: accept on the duplicate, connect to it over SDP
    ls = socket.socket(fam, socket.SOCK_STREAM)
    ls.bind(("", 0) if fam == socket.AF_INET else ("::", 0))
    ld = socket.socket(fileno=os.dup(ls.fileno()))
    ls.listen(4)
    me = socket.create_connection((addr, int(port))).getsockname()[0]
    k = socket.create_connection((me, ls.getsockname()[1]))
    a, _ = ld.accept()
    k.sendall(b"to the duplicate")
    if a.recv(100) != b"to the duplicate":
        die("accepted on the listener's duplicate: no data")
    print("OK dup, dup2, F_DUPFD_CLOEXEC before connect and listen")


def m_epoll(addr, port):
    # level-triggered: readable again and again while unread
    c = conn(addr, port, "script 1000 w0.5 1000 w0.5 fin")
    ep = select.epoll()
    ep.register(c.fileno(), select.EPOLLIN)
    for i in range(3):
        ev = ep.poll(5)
        if not ev or not ev[0][1] & select.EPOLLIN:
            die("level-triggered: no EPOLLIN on wait %d" % i)
    ep.close()
    c.close()
    # edge-triggered: one event per arrival
    c = conn(addr, port, "script 1000 w1 1000 w30")
    c.setblocking(False)
    ep = select.epoll()
    ep.register(c.fileno(), select.EPOLLIN | select.EPOLLET)
    if not ep.poll(5):
        die("edge-triggered: no first event")
    if ep.poll(0.3):
        die("edge-triggered: a second event without new data")
    if not ep.poll(5):
        die("edge-triggered: no event for the second arrival")
    ep.close()
    c.close()
    # EPOLLONESHOT: one event, then none until re-armed
    c = conn(addr, port, "script 1000 w30")
    ep = select.epoll()
    ep.register(c.fileno(), select.EPOLLIN | select.EPOLLONESHOT)
    if not ep.poll(5):
        die("oneshot: no event")
    if ep.poll(0.3):
        die("oneshot: a second event before re-arming")
    ep.modify(c.fileno(), select.EPOLLIN | select.EPOLLONESHOT)
    if not ep.poll(5):
        die("oneshot: no event after re-arming (data still unread)")
    ep.close()
    c.close()
    # EPOLLRDHUP on the peer's half-close
    c = conn(addr, port, "script 10 w0.3 fin")
    ep = select.epoll()
    ep.register(c.fileno(), select.EPOLLIN | select.EPOLLRDHUP)
    t = time.monotonic()
    seen = 0
    while time.monotonic() - t < 5 and not seen & select.EPOLLRDHUP:
        for _, e in ep.poll(1):
            seen |= e
            if e & select.EPOLLIN and not e & select.EPOLLRDHUP:
                c.recv(100)
    if not seen & select.EPOLLRDHUP:
        die("no EPOLLRDHUP on the peer's half-close (events %#x)" % seen)
    # still writable after the peer's half-close
    c.sendall(b"after rdhup")
    c.close()
    print("OK epoll level- and edge-triggered, EPOLLONESHOT, EPOLLRDHUP")


def m_poll(addr, port):
    c = conn(addr, port, "script w0.5 1000 w0.3 fin")
    p = select.poll()
    p.register(c.fileno(), select.POLLIN | select.POLLOUT)
    ev = dict(p.poll(5000))
    if not ev.get(c.fileno(), 0) & select.POLLOUT:
        die("poll: not writable")
    p.modify(c.fileno(), select.POLLIN)
    if p.poll(200):
        die("poll: readable before the data")
    if not p.poll(5000):
        die("poll: no POLLIN for the data")
    r, w, _ = select.select([c], [c], [], 5)
    if not r or not w:
        die("select: readable %r writable %r" % (r, w))
    # FIONREAD: what is queued, without reading it
    buf = bytearray(4)
    t = time.monotonic()
    while True:
        fcntl.ioctl(c.fileno(), termios.FIONREAD, buf)
        q = struct.unpack("i", buf)[0]
        if q == 1000 or time.monotonic() - t > 5:
            break
        time.sleep(0.05)
    if q != 1000:
        die("FIONREAD %d, want 1000" % q)
    if len(c.recv(2000)) != 1000:
        die("read after FIONREAD")
    # the half-close: readable, and read gives EOF
    r, _, _ = select.select([c], [], [], 5)
    if not r or c.recv(100) != b"":
        die("select/EOF after the peer's half-close")
    fcntl.ioctl(c.fileno(), termios.FIONREAD, buf)
    c.close()
    print("OK poll, select, FIONREAD 1000, EOF readable")


def m_sendfile(addr, port, path):
    data = open(path, "rb").read()
    c = conn(addr, port, "digest")
    with open(path, "rb") as f:
        off = 0
        while off < len(data):
            n = os.sendfile(c.fileno(), f.fileno(), off, len(data) - off)
            if n <= 0:
                die("sendfile returned %d" % n)
            off += n
    c.shutdown(socket.SHUT_WR)
    digest, n = read_line(c).split()
    if digest != hashlib.sha256(data).hexdigest() or int(n) != len(data):
        die("sendfile: the server got %s bytes, digest %s" % (n, digest))
    print("OK sendfile %d bytes, sha256 equal" % len(data))


def m_opts(addr, port, echo=30000):
    c = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 262144)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 131072)
    c.connect((addr, int(port)))
    c.sendall(b"echo\n")
    got = {}
    for name, lvl, opt in (("TCP_NODELAY", socket.IPPROTO_TCP,
                            socket.TCP_NODELAY),
                           ("SO_RCVBUF", socket.SOL_SOCKET, socket.SO_RCVBUF),
                           ("SO_SNDBUF", socket.SOL_SOCKET, socket.SO_SNDBUF)):
        got[name] = c.getsockopt(lvl, opt)
    # Linux doubles what it is given (socket(7)); TCP would give these
    if got["TCP_NODELAY"] != 1:
        die("TCP_NODELAY not remembered across connect: %r" % got)
    if got["SO_RCVBUF"] < 262144 or got["SO_SNDBUF"] < 131072:
        die("buffer sizes not kept: %r" % got)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
    if c.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0 or \
            c.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) < 65536:
        die("options set after connect not read back")
    # 30000: less than the small SO_RCVBUF (sdp_semantics.sh: the gap)
    echo = int(echo)
    c.sendall(b"z" * echo)
    c.shutdown(socket.SHUT_WR)
    back = recv_all(c)
    if back != b"z" * echo:
        die("echo with the options: %d bytes back" % len(back))
    print("OK TCP_NODELAY, SO_RCVBUF, SO_SNDBUF read back (%r)" % got)


def m_eintr(addr, port):
    """A signal interrupts a blocking read: EINTR (here: the handler's
    exception), long before the server's data comes."""
    class Alarm(Exception):
        pass

    def on_alarm(*_):
        raise Alarm()

    c = conn(addr, port, "script w3 10")
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    t = time.monotonic()
    try:
        c.recv(100)
        die("recv returned before the signal's EINTR")
    except Alarm:
        pass
    took = time.monotonic() - t
    if took > 1.5:
        die("read interrupted only after %.1f s" % took)
    # and the socket still works
    if c.recv(100) != b"d" * 10:
        die("data after EINTR")
    c.close()
    print("OK blocking read interrupted after %.2f s, data after it" % took)


def m_threads(addr, port, nthreads=8, nrec=500):
    """Many threads writing on one socket, one thread reading it."""
    nthreads, nrec = int(nthreads), int(nrec)
    c = conn(addr, port, "echo")
    rec = 256
    got = bytearray()
    errs = []

    def reader():
        try:
            got.extend(recv_all(c))
        except Exception as e:  # noqa: BLE001
            errs.append(repr(e))

    def writer(t):
        try:
            for i in range(nrec):
                c.sendall(bytes([65 + t]) * rec)
        except Exception as e:  # noqa: BLE001
            errs.append(repr(e))

    rt = threading.Thread(target=reader)
    rt.start()
    ws = [threading.Thread(target=writer, args=(t,)) for t in range(nthreads)]
    for w in ws:
        w.start()
    for w in ws:
        w.join()
    c.shutdown(socket.SHUT_WR)
    rt.join(60)
    if errs:
        die("; ".join(errs))
    want = nthreads * nrec * rec
    if len(got) != want:
        die("%d bytes back, want %d" % (len(got), want))
    for t in range(nthreads):
        if got.count(bytes([65 + t])) != nrec * rec:
            die("thread %d's bytes differ" % t)
    print("OK %d threads wrote %d bytes on one socket, a thread read them" %
          (nthreads, want))


def m_names6(addr, port):
    c = conn(addr, port, "echo")
    if c.family != socket.AF_INET6:
        die("family %r" % c.family)
    p = c.getpeername()
    if p[0] != addr or p[1] != int(port):
        die("peer %r" % (p,))
    c.sendall(b"v6" * 100000)
    c.shutdown(socket.SHUT_WR)
    if recv_all(c) != b"v6" * 100000:
        die("echo over IPv6")
    print("OK IPv6: %s -> [%s]:%s, 200000 bytes echoed" %
          (c.getsockname()[0], p[0], p[1]))


def m_slowread(addr, port, size=2000000):
    """The server sends SIZE bytes and closes while the client, its own
    half-close sent, reads only after 2 s: TCP delivers all of it."""
    size = int(size)
    c = conn(addr, port, "script %d fin" % size)
    c.shutdown(socket.SHUT_WR)
    time.sleep(2)
    got = recv_all(c)
    if len(got) != size:
        die("a slow reader got %d bytes of %d" % (len(got), size))
    print("OK a slow reader got all %d bytes after the close" % size)


def m_timeouts(addr, port, own):
    """SO_RCVTIMEO and SO_SNDTIMEO set before connect, and before or
    after listen, hold as on TCP: a recv on a silent connection and an
    accept on an idle listener give EAGAIN once the time passes, and an
    accepted socket has its listener's timeouts (the kernel's accept
    copies them).  OWN: this host's address, for a listener here."""
    tv = struct.pack("ll", 0, 400000)
    tv2 = struct.pack("ll", 1, 250000)

    def timed(what, fn):
        t0 = time.monotonic()
        try:
            fn()
            die("%s: no timeout" % what)
        except BlockingIOError:
            pass
        dt = time.monotonic() - t0
        if not 0.3 <= dt <= 3.0:
            die("%s: EAGAIN after %.2f s, want 0.4" % (what, dt))
        return dt

    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv2)
    # as the kernel keeps them (in clock ticks): what TCP reads back
    tv, tv2 = (c.getsockopt(socket.SOL_SOCKET, n, len(tv))
               for n in (socket.SO_RCVTIMEO, socket.SO_SNDTIMEO))
    c.connect((addr, int(port)))
    c.sendall(b"script w5\n")      # nothing for 5 s
    for name, want in ((socket.SO_RCVTIMEO, tv), (socket.SO_SNDTIMEO, tv2)):
        got = c.getsockopt(socket.SOL_SOCKET, name, len(want))
        if got != want:
            die("option %d after connect: %r, set %r" % (name, got, want))
    d1 = timed("recv on a silent connection", lambda: c.recv(100))
    c.close()

    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
    ls.bind((own, 0))
    ls.listen(4)
    d2 = timed("accept on an idle listener", ls.accept)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv2)
    k = socket.create_connection(ls.getsockname())
    a, _ = ls.accept()
    for name, want in ((socket.SO_RCVTIMEO, tv), (socket.SO_SNDTIMEO, tv2)):
        got = a.getsockopt(socket.SOL_SOCKET, name, len(want))
        if got != want:
            die("accepted socket's option %d: %r, the listener's %r" %
                (name, got, want))
    d3 = timed("recv on an accepted socket", lambda: a.recv(100))
    # the peer's credentials are TCP's (none), not the SDP service's
    for x in (k, a):
        cred = struct.unpack("iII", x.getsockopt(
            socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        if cred != (0, 0xffffffff, 0xffffffff):
            die("SO_PEERCRED %r, TCP gives (0, -1, -1)" % (cred,))
    k.close()
    a.close()
    ls.close()
    print("OK timeouts: recv EAGAIN after %.2f s, accept after %.2f s, "
          "accepted socket inherits both (recv after %.2f s); "
          "SO_PEERCRED none" %
          (d1, d2, d3))


def m_oobtrunc(addr, port):
    """send(MSG_OOB) fails (EOPNOTSUPP) instead of losing the byte, and
    recv(NULL, n, MSG_TRUNC) discards n bytes as TCP's does."""
    c = conn(addr, port, "script 10 w1")
    try:
        c.send(b"!", socket.MSG_OOB)
        die("send(MSG_OOB) succeeded: the byte would be lost")
    except OSError as e:
        if e.errno != 95:
            die("send(MSG_OOB): %s, want EOPNOTSUPP" % e)
    r, _, _ = select.select([c], [], [], 10)
    if not r:
        die("no data")
    time.sleep(0.2)         # all 10 there
    n = libc.recv(c.fileno(), None, 4, socket.MSG_TRUNC)
    if n != 4:
        die("recv(NULL, 4, MSG_TRUNC) = %d (errno %d), want 4" %
            (n, ctypes.get_errno()))
    rest = b""
    while len(rest) < 6:
        b = c.recv(100)
        if not b:
            break
        rest += b
    if rest != b"d" * 6:
        die("after discarding 4 of 10: %r" % rest)
    c.close()
    print("OK MSG_OOB refused (EOPNOTSUPP), MSG_TRUNC discarded 4, 6 left")


def m_connagain(addr, port):
    """connect again on a non-blocking socket: EALREADY while it connects
    (if still), 0 the first time once it is up (even after SO_ERROR was
    read), EISCONN after."""
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setblocking(False)
    e = s.connect_ex((addr, int(port)))
    if e not in (0, errno.EINPROGRESS):
        die("non-blocking connect: %s" % os.strerror(e))
    _, w, _ = select.select([], [s], [], 10)
    if not w:
        die("not writable in 10 s")
    e = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if e:
        die("SO_ERROR %s" % os.strerror(e))
    got = [s.connect_ex((addr, int(port))) for _ in range(2)]
    if got != [0, errno.EISCONN]:
        die("connect again after it came up: %s, want 0 then EISCONN" %
            [errno.errorcode.get(g, g) for g in got])
    s.setblocking(True)
    s.sendall(b"echo\nx")
    s.shutdown(socket.SHUT_WR)
    if recv_all(s) != b"x":
        die("the echo")
    s.close()
    print("OK connect again: 0 once up, then EISCONN")


def m_tcpopts(addr, port):
    """TCP options TCP refuses: an unknown one (ENOPROTOOPT), an int one
    with no value (EINVAL); a known one taken; ones not set read as a TCP
    socket's (IP_TTL, IP_TOS, keepalive's, TCP_CONGESTION; TCP_MAXSEG not
    0), an unknown one ENOPROTOOPT."""
    c = conn(addr, port, "echo")
    for name, val, want in ((9999, 1, errno.ENOPROTOOPT),
                            (socket.TCP_NODELAY, b"", errno.EINVAL)):
        try:
            c.setsockopt(socket.IPPROTO_TCP, name, val)
            die("setsockopt(IPPROTO_TCP, %d, %r) succeeded" % (name, val))
        except OSError as e:
            if e.errno != want:
                die("setsockopt(IPPROTO_TCP, %d, %r): %s, want %s" %
                    (name, val, e, errno.errorcode[want]))
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if not c.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY):
        die("TCP_NODELAY not read back")
    # options not set read as TCP's: a new TCP socket's values
    ref = socket.socket(c.family, socket.SOCK_STREAM)
    for lvl, name, what in ((socket.IPPROTO_IP, socket.IP_TTL, "IP_TTL"),
                            (socket.IPPROTO_IP, socket.IP_TOS, "IP_TOS"),
                            (socket.IPPROTO_TCP, socket.TCP_KEEPIDLE,
                             "TCP_KEEPIDLE"),
                            (socket.IPPROTO_TCP, socket.TCP_KEEPCNT,
                             "TCP_KEEPCNT")):
        got, want = c.getsockopt(lvl, name), ref.getsockopt(lvl, name)
        if got != want:
            die("%s reads %d, a TCP socket's %d" % (what, got, want))
    if c.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG) <= 0:
        die("TCP_MAXSEG reads %d" %
            c.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG))
    cc = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    if cc.rstrip(b"\0") != ref.getsockopt(socket.IPPROTO_TCP,
                                          socket.TCP_CONGESTION,
                                          16).rstrip(b"\0"):
        die("TCP_CONGESTION reads %r" % cc)
    try:
        c.getsockopt(socket.IPPROTO_TCP, 9999)
        die("getsockopt(IPPROTO_TCP, 9999) succeeded")
    except OSError as e:
        if e.errno != errno.ENOPROTOOPT:
            die("getsockopt(IPPROTO_TCP, 9999): %s" % e)
    ref.close()
    c.shutdown(socket.SHUT_WR)
    recv_all(c)
    c.close()
    print("OK TCP options: unknown ENOPROTOOPT, no value EINVAL; unset "
          "ones read as TCP's (congestion %s)" % cc.rstrip(b"\0").decode())


def m_shutrd(addr, port):
    """The server's shutdown(SHUT_RD), then data from us: TCP keeps the
    connection (only data after SHUT_RDWR resets it), so the server's
    later send arrives; nothing is reset."""
    c = conn(addr, port, "shutrd")
    time.sleep(0.5)
    c.sendall(b"x" * 100000)
    c.settimeout(10)
    got = c.recv(100)
    if got != b"alive\n":
        die("after the server's SHUT_RD and our data: %r" % got)
    c.close()
    print("OK the server's SHUT_RD: our data went, its answer came")


MODES = {"shut-rd": m_shutrd, "conn-again": m_connagain, "tcp-opts": m_tcpopts,
         "oob-trunc": m_oobtrunc, "timeouts": m_timeouts, "slowread": m_slowread, "fork": m_fork, "dup": m_dup,
         "dup-early": m_dupearly, "epoll": m_epoll, "poll": m_poll,
         "sendfile": m_sendfile, "opts": m_opts, "eintr": m_eintr,
         "threads": m_threads, "names6": m_names6}


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "server":
        server(*sys.argv[2:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "client" and \
            sys.argv[2] in MODES:
        MODES[sys.argv[2]](*sys.argv[3:])
    else:
        die("usage: sdp_semantics.py server PORT [ADDR] | client MODE "
            "ADDR PORT [ARGS] (%s)" % " ".join(MODES))


if __name__ == "__main__":
    main()
