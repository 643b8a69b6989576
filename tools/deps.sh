#!/bin/sh
# Install the Debian packages that building and testing ibgw need.
# Idempotent: when everything is present it only asks dpkg and returns.
set -eu

PKGS="build-essential pkg-config
libevent-dev libiniparser-dev libcmocka-dev
libnl-3-dev libnl-route-3-dev libmnl-dev libpcap-dev libcap-ng-dev
libibverbs-dev libibumad-dev librdmacm-dev
clang libclang-rt-14-dev
tshark iproute2 procps psmisc python3 man-db groff-base
opensm ibsim-utils libumad2sim0 infiniband-diags
iperf3 socat tcpdump iputils-ping iputils-arping curl valgrind systemd dnsmasq-base
keepalived kea-dhcp4-server
lighttpd wget nodejs nginx-light openssh-server openssh-client
qemu-system-x86 busybox-static kmod cpio
rdma-core ibverbs-utils rdmacm-utils perftest"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

echo "deps: installing:$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages and not root; run 'sudo make deps'" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; the answer does not matter
echo "wireshark-common wireshark-common/install-setuid boolean false" |
	debconf-set-selections
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
