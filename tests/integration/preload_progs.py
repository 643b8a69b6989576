#!/usr/bin/env python3
# Unmodified-program stand-ins for tests/integration/preload_mock.sh: plain
# Python socket, asyncio and socketserver code, nothing preload-aware (the
# preload is in LD_PRELOAD).  Each client mode prints "OK ..." and exits 0,
# or says what was wrong and exits 1.
import asyncio
import ctypes
import fcntl
import hashlib
import os
import select
import socket
import socketserver
import sys
import threading


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


# --- servers -----------------------------------------------------------------

async def _echo(reader, writer):
    while True:
        b = await reader.read(65536)
        if not b:
            break
        writer.write(b)
        await writer.drain()
    writer.write_eof()          # half-close answered by half-close
    await writer.drain()
    writer.close()


async def _echo_server(addr, port):
    srv = await asyncio.start_server(_echo, addr, port)
    print("listening", flush=True)
    async with srv:
        await srv.serve_forever()


def echo_server(addr, port):
    asyncio.run(_echo_server(addr, int(port)))


class _Digest(socketserver.BaseRequestHandler):
    def handle(self):
        data = recv_all(self.request)
        self.request.sendall(("%s %d\n" % (hashlib.sha256(data).hexdigest(),
                                           os.getpid())).encode())


def forking_server(addr, port):
    socketserver.ForkingTCPServer.allow_reuse_address = True
    with socketserver.ForkingTCPServer((addr, int(port)), _Digest) as srv:
        print("listening", flush=True)
        srv.serve_forever()


# --- clients -----------------------------------------------------------------

async def _aclient(addr, port, size, i):
    data = os.urandom(size)
    reader, writer = await asyncio.open_connection(addr, port)
    writer.write(data)
    await writer.drain()
    writer.write_eof()
    got = await reader.read()
    writer.close()
    if got != data:
        die("asyncio client %d: %d bytes back, want %d" % (i, len(got), size))


async def _aclients(addr, port, n, size):
    await asyncio.gather(*[_aclient(addr, port, size, i) for i in range(n)])


def asyncio_client(addr, port, n, size):
    asyncio.run(_aclients(addr, int(port), int(n), int(size)))
    print("OK asyncio %s clients" % n)


def threaded_client(addr, port, threads, socks, size):
    pids, errors = set(), []
    lock = threading.Lock()

    def run(t):
        try:
            conns = [socket.create_connection((addr, int(port)))
                     for _ in range(int(socks))]
            datas = [os.urandom(int(size)) for _ in conns]
            for c, d in zip(conns, datas):
                c.sendall(d)
                c.shutdown(socket.SHUT_WR)
            for c, d in zip(conns, datas):
                digest, pid = recv_all(c).decode().split()
                c.close()
                if digest != hashlib.sha256(d).hexdigest():
                    raise Exception("thread %d: digest differs" % t)
                with lock:
                    pids.add(pid)
        except Exception as e:  # noqa: BLE001
            with lock:
                errors.append(repr(e))

    ts = [threading.Thread(target=run, args=(t,)) for t in range(int(threads))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        die("; ".join(errors))
    print("OK threaded %d sockets, %d server processes" %
          (int(threads) * int(socks), len(pids)))


def nonblock_connect(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    s.setblocking(False)
    rc = s.connect_ex((addr, int(port)))
    if rc not in (0, 115):      # EINPROGRESS
        die("connect_ex %d" % rc)
    _, w, _ = select.select([], [s], [], 5)
    if not w:
        die("not writable")
    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err:
        die("SO_ERROR %d" % err)
    if not fcntl.fcntl(s.fileno(), fcntl.F_GETFL) & os.O_NONBLOCK:
        die("O_NONBLOCK lost")
    if not s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) or \
            not s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE):
        die("options set before connect were lost")
    s.setblocking(True)
    s.sendall(b"ping")
    s.shutdown(socket.SHUT_WR)
    if recv_all(s) != b"ping":
        die("echo")
    print("OK nonblocking connect (connect_ex %d)" % rc)


