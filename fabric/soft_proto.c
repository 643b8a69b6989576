// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fabric/soft_proto.h"

int fsp_send(int fd, uint16_t type, uint32_t seq, int32_t status,
	     const void *body, size_t len, int pass_fd)
{
	return fsp_send_fds(fd, type, seq, status, body, len, &pass_fd,
			    pass_fd >= 0 ? 1 : 0);
}

int fsp_send_fds(int fd, uint16_t type, uint32_t seq, int32_t status,
		 const void *body, size_t len, const int *fds, unsigned int nfds)
{
	struct fsp_hdr hdr = { .type = type, .seq = seq, .status = status,
			       .len = (uint32_t)len };
	struct iovec iov[2] = {
		{ .iov_base = &hdr, .iov_len = sizeof(hdr) },
		{ .iov_base = (void *)body, .iov_len = len },
	};
	union {
		char buf[CMSG_SPACE(sizeof(int) * FSP_FDS_MAX)];
		struct cmsghdr align;
	} cbuf;
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
	struct cmsghdr *cm;
	ssize_t n;

	if (len > FSP_MSG_MAX - sizeof(hdr) || nfds > FSP_FDS_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	if (nfds) {
		memset(&cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do {
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	return 0;
}

/*
 * Returns the body length (>= 0) with *hdr filled; -1 with errno: EPIPE on
 * orderly close by the peer, EBADMSG for a malformed message, EAGAIN when
 * nothing is pending on a non-blocking socket.
 */
ssize_t fsp_recv(int fd, struct fsp_hdr *hdr, void *body, size_t cap,
		 int *fd_out)
{
	return fsp_recv_fds(fd, hdr, body, cap, fd_out, fd_out ? 1 : 0);
}

ssize_t fsp_recv_fds(int fd, struct fsp_hdr *hdr, void *body, size_t cap,
		     int *fds, unsigned int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov[2] = {
		{ .iov_base = hdr, .iov_len = sizeof(*hdr) },
		{ .iov_base = body, .iov_len = cap },
	};
	struct msghdr msg = {
		.msg_iov = iov, .msg_iovlen = 2,
		.msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf),
	};
	struct cmsghdr *cm;
	unsigned int got = 0, i;
	ssize_t n;

	for (i = 0; i < nfds; i++)
		fds[i] = -1;
	do {
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS) {
			size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			size_t k;
			int f;

			for (k = 0; k < nfd; k++) {
				memcpy(&f, CMSG_DATA(cm) + k * sizeof(int),
				       sizeof(int));
				if (got < nfds)
					fds[got++] = f;
				else
					close(f);
			}
		}
	}
	if (n == 0) {
		errno = EPIPE;
		goto bad;
	}
	if ((size_t)n < sizeof(*hdr) || (msg.msg_flags & MSG_TRUNC) ||
	    hdr->len != (size_t)n - sizeof(*hdr) || hdr->type == 0 ||
	    hdr->type >= FSP_TYPE_MAX) {
		errno = EBADMSG;
		goto bad;
	}
	return (ssize_t)hdr->len;
bad:
	for (i = 0; i < got; i++) {
		close(fds[i]);
		fds[i] = -1;
	}
	return -1;
}
