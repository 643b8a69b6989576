#!/bin/bash
# Server programs under LD_PRELOAD=libibgw_preload.so that use more than
# plain sockets (issue 14, items 3 and 5), between two IB hosts of the
# software subnet (ipoibd with its SDP service on h1 and h2):
#  a) OpenSSH's sshd on h2, ssh from h1 running sha256sum on 4 MB of
#     stdin: sshd reads IP_OPTIONS (must be empty, or it drops the
#     connection) and runs its pre-auth child under a seccomp filter that
#     allows write but not sendto or getsockname (the preload steps aside
#     at prctl(PR_SET_SECCOMP)); SDP carried it (the services' counters);
#  b) a listener inherited across exec: getsockname in the exec'd child
#     gives the TCP address (AF_INET, the port), not the unix socket's;
#  c) nginx's binary upgrade (USR2: the new master execs with the
#     listener inherited, then the old one quits): the new one finds its
#     inherited socket by its address and serves over SDP;
#  d) SO_REUSEPORT: two processes listening on one port both get SDP
#     connections (in turn), none over TCP;
#  e) IPV6_V6ONLY: an IPv6-only listener and an IPv4 one on the same
#     port, an IPv4 client lands on the IPv4 one, and IPV6_V6ONLY reads 1
#     after listen;
#  f) a seccomp filter loaded as libseccomp loads it (syscall(SYS_seccomp))
#     and one through prctl, each killing getsockname and getpeername: a
#     python3 client's SDP stream (a dup the preload has not seen) goes on
#     working after it;
#  g) what sockperf and lftp tripped on: sendto with the peer's address on
#     a connected stream (TCP ignores it; a unix stream says EISCONN),
#     recvfrom's address (none on TCP), and blocking connects under a
#     200 us timer whose handler has SA_RESTART (restarted, as TCP's; the
#     control socket's timeout made every signal EINTR) and non-blocking
#     ones under one without (TCP's never say EINTR);
#  h) a single-threaded select() server with a blocking SO_REUSEPORT
#     listener and a client pinging it: another process's bind of the
#     port (EADDRINUSE: the preload asks the service to let go of it) and
#     a SO_REUSEPORT sibling's listen leave it alone, as over TCP
#     (before, the service connected a probe to see the listener alive:
#     the server woke, its accept took the probe and blocked, the pings
#     stalled);
#  i) a 'both' server with one free descriptor: a plain TCP client's
#     connection needs two (the service's stream and the TCP socket on
#     it), so accept says EMFILE and the connection waits; with two free
#     the same client is served (before, the kernel dropped the socket
#     passed, the client read end of file).  One dropped all the same (no
#     descriptor reserved: the first accept on a TCP listener's old fd
#     number) makes accept fail with ECONNABORTED, not wait on silently.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
for t in /usr/sbin/sshd ssh ssh-keygen /usr/sbin/nginx curl python3 socat sha256sum; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done
start_fabric
sdp_host h1 --address 10.1.0.1/24
sdp_host h2 --address 10.1.0.2/24

# a) sshd and ssh
mkdir -p /run/sshd	# its privilege separation directory
ssh-keygen -q -t ed25519 -N '' -f "$T/hostkey" || fail "ssh-keygen"
ssh-keygen -q -t ed25519 -N '' -f "$T/userkey" || fail "ssh-keygen"
cp "$T/userkey.pub" "$T/authorized_keys"
cat >"$T/sshd_config" <<EOF
Port 2222
ListenAddress 0.0.0.0
HostKey $T/hostkey
PidFile $T/sshd.pid
AuthorizedKeysFile $T/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin yes
StrictModes no
UseDNS no
LogLevel VERBOSE
EOF
cat >"$T/ssh_config" <<EOF
Host *
  IdentityFile $T/userkey
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  Port 2222
  User root
  BatchMode yes
EOF
pre_bg SSHD h2 /usr/sbin/sshd -D -e -f "$T/sshd_config" 2>"$T/sshd.log"
wait_port h2 2222
c0=$(stat_of h1 sdp_service.connects)
r0=$(stat_of h2 sdp.rx_bytes)
head -c 4000000 /dev/urandom >"$T/a.in"
pre h1 ssh -F "$T/ssh_config" 10.1.0.2 sha256sum <"$T/a.in" >"$T/a.out" 2>"$T/a.err" ||
	{ cat "$T/a.err" "$T/sshd.log"; fail "a: ssh under the preload to sshd under the preload failed"; }
