/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MAD agents over libibumad, shared by the umad provider and the verbs
 * provider (a verbs port's QP1 is reached through the same umad device).
 * A provider's mad_open calls fab_umad_agent_open with its own fab_dev and
 * the device/port it stands for (and its mad_register, if it has one,
 * fab_umad_agent_register); the other four are its mad ops as they are.
 * See prov_umad.c for what libibumad, the kernel and umad2sim do.
 */
#ifndef IBGW_PROV_UMAD_H
#define IBGW_PROV_UMAD_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"

struct fab_mad_agent *fab_umad_agent_open(struct fab_dev *dev,
					  const char *ca_name, uint8_t port,
					  uint8_t mgmt_class, char *err,
					  size_t errlen);
/* The same for an agent that serves requests (fabric.h's fab_mad_register);
 * fab_umad_agent_open() is this with no methods. */
struct fab_mad_agent *fab_umad_agent_register(struct fab_dev *dev,
					      const char *ca_name,
					      uint8_t port,
					      const struct fab_mad_reg *reg,
					      char *err, size_t errlen);
void fab_umad_agent_close(struct fab_mad_agent *agent);
int fab_umad_agent_fd(struct fab_mad_agent *agent);
int fab_umad_agent_send(struct fab_mad_agent *agent,
			const struct fab_mad_addr *to, const void *mad,
			size_t len);
int fab_umad_agent_recv(struct fab_mad_agent *agent, void *buf, size_t cap,
			struct fab_mad_addr *from);

#endif
