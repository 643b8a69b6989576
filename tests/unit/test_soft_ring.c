// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Shared-memory QP rings (fabric/soft_ring.c). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fabric/soft_ring.h"

#define SZ 16384u

struct pair {
	struct fsp_ring_ctl ctl;
	uint8_t data[SZ];
	struct soft_ring p, c;
};

static struct pair *pair_new(void)
{
	struct pair *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	soft_ring_ctl_reset(&x->ctl);
	soft_ring_init_producer(&x->p, &x->ctl, x->data, SZ);
	soft_ring_init_consumer(&x->c, &x->ctl, x->data, SZ);
	return x;
}

static void fill(uint8_t *b, size_t len, uint32_t seq)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)(seq * 31 + i);
}

static int check(const uint8_t *b, size_t len, uint32_t seq)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != (uint8_t)(seq * 31 + i))
			return 0;
	return 1;
}

static int put(struct pair *x, size_t len, uint32_t seq)
{
	uint8_t *s = soft_ring_reserve(&x->p, len);

	if (!s)
		return 0;
	fill(s, len, seq);
	soft_ring_commit(&x->p, len);
	return 1;
}

/* records of many sizes in order, across many wraps, contents intact */
static void test_roundtrip_wraps(void **state)
{
	struct pair *x = pair_new();
	uint32_t sent = 0, got = 0;
	const uint8_t *rec;
	size_t len, want;
	int r;

	(void)state;
	while (got < 5000) {
		while (sent < 5000 && put(x, (sent * 997) % 4097, sent))
			sent++;
		soft_ring_publish(&x->p);
		while ((r = soft_ring_peek(&x->c, &rec, &len)) == 1) {
			want = (got * 997) % 4097;
			assert_int_equal(len, want);
			assert_true(check(rec, len, got));
			assert_true(rec >= x->data && rec + len <= x->data + SZ);
			soft_ring_next(&x->c, len);
			got++;
		}
		assert_int_equal(r, 0);
		soft_ring_release(&x->c);
	}
	assert_int_equal(sent, 5000);
	free(x);
}

/* a full ring refuses; space comes back only when the consumer releases */
static void test_full(void **state)
{
	struct pair *x = pair_new();
	const uint8_t *rec;
	size_t len;
	int n = 0;

	(void)state;
	while (put(x, 1000, (uint32_t)n))
		n++;
	/* 1008 bytes a record (4 + 1000, padded to 8) */
	assert_int_equal(n, SZ / 1008);
	soft_ring_publish(&x->p);
	assert_int_equal(soft_ring_peek(&x->c, &rec, &len), 1);
	soft_ring_next(&x->c, len);
	assert_null(soft_ring_reserve(&x->p, 1000));	/* not released yet */
	soft_ring_release(&x->c);
	assert_true(put(x, 1000, 99));
	/* a record larger than a quarter of the ring is never possible */
	assert_null(soft_ring_reserve(&x->p, SZ / 4 + 1));
	free(x);
}

/* kicks: only when the consumer asked, once per request */
static void test_kicks(void **state)
{
	struct pair *x = pair_new();
	const uint8_t *rec;
	size_t len;

	(void)state;
	assert_int_equal(soft_ring_publish(&x->p), 0);	/* nothing written */
	put(x, 10, 1);
	assert_int_equal(soft_ring_publish(&x->p), 1);	/* fresh: waiting */
	put(x, 10, 2);
	assert_int_equal(soft_ring_publish(&x->p), 0);	/* already kicked */
	/* records are there: arming says keep going */
	assert_int_equal(soft_ring_arm(&x->c), 1);
	while (soft_ring_peek(&x->c, &rec, &len) == 1)
		soft_ring_next(&x->c, len);
	assert_int_equal(soft_ring_arm(&x->c), 0);	/* may sleep now */
	put(x, 10, 3);
	assert_int_equal(soft_ring_publish(&x->p), 1);
	free(x);
}

/* impossible counters and lengths: -1, never a record outside the data */
static void test_corrupt_consumer(void **state)
{
	struct pair *x = pair_new();
	const uint8_t *rec;
	size_t len;
	uint32_t v;

	(void)state;
	/* tail far beyond what a ring holds */
	atomic_store(&x->ctl.tail, 3 * SZ);
	assert_int_equal(soft_ring_peek(&x->c, &rec, &len), -1);
	soft_ring_skip(&x->c);
	assert_int_equal(soft_ring_peek(&x->c, &rec, &len), 0);
	assert_int_equal(atomic_load(&x->ctl.head), 3 * SZ);
	assert_int_equal(soft_ring_arm(&x->c), 0);

	/* an unaligned tail */
	atomic_store(&x->ctl.tail, 3 * SZ + 5);
	assert_int_equal(soft_ring_peek(&x->c, &rec, &len), -1);
	soft_ring_skip(&x->c);
	assert_int_equal(soft_ring_arm(&x->c), 0);	/* no endless retry */
	free(x);

	/* a length running past the published bytes, or past the end */
	x = pair_new();
	v = 100;
	memcpy(x->data, &v, 4);
	atomic_store(&x->ctl.tail, 64);
	assert_int_equal(soft_ring_peek(&x->c, &rec, &len), -1);
	v = 0x7fffffff;
	memcpy(x->data, &v, 4);
	atomic_store(&x->ctl.tail, SZ);
	assert_int_equal(soft_ring_peek(&x->c, &rec, &len), -1);
	/* a wrap marker that skips more than was published */
	v = FSP_RING_WRAP;
	memcpy(x->data, &v, 4);
	atomic_store(&x->ctl.tail, 64);
	assert_int_equal(soft_ring_peek(&x->c, &rec, &len), -1);
	/* a good record behind a wrap marker at the end */
	free(x);
	x = pair_new();
	x->c.pos = x->c.seen = SZ - 8;
	memcpy(x->data + SZ - 8, &v, 4);
	v = 3;
	memcpy(x->data, &v, 4);
	memcpy(x->data + 4, "abc", 3);
	atomic_store(&x->ctl.tail, SZ + 8);
	assert_int_equal(soft_ring_peek(&x->c, &rec, &len), 1);
	assert_int_equal(len, 3);
	assert_memory_equal(rec, "abc", 3);
	free(x);
}