expect_eq "a: sha256 through ssh" "$(cut -d' ' -f1 "$T/a.out")" "$(sha256sum <"$T/a.in" | cut -d' ' -f1)"
grep -q "IP opts" "$T/sshd.log" && fail "a: sshd saw IP options"
expect_eq "a: SDP connections from h1" "$(delta h1 sdp_service.connects "$c0")" 1
rx=$(delta h2 sdp.rx_bytes "$r0")
[ "$rx" -ge 4000000 ] || fail "a: h2's SDP took $rx bytes, not the 4 MB"
ok "a: sshd (seccomp sandbox) and ssh both preloaded: 4 MB over SDP, $rx bytes"

# b) a listener inherited across exec
cat >"$T/inherit.py" <<'EOF'
import os, socket, sys
if sys.argv[1] == "child":
    s = socket.socket(fileno=int(sys.argv[2]))
    print(s.family == socket.AF_INET, s.getsockname()[1])
    sys.exit(0)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[2])))
s.listen()
os.set_inheritable(s.fileno(), True)
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, __file__, "child", str(s.fileno())])
os.waitpid(pid, 0)
EOF
expect_eq "b: the exec'd child's getsockname" "$(pre h2 python3 "$T/inherit.py" parent 7100)" "True 7100"

# c) nginx's binary upgrade
mkdir -p "$T/nginx/www" "$T/nginx/tmp"
head -c 2000000 /dev/urandom >"$T/nginx/www/f.bin"
cat >"$T/nginx.conf" <<EOF
daemon on;
user root;
env LD_PRELOAD;
env LIBSDP_CONFIG_FILE;
worker_processes 2;
pid $T/nginx.pid;
error_log $T/nginx-error.log info;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $T/nginx/tmp/body;
  proxy_temp_path $T/nginx/tmp/proxy;
  fastcgi_temp_path $T/nginx/tmp/fcgi;
  uwsgi_temp_path $T/nginx/tmp/uwsgi;
  scgi_temp_path $T/nginx/tmp/scgi;
  server { listen 8080; root $T/nginx/www; }
}
EOF
nginx_stop() {
	local p
	for p in "$T/nginx.pid" "$T/nginx.pid.oldbin"; do
		[ -s "$p" ] && kill -QUIT "$(cat "$p")" 2>/dev/null
	done
}
trap "nginx_stop; $(trap -p EXIT | sed "s/^trap -- '\(.*\)' EXIT$/\1/")" EXIT
pre h2 /usr/sbin/nginx -c "$T/nginx.conf" -p "$T/nginx/" || fail "c: nginx did not start"
wait_port h2 8080
want=$(sha256sum <"$T/nginx/www/f.bin" | cut -d' ' -f1)
get() {
	pre h1 curl -sf "http://10.1.0.2:8080/f.bin" | sha256sum | cut -d' ' -f1
}
expect_eq "c: before the upgrade" "$(get)" "$want"
old=$(cat "$T/nginx.pid")
kill -USR2 "$old"
for i in $(seq 1 100); do
	[ -s "$T/nginx.pid.oldbin" ] && [ -s "$T/nginx.pid" ] &&
		[ "$(cat "$T/nginx.pid")" != "$old" ] && break
	sleep 0.1
done
new=$(cat "$T/nginx.pid")
[ "$new" != "$old" ] || { cat "$T/nginx-error.log"; fail "c: no new nginx master after USR2"; }
kill -QUIT "$old"
for i in $(seq 1 100); do
	kill -0 "$old" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$old" 2>/dev/null && fail "c: the old master did not quit"
grep -q "using inherited sockets" "$T/nginx-error.log" ||
	{ cat "$T/nginx-error.log"; fail "c: the new master did not take the inherited socket"; }
grep -E "bind\(\).*failed|emerg" "$T/nginx-error.log" &&
	fail "c: the new master tried to bind anew"
a0=$(stat_of h2 sdp_service.accepted_sdp)
for i in 1 2 3; do
	expect_eq "c: after the upgrade, GET $i" "$(get)" "$want"
done
expect_eq "c: SDP connections the new master took" "$(delta h2 sdp_service.accepted_sdp "$a0")" 3
kill -0 "$new" || fail "c: the new master is gone"
ok "c: nginx upgraded its binary with the inherited SDP listener: pid $old -> $new"
nginx_stop

