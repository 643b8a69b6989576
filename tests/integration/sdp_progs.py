#!/usr/bin/env python3
# Small unmodified TCP programs of several kinds, for the SDP tests: they
# know nothing of SDP and are run under LD_PRELOAD=libibgw_preload.so.
#   halfclose-server PORT        read to EOF, then answer the sha256 of it
#   halfclose-client HOST PORT N send N bytes, shutdown(SHUT_WR), print the
#                                answer and whether it matches
#   asyncio-server PORT          asyncio (epoll) echo server
#   asyncio-client HOST PORT C M C concurrent connections, M messages each
#   fork-server PORT             socketserver.ForkingTCPServer echo
#   thread-client HOST PORT T M  T threads, a socket each, M messages each
#   shared-client HOST PORT T M  T threads writing M messages on one socket
#   count-server PORT            counts bytes per connection, answers it
#   names HOST PORT              connect, print getsockname/getpeername
#   names-server PORT            accept one, print both names, close
#   nb-connect HOST PORT         non-blocking connect, select, SO_ERROR
import asyncio
import hashlib
import os
import select
import socket
import socketserver
import sys
import threading


def halfclose_server(port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("", port))
    ls.listen(8)
    while True:
        c, _ = ls.accept()
        h = hashlib.sha256()
        while True:
            b = c.recv(65536)
            if not b:
                break
            h.update(b)
        c.sendall(h.hexdigest().encode())
        c.close()


def halfclose_client(host, port, n):
    data = os.urandom(n)
    s = socket.create_connection((host, port))
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    ans = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        ans += b
    ok = ans.decode() == hashlib.sha256(data).hexdigest()
    print("halfclose", "match" if ok else "MISMATCH", ans.decode()[:16])
    return 0 if ok else 1


def asyncio_server(port):
    async def handle(r, w):
        while True:
            b = await r.read(65536)
            if not b:
                break
            w.write(b)
            await w.drain()
        w.close()

    async def main():
        srv = await asyncio.start_server(handle, "", port, reuse_address=True)
        async with srv:
            await srv.serve_forever()
    asyncio.run(main())


def asyncio_client(host, port, conns, msgs):
    async def one(i):
        r, w = await asyncio.open_connection(host, port)
        for k in range(msgs):
            m = ("%d:%d:" % (i, k)).encode() + os.urandom(100 + k)
            w.write(m)
            await w.drain()
            got = await r.readexactly(len(m))
            if got != m:
                return False
        w.close()
        return True

    async def main():
        res = await asyncio.gather(*[one(i) for i in range(conns)])
        return all(res)
    ok = asyncio.run(main())
    print("asyncio", "ok" if ok else "MISMATCH", conns, msgs)
    return 0 if ok else 1


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            b = self.request.recv(65536)
            if not b:
                break
            self.request.sendall(b)


def fork_server(port):
    socketserver.ForkingTCPServer.allow_reuse_address = True
    with socketserver.ForkingTCPServer(("", port), Echo) as srv:
        srv.serve_forever()


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        b = s.recv(n - len(buf))
        if not b:
            break
        buf += b
    return buf


def thread_client(host, port, nthreads, msgs):
    bad = []

    def one(i):
        s = socket.create_connection((host, port))
        for k in range(msgs):
            m = os.urandom(50 + (i * 7 + k) % 3000)
            s.sendall(m)
            if recv_exact(s, len(m)) != m:
                bad.append(i)
                return
        s.close()
    ts = [threading.Thread(target=one, args=(i,)) for i in range(nthreads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("threads", "ok" if not bad else "MISMATCH", nthreads, msgs)
    return 0 if not bad else 1


def count_server(port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("", port))
    ls.listen(8)
    while True:
        c, _ = ls.accept()
        n = 0
        while True:
            b = c.recv(65536)
            if not b:
                break
            n += len(b)
        c.sendall(str(n).encode())
        c.close()


def shared_client(host, port, nthreads, msgs):
    s = socket.create_connection((host, port))
    size = 1000

    def one():
        for _ in range(msgs):
            s.sendall(b"x" * size)
    ts = [threading.Thread(target=one) for _ in range(nthreads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    s.shutdown(socket.SHUT_WR)
    ans = b""
    while True:
        b = s.recv(100)
        if not b:
            break
        ans += b
    want = nthreads * msgs * size
    ok = ans.decode() == str(want)
    print("shared", "ok" if ok else "MISMATCH", ans.decode(), want)
    return 0 if ok else 1


def names(host, port):
    s = socket.create_connection((host, port))
    print("local %s:%d" % s.getsockname()[:2])
    print("peer %s:%d" % s.getpeername()[:2])
    print("family %d type %d" % (s.family, s.type))
    s.close()


def names_server(port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("", port))
    ls.listen(1)
    print("listening %s:%d" % ls.getsockname()[:2], flush=True)
    c, addr = ls.accept()
    print("accepted %s:%d" % addr[:2])
    print("local %s:%d" % c.getsockname()[:2])
    print("peer %s:%d" % c.getpeername()[:2], flush=True)
    c.close()


def nb_connect(host, port):
    s = socket.socket()
    s.setblocking(False)
    err = s.connect_ex((host, port))
    if err not in (0, 115):     # EINPROGRESS
        print("connect_ex", err)
        return 1
    _, w, _ = select.select([], [s], [], 10)
    if not w:
        print("not writable")
        return 1
    e = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    print("so_error", e)
    if e:
        return 1
    s.setblocking(True)
    s.sendall(b"ping")
    s.shutdown(socket.SHUT_WR)
    print("answer", recv_exact(s, 100).decode())
    return 0


def main(a):
    cmd = a[0]
    if cmd == "halfclose-server":
        halfclose_server(int(a[1]))
    elif cmd == "halfclose-client":
        return halfclose_client(a[1], int(a[2]), int(a[3]))
    elif cmd == "asyncio-server":
        asyncio_server(int(a[1]))
    elif cmd == "asyncio-client":
        return asyncio_client(a[1], int(a[2]), int(a[3]), int(a[4]))
    elif cmd == "fork-server":
        fork_server(int(a[1]))
    elif cmd == "thread-client":
        return thread_client(a[1], int(a[2]), int(a[3]), int(a[4]))
    elif cmd == "shared-client":
        return shared_client(a[1], int(a[2]), int(a[3]), int(a[4]))
    elif cmd == "count-server":
        count_server(int(a[1]))
    elif cmd == "names":
        names(a[1], int(a[2]))
    elif cmd == "names-server":
        names_server(int(a[1]))
    elif cmd == "nb-connect":
        return nb_connect(a[1], int(a[2]))
    else:
        print("unknown", cmd)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
