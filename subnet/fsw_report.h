/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The text of ibfabricctl's answers, shared by the switch (fsw_switch.c)
 * and the SA (fsw_sa.c) and by no one outside subnet/: printf into a
 * struct counter_buf (conf/counters.h), so that tables and counters fill
 * one buffer the same way, cut at its end with what fit kept.
 */
#ifndef IBGW_FSW_REPORT_H
#define IBGW_FSW_REPORT_H

#include "conf/counters.h"

void fsw_report_printf(struct counter_buf *cb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
