#!/usr/bin/env python3
"""Write pcap files (linktype 252, exported PDU "infiniband") of native IB
packets for replay into ibfabricd.  Independent of our C codec: headers and
CRCs are built here from the IBTA layout, so a replayed packet that passes
also cross-checks the switch's ICRC/VCRC code.

  mkpcap.py forge FILE --slid L --dlid L [--pkey P] [--qkey Q] [--dqpn N]
                       [--srcqp N] [--data TEXT]
  mkpcap.py garbage FILE --slid L --dlid L [--dqpn N] [--seed N]
      writes malformed packets and prints "REASON COUNT" per drop reason
  mkpcap.py ipoib-garbage FILE --slid L --dlid L --dqpn N [--seed N]
      well-formed UD packets carrying malformed IPoIB payloads (header,
      ARP, IPv4, IPv6, ND); prints how many
  mkpcap.py rc-hostile FILE --slid L --dlid L --dqpn N [--mtu B] [--seed N]
      RC packets (requests, ACKs, read responses; well formed and not)
      for a connection that is not the sender's: prints "switch N" (the
      ones the switch must drop) and "qp N" (the ones it delivers, which
      the receiving QP must drop)
  mkpcap.py arp FILE --slid L --dlid L --dqpn N --srcqp N --sha HW
                   --spa IP --tpa IP [--op 1|2] [--qkey Q]
      one IPoIB ARP packet (hardware type 32) with the 20-byte sender
      address HW (colon-separated hex, as ip link shows it)
  mkpcap.py cm-hostile FILE [--seed N] [--comm-ids LOCAL,REMOTE ...]
      256-byte CM MADs (not a pcap: for madtest raw) that name no
      connection of the sender's or are malformed; prints how many
"""
import argparse
import random
import struct
import sys
import zlib


def crc16_ib(data):
    """IBTA VCRC: poly 0x100B reflected (0xD008), seed 0xFFFF, xorout 0xFFFF."""
    crc = 0xFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xD008 if crc & 1 else crc >> 1
    return crc ^ 0xFFFF


def icrc(pkt):
    """ICRC over LRH..payload with the variant fields set to ones."""
    p = bytearray(pkt)
    lnh = p[1] & 3
    if lnh == 3:
        p[0:8] = b"\xff" * 8
        p[8] |= 0x0F
        p[9:12] = b"\xff\xff\xff"
        p[15] = 0xFF
        bth = 48
    else:
        p[0] |= 0xF0
        bth = 8
    p[bth + 4] = 0xFF
    return zlib.crc32(bytes(p)) & 0xFFFFFFFF


def ud_packet(slid, dlid, pkey, qkey, dqpn, srcqp, payload, sl=0, lver=0,
              lnh=2, fix_len=True):
    pad = (4 - len(payload) % 4) % 4
    body_len = 8 + 12 + 8 + len(payload) + pad
    pktlen = (body_len + 4) // 4
    lrh = struct.pack(">BBHHH", (0 << 4) | lver, (sl << 4) | lnh, dlid,
                      pktlen & 0x7FF, slid)
    bth = struct.pack(">BBHII", 0x64, pad << 4, pkey, dqpn & 0xFFFFFF, 0)
    deth = struct.pack(">II", qkey, srcqp & 0xFFFFFF)
    pkt = lrh + bth + deth + payload + b"\0" * pad
    pkt += struct.pack("<I", icrc(pkt))
    pkt += struct.pack("<H", crc16_ib(pkt))
    return pkt


