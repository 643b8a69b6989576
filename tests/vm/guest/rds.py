# Inside a guest: datagrams both ways over the kernel's RDS (AF_RDS,
# SOCK_SEQPACKET), each checked for length, content and sender address.
#   rds.py initiator|responder MY_IPV4 PEER_IPV4
#
# RDS drops a datagram for a port nobody has bound, and the sender hears
# nothing of it, so the two sides meet first: the initiator sends SYN every
# half second until a SYNACK comes back; the responder answers every SYN.
# Only then does either side send data, which RDS delivers reliably and in
# order.  Each side ends with FIN once it has all of the peer's data, and
# waits for the peer's FIN, so that neither closes (which drops what is
# still queued) before its own data is through.
import os
import socket
import struct
import sys
import time

PORT = 4000
SIZES = [4, 100, 1500, 4096, 4097, 9000, 20000]	# 20000: five fragments
NAME = os.environ.get("VM_NAME", "?")


def fail(why):
    print("FAIL(%s): %s" % (NAME, why), flush=True)
    sys.exit(1)


def ok(what):
    print("ok(%s): %s" % (NAME, what), flush=True)


def datagram(sender, seq, size):
    """'D', the sender's last address byte, seq, then a pattern of both"""
    head = b"D" + struct.pack("!BH", sender, seq)
    fill = bytes((i * 7 + seq * 13 + sender) & 0xFF
                 for i in range(size - len(head)))
    return head + fill


def recv(sock, deadline):
    left = deadline - time.monotonic()
    if left <= 0:
        fail("timed out")
    sock.settimeout(left)
    try:
        data, _, flags, addr = sock.recvmsg(65536)
    except socket.timeout:
        fail("timed out")
    if flags & socket.MSG_TRUNC:
        fail("a datagram of more than 65536 bytes from %s" % (addr,))
    return data, addr


def main():
    role, me, peer = sys.argv[1], sys.argv[2], sys.argv[3]
    mine = int(me.split(".")[-1])
    theirs = int(peer.split(".")[-1])
    sock = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    sock.bind((me, PORT))
    ok("bound %s:%d" % (me, PORT))
    dest = (peer, PORT)
    deadline = time.monotonic() + 120

    if role == "initiator":
        tries = 0
        while True:
            sock.sendto(b"SYN", dest)
            tries += 1
            sock.settimeout(0.5)
            try:
                data, addr = sock.recvfrom(65536)
            except socket.timeout:
                if time.monotonic() > deadline:
                    fail("no SYNACK after %d SYNs" % tries)
                continue
            if data == b"SYNACK":
                break
        ok("SYNACK from %s:%d after %d SYNs" % (addr[0], addr[1], tries))
    else:
        while True:
            data, addr = recv(sock, deadline)
            if data == b"SYN":
                break
        sock.sendto(b"SYNACK", dest)
        ok("SYN from %s:%d" % (addr[0], addr[1]))
    if addr[:2] != dest:
        fail("the handshake came from %s, not %s" % (addr, dest))

    for seq, size in enumerate(SIZES):
        n = sock.sendto(datagram(mine, seq, size), dest)
        if n != size:
            fail("sendto took %d of %d bytes" % (n, size))
    ok("sent %d datagrams, sizes %s" % (len(SIZES), SIZES))

    got = 0
    peer_fin = False
    while got < len(SIZES):
        data, addr = recv(sock, deadline)
        if data in (b"SYN", b"SYNACK"):
            continue	# the handshake's repeats
        if data == b"FIN":
            peer_fin = True
            continue
        if addr[:2] != dest:
            fail("datagram %d from %s, not %s" % (got, addr, dest))
        if len(data) != SIZES[got]:
            fail("datagram %d is %d bytes, not %d" %
                 (got, len(data), SIZES[got]))
        if data != datagram(theirs, got, SIZES[got]):
            fail("datagram %d (%d bytes) has the wrong content" %
                 (got, len(data)))
        got += 1
    ok("received %d datagrams from %s:%d, sizes %s, contents checked" %
       (got, peer, PORT, SIZES))

    sock.sendto(b"FIN", dest)
    while not peer_fin:
        data, addr = recv(sock, deadline)
        peer_fin = data == b"FIN"
    time.sleep(1)	# our FIN on its way before close drops the queue
    ok("FIN both ways")
    sock.close()


main()
