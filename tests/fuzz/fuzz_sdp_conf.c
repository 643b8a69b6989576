/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for the libsdp.conf parser: any bytes in, either rules
 * that keep sdp_conf.h's promises or a one-line error with a line number
 * inside the text and nothing half-read, never a crash.  Each accepted
 * configuration is asked about addresses and ports taken from its own
 * rules and from the input's bytes; every answer is NONE or the use of
 * the rule it names.
 *
 *   clang -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *	tests/fuzz/fuzz_sdp_conf.c ulp/sdp/sdp_conf.c inet/addr.c -o fz
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ulp/sdp/sdp_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct sdp_conf conf;

static void check_rule(const struct sdp_rule *r, size_t size)
{
	size_t alen = inet_addr_len(r->addr.addr.family);

	if (r->use < SDP_USE_TCP || r->use > SDP_USE_BOTH ||
	    memchr(r->program, '\0', sizeof(r->program)) == NULL ||
	    r->program[0] == '\0' || r->port_lo > r->port_hi ||
	    r->line == 0 || r->line > size)
		abort();
	if (r->any_addr ? r->addr.addr.family != 0 :
	    alen == 0 || r->addr.plen > alen * 8)
		abort();
}

static void check_match(enum sdp_role role, const char *prog,
			const struct inet_addr *a, uint16_t port)
{
	const struct sdp_rule *r = NULL;
	enum sdp_use u = sdp_conf_match(&conf, role, prog, a, port, &r);

	if (u == SDP_USE_NONE) {
		if (r != NULL)
			abort();
		return;
	}
	if (r == NULL || r < conf.rules[role] ||
	    r >= conf.rules[role] + conf.n[role] || r->use != u ||
	    port < r->port_lo || port > r->port_hi)
		abort();
	if (strcmp(sdp_use_name(u), "none") == 0)
		abort();
}

/* a rule's own address, its mapped form, and the input's bytes as both */
static void probe(const struct sdp_rule *r, const uint8_t *data, size_t size)
{
	static const char *const progs[] = { "iperf", "sshd", "", "a*" };
	struct inet_addr a[4];
	unsigned int i, k;
	uint16_t port;

	memset(a, 0, sizeof(a));
	a[0] = r->addr.addr;
	if (a[0].family == AF_INET) {
		a[1].family = AF_INET6;
		a[1].raw[10] = a[1].raw[11] = 0xff;
		memcpy(&a[1].raw[12], a[0].raw, 4);
	}
	a[2].family = AF_INET;
	a[3].family = AF_INET6;
	memcpy(a[2].raw, data, size < 4 ? size : 4);
	memcpy(a[3].raw, data, size < 16 ? size : 16);
	port = size >= 2 ? (uint16_t)(data[0] << 8 | data[1]) : 0;

	for (i = 0; i < 4; i++)
		for (k = 0; k < 4; k++) {
			check_match(SDP_ROLE_SERVER, progs[k], &a[i],
				    r->port_lo);
			check_match(SDP_ROLE_CLIENT, progs[k], &a[i],
				    r->port_hi);
			check_match(SDP_ROLE_CLIENT, r->program, &a[i], port);
		}
	/* the rule itself matches its own address, port and pattern's text
	 * if no earlier rule does: some rule must answer */
	if (r->addr.addr.family != 0 && strpbrk(r->program, "*?[\\") == NULL &&
	    sdp_conf_match(&conf, SDP_ROLE_SERVER, r->program, &a[0],
			   r->port_lo, NULL) == SDP_USE_NONE &&
	    r >= conf.rules[SDP_ROLE_SERVER] &&
	    r < conf.rules[SDP_ROLE_SERVER] + conf.n[SDP_ROLE_SERVER])
		abort();
	check_match(SDP_ROLE_SERVER, r->program, NULL, port);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int line = 12345, role, i;
	char err[256];

	memset(err, 'x', sizeof(err));
	if (sdp_conf_parse(&conf, (const char *)data, size, &line, err,
			   sizeof(err)) < 0) {
		if (line == 0 || line > size + 1 ||
		    memchr(err, '\0', sizeof(err)) == NULL ||
		    err[0] == '\0' || strchr(err, '\n') != NULL ||
		    conf.n[0] != 0 || conf.n[1] != 0 ||
		    conf.log_dest != SDP_LOG_NONE)
			abort();
		return 0;
	}
	if (line != 0 || conf.n[0] > SDP_CONF_RULES_MAX ||
	    conf.n[1] > SDP_CONF_RULES_MAX || conf.log_level < 0 ||
	    conf.log_level > 9 || conf.log_dest > SDP_LOG_FILE ||
	    memchr(conf.log_file, '\0', sizeof(conf.log_file)) == NULL ||
	    (conf.log_dest == SDP_LOG_FILE) != (conf.log_file[0] != '\0'))
		abort();
	for (role = 0; role < 2; role++)
		for (i = 0; i < conf.n[role]; i++) {
			check_rule(&conf.rules[role][i], size);
			if (i < 8)
				probe(&conf.rules[role][i], data, size);
		}
	return 0;
}