/* a consumer that lies about head: the producer sees a full ring */
static void test_corrupt_producer(void **state)
{
	struct pair *x = pair_new();

	(void)state;
	atomic_store(&x->ctl.head, 5000);	/* ahead of the producer */
	x->p.seen = 5000;
	assert_null(soft_ring_reserve(&x->p, 100));
	atomic_store(&x->ctl.head, (uint32_t)-(int32_t)(2 * SZ));
	assert_null(soft_ring_reserve(&x->p, 100));
	atomic_store(&x->ctl.head, 0);		/* honest again */
	assert_true(put(x, 100, 1));
	free(x);
}

/* random control block and data: whatever the consumer returns lies in
 * the data area, and it stops */
static void test_random_garbage(void **state)
{
	struct pair *x = pair_new();
	const uint8_t *rec;
	size_t len, i;
	unsigned int seed = 7, round;
	int r, steps;

	(void)state;
	for (round = 0; round < 2000; round++) {
		for (i = 0; i < SZ; i += 4) {
			uint32_t v = (uint32_t)rand_r(&seed);

			if (!(v & 3))
				v = FSP_RING_WRAP;
			else if ((v & 3) == 1)
				v >>= 18;	/* small lengths */
			memcpy(x->data + i, &v, 4);
		}
		soft_ring_init_consumer(&x->c, &x->ctl, x->data, SZ);
		atomic_store(&x->ctl.tail, x->c.pos +
			     ((uint32_t)rand_r(&seed) % (2 * SZ)));
		for (steps = 0; steps < 10000; steps++) {
			r = soft_ring_peek(&x->c, &rec, &len);
			if (r <= 0)
				break;
			assert_true(rec >= x->data && rec + len <= x->data + SZ);
			soft_ring_next(&x->c, len);
		}
		assert_true(steps < 10000);
		if (r < 0)
			soft_ring_skip(&x->c);
		atomic_store(&x->ctl.head, (uint32_t)rand_r(&seed));
	}
	free(x);
}

/* two threads: every record arrives once, in order, intact; the consumer
 * sleeps only after arming (a lost kick would hang this test) */
struct thr {
	struct pair *x;
	_Atomic int kicks;	/* pending kicks (a semaphore, spinning) */
	unsigned int n;
};

static void *producer(void *arg)
{
	struct thr *t = arg;
	uint32_t i;

	for (i = 0; i < t->n;) {
		int full = !put(t->x, 1 + i % 2000, i);

		if (!full)
			i++;
		/* batches of 8; a full ring publishes what it holds */
		if (full || (i & 7) == 0)
			if (soft_ring_publish(&t->x->p))
				atomic_fetch_add(&t->kicks, 1);
	}
	if (soft_ring_publish(&t->x->p))
		atomic_fetch_add(&t->kicks, 1);
	return NULL;
}

static void test_threads(void **state)
{
	struct thr t = { .x = pair_new(), .n = 200000 };
	pthread_t th;
	const uint8_t *rec;
	size_t len;
	uint32_t got = 0;
	int r;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, producer, &t), 0);
	while (got < t.n) {
		r = soft_ring_peek(&t.x->c, &rec, &len);
		assert_int_not_equal(r, -1);
		if (r == 1) {
			assert_int_equal(len, 1 + got % 2000);
			assert_true(check(rec, len, got));
			soft_ring_next(&t.x->c, len);
			got++;
			if ((got & 15) == 0)
				soft_ring_release(&t.x->c);
			continue;
		}
		if (soft_ring_arm(&t.x->c))
			continue;
		/* asleep until a kick */
		while (atomic_load(&t.kicks) == 0)
			;
		atomic_fetch_sub(&t.kicks, 1);
	}
	pthread_join(th, NULL);
	free(t.x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_wraps),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_kicks),
		cmocka_unit_test(test_corrupt_consumer),
		cmocka_unit_test(test_corrupt_producer),
		cmocka_unit_test(test_random_garbage),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