# d) SO_REUSEPORT
cat >"$T/reuse.py" <<'EOF'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen()
open(sys.argv[2] + ".up", "w").close()
s.settimeout(8)
n = 0
try:
    while True:
        c, a = s.accept()
        c.recv(10)
        c.close()
        n += 1
        open(sys.argv[2], "w").write(str(n))
except socket.timeout:
    pass
EOF
pre_bg RA h2 python3 "$T/reuse.py" 7400 "$T/ra"
pre_bg RB h2 python3 "$T/reuse.py" 7400 "$T/rb"
for i in $(seq 1 100); do
	[ -e "$T/ra.up" ] && [ -e "$T/rb.up" ] && break
	sleep 0.1
done
[ -e "$T/ra.up" ] && [ -e "$T/rb.up" ] || fail "d: the listeners did not start"
a0=$(stat_of h2 sdp_service.accepted_sdp)
t0=$(stat_of h2 sdp_service.accepted_tcp)
for i in $(seq 1 8); do
	echo "x$i" | pre h1 socat -u STDIN TCP:10.1.0.2:7400 || fail "d: connect $i failed"
done
sleep 0.5
na=$(cat "$T/ra" 2>/dev/null || echo 0)
nb=$(cat "$T/rb" 2>/dev/null || echo 0)
expect_eq "d: connections taken by the two listeners" $((na + nb)) 8
[ "$na" -ge 1 ] && [ "$nb" -ge 1 ] || fail "d: one listener took all ($na, $nb)"
expect_eq "d: over SDP" "$(delta h2 sdp_service.accepted_sdp "$a0")" 8
expect_eq "d: over TCP" "$(delta h2 sdp_service.accepted_tcp "$t0")" 0
ok "d: SO_REUSEPORT: $na and $nb of 8 SDP connections"
kill "$RA" "$RB" 2>/dev/null

# e) IPV6_V6ONLY
cat >"$T/v6only.py" <<'EOF'
import select, socket, sys
p = int(sys.argv[1])
b = socket.socket(socket.AF_INET6)
b.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
b.bind(("::", p))
b.listen()
print("v6only", b.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY), flush=True)
a = socket.socket()
a.bind(("0.0.0.0", p))
a.listen()
open(sys.argv[2], "w").close()
r, _, _ = select.select([a, b], [], [], 10)
for s in r:
    c, addr = s.accept()
    print("v4" if s is a else "v6only", addr[0], flush=True)
EOF
pre_bg V6 h2 python3 "$T/v6only.py" 7500 "$T/v6.up" >"$T/v6.out"
for i in $(seq 1 100); do
	[ -e "$T/v6.up" ] && break
	sleep 0.1
done
[ -e "$T/v6.up" ] || { cat "$T/v6.out"; fail "e: the listeners did not start"; }
a0=$(stat_of h2 sdp_service.accepted_sdp)
echo hello | pre h1 socat -u STDIN TCP:10.1.0.2:7500 || fail "e: connect failed"
wait "$V6"
expect_eq "e: IPV6_V6ONLY after listen" "$(sed -n 1p "$T/v6.out")" "v6only 1"
expect_eq "e: the IPv4 client's listener" "$(sed -n 2p "$T/v6.out")" "v4 10.1.0.1"
expect_eq "e: over SDP" "$(delta h2 sdp_service.accepted_sdp "$a0")" 1
ok "e: an IPv4 SDP client reached the IPv4 listener, not the IPv6-only one"

# f) seccomp filters the preload learns of
cat >"$T/seccomp.py" <<'EOF'
import ctypes, os, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
d = os.dup(s.fileno())		# never used through the preload yet
# kill getsockname (51) and getpeername (52) on x86-64, allow the rest
ins = [(0x20, 0, 0, 0), (0x15, 2, 0, 51), (0x15, 1, 0, 52),
       (0x06, 0, 0, 0x7fff0000), (0x06, 0, 0, 0x80000000)]
code = b"".join(struct.pack("HBBI", *i) for i in ins)
buf = ctypes.create_string_buffer(code)
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
prog = Fprog(len(ins), ctypes.cast(buf, ctypes.c_void_p))
libc.prctl(38, 1, 0, 0, 0)	# PR_SET_NO_NEW_PRIVS
if sys.argv[3] == "syscall":	# SYS_seccomp, SECCOMP_SET_MODE_FILTER
    r = libc.syscall(ctypes.c_long(317), ctypes.c_long(1), ctypes.c_long(0),
                     ctypes.byref(prog))
else:				# PR_SET_SECCOMP, SECCOMP_MODE_FILTER
    r = libc.prctl(22, 2, ctypes.byref(prog), 0, 0)
