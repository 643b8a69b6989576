/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a fabric provider implements.  Provider objects embed the base
 * structs below as their first member; fabric.c dispatches through ops.
 * The ops fail as fabric.h's calls do: -1 or NULL with errno set, and the
 * reason in err (which may be NULL) for those that take one.
 */
#ifndef IBGW_FABRIC_PROV_H
#define IBGW_FABRIC_PROV_H

#include "fabric/fabric.h"

struct fab_provider {
	const char *name;	/* prefix of the spec string */
	struct fab_dev *(*open)(const char *arg, const char *node, char *err,
				size_t errlen);
	void (*close)(struct fab_dev *dev);
	int (*query_port)(struct fab_dev *dev, struct fab_port_attr *attr,
			  char *err, size_t errlen);
	int (*dev_fd)(struct fab_dev *dev);
	int (*get_event)(struct fab_dev *dev, struct fab_event *ev);
	struct fab_qp *(*qp_create)(struct fab_dev *dev,
				    const struct fab_qp_init *init, char *err,
				    size_t errlen);
	void (*qp_destroy)(struct fab_qp *qp);
	int (*qp_fd)(struct fab_qp *qp);
	int (*qp_send)(struct fab_qp *qp, const struct fab_send_wr *wr, int n);
	int (*qp_recv)(struct fab_qp *qp, struct fab_recv *rc, int n);
	int (*attach)(struct fab_qp *qp, const union fab_gid *mgid,
		      uint16_t mlid, char *err, size_t errlen);
	int (*detach)(struct fab_qp *qp, const union fab_gid *mgid,
		      uint16_t mlid, char *err, size_t errlen);
	struct fab_ah *(*ah_create)(struct fab_dev *dev,
				    const struct fab_ah_attr *attr, char *err,
				    size_t errlen);
	void (*ah_destroy)(struct fab_ah *ah);
	struct fab_mad_agent *(*mad_open)(struct fab_dev *dev,
					  uint8_t mgmt_class, char *err,
					  size_t errlen);
	/* optional: agents that serve requests (fab_mad_register) */
	struct fab_mad_agent *(*mad_register)(struct fab_dev *dev,
					      const struct fab_mad_reg *reg,
					      char *err, size_t errlen);
	void (*mad_close)(struct fab_mad_agent *agent);
	int (*mad_fd)(struct fab_mad_agent *agent);
	int (*mad_send)(struct fab_mad_agent *agent,
			const struct fab_mad_addr *to, const void *mad,
			size_t len);
	int (*mad_recv)(struct fab_mad_agent *agent, void *buf, size_t cap,
			struct fab_mad_addr *from);

	/* Reliable connections, all optional: fabric.c fails a call whose
	 * op is NULL with EOPNOTSUPP.  fabric.c checks the arguments that
	 * need no provider (types, flags, private data over the IBA sizes)
	 * first; the RC QP ops see only FAB_QPT_RC QPs. */
	struct fab_mr *(*mr_reg)(struct fab_dev *dev, void *addr, size_t len,
				 unsigned int access, char *err,
				 size_t errlen);
	void (*mr_dereg)(struct fab_mr *mr);
	int (*qp_post_send)(struct fab_qp *qp, const struct fab_rc_wr *wr,
			    int n);
	int (*qp_post_recv)(struct fab_qp *qp, const struct fab_recv_wr *wr,
			    int n);
	int (*qp_poll)(struct fab_qp *qp, struct fab_wc *wc, int n);
	int (*qp_set_error)(struct fab_qp *qp);
	int (*cm_fd)(struct fab_dev *dev);
	int (*cm_get_event)(struct fab_dev *dev, struct fab_cm_event *ev);
	struct fab_cm_id *(*cm_listen)(struct fab_dev *dev,
				       const struct fab_cm_addr *addr,
				       int backlog, char *err, size_t errlen);
	struct fab_cm_id *(*cm_create_id)(struct fab_dev *dev, char *err,
					  size_t errlen);
	/* must set id->qp and qp->cm */
	struct fab_qp *(*cm_qp_create)(struct fab_cm_id *id,
				       const struct fab_qp_init *init,
				       char *err, size_t errlen);
	int (*cm_connect)(struct fab_cm_id *id, const struct fab_cm_addr *dst,
			  const struct fab_cm_param *param, char *err,
			  size_t errlen);
	int (*cm_accept)(struct fab_cm_id *id, const struct fab_cm_param *param,
			 char *err, size_t errlen);
	int (*cm_reject)(struct fab_cm_id *id, const void *private_data,
			 uint8_t len, char *err, size_t errlen);
	int (*cm_disconnect)(struct fab_cm_id *id, char *err, size_t errlen);
	/* destroys id->qp first, if any */
	void (*cm_destroy)(struct fab_cm_id *id);
};

struct fab_dev {
	const struct fab_provider *prov;
};

struct fab_qp {
	struct fab_dev *dev;
	uint32_t qpn;
	enum fab_qp_type type;
	uint32_t qkey;
	uint16_t pkey_index;
	struct fab_cm_id *cm;	/* RC: the id that owns it */
};

struct fab_mr {
	struct fab_dev *dev;
	void *addr;
	size_t len;
	uint32_t lkey;
	uint32_t rkey;
};

struct fab_cm_id {
	struct fab_dev *dev;
	void *context;
	struct fab_qp *qp;	/* NULL until fab_cm_qp_create */
	int listener;
};

struct fab_ah {
	struct fab_dev *dev;
	struct fab_ah_attr attr;
};

struct fab_mad_agent {
	struct fab_dev *dev;
	uint8_t mgmt_class;
};

/*
 * The DEVICE[:PORT] argument of the hardware providers: the device name
 * into name (name_len with the NUL), the port (1..255, default 1).  0, or
 * -1 with errno EINVAL and "PROV: ..." in err.
 */
int fab_parse_dev_port(const char *prov, const char *arg, char *name,
		       size_t name_len, uint8_t *port, char *err,
		       size_t errlen);

/* A failure: errno = e and the formatted reason into err (NULL is fine);
 * returns -1, so that a provider can say `return fab_fail(...)`. */
int fab_fail(char *err, size_t errlen, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Add a provider at run time (the unit tests' in-memory fabric): fab_open()
 * then finds it by name after the built-in ones.  prov must outlive its
 * use.  0, or -1 with errno ENOSPC when the small table is full.
 */
int fab_provider_register(const struct fab_provider *prov);

extern const struct fab_provider fab_soft_provider;
extern const struct fab_provider fab_verbs_provider;
extern const struct fab_provider fab_umad_provider;

#endif
