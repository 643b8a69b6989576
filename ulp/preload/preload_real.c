// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The real socket calls, resolved with dlsym(RTLD_NEXT) in the constructor
 * (and again on first use, for a call made from another library's
 * constructor before ours ran).  Nothing else happens at load time.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "ulp/preload/preload.h"

struct preload_real preload_real;
atomic_int preload_sandboxed;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

static void real_resolve(void)
{
	struct preload_real *r = &preload_real;

	*(void **)&r->bind = dlsym(RTLD_NEXT, "bind");
	*(void **)&r->connect = dlsym(RTLD_NEXT, "connect");
	*(void **)&r->listen = dlsym(RTLD_NEXT, "listen");
	*(void **)&r->accept4 = dlsym(RTLD_NEXT, "accept4");
	*(void **)&r->getsockname = dlsym(RTLD_NEXT, "getsockname");
	*(void **)&r->getpeername = dlsym(RTLD_NEXT, "getpeername");
	*(void **)&r->getsockopt = dlsym(RTLD_NEXT, "getsockopt");
	*(void **)&r->setsockopt = dlsym(RTLD_NEXT, "setsockopt");
	*(void **)&r->socket = dlsym(RTLD_NEXT, "socket");
	*(void **)&r->close = dlsym(RTLD_NEXT, "close");
	*(void **)&r->dup2 = dlsym(RTLD_NEXT, "dup2");
	*(void **)&r->dup3 = dlsym(RTLD_NEXT, "dup3");
	*(void **)&r->close_range = dlsym(RTLD_NEXT, "close_range");
	*(void **)&r->sendmsg = dlsym(RTLD_NEXT, "sendmsg");
	*(void **)&r->recvmsg = dlsym(RTLD_NEXT, "recvmsg");
	*(void **)&r->sendto = dlsym(RTLD_NEXT, "sendto");
	*(void **)&r->recvfrom = dlsym(RTLD_NEXT, "recvfrom");
	*(void **)&r->send = dlsym(RTLD_NEXT, "send");
	*(void **)&r->recv = dlsym(RTLD_NEXT, "recv");
	*(void **)&r->read = dlsym(RTLD_NEXT, "read");
	*(void **)&r->write = dlsym(RTLD_NEXT, "write");
	*(void **)&r->readv = dlsym(RTLD_NEXT, "readv");
	*(void **)&r->writev = dlsym(RTLD_NEXT, "writev");
	*(void **)&r->sendmmsg = dlsym(RTLD_NEXT, "sendmmsg");
	*(void **)&r->recvmmsg = dlsym(RTLD_NEXT, "recvmmsg");
	*(void **)&r->shutdown = dlsym(RTLD_NEXT, "shutdown");
	*(void **)&r->ioctl = dlsym(RTLD_NEXT, "ioctl");
	*(void **)&r->epoll_ctl = dlsym(RTLD_NEXT, "epoll_ctl");
	*(void **)&r->dup = dlsym(RTLD_NEXT, "dup");
	*(void **)&r->fcntl = dlsym(RTLD_NEXT, "fcntl");
	*(void **)&r->fcntl64 = dlsym(RTLD_NEXT, "fcntl64");
	*(void **)&r->prctl = dlsym(RTLD_NEXT, "prctl");
	*(void **)&r->syscall = dlsym(RTLD_NEXT, "syscall");
	if (!r->fcntl64)	/* glibc before 2.28 */
		r->fcntl64 = r->fcntl;
}

void preload_real_init(void)
{
	pthread_once(&real_once, real_resolve);
}

__attribute__((constructor)) static void real_ctor(void)
{
	preload_real_init();
}
