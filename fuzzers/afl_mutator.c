/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * afl_mutator.c - the structure-aware mutator (ops_mutator.h) as an AFL++
 * custom mutator library:
 *
 *   AFL_CUSTOM_MUTATOR_LIBRARY=build/afl/fuzzers/libptfuzz_afl_mutator.so afl-fuzz ...
 *
 * afl_custom_fuzz mutates whole records (AFL++'s havoc still runs unless
 * AFL_CUSTOM_MUTATOR_ONLY=1); the trim removes whole records, one at a time,
 * keeping each removal that keeps the coverage, so a trimmed queue entry is
 * still a program of whole ops.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops_mutator.h"
#include "program.h"

#define MAX_INPUT (1u << 20)

struct ptm_afl {
	uint64_t rng;
	uint8_t *buf;			/* afl_custom_fuzz's output */
	enum ptm_kind last;
	/* trimming */
	uint8_t *trim, *cand;
	size_t trim_size, cand_size, trim_rec, trim_steps;
};

void *afl_custom_init(void *afl, unsigned int seed);
size_t afl_custom_fuzz(void *data, uint8_t *buf, size_t buf_size, uint8_t **out_buf, uint8_t *add_buf,
		       size_t add_buf_size, size_t max_size);
const char *afl_custom_describe(void *data, size_t max_description_len);
int32_t afl_custom_init_trim(void *data, uint8_t *buf, size_t buf_size);
size_t afl_custom_trim(void *data, uint8_t **out_buf);
int32_t afl_custom_post_trim(void *data, uint8_t success);
void afl_custom_deinit(void *data);

void *afl_custom_init(void *afl, unsigned int seed)
{
	(void)afl;
	struct ptm_afl *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->rng = 0x9e3779b97f4a7c15ull ^ seed;
	m->buf = malloc(MAX_INPUT);
	m->trim = malloc(MAX_INPUT);
	m->cand = malloc(MAX_INPUT);
	if (!m->buf || !m->trim || !m->cand) {
		afl_custom_deinit(m);
		return NULL;
	}
	return m;
}

size_t afl_custom_fuzz(void *data, uint8_t *buf, size_t buf_size, uint8_t **out_buf, uint8_t *add_buf,
		       size_t add_buf_size, size_t max_size)
{
	struct ptm_afl *m = data;
	if (max_size > MAX_INPUT)
		max_size = MAX_INPUT;
	size_t size;
	if (add_buf && add_buf_size && m->rng % 8 == 0) {
		size = ptm_crossover(buf, buf_size, add_buf, add_buf_size, m->buf, max_size, &m->rng);
		m->last = PTM_COUNT;
	} else {
		size = buf_size < max_size ? buf_size : max_size;
		memcpy(m->buf, buf, size);
		unsigned rounds = 1 + (unsigned)(m->rng >> 60) % 3;
		for (unsigned i = 0; i < rounds; i++)
			size = ptm_mutate(m->buf, size, max_size, &m->rng, &m->last);
	}
	*out_buf = m->buf;
	return size;
}

const char *afl_custom_describe(void *data, size_t max_description_len)
{
	struct ptm_afl *m = data;
	static char d[64];
	const char *what = m->last == PTM_COUNT ? "crossover" : ptm_name(m->last);
	size_t n = strlen("ptfuzz-") + strlen(what);
	if (n >= sizeof(d) || n > max_description_len)
		return "ptfuzz";
	strcpy(d, "ptfuzz-");
	strcat(d, what);
	return d;
}

/* The candidate: the trimmed input without record trim_rec. */
static void trim_candidate(struct ptm_afl *m)
{
	static size_t off[4096];
	size_t n = ptm_records(m->trim, m->trim_size, off, 4096);
	if (m->trim_rec >= n) {
		memcpy(m->cand, m->trim, m->trim_size);
		m->cand_size = m->trim_size;
		return;
	}
	size_t start = off[m->trim_rec], end = m->trim_rec + 1 < n ? off[m->trim_rec + 1] : m->trim_size;
	memcpy(m->cand, m->trim, start);
	memcpy(m->cand + start, m->trim + end, m->trim_size - end);
	m->cand_size = m->trim_size - (end - start);
}

int32_t afl_custom_init_trim(void *data, uint8_t *buf, size_t buf_size)
{
	struct ptm_afl *m = data;
	static size_t off[4096];
	if (buf_size > MAX_INPUT)
		return 0;
	memcpy(m->trim, buf, buf_size);
	m->trim_size = buf_size;
	m->trim_rec = 0;
	m->trim_steps = ptm_records(buf, buf_size, off, 4096);
	return (int32_t)m->trim_steps;
}

size_t afl_custom_trim(void *data, uint8_t **out_buf)
{
	struct ptm_afl *m = data;
	trim_candidate(m);
	*out_buf = m->cand;
	return m->cand_size;
}

int32_t afl_custom_post_trim(void *data, uint8_t success)
{
	struct ptm_afl *m = data;
	if (success) {
		/* the record went: the next one now sits at the same index */
		memcpy(m->trim, m->cand, m->cand_size);
		m->trim_size = m->cand_size;
		m->trim_steps--;
	} else {
		m->trim_rec++;
	}
	return m->trim_rec >= m->trim_steps ? (int32_t)m->trim_steps : (int32_t)m->trim_rec;
}

void afl_custom_deinit(void *data)
{
	struct ptm_afl *m = data;
	if (!m)
		return;
	free(m->buf);
	free(m->trim);
	free(m->cand);
	free(m);
}