if r != 0:
    sys.exit("seccomp: %s" % os.strerror(ctypes.get_errno()))
os.write(d, b"ping")
print(os.read(d, 4).decode(), flush=True)
os._exit(0)	# before the interpreter's own getsockname at exit
EOF
pre_bg ECHO h2 socat TCP-LISTEN:7600,reuseaddr,fork EXEC:cat
wait_port h2 7600
c0=$(stat_of h1 sdp_service.connects)
for how in syscall prctl; do
	out=$(pre h1 python3 "$T/seccomp.py" 10.1.0.2 7600 "$how" 2>"$T/f.err")
	rc=$?
	[ "$rc" = 0 ] || { cat "$T/f.err"; fail "f: the client under a filter loaded by $how exited with $rc (159: SIGSYS)"; }
	expect_eq "f: the echo through a filter loaded by $how" "$out" ping
done
expect_eq "f: SDP connections" "$(delta h1 sdp_service.connects "$c0")" 2
ok "f: seccomp filters loaded by syscall(SYS_seccomp) and by prctl: the SDP streams go on"

# g) what sockperf and lftp tripped on
cat >"$T/calls.py" <<'EOF'
import ctypes, errno, os, signal, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
host, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if mode == "sendto":
    # an address on a connected stream is ignored, as TCP ignores it
    s = socket.create_connection((host, port))
    n = s.sendto(b"ping", (host, port))
    d, a = s.recvfrom(16)
    print(n, d.decode(), a)
    sys.exit(0)
# connects under a 200 us SIGALRM (SA_RESTART for "restart", not for
# "nonblock"), made through libc so that no EINTR is retried by python
signal.signal(signal.SIGALRM, lambda *a: None)
signal.siginterrupt(signal.SIGALRM, mode != "restart")
sa = struct.pack("!HH4s8x", socket.AF_INET, port, socket.inet_aton(host))
sa = bytes([sa[1], sa[0]]) + sa[2:]	# sin_family in host order
signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
res = {}
for i in range(int(sys.argv[4])):
    s = socket.socket()
    if mode == "nonblock":
        s.setblocking(False)
    r = libc.connect(s.fileno(), sa, len(sa))
    e = 0 if r == 0 else ctypes.get_errno()
    res[errno.errorcode.get(e, "0")] = res.get(errno.errorcode.get(e, "0"), 0) + 1
    s.close()
signal.setitimer(signal.ITIMER_REAL, 0)
print(" ".join("%s=%d" % kv for kv in sorted(res.items())))
EOF
out=$(pre h1 python3 "$T/calls.py" 10.1.0.2 7600 sendto 2>&1)
expect_eq "g: sendto with an address on a connected stream, recvfrom's address" "$out" "4 ping None"
expect_eq "g: blocking connects under a SA_RESTART timer" "$(pre h1 python3 "$T/calls.py" 10.1.0.2 7600 restart 100 2>&1)" "0=100"
out=$(pre h1 python3 "$T/calls.py" 10.1.0.2 7600 nonblock 100 2>&1)
case "$out" in *EINTR*|*Traceback*) fail "g: non-blocking connects under a timer: $out" ;; esac
ok "g: sendto's address ignored, recvfrom names no sender, no EINTR from SA_RESTART or non-blocking connects ($out)"

# h) a listener's liveness asked without waking it
cat >"$T/selsrv.py" <<'EOF'
import select, socket, sys, time
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
l.bind(("0.0.0.0", int(sys.argv[1])))
l.listen(8)
open(sys.argv[2], "w").close()
clients = []
while True:
    r, _, _ = select.select([l] + clients, [], [], 1.0)
    for s in r:
        if s is l:
            t = time.time()
            c, a = l.accept()
            print("accept %.1f" % (time.time() - t), flush=True)
            clients.append(c)
        else:
            d = s.recv(100)
            if not d:
                clients.remove(s)
                s.close()
                continue
            s.sendall(d)
EOF
cat >"$T/pinger.py" <<'EOF'
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
s.settimeout(1.0)
late = 0
end = time.time() + float(sys.argv[3])
while time.time() < end:
    s.sendall(b"ping")
    try:
        s.recv(100)
    except socket.timeout:
        late += 1
    time.sleep(0.2)