def rc_packet(slid, dlid, pkey, dqpn, opcode, psn, ext=b"", payload=b"",
              pad=None, ackreq=0):
    """An RC packet: LRH, BTH, extended headers as given, payload, pad,
    ICRC, VCRC (IBTA vol. 1 5.2, 9.2, 9.3)."""
    if pad is None:
        pad = (4 - len(payload) % 4) % 4
    body = 8 + 12 + len(ext) + len(payload) + pad
    lrh = struct.pack(">BBHHH", 0, 2, dlid, ((body + 4) // 4) & 0x7FF, slid)
    bth = struct.pack(">BBHII", opcode, (pad & 3) << 4, pkey,
                      dqpn & 0xFFFFFF, (ackreq << 31) | (psn & 0xFFFFFF))
    pkt = lrh + bth + ext + payload + b"\0" * pad
    pkt += struct.pack("<I", icrc(pkt))
    pkt += struct.pack("<H", crc16_ib(pkt))
    return pkt


def reth(va, rkey, length):
    return struct.pack(">QII", va, rkey, length)


def aeth(syndrome, msn):
    return struct.pack(">I", (syndrome << 24) | (msn & 0xFFFFFF))


def cm_mad(attr, data):
    """A CM MAD (class 0x07 version 2, method Send) with data from byte 24."""
    hdr = struct.pack(">BBBBHHQHHI", 1, 0x07, 2, 0x03, 0, 0,
                      0x0000000100000000 | attr, attr, 0, 0)
    return (hdr + data + b"\0" * 232)[:256]


def fix_vcrc(pkt):
    pkt = bytearray(pkt)
    pkt[-2:] = struct.pack("<H", crc16_ib(bytes(pkt[:-2])))
    return bytes(pkt)


def write_pcap(path, pkts):
    tag = b"infiniband\0\0"
    hdr = struct.pack(">HH", 12, len(tag)) + tag + struct.pack(">HH", 0, 0)
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 252))
        for i, p in enumerate(pkts):
            rec = hdr + p
            f.write(struct.pack("<IIII", 1000 + i, 0, len(rec), len(rec)))
            f.write(rec)


