#!/usr/bin/python3
# A stand-in for systemd's end of sd_notify(3), for the tests: binds a unix
# datagram socket at PATH and prints every message it gets as one line,
#   SECONDS MESSAGE      (monotonic seconds; the message's '\n' as ' | ')
# after a first line "bound".  With --probe SOCK, on READY=1 it connects
# to the SOCK_SEQPACKET socket SOCK at once (as a unit ordered after the
# sender would) and prints "probe connected" or "probe failed: ERROR".
# Ends at STOPPING=1, or after --timeout seconds without a message.
#   notify_listen.py PATH [--probe SOCK] [--timeout S]
import argparse
import socket
import time

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--probe")
ap.add_argument("--timeout", type=float, default=30)
a = ap.parse_args()
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(a.path)
s.settimeout(a.timeout)
print("bound", flush=True)
try:
    while True:
        m = s.recv(4096).decode()
        print("%.3f %s" % (time.monotonic(), m.replace("\n", " | ")),
              flush=True)
        if a.probe and "READY=1" in m.split("\n"):
            p = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                p.connect(a.probe)
                print("probe connected", flush=True)
            except OSError as e:
                print("probe failed: %s" % e, flush=True)
            p.close()
        if "STOPPING=1" in m.split("\n"):
            break
except socket.timeout:
    print("timeout", flush=True)