print("late %d" % late, flush=True)
EOF
cat >"$T/tryport.py" <<'EOF'
import errno, socket, sys, time
s = socket.socket()
if sys.argv[2] == "reuseport":
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
try:
    s.bind(("0.0.0.0", int(sys.argv[1])))
    if sys.argv[2] == "reuseport":
        s.listen(8)
        time.sleep(0.5)
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
EOF
pre_bg SEL h2 python3 "$T/selsrv.py" 7410 "$T/sel.up" >"$T/sel.out"
for i in $(seq 1 100); do
	[ -e "$T/sel.up" ] && break
	sleep 0.1
done
[ -e "$T/sel.up" ] || fail "h: the select() server did not start"
wait_port h2 7410
p0=$(stat_of h2 sdp_service.listener_probes)
pre h1 python3 "$T/pinger.py" 10.1.0.2 7410 6 >"$T/ping.out" 2>&1 &
pinger=$!
sleep 1.5
expect_eq "h: another process's bind of the port" "$(pre h2 python3 "$T/tryport.py" 7410 plain)" EADDRINUSE
sleep 1
expect_eq "h: a SO_REUSEPORT sibling's listen" "$(pre h2 python3 "$T/tryport.py" 7410 reuseport)" ok
wait $pinger
expect_eq "h: pings not echoed within a second" "$(cat "$T/ping.out")" "late 0"
expect_eq "h: the server's accepts (and the seconds each took)" "$(cat "$T/sel.out")" "accept 0.0"
expect_eq "h: probes connected to listeners" "$(delta h2 sdp_service.listener_probes "${p0:-0}")" 0
kill "$SEL" 2>/dev/null
ok "h: a bind elsewhere and a SO_REUSEPORT sibling's listen: the select() server not woken, its client echoed throughout"

# i) accept with one free descriptor
cat >"$T/fdsrv.py" <<'EOF'
import errno, os, resource, socket, sys
log = open(sys.argv[2], "w", buffering=1)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(8)
s.settimeout(20)
# a loopback listener is TCP's: an accept on it marks its fd number as
# not the preload's
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(1)
c = socket.create_connection(l.getsockname())
a, _ = l.accept()
a.close()
c.close()
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
hold = []
def one_free():
    try:
        while True:
            hold.append(os.open("/dev/null", os.O_RDONLY))
    except OSError:
        pass
    os.close(hold.pop())
def serve(sock, what):
    try:
        c, _ = sock.accept()
    except OSError as e:
        log.write("%s: %s\n" % (what, errno.errorcode[e.errno] if e.errno else e))
        return
    n = 0
    while True:
        d = c.recv(65536)
        if not d:
            break
        n += len(d)
    c.sendall(b"got %d\n" % n)
    c.close()
    log.write("%s: served\n" % what)
one_free()
log.write("ready 1\n")
serve(s, "one free")
os.close(hold.pop())
serve(s, "two free")
# the 'both' listener under the loopback listener's fd number
lfd = l.detach()
os.dup2(s.fileno(), lfd)
s2 = socket.socket(fileno=lfd)
s2.settimeout(20)
one_free()
log.write("ready 2\n")
serve(s2, "unreserved")
EOF
pre_bg FDS h2 python3 "$T/fdsrv.py" 7420 "$T/fds.log"
fds_up() { grep -q "^ready 1" "$T/fds.log" 2>/dev/null; }
eventually fds_up || fail "i: the server did not start"
out=$(echo hello | ns h1 timeout 30 socat -t 25 - TCP:10.1.0.2:7420 2>&1)
expect_eq "i: a plain TCP client of the server with one descriptor free" "$out" "got 6"
expect_eq "i: the server's accepts" "$(sed -n 2,3p "$T/fds.log" | tr '\n' ,)" "one free: EMFILE,two free: served,"
fds_up() { grep -q "^ready 2" "$T/fds.log" 2>/dev/null; }
eventually fds_up || fail "i: the server's second part did not start"
out=$(echo hello | ns h1 timeout 30 socat -t 25 - TCP:10.1.0.2:7420 2>&1)
fds_done() { grep -q "^unreserved" "$T/fds.log" 2>/dev/null; }
eventually fds_done || { cat "$T/fds.log"; fail "i: the server's unreserved accept did not return"; }
expect_eq "i: an unreserved accept whose TCP socket the kernel dropped" "$(sed -n 5p "$T/fds.log")" "unreserved: ECONNABORTED"
kill "$FDS" 2>/dev/null
ok "i: one descriptor free: EMFILE, the connection kept and served with two; a TCP socket dropped all the same: ECONNABORTED"
stop_fabric
echo PASS