def num(s):
    return int(s, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["forge", "garbage", "ipoib-garbage",
                                     "rc-hostile", "cm-hostile", "arp"])
    ap.add_argument("--sha", default="")
    ap.add_argument("--spa", default="0.0.0.0")
    ap.add_argument("--tpa", default="0.0.0.0")
    ap.add_argument("--op", type=num, default=1)
    ap.add_argument("--comm-ids", action="append", default=[])
    ap.add_argument("--mtu", type=num, default=4096)
    ap.add_argument("file")
    ap.add_argument("--slid", type=num, default=0)
    ap.add_argument("--dlid", type=num, default=0)
    ap.add_argument("--pkey", type=num, default=0xFFFF)
    ap.add_argument("--qkey", type=num, default=0x0B1B)
    ap.add_argument("--dqpn", type=num, default=0x48)
    ap.add_argument("--srcqp", type=num, default=0x48)
    ap.add_argument("--data", default="forged")
    ap.add_argument("--seed", type=num, default=1)
    a = ap.parse_args()

    rnd = random.Random(a.seed)
    if a.mode == "arp":
        import socket
        sha = bytes(int(x, 16) for x in a.sha.split(":"))
        if len(sha) != 20:
            sys.exit("--sha: 20 bytes")
        arp = (struct.pack(">HHBBH", 32, 0x0800, 20, 4, a.op) + sha +
               socket.inet_aton(a.spa) + b"\0" * 20 +
               socket.inet_aton(a.tpa))
        write_pcap(a.file, [ud_packet(a.slid, a.dlid, a.pkey, a.qkey,
                                      a.dqpn, a.srcqp,
                                      b"\x08\x06\x00\x00" + arp)])
        return 0
    if a.mode == "rc-hostile":
        def rc(op, psn, ext=b"", payload=b"", pad=None, pkey=a.pkey):
            return rc_packet(a.slid, a.dlid, pkey, a.dqpn, op, psn, ext,
                             payload, pad)
        qp, sw = [], []
        for _ in range(8):      # well formed, random PSNs: the QP's to drop
            psn = rnd.getrandbits(24)
            qp += [rc(0x04, psn, payload=b"hostile send"),
                   rc(0x00, psn, payload=b"\x55" * a.mtu),  # FIRST
                   rc(0x01, psn, payload=b"\x66" * a.mtu),  # MIDDLE alone
                   rc(0x02, psn, payload=b"last"),          # LAST alone
                   rc(0x0A, psn, reth(rnd.getrandbits(64),
                                      rnd.getrandbits(32), 4), b"evil"),
                   rc(0x0C, psn, reth(0, rnd.getrandbits(32), 1 << 20)),
                   rc(0x11, psn, aeth(0x1F, rnd.getrandbits(24))),  # ACK
                   rc(0x11, psn, aeth(0x60, 0)),       # NAK PSN seq error
                   rc(0x11, psn, aeth(0x20, 0)),       # RNR NAK
                   rc(0x10, psn, aeth(0x1F, 0), b"\x77" * 64),  # read resp
                   rc(0x05, psn, struct.pack(">I", 0xDEADBEEF), b"imm")]
        # malformed: the switch drops them before any QP sees them
        sw += [rc(0x04, 1, payload=b"x" * 300, pad=3),   # PadCnt lies
               rc(0x0A, 2, reth(0, 1, 0xFFFFFFFF), b"y"),  # DMA length
               rc(0x11, 3, aeth(0x80 | 0x1F, 0)),       # reserved bit
               rc(0x00, 4, payload=b"short first"),     # FIRST < MTU
               rc(0x04, 5, payload=b"z" * 4200)[:4186],  # too long
               rc(0x13, 6, payload=b"bad opcode")]      # not RC
        sw.append(rc(0x04, 7, payload=b"wrong pkey", pkey=0x7123))
        pkts = qp + sw
        rnd.shuffle(pkts)
        write_pcap(a.file, pkts)
        print("switch", len(sw))
        print("qp", len(qp))
        return 0
    if a.mode == "cm-hostile":
        mads = []
        ids = [tuple(int(x, 0) for x in c.split(",")) for c in a.comm_ids]
        ids += [(rnd.getrandbits(32), rnd.getrandbits(32)) for _ in range(4)]
        for local, remote in ids:
            two = struct.pack(">II", local, remote)
            mads += [cm_mad(0x0013, two + b"\0" * 8 + b"\x00\x00\x48" +
                            b"\0" * 20),                        # REP
                     cm_mad(0x0014, two),                      # RTU
                     cm_mad(0x0015, two + b"\x00\x00\x00\x48"),  # DREQ
                     cm_mad(0x0016, two),                      # DREP
                     cm_mad(0x0012, two + b"\x00\x00\x1c\x00"),  # REJ
                     cm_mad(0x0011, two + b"\x00\x00")]          # MRA
            # the same messages with the comm IDs swapped
            sw2 = struct.pack(">II", remote, local)
            mads += [cm_mad(0x0015, sw2 + b"\x00\x00\x00\x48"),
                     cm_mad(0x0014, sw2)]
        # not CM messages: reserved attributes, garbage REQs
        mads += [cm_mad(0x0017, b"LAP"), cm_mad(0x00FF, b"nonsense"),
                 cm_mad(0x0010, bytes(rnd.getrandbits(8)
                                      for _ in range(232))),
                 cm_mad(0x0010, b"\xff" * 232)]
        with open(a.file, "wb") as f:
            for m in mads:
                f.write(m)
        print(len(mads))
        return 0

    good = ud_packet(a.slid, a.dlid, a.pkey, a.qkey, a.dqpn, a.srcqp,
                     a.data.encode())
    if a.mode == "forge":
        write_pcap(a.file, [good])
        return 0

    pkts, expect = [], {}
    if a.mode == "ipoib-garbage":
        def ud(payload):
            return ud_packet(a.slid, a.dlid, a.pkey, a.qkey, a.dqpn,
                             a.srcqp, payload)
        arp = struct.pack(">HHBBH", 32, 0x0800, 20, 4, 1) + b"\0" * 48
        ip4 = bytes([0x45, 0, 0, 28, 0, 0, 0x40, 0, 64, 17, 0, 0,
                     10, 1, 0, 9, 10, 1, 0, 1]) + b"\0" * 8
        ip6_ns = bytearray(bytes([0x60, 0, 0, 0, 0, 32, 58, 255]) +
                           b"\xfe\x80" + b"\0" * 13 + b"\x09" +
                           b"\xff\x02" + b"\0" * 9 + b"\x01\xff\0\0\x01" +
                           bytes([135, 0, 0x12, 0x34]) + b"\0" * 28)
        bad = [
            b"", b"\x08", b"\x08\x00\x00",          # short IPoIB header
            b"\x08\x00\x00\x01" + ip4,             # reserved bytes not 0
            b"\x88\x8e\x00\x00" + ip4,             # EAPOL: not carried
            b"\x08\x06\x00\x00" + arp[:30],         # ARP cut short
            b"\x08\x06\x00\x00" + struct.pack(">H", 1) + arp[2:],  # htype 1
            b"\x08\x06\x00\x00" + arp[:4] + b"\x06" + arp[5:],   # hlen 6
            b"\x08\x06\x00\x00" + arp[:6] + b"\x00\x09" + arp[8:],  # op 9
            b"\x08\x00\x00\x00" + b"\x55" + ip4[1:],  # IP version 5
            b"\x08\x00\x00\x00" + ip4[:2] + b"\x05\xdc" + ip4[4:],  # len>buf
            b"\x08\x00\x00\x00" + b"\x41" + ip4[1:],  # IHL 1
            b"\x86\xdd\x00\x00" + bytes(ip6_ns[:30]),  # IPv6 cut short
            b"\x86\xdd\x00\x00" + bytes(ip6_ns),       # NS, bad checksum
        ]
        for _ in range(4):      # random bytes after a valid header
            n = rnd.randrange(1, 120)
            et = rnd.choice([0x0800, 0x0806, 0x86DD])
            bad.append(struct.pack(">HH", et, 0) +
                       bytes(rnd.getrandbits(8) for _ in range(n)))
        write_pcap(a.file, [ud(p) for p in bad])
        print(len(bad))
        return 0

    def add(reason, pkt):
        pkts.append(pkt)
        expect[reason] = expect.get(reason, 0) + 1

    for _ in range(5):      # random bytes of random length
        n = rnd.randrange(26, 200)
        junk = bytearray(rnd.getrandbits(8) for _ in range(n))
        junk[4:6] = struct.pack(">H", (n - 2) // 4)   # plausible PktLen
        add("bad_vcrc" if n % 4 == 2 else "bad_pktlen", bytes(junk))
    for n in (0, 1, 7, 8, 20, 25):                      # truncated headers
        add("truncated", good[:n])
    add("bad_pktlen", good[:-4])                       # cut at the end
    add("bad_pktlen", good + b"\0\0\0\0")              # trailing bytes
    flipped = bytearray(good)
    flipped[30] ^= 0x01
    add("bad_vcrc", bytes(flipped))                    # corrupted in flight
    add("bad_icrc", fix_vcrc(bytes(flipped)))          # VCRC redone, ICRC not
    add("bad_lver", ud_packet(a.slid, a.dlid, a.pkey, a.qkey, a.dqpn,
                              a.srcqp, b"x", lver=1))
    add("bad_lnh", ud_packet(a.slid, a.dlid, a.pkey, a.qkey, a.dqpn,
                             a.srcqp, b"x", lnh=0))
    add("unknown_dlid", ud_packet(a.slid, 0x3FFF, a.pkey, a.qkey, a.dqpn,
                                  a.srcqp, b"x"))
    add("bad_slid", ud_packet(a.slid + 77, a.dlid, a.pkey, a.qkey, a.dqpn,
                              a.srcqp, b"x"))
    add("mcast_no_grh", ud_packet(a.slid, 0xC001, a.pkey, a.qkey, 0xFFFFFF,
                                  a.srcqp, b"x"))
    add("too_long", ud_packet(a.slid, a.dlid, a.pkey, a.qkey, a.dqpn,
                              a.srcqp, b"L" * 4097))   # one byte over 4096
    write_pcap(a.file, pkts)
    for k in sorted(expect):
        print(k, expect[k])
    return 0


if __name__ == "__main__":
    sys.exit(main())