def _flags(fd):
    return (bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK),
            bool(fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC))


class _Sin(ctypes.Structure):
    _fields_ = [("family", ctypes.c_ushort), ("port", ctypes.c_ubyte * 2),
                ("addr", ctypes.c_ubyte * 4), ("zero", ctypes.c_ubyte * 8)]


def accept_names(addr, port):
    """Listener and client in one process: accept4 flags, both ends' names,
    socket options, a non-blocking listener's EAGAIN."""
    libc = ctypes.CDLL(None, use_errno=True)
    port = int(port)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.bind((addr, port))
    ls.listen(8)
    if ls.getsockname() != (addr, port):
        die("listener getsockname %r" % (ls.getsockname(),))
    checks = []
    for flags, want in ((0, (False, False)),
                        (socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC,
                         (True, True)),
                        (socket.SOCK_CLOEXEC, (False, True))):
        c = socket.create_connection((addr, port))
        sin = _Sin()
        ln = ctypes.c_uint(ctypes.sizeof(sin))
        fd = libc.accept4(ls.fileno(), ctypes.byref(sin), ctypes.byref(ln),
                          flags)
        if fd < 0:
            die("accept4: %s" % os.strerror(ctypes.get_errno()))
        if _flags(fd) != want:
            die("accept4 flags %#x: (nonblock, cloexec) %r, want %r" %
                (flags, _flags(fd), want))
        a = socket.socket(fileno=fd)
        peer = (socket.inet_ntoa(bytes(sin.addr)),
                sin.port[0] << 8 | sin.port[1])
        if sin.family != socket.AF_INET or peer != c.getsockname():
            die("accept4 address %r, client is %r" % (peer, c.getsockname()))
        if a.family != socket.AF_INET:
            die("accepted family %r" % a.family)
        if a.getsockname() != (addr, port) or a.getpeername() != peer:
            die("accepted names %r %r" % (a.getsockname(), a.getpeername()))
        if c.getpeername() != (addr, port) or c.getsockname()[0] != addr \
                or c.getsockname()[1] in (0, port):
            die("client names %r %r" % (c.getsockname(), c.getpeername()))
        if c.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN) != \
                socket.AF_INET or \
                c.getsockopt(socket.SOL_SOCKET, socket.SO_PROTOCOL) != 6:
            die("SO_DOMAIN/SO_PROTOCOL")
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if c.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 1:
            die("TCP_NODELAY not remembered")
        c.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        c.sendall(b"x" * 1000)
        c.shutdown(socket.SHUT_WR)
        a.setblocking(True)
        if recv_all(a) != b"x" * 1000:
            die("data")
        a.sendall(b"reply after half-close")
        a.close()
        if recv_all(c) != b"reply after half-close":
            die("reply after half-close")
        c.close()
        checks.append("%#x" % flags)
    ls.setblocking(False)
    try:
        ls.accept()
        die("accept on an idle non-blocking listener succeeded")
    except BlockingIOError:
        pass
    print("OK accept4 flags %s, names, options, half-close, EAGAIN" %
          " ".join(checks))


def tcp_client(addr, port):
    """Connects, sends a line, prints what comes back."""
    c = socket.create_connection((addr, int(port)))
    c.sendall(b"hello")
    c.shutdown(socket.SHUT_WR)
    print("OK got", recv_all(c).decode())


def exec_names(addr, port):
    """An SDP socket survives exec: the new program (no cache) still sees
    an AF_INET socket with the right peer, and it still carries data."""
    c = socket.create_connection((addr, int(port)))
    import subprocess
    r = subprocess.run([sys.executable, sys.argv[0], "fd-names",
                        str(c.fileno()), addr, port], pass_fds=[c.fileno()],
                       capture_output=True, text=True)
    if r.returncode:
        die("after exec: " + r.stdout + r.stderr)
    print("OK exec: " + r.stdout.strip())


