/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * reader.c - pt_reader: open a trace, tell the encoding by its first
 * bytes, and hand out validated events; plus the checks both encodings
 * share (header values, comment text).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_impl.h"

/* ---- byte source ---- */

size_t pt_src_read(struct pt_src *s, void *buf, size_t n)
{
	uint8_t *p = buf;
	size_t got = 0;

	while (n && s->pb_pos < s->pb_len) {
		*p++ = s->pushback[s->pb_pos++];
		n--;
		got++;
	}
	if (!n || s->eof)
		return got;
	if (!s->f) {
		size_t left = s->mem_size - s->mem_pos;
		if (n > left)
			n = left;
		if (n)
			memcpy(p, s->mem + s->mem_pos, n);
		s->mem_pos += n;
		if (s->mem_pos == s->mem_size)
			s->eof = true;
		return got + n;
	}
	size_t r = fread(p, 1, n, s->f);
	if (r < n) {
		s->eof = true;
		if (ferror(s->f))
			s->err_no = errno ? errno : EIO;
	}
	return got + r;
}

/* ---- shared checks ---- */

size_t pt_utf8_len(const char *str, size_t avail)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (!avail)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if (i == avail || (s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* shortest form only, no surrogates, at most U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

bool pt_text_ok(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; i < len;) {
		unsigned c = s[i];
		if (c < 0x80) {
			if ((c < 0x20 && c != '\t') || c == 0x7f)
				return false;
			i++;
			continue;
		}
		size_t n = pt_utf8_len(str + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

static bool header_str_ok(const char *s, size_t size)
{
	const char *end = memchr(s, '\0', size);
	return end && pt_text_ok(s, (size_t)(end - s));
}

enum pt_err pt_header_check(const struct pt_header *h, char *why, size_t size, const char **key)
{
	const char *k = NULL;
	enum pt_err code = PT_ERR_HEADER;

	if (h->version != PT_FORMAT_VERSION) {
		k = "version";
		code = PT_ERR_VERSION;
		snprintf(why, size, "expected format version %u, got %u", PT_FORMAT_VERSION, h->version);
	} else if (h->granule != 4096) {
		k = "granule";
		snprintf(why, size, "expected granule=4096 (4K; other granules are not modelled), got %u",
			 h->granule);
	} else if (h->va_bits != 48 && h->va_bits != 52) {
		k = "va_bits";
		snprintf(why, size, "expected va_bits=48 or 52, got %u", h->va_bits);
	} else if (h->lpa2 > 1) {
		k = "lpa2";
		snprintf(why, size, "expected lpa2=0 or 1, got %u", h->lpa2);
	} else if (h->va_bits == 52 && !h->lpa2) {
		k = "va_bits";
		snprintf(why, size, "expected lpa2=1 with va_bits=52 (52-bit VAs with the 4K granule need "
			 "FEAT_LPA2)");
	} else if (h->cpus < 1 || h->cpus > PT_MAX_CPUS) {
		k = "cpus";
		snprintf(why, size, "expected cpus=1..%u, got %u", PT_MAX_CPUS, h->cpus);
	} else {
		if (!header_str_ok(h->kernel, sizeof(h->kernel)))
			k = "kernel";
		else if (!header_str_ok(h->machine, sizeof(h->machine)))
			k = "machine";
		else if (!header_str_ok(h->method, sizeof(h->method)))
			k = "method";
		else
			return PT_OK;
		snprintf(why, size, "expected %s to be UTF-8 text without control characters, "
			 "shorter than the field", k);
	}
	if (key)
		*key = k;
	return code;
}

enum pt_err pt_comment_check(const char *text, char *why, size_t size)
{
	size_t len = strnlen(text, PT_MAX_COMMENT + 1);

	if (len > PT_MAX_COMMENT) {
		if (why)
			snprintf(why, size, "expected a comment of at most %u bytes", PT_MAX_COMMENT);
		return PT_ERR_FIELD;
	}
	if (!pt_text_ok(text, len)) {
		if (why)
			snprintf(why, size, "expected comment text in UTF-8 without control characters "
				 "other than tab");
		return PT_ERR_FIELD;
	}
	return PT_OK;
}

enum pt_encoding pt_encoding_for_path(const char *path)
{
	size_t n = strlen(path);
	return n >= 4 && !strcmp(path + n - 4, ".zst") ? PT_ENC_BINARY : PT_ENC_TEXT;
}

/* ---- references the trace must keep ---- */

#define TID_THREAD 1u		/* declared by `thread` */
#define TID_SWITCHED 2u		/* run by a `switch` */

/* What the trace so far has: the CPUs' open IRQs, the tids it declared or ran. */
struct pt_refs {
	unsigned cpus;
	bool lpa2;		/* the header's lpa2=1 (TLBI operands in its format, arch-level only) */
	unsigned nthreads;
	uint64_t irq_depth[PT_MAX_CPUS];
	uint32_t *tid;		/* open addressing; flags 0 = empty slot */
	uint8_t *flags;
	size_t cap, n;
};

static uint8_t *tid_slot(struct pt_refs *r, uint32_t tid, bool add)
{
	if (add && 2 * (r->n + 1) > r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		uint32_t *t = calloc(cap, sizeof(*t));
		uint8_t *f = calloc(cap, 1);
		if (!t || !f) {
			free(t);
			free(f);
			return NULL;
		}
		for (size_t i = 0; i < r->cap; i++) {
			if (!r->flags[i])
				continue;
			size_t j = (r->tid[i] * 0x9e3779b1u) & (cap - 1);
			while (f[j])
				j = (j + 1) & (cap - 1);
			t[j] = r->tid[i];
			f[j] = r->flags[i];
		}
		free(r->tid);
		free(r->flags);
		r->tid = t;
		r->flags = f;
		r->cap = cap;
	}
	if (!r->cap)
		return NULL;
	size_t j = (tid * 0x9e3779b1u) & (r->cap - 1);
	while (r->flags[j] && r->tid[j] != tid)
		j = (j + 1) & (r->cap - 1);
	if (!r->flags[j]) {
		if (!add)
			return NULL;
		r->tid[j] = tid;
		r->n++;
	}
	return &r->flags[j];
}

static unsigned tid_flags(struct pt_refs *r, uint32_t tid)
{
	uint8_t *f = tid_slot(r, tid, false);
	return f ? *f : 0;
}

/*
 * ev against what the trace so far has (trace.h, pt_reader_next()); on a
 * reference it cannot keep, why and *key (the offending key, or NULL for
 * the kind itself).  Records what ev declares.
 */
static enum pt_err refs_check(struct pt_refs *r, const struct pt_event *ev, char *why, size_t size,
			      const char **key)
{
	uint8_t *f;

	*key = NULL;
	if (r->lpa2 && ev->kind >= PT_EV_MMAP) {
		snprintf(why, size, "expected arch-level events only in a trace with lpa2=1 (the mm model "
			 "builds 48-bit, 4-level tables), got %s", pt_kind_name(ev->kind));
		return PT_ERR_FIELD;
	}
	switch (ev->kind) {
	case PT_EV_TLBI:
		/* TCR_EL1.DS=1: a range TLBI's BaseADDR holds VA[52:16] (D8.17.6.1); a VA that is not
		 * a multiple of 64K has no operand */
		if (r->lpa2 && ev->op < PT_TLBI_COUNT && pt_tlbi_is_range(ev->op) && (ev->va & 0xffff)) {
			*key = "va";
			snprintf(why, size, "expected a range TLBI va= that is a multiple of 64K (lpa2=1: "
				 "BaseADDR is in 64 KiB units), got 0x%llx", (unsigned long long)ev->va);
			return PT_ERR_FIELD;
		}
		return PT_OK;
	case PT_EV_IRQ_ENTER:
		r->irq_depth[ev->cpu]++;
		return PT_OK;
	case PT_EV_IRQ_EXIT:
		if (!r->irq_depth[ev->cpu]) {
			snprintf(why, size, "expected irq_exit only inside an irq_enter of cpu%u; it has none open",
				 ev->cpu);
			return PT_ERR_REF;
		}
		r->irq_depth[ev->cpu]--;
		return PT_OK;
	case PT_EV_SWITCH:
		f = tid_slot(r, ev->tid, true);
		if (!f)
			goto nomem;
		*f |= TID_SWITCHED;
		return PT_OK;
	case PT_EV_THREAD:
		*key = "tid";
		if (ev->tid < r->cpus) {
			snprintf(why, size, "expected a thread tid of at least %u: tids 0..%u are the CPUs' own "
				 "threads (the header has cpus=%u), got %u", r->cpus, r->cpus - 1, r->cpus, ev->tid);
			return PT_ERR_REF;
		}
		if (ev->tid == PT_TID_IDLE) {
			snprintf(why, size, "expected a thread tid other than %u (PT_TID_IDLE: no thread)",
				 PT_TID_IDLE);
			return PT_ERR_REF;
		}
		if (tid_flags(r, ev->tid) & TID_THREAD) {
			snprintf(why, size, "expected a new thread; tid %u was declared by an earlier thread event",
				 ev->tid);
			return PT_ERR_REF;
		}
		if (r->nthreads == PT_MAX_THREADS) {
			snprintf(why, size, "expected at most %u thread events in a trace", PT_MAX_THREADS);
			return PT_ERR_REF;
		}
		f = tid_slot(r, ev->tid, true);
		if (!f)
			goto nomem;
		*f |= TID_THREAD;
		r->nthreads++;
		return PT_OK;
	case PT_EV_SCHED:
		if (!(tid_flags(r, ev->tid) & TID_THREAD)) {
			*key = "tid";
			snprintf(why, size, "expected the tid of a thread declared by an earlier thread event, "
				 "got %u", ev->tid);
			return PT_ERR_REF;
		}
		return PT_OK;
	case PT_EV_MIGRATE:
		if (ev->len >= r->cpus) {
			*key = "to";
			snprintf(why, size, "expected to= a CPU 0..%u (the header has cpus=%u), got %llu",
				 r->cpus - 1, r->cpus, (unsigned long long)ev->len);
			return PT_ERR_REF;
		}
		if (ev->tid >= r->cpus && !tid_flags(r, ev->tid)) {
			*key = "tid";
			snprintf(why, size, "expected the tid of a CPU's own thread (0..%u), of a thread event "
				 "or of an earlier switch, got %u", r->cpus - 1, ev->tid);
			return PT_ERR_REF;
		}
		return PT_OK;
	default:
		return PT_OK;
	}
nomem:
	snprintf(why, size, "out of memory");
	return PT_ERR_IO;
}

/* ---- the reader ---- */

struct pt_reader {
	char *name;
	struct pt_src src;
	struct pt_header h;
	enum pt_encoding enc;
	struct pt_text_rd *text;
	struct pt_bin_rd *bin;
	struct pt_refs refs;
	int state;		/* 0 reading, 1 ended, -1 failed */
	struct pt_error err;	/* the error that ended it */
	char where[40];
};

static const uint8_t zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };

static struct pt_reader *reader_start(struct pt_reader *r, struct pt_error *err)
{
	struct pt_error tmp;

	if (!err)
		err = &tmp;
	if (!r->name) {
		free(r);
		pt_error_set(err, PT_ERR_IO, "out of memory");
		return NULL;
	}
	/* peek at the magic; the bytes go back to the decoder */
	r->src.pb_len = pt_src_read(&r->src, r->src.pushback, sizeof(r->src.pushback));
	r->src.pb_pos = 0;
	if (r->src.err_no) {
		pt_error_set(err, PT_ERR_IO, "%s: read error: %s", r->name, strerror(r->src.err_no));
		pt_reader_close(r);
		return NULL;
	}
	if (r->src.pb_len == 4 && !memcmp(r->src.pushback, zstd_magic, 4)) {
		r->enc = PT_ENC_BINARY;
		r->bin = pt_bin_open(&r->src, r->name, &r->h, err);
	} else {
		r->enc = PT_ENC_TEXT;
		r->text = pt_text_open(&r->src, r->name, &r->h, err);
	}
	if (!r->bin && !r->text) {
		pt_reader_close(r);
		return NULL;
	}
	r->refs.cpus = r->h.cpus;
	r->refs.lpa2 = r->h.lpa2;
	return r;
}

struct pt_reader *pt_reader_open(const char *path, struct pt_error *err)
{
	struct pt_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		pt_error_set(err, PT_ERR_IO, "%s: out of memory", path);
		return NULL;
	}
	if (!strcmp(path, "-")) {
		r->src.f = stdin;
		r->name = strdup("<stdin>");
	} else {
		r->src.f = fopen(path, "rb");
		if (!r->src.f) {
			pt_error_set(err, PT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
			free(r);
			return NULL;
		}
		r->src.own = true;
		r->name = strdup(path);
	}
	return reader_start(r, err);
}

struct pt_reader *pt_reader_open_mem(const void *buf, size_t size, const char *name, struct pt_error *err)
{
	struct pt_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		pt_error_set(err, PT_ERR_IO, "%s: out of memory", name ? name : "<memory>");
		return NULL;
	}
	r->src.mem = buf;
	r->src.mem_size = size;
	r->src.eof = size == 0;
	r->name = strdup(name ? name : "<memory>");
	return reader_start(r, err);
}

const struct pt_header *pt_reader_header(const struct pt_reader *r)
{
	return &r->h;
}

enum pt_encoding pt_reader_encoding(const struct pt_reader *r)
{
	return r->enc;
}

int pt_reader_next(struct pt_reader *r, struct pt_event *ev, struct pt_error *err)
{
	int rc;

	if (r->state) {
		if (r->state < 0 && err)
			*err = r->err;
		return r->state < 0 ? -1 : 0;
	}
	rc = r->bin ? pt_bin_next(r->bin, ev, &r->err) : pt_text_next(r->text, ev, &r->err);
	if (rc > 0) {
		char why[200];
		const char *key;
		enum pt_err code = refs_check(&r->refs, ev, why, sizeof(why), &key);
		if (code == PT_ERR_IO)
			rc = pt_error_set(&r->err, code, "%s: %s", r->name, why);
		else if (code && r->bin)
			rc = pt_err_at_byte(&r->err, code, r->name, pt_bin_offset(r->bin), false, "%s", why);
		else if (code)
			rc = pt_err_at_line(&r->err, code, r->name, pt_text_line(r->text),
					    pt_text_col(r->text, key), "%s", why);
	}
	if (rc < 0) {
		r->state = -1;
		if (err)
			*err = r->err;
	} else if (rc == 0) {
		r->state = 1;
	}
	return rc;
}

const char *pt_reader_where(const struct pt_reader *r)
{
	struct pt_reader *w = (struct pt_reader *)r;	/* the buffer is a cache */

	if (r->bin)
		snprintf(w->where, sizeof(w->where), "byte %llu", (unsigned long long)pt_bin_offset(r->bin));
	else
		snprintf(w->where, sizeof(w->where), "line %llu", (unsigned long long)pt_text_line(r->text));
	return r->where;
}

void pt_reader_close(struct pt_reader *r)
{
	if (!r)
		return;
	pt_bin_close(r->bin);
	pt_text_close(r->text);
	free(r->refs.tid);
	free(r->refs.flags);
	if (r->src.own)
		fclose(r->src.f);
	free(r->name);
	free(r);
}