def fd_names(fd, addr, port, laddr=None, lport=None):
    s = socket.socket(fileno=int(fd))
    if s.family != socket.AF_INET:
        die("family %r after exec" % s.family)
    if s.getpeername() != (addr, int(port)):
        die("peer %r after exec" % (s.getpeername(),))
    if laddr and s.getsockname() != (laddr, int(lport)):
        die("name %r after exec" % (s.getsockname(),))
    if laddr:                   # the accepted end: answer the client
        s.sendall(b"from exec")
        s.close()
        print("accepted: family AF_INET, name %s:%s, peer %s:%s" %
              (laddr, lport, addr, port))
        return
    s.sendall(b"after exec")
    s.shutdown(socket.SHUT_WR)
    if recv_all(s) != b"after exec":
        die("echo after exec")
    print("family AF_INET, peer %s:%s, echo" % (addr, port))


def accept_exec(addr, port):
    """An accepted SDP socket passed to an exec'd program: its names come
    from the service (INFO), and it carries data."""
    import subprocess
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.bind((addr, int(port)))
    ls.listen(1)
    c = socket.create_connection((addr, int(port)))
    a, _ = ls.accept()
    caddr, cport = c.getsockname()
    r = subprocess.run([sys.executable, sys.argv[0], "fd-names",
                        str(a.fileno()), caddr, str(cport), addr, port],
                       pass_fds=[a.fileno()], capture_output=True, text=True)
    if r.returncode:
        die("after exec: " + r.stdout + r.stderr)
    a.close()
    if recv_all(c) != b"from exec":
        die("no data from the exec'd program")
    print("OK exec " + r.stdout.strip())


def spoof(name):
    """Not the service: connect to an SDP listener's unix name and claim a
    connection from 192.0.2.1; the preload's accept must drop it."""
    import struct
    sin = struct.pack("=H2s4s8x", socket.AF_INET, (1).to_bytes(2, "big"),
                      socket.inet_aton("192.0.2.1"))
    hdr = struct.pack("=II28s28s", 0x53445031, 1, b"", sin)
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.settimeout(5)
    u.connect("\0" + name)
    try:
        u.sendall(hdr + b"spoofed data")
    except (BrokenPipeError, ConnectionResetError):
        print("OK spoofed connection dropped")     # before we were done
        return
    try:
        if u.recv(100) != b"":
            die("the spoofed connection got an answer")
    except ConnectionResetError:
        pass                    # closed with our data unread: dropped too
    except socket.timeout:
        die("the spoofed connection was not closed")
    print("OK spoofed connection dropped")


def eintr(addr, port):
    """A signal during connect's wait for the service: connect returns
    EINTR (here: the handler's exception), long before the service's
    answer would have come."""
    import signal
    import time

    class Alarm(Exception):
        pass

    def on_alarm(*_):
        raise Alarm()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    t = time.monotonic()
    try:
        socket.create_connection((addr, int(port)))
        die("connected")
    except Alarm:
        pass
    except OSError as e:
        die("connect: %s" % e)
    took = time.monotonic() - t
    if took > 1.5:
        die("interrupted only after %.1f s" % took)
    print("OK connect interrupted after %.2f s" % took)


def main():
    modes = {"echo-server": echo_server, "forking-server": forking_server,
             "asyncio-client": asyncio_client,
             "threaded-client": threaded_client,
             "nonblock-connect": nonblock_connect,
             "accept-names": accept_names, "tcp-client": tcp_client,
             "exec-names": exec_names, "fd-names": fd_names, "spoof": spoof, "eintr": eintr,
             "accept-exec": accept_exec}
    if len(sys.argv) < 2 or sys.argv[1] not in modes:
        die("usage: preload_progs.py MODE ARGS (%s)" % " ".join(modes))
    modes[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
