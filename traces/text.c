/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * text.c - the text encoding (.ptt): the canonical writer's formatting and
 * the streaming line reader.
 *
 * Syntax (see also event.h):
 *
 *   @ptt version=1 granule=4K va_bits=48 cpus=4 method=hand kernel="..." machine="..."
 *   # a comment line: kept as a comment event
 *   cpu1 tlbi vale1is va=0xffff800008000000 asid=3 ttl=3   # trailing comment: ignored
 *
 * - The header line is optional (default: pt_header_default()); if present
 *   it is the first line that is not blank or a comment.  Its keys come in
 *   any order; version= is required, the others default.  String values
 *   are bare words or "quoted" with \" and \\ as the only escapes.
 * - A full-line comment (`#` after optional blanks) is an event whose text
 *   is what follows the `#`, minus one optional space.  A `#` that starts a
 *   word after an event is an end-of-line comment: it is the event's text
 *   (ev->text, minus one optional space), written back after the event as
 *   `   # text` - kept, so conversion stays lossless.  After the header it
 *   is not kept.
 * - Event keys come in any order, each at most once; the kind's required
 *   keys must be present.  Any numeric key takes decimal, 0x-hex, and a
 *   K/M/G/T suffix (powers of two); val= takes descriptor syntax or raw
 *   hex; prot= takes `none`, letters from `rwx`, or a number.
 * - Lines end with LF or CRLF and are at most PT_MAX_LINE bytes.  Every
 *   line ends so, the last one too: bytes after the last newline are an
 *   error ("expected a newline"), never a line, since a trace cut in the
 *   middle of a line may still parse (pa=0x5000 cut to pa=0).
 *
 * The canonical form (what the writer prints): `cpuN kind [op]`, then the
 * kind's keys in schema order, required keys always, optional keys only
 * when non-zero; addresses (va pa new_va key root) and flags in 0x hex;
 * lengths (len new_len) with the largest exact K/M/G/T suffix, else hex;
 * val as pt_desc_format(); prot as `none` or `rwx` letters; counts
 * (to steps bound err) and everything else in decimal.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "trace_impl.h"

#define TEXT_BUF (16u * 1024)		/* read buffer, > PT_MAX_LINE + 2 */
#define TEXT_PREAMBLE (1024u * 1024)	/* comments allowed before the header / first event */

/* ---- canonical formatting ---- */

struct out {
	char *buf;
	size_t size, len;
};

static void out_mem(struct out *o, const char *s, size_t n)
{
	if (o->len + 1 >= o->size)
		return;
	size_t room = o->size - 1 - o->len;
	if (n > room)
		n = room;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void out_fmt(struct out *o, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_mem(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

enum key_fmt { KF_DEC, KF_HEX, KF_SIZE, KF_DESC, KF_PROT };

static enum key_fmt key_fmt(const struct pt_key *k)
{
	switch (k->field) {
	case PT_F_VA:
	case PT_F_PA:
	case PT_F_VA2:
	case PT_F_FLAGS:
		return KF_HEX;
	case PT_F_VAL:
		return KF_DESC;
	case PT_F_PROT:
		return KF_PROT;
	case PT_F_LEN:
	case PT_F_LEN2:
		/* migrate's to=, sched's steps=, begin's bound= and end's err= are
		 * numbers that live in the length fields */
		return !strcmp(k->name, "len") || !strcmp(k->name, "new_len") ? KF_SIZE : KF_DEC;
	default:
		return KF_DEC;
	}
}

static void out_size(struct out *o, uint64_t v)
{
	static const struct { char suffix; unsigned shift; } units[] = {
		{ 'T', 40 }, { 'G', 30 }, { 'M', 20 }, { 'K', 10 },
	};

	for (size_t i = 0; v && i < sizeof(units) / sizeof(units[0]); i++) {
		if (!(v & ((1ull << units[i].shift) - 1))) {
			out_fmt(o, "%llu%c", (unsigned long long)(v >> units[i].shift), units[i].suffix);
			return;
		}
	}
	out_fmt(o, "0x%llx", (unsigned long long)v);
}

static void out_value(struct out *o, enum key_fmt f, uint64_t v)
{
	char desc[256];

	switch (f) {
	case KF_HEX:
		out_fmt(o, "0x%llx", (unsigned long long)v);
		break;
	case KF_SIZE:
		out_size(o, v);
		break;
	case KF_DESC:
		pt_desc_format(v, desc, sizeof(desc));
		out_str(o, desc);
		break;
	case KF_PROT:
		if (!v)
			out_str(o, "none");
		if (v & PT_PROT_READ)
			out_str(o, "r");
		if (v & PT_PROT_WRITE)
			out_str(o, "w");
		if (v & PT_PROT_EXEC)
			out_str(o, "x");
		if (v & ~7ull)
			out_fmt(o, "+0x%llx", (unsigned long long)(v & ~7ull));	/* not valid; visible */
		break;
	case KF_DEC:
		out_fmt(o, "%llu", (unsigned long long)v);
		break;
	}
}

bool pt_trace_differs(const struct pt_header *ha, const struct pt_event *a, size_t na,
		      const struct pt_header *hb, const struct pt_event *b, size_t nb,
		      char *why, size_t size)
{
	char la[PT_MAX_LINE + 256], lb[PT_MAX_LINE + 256];

	if (!pt_header_eq(ha, hb)) {
		snprintf(why, size, "the header differs");
		return true;
	}
	if (na != nb) {
		snprintf(why, size, "%zu events became %zu", na, nb);
		return true;
	}
	for (size_t i = 0; i < na; i++) {
		if (pt_event_eq(&a[i], &b[i]))
			continue;
		pt_event_format_text(&a[i], la, sizeof(la));
		pt_event_format_text(&b[i], lb, sizeof(lb));
		snprintf(why, size, "event %zu differs:\n  %s\n  %s", i, la, lb);
		return true;
	}
	return false;
}

size_t pt_event_format_text(const struct pt_event *ev, char *buf, size_t size)
{
	struct out o = { buf, size, 0 };

	if (!size)
		return 0;
	buf[0] = '\0';
	if (ev->kind == PT_EV_COMMENT) {
		const char *text = ev->text ? ev->text : "";
		out_str(&o, *text ? "# " : "#");
		out_str(&o, text);
		return o.len;
	}
	const struct pt_kind_schema *s = pt_kind_schema(ev->kind);
	out_fmt(&o, "cpu%u %s", ev->cpu, s ? s->name : "?");
	if (!s)
		return o.len;
	if (s->ops) {
		out_str(&o, " ");
		out_str(&o, pt_op_name(ev->kind, ev->op));
	}
	for (const struct pt_key *k = s->keys; k->name; k++) {
		uint64_t v = pt_event_get(ev, k->field);
		if (k->req != PT_KEY_REQ && !v)
			continue;
		out_fmt(&o, " %s=", k->name);
		out_value(&o, key_fmt(k), v);
	}
	if (ev->text && *ev->text) {	/* its end-of-line comment */
		out_str(&o, "   # ");
		out_str(&o, ev->text);
	}
	return o.len;
}

/* A header string is written bare when it is a plain word, else quoted. */
static bool bare_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		char c = *s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("_.,:/+=@-", c)))
			return false;
	}
	return true;
}

static void out_hstr(struct out *o, const char *key, const char *s)
{
	out_fmt(o, " %s=", key);
	if (bare_word(s)) {
		out_str(o, s);
		return;
	}
	out_str(o, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			out_str(o, "\\");
		out_mem(o, s, 1);
	}
	out_str(o, "\"");
}

size_t pt_header_format_text(const struct pt_header *h, char *buf, size_t size)
{
	struct out o = { buf, size, 0 };

	if (!size)
		return 0;
	buf[0] = '\0';
	out_fmt(&o, "@ptt version=%u granule=", h->version);
	out_size(&o, h->granule);
	out_fmt(&o, " va_bits=%u", h->va_bits);
	if (h->lpa2)	/* only when set: traces without LPA2 read and print as before */
		out_fmt(&o, " lpa2=%u", h->lpa2);
	out_fmt(&o, " cpus=%u", h->cpus);
	out_hstr(&o, "method", h->method);
	out_hstr(&o, "kernel", h->kernel);
	out_hstr(&o, "machine", h->machine);
	return o.len;
}

/* ---- the line reader ---- */

struct pt_text_rd {
	struct pt_src *src;
	const char *name;
	unsigned cpus;
	char *buf;		/* buf[pos..len) is unread input */
	size_t cap, len, pos;
	bool marked;		/* keep everything from buf[0]: we will rewind there */
	uint64_t line;		/* number of the last line returned */
	uint64_t header_line;	/* line of the @ptt header, 0 if none */
	uint64_t ev_line;	/* line of the last event returned */
	const struct pt_kind_schema *ev_sc;	/* its kind, */
	size_t kind_col, key_col[32];	/* where its kind and each of its keys (schema order) are */
	char comment[PT_MAX_LINE + 1];
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Next line into *line and *n (without its LF or CRLF).  1 a line, 0 end of
 * input, -1 error.  A line is never longer than PT_MAX_LINE, so memory is
 * bounded by the buffer (and, before the header is found, TEXT_PREAMBLE).
 */
static int text_getline(struct pt_text_rd *t, const char **line, size_t *n, struct pt_error *err)
{
	for (;;) {
		char *s = t->buf + t->pos;
		size_t avail = t->len - t->pos;
		size_t scan = avail < PT_MAX_LINE + 2 ? avail : PT_MAX_LINE + 2;
		char *nl = memchr(s, '\n', scan);
		size_t ll;

		if (nl) {
			ll = (size_t)(nl - s);
			t->pos += ll + 1;
		} else if (avail >= PT_MAX_LINE + 2) {
			goto too_long;
		} else if (pt_src_end(t->src)) {
			if (t->src->err_no)
				return pt_error_set(err, PT_ERR_IO, "%s: read error: %s", t->name,
						    strerror(t->src->err_no));
			if (!avail)
				return 0;
			/* A last line without its newline may be a line cut short (pa=0x5000
			 * cut to pa=0 still parses): refuse it rather than guess. */
			ll = avail;
			if (ll && s[ll - 1] == '\r')
				ll--;
			return pt_err_at_line(err, PT_ERR_SYNTAX, t->name, t->line + 1,
					      (ll < PT_MAX_LINE ? ll : PT_MAX_LINE) + 1,
					      "expected a newline at the end of the last line "
					      "(the file may be truncated)");
		} else {
			/* refill: drop what was read unless we will rewind to it */
			if (!t->marked && t->pos) {
				memmove(t->buf, t->buf + t->pos, avail);
				t->len = avail;
				t->pos = 0;
			}
			if (t->len == t->cap) {
				size_t ncap = t->cap * 2;
				if (ncap > TEXT_PREAMBLE + TEXT_BUF)
					return pt_err_at_line(err, PT_ERR_HEADER, t->name, t->line + 1, 1,
							      "expected the @ptt header or a first event "
							      "within the first %u KiB; found only comments",
							      TEXT_PREAMBLE / 1024);
				char *nb = realloc(t->buf, ncap);
				if (!nb)
					return pt_error_set(err, PT_ERR_IO, "%s: out of memory", t->name);
				t->buf = nb;
				t->cap = ncap;
			}
			t->len += pt_src_read(t->src, t->buf + t->len, t->cap - t->len);
			continue;
		}
		t->line++;
		if (ll && s[ll - 1] == '\r')
			ll--;
		if (ll > PT_MAX_LINE) {
			t->line--;
			goto too_long;
		}
		*line = s;
		*n = ll;
		return 1;
	}
too_long:
	return pt_err_at_line(err, PT_ERR_SYNTAX, t->name, t->line + 1, PT_MAX_LINE + 1,
			      "expected a line of at most %u bytes", PT_MAX_LINE);
}

/* A token: s[b..e) of the line, columns are b + 1. */
struct tok {
	size_t b, e;
};

/* Next blank-separated word; false at end of line or at a trailing `#` comment. */
static bool next_word(const char *s, size_t n, size_t *i, struct tok *w)
{
	while (*i < n && is_blank(s[*i]))
		(*i)++;
	if (*i >= n || s[*i] == '#')
		return false;
	w->b = *i;
	while (*i < n && !is_blank(s[*i]))
		(*i)++;
	w->e = *i;
	return true;
}

/* Quote a token for a message: at most 40 bytes, non-printables as '?'. */
static const char *show(const char *s, size_t n, char *buf, size_t size)
{
	size_t k = 0, max = size - 5;

	if (n > 40)
		n = 40;
	buf[k++] = '\'';
	for (size_t i = 0; i < n && k < max; i++)
		buf[k++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	buf[k++] = '\'';
	buf[k] = '\0';
	return buf;
}

#define TERR(code, col, ...) pt_err_at_line(err, code, t->name, t->line, (col), __VA_ARGS__)

/* ---- the header line ---- */

enum hkey { HK_VERSION, HK_GRANULE, HK_VA_BITS, HK_LPA2, HK_CPUS, HK_METHOD, HK_KERNEL, HK_MACHINE, HK_COUNT };
static const char *const hkey_names[HK_COUNT] = { "version", "granule", "va_bits", "lpa2", "cpus",
						  "method", "kernel", "machine" };

static int header_string(struct pt_text_rd *t, const char *s, size_t n, size_t *i, char *dst,
			 size_t size, const char *key, struct pt_error *err)
{
	size_t col = *i + 1, k = 0;

	if (*i < n && s[*i] == '"') {
		(*i)++;
		for (;;) {
			if (*i >= n)
				return TERR(PT_ERR_HEADER, col, "expected a closing '\"' for %s=", key);
			char c = s[(*i)++];
			if (c == '"')
				break;
			if (c == '\\') {
				if (*i >= n || (s[*i] != '"' && s[*i] != '\\'))
					return TERR(PT_ERR_HEADER, *i,
						    "expected \\\" or \\\\ in %s=; no other escapes", key);
				c = s[(*i)++];
			}
			if (k + 1 >= size)
				return TERR(PT_ERR_HEADER, col, "expected %s= of at most %zu bytes", key,
					    size - 1);
			dst[k++] = c;
		}
		if (*i < n && !is_blank(s[*i]))
			return TERR(PT_ERR_HEADER, *i + 1, "expected a blank after the closing quote");
	} else {
		while (*i < n && !is_blank(s[*i])) {
			char c = s[(*i)++];
			if (c == '"' || c == '\\')
				return TERR(PT_ERR_HEADER, *i,
					    "expected %s= to be a plain word or a \"quoted string\"", key);
			if (k + 1 >= size)
				return TERR(PT_ERR_HEADER, col, "expected %s= of at most %zu bytes", key,
					    size - 1);
			dst[k++] = c;
		}
	}
	dst[k] = '\0';
	if (!pt_text_ok(dst, k))
		return TERR(PT_ERR_HEADER, col,
			    "expected %s= to be UTF-8 text without control characters", key);
	return 0;
}

static int parse_header(struct pt_text_rd *t, const char *s, size_t n, size_t i, struct pt_header *h,
			struct pt_error *err)
{
	bool seen[HK_COUNT] = { false };
	size_t col[HK_COUNT] = { 0 };
	char buf[64];

	pt_header_default(h);
	i += 4;	/* "@ptt" */
	for (;;) {
		while (i < n && is_blank(s[i]))
			i++;
		if (i >= n || s[i] == '#')
			break;
		size_t kb = i;
		while (i < n && s[i] != '=' && !is_blank(s[i]))
			i++;
		if (i >= n || s[i] != '=')
			return TERR(PT_ERR_HEADER, kb + 1, "expected key=value in the @ptt header, got %s",
				    show(s + kb, i - kb, buf, sizeof(buf)));
		unsigned key = HK_COUNT;
		for (unsigned k = 0; k < HK_COUNT; k++)
			if (strlen(hkey_names[k]) == i - kb && !memcmp(hkey_names[k], s + kb, i - kb))
				key = k;
		if (key == HK_COUNT)
			return TERR(PT_ERR_HEADER, kb + 1,
				    "expected a header key (version granule va_bits lpa2 cpus method kernel "
				    "machine), got %s", show(s + kb, i - kb, buf, sizeof(buf)));
		if (seen[key])
			return TERR(PT_ERR_HEADER, kb + 1, "expected each header key once; %s= repeats",
				    hkey_names[key]);
		seen[key] = true;
		col[key] = kb + 1;
		i++;	/* '=' */
		if (key >= HK_METHOD) {
			char *dst = key == HK_METHOD ? h->method : key == HK_KERNEL ? h->kernel : h->machine;
			size_t size = key == HK_METHOD ? sizeof(h->method) : sizeof(h->kernel);
			if (header_string(t, s, n, &i, dst, size, hkey_names[key], err))
				return -1;
			continue;
		}
		size_t vb = i;
		uint64_t v;
		while (i < n && !is_blank(s[i]))
			i++;
		int rc = pt_parse_u64(s + vb, i - vb, &v);
		if (rc || v > UINT32_MAX)
			return TERR(PT_ERR_NUMBER, vb + 1, "expected a number for %s=, got %s%s",
				    hkey_names[key], show(s + vb, i - vb, buf, sizeof(buf)),
				    rc == -1 ? "" : " (too large)");
		uint32_t *dst = key == HK_VERSION ? &h->version : key == HK_GRANULE ? &h->granule
			      : key == HK_VA_BITS ? &h->va_bits : key == HK_LPA2 ? &h->lpa2 : &h->cpus;
		*dst = (uint32_t)v;
	}
	if (!seen[HK_VERSION])
		return TERR(PT_ERR_HEADER, 1, "expected version=%u in the @ptt header", PT_FORMAT_VERSION);

	char why[160];
	const char *bad = NULL;
	enum pt_err code = pt_header_check(h, why, sizeof(why), &bad);
	if (code) {
		size_t c = 1;
		for (unsigned k = 0; bad && k < HK_COUNT; k++)
			if (!strcmp(hkey_names[k], bad) && col[k])
				c = col[k];
		return TERR(code, c, "%s", why);
	}
	return 0;
}

static bool is_header_word(const char *s, size_t n, size_t i)
{
	return n - i >= 4 && !memcmp(s + i, "@ptt", 4) && (n - i == 4 || is_blank(s[i + 4]));
}

/* ---- event lines ---- */

static int parse_comment(struct pt_text_rd *t, const char *s, size_t n, size_t i, struct pt_event *ev,
			 struct pt_error *err)
{
	i++;	/* '#' */
	if (i < n && s[i] == ' ')
		i++;
	size_t len = n - i;
	if (len > PT_MAX_COMMENT)
		return TERR(PT_ERR_SYNTAX, i + 1, "expected a comment of at most %u bytes", PT_MAX_COMMENT);
	if (!pt_text_ok(s + i, len))
		return TERR(PT_ERR_SYNTAX, i + 1,
			    "expected comment text in UTF-8 without control characters other than tab");
	memcpy(t->comment, s + i, len);
	t->comment[len] = '\0';
	ev->kind = PT_EV_COMMENT;
	ev->text = t->comment;
	return 1;
}

static int parse_prot(const char *s, size_t n, uint64_t *v)
{
	*v = 0;
	if (n == 4 && !memcmp(s, "none", 4))
		return 0;
	if (n && s[0] >= '0' && s[0] <= '9')
		return pt_parse_u64(s, n, v);
	if (!n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t bit = s[i] == 'r' ? PT_PROT_READ : s[i] == 'w' ? PT_PROT_WRITE
			     : s[i] == 'x' ? PT_PROT_EXEC : 0;
		if (!bit || (*v & bit))
			return -1;
		*v |= bit;
	}
	return 0;
}

static void list_names(char *buf, size_t size, const char *const *names, size_t count)
{
	struct out o = { buf, size, 0 };

	buf[0] = '\0';
	for (size_t i = 0; i < count; i++) {
		if (i)
			out_str(&o, " ");
		out_str(&o, names[i]);
	}
}

static void list_kinds(char *buf, size_t size)
{
	struct out o = { buf, size, 0 };

	buf[0] = '\0';
	for (unsigned k = 1; k < PT_EV_KIND_COUNT; k++) {
		if (k == PT_EV_COMMENT || !pt_kind_schema(k))
			continue;
		if (o.len)
			out_str(&o, " ");
		out_str(&o, pt_kind_name(k));
	}
}

static void list_keys(char *buf, size_t size, const struct pt_kind_schema *sc)
{
	struct out o = { buf, size, 0 };

	buf[0] = '\0';
	for (const struct pt_key *k = sc->keys; k->name; k++) {
		if (o.len)
			out_str(&o, " ");
		out_str(&o, k->name);
	}
	if (!o.len)
		out_str(&o, "no keys");
}

static int parse_value(struct pt_text_rd *t, const struct pt_key *k, const char *s, size_t b, size_t e,
		       uint64_t *v, struct pt_error *err)
{
	char buf[64];
	int rc;

	switch (key_fmt(k)) {
	case KF_DESC:
		if (pt_desc_parse(s + b, e - b, v))
			return TERR(PT_ERR_NUMBER, b + 1,
				    "expected a descriptor for %s= (0xHEX, inv, tbl@PA, pg@PA or blk@PA, "
				    "then ,flags), got %s", k->name, show(s + b, e - b, buf, sizeof(buf)));
		return 0;
	case KF_PROT:
		if (parse_prot(s + b, e - b, v))
			return TERR(PT_ERR_NUMBER, b + 1,
				    "expected a protection for %s= (none, letters from rwx, or a number), got %s",
				    k->name, show(s + b, e - b, buf, sizeof(buf)));
		break;
	default:
		rc = pt_parse_u64(s + b, e - b, v);
		if (rc == -2)
			return TERR(PT_ERR_NUMBER, b + 1, "expected a number below 2^64 for %s=, got %s",
				    k->name, show(s + b, e - b, buf, sizeof(buf)));
		if (rc)
			return TERR(PT_ERR_NUMBER, b + 1,
				    "expected a number for %s= (decimal, 0x hex, optional K/M/G/T), got %s",
				    k->name, show(s + b, e - b, buf, sizeof(buf)));
		break;
	}
	if (*v > pt_field_max(k->field))
		return TERR(PT_ERR_FIELD, b + 1, "expected %s= at most %llu, got %llu", k->name,
			    (unsigned long long)pt_field_max(k->field), (unsigned long long)*v);
	return 0;
}

static int parse_event(struct pt_text_rd *t, const char *s, size_t n, size_t i, struct pt_event *ev,
		       struct pt_error *err)
{
	char buf[64], list[400];
	struct tok w = { 0, 0 };	/* a line of blanks only leaves it empty: "expected cpuN" */

	/* cpuN */
	next_word(s, n, &i, &w);
	size_t wl = w.e - w.b;
	unsigned long long cpu = 0;
	bool ok = wl >= 4 && !memcmp(s + w.b, "cpu", 3);
	for (size_t k = w.b + 3; ok && k < w.e; k++) {
		ok = s[k] >= '0' && s[k] <= '9';
		cpu = cpu > PT_MAX_CPUS ? cpu : cpu * 10 + (unsigned)(s[k] - '0');	/* saturate */
	}
	if (!ok)
		return TERR(PT_ERR_SYNTAX, w.b + 1, "expected cpuN, a comment or the @ptt header, got %s",
			    show(s + w.b, wl, buf, sizeof(buf)));
	if (cpu >= t->cpus)
		return TERR(PT_ERR_CPU, w.b + 1, "expected cpu0..cpu%u (the header has cpus=%u), got %s",
			    t->cpus - 1, t->cpus, show(s + w.b, wl, buf, sizeof(buf)));
	ev->cpu = (uint16_t)cpu;

	/* kind */
	if (!next_word(s, n, &i, &w))
		return TERR(PT_ERR_SYNTAX, i + 1, "expected an event kind after cpu%llu", cpu);
	unsigned kind = pt_kind_by_name(s + w.b, w.e - w.b);
	const struct pt_kind_schema *sc = pt_kind_schema(kind);
	if (!sc) {
		list_kinds(list, sizeof(list));
		return TERR(PT_ERR_UNKNOWN_KIND, w.b + 1, "expected an event kind (%s), got %s", list,
			    show(s + w.b, w.e - w.b, buf, sizeof(buf)));
	}
	ev->kind = (uint8_t)kind;
	t->ev_sc = sc;
	t->kind_col = w.b + 1;
	memset(t->key_col, 0, sizeof(t->key_col));

	/* op */
	if (sc->ops) {
		bool have = next_word(s, n, &i, &w);
		unsigned op = sc->nops;
		for (unsigned k = 0; have && k < sc->nops; k++)
			if (strlen(sc->ops[k]) == w.e - w.b && !memcmp(sc->ops[k], s + w.b, w.e - w.b))
				op = k;
		if (op == sc->nops) {
			list_names(list, sizeof(list), sc->ops, sc->nops);
			return TERR(PT_ERR_UNKNOWN_OP, (have ? w.b : i) + 1, "expected a %s operation (%s), got %s",
				    sc->name, list, have ? show(s + w.b, w.e - w.b, buf, sizeof(buf))
							 : "end of line");
		}
		ev->op = (uint8_t)op;
	}

	/* key=value ... */
	unsigned seen = 0;
	while (next_word(s, n, &i, &w)) {
		const char *eq = memchr(s + w.b, '=', w.e - w.b);
		if (!eq)
			return TERR(PT_ERR_SYNTAX, w.b + 1, "expected key=value, got %s",
				    show(s + w.b, w.e - w.b, buf, sizeof(buf)));
		size_t kl = (size_t)(eq - (s + w.b));
		unsigned idx = 0;
		const struct pt_key *k;
		for (k = sc->keys; k->name; k++, idx++)
			if (strlen(k->name) == kl && !memcmp(k->name, s + w.b, kl))
				break;
		if (!k->name) {
			list_keys(list, sizeof(list), sc);
			return TERR(PT_ERR_FIELD, w.b + 1, "expected a key of %s (%s), got %s", sc->name, list,
				    show(s + w.b, kl, buf, sizeof(buf)));
		}
		if (seen & (1u << idx))
			return TERR(PT_ERR_SYNTAX, w.b + 1, "expected each key once; %s= repeats", k->name);
		seen |= 1u << idx;
		if (idx < 32)
			t->key_col[idx] = w.b + 1;
		uint64_t v;
		if (parse_value(t, k, s, w.b + kl + 1, w.e, &v, err))
			return -1;
		pt_event_set(ev, k->field, v);
	}
	if (i < n && s[i] == '#') {	/* an end-of-line comment: the event's text */
		size_t b = i + 1 + (i + 1 < n && s[i + 1] == ' ');
		if (n - b > PT_MAX_COMMENT)
			return TERR(PT_ERR_SYNTAX, b + 1, "expected a comment of at most %u bytes", PT_MAX_COMMENT);
		if (!pt_text_ok(s + b, n - b))
			return TERR(PT_ERR_SYNTAX, b + 1, "expected comment text in UTF-8 without control "
				    "characters other than tab");
		memcpy(t->comment, s + b, n - b);
		t->comment[n - b] = '\0';
		if (n > b)
			ev->text = t->comment;
	}
	unsigned idx = 0;
	for (const struct pt_key *k = sc->keys; k->name; k++, idx++)
		if (k->req == PT_KEY_REQ && !(seen & (1u << idx)))
			return TERR(PT_ERR_MISSING, n + 1, "expected key %s= for %s", k->name, sc->name);
	if (!pt_event_valid(ev, t->cpus))	/* the checks above are the schema's; belt and braces */
		return TERR(PT_ERR_FIELD, 1, "expected an event that fits the %s schema", sc->name);
	return 1;
}

/* ---- the reader ---- */

struct pt_text_rd *pt_text_open(struct pt_src *src, const char *name, struct pt_header *h,
				struct pt_error *err)
{
	struct pt_text_rd *t = calloc(1, sizeof(*t));
	const char *s;
	size_t n;
	int rc;

	if (t)
		t->buf = malloc(TEXT_BUF);
	if (!t || !t->buf) {
		free(t);
		pt_error_set(err, PT_ERR_IO, "%s: out of memory", name);
		return NULL;
	}
	t->src = src;
	t->name = name;
	t->cap = TEXT_BUF;
	t->marked = true;
	pt_header_default(h);

	/* Look for the header past leading blank and comment lines, then
	 * rewind so that those comments become events. */
	while ((rc = text_getline(t, &s, &n, err)) == 1) {
		size_t i = 0;
		while (i < n && is_blank(s[i]))
			i++;
		if (i == n || s[i] == '#')
			continue;
		if (is_header_word(s, n, i)) {
			if (parse_header(t, s, n, i, h, err))
				goto fail;
			t->header_line = t->line;
		}
		break;
	}
	if (rc < 0 && err->code != PT_ERR_SYNTAX)
		goto fail;	/* a long line is reported again, in order, by pt_text_next() */
	t->cpus = h->cpus;
	t->marked = false;
	t->pos = 0;
	t->line = 0;
	return t;
fail:
	pt_text_close(t);
	return NULL;
}

int pt_text_next(struct pt_text_rd *t, struct pt_event *ev, struct pt_error *err)
{
	const char *s;
	size_t n;
	int rc;

	while ((rc = text_getline(t, &s, &n, err)) == 1) {
		size_t i = 0;
		while (i < n && is_blank(s[i]))
			i++;
		if (i == n)
			continue;
		memset(ev, 0, sizeof(*ev));
		t->ev_line = t->line;
		if (s[i] == '#')
			return parse_comment(t, s, n, i, ev, err);
		if (s[i] == '@') {
			if (t->line == t->header_line)
				continue;
			if (is_header_word(s, n, i))
				return TERR(PT_ERR_HEADER, i + 1,
					    "expected the @ptt header only as the first line that is not "
					    "blank or a comment");
		}
		return parse_event(t, s, n, i, ev, err);
	}
	return rc;
}

uint64_t pt_text_line(const struct pt_text_rd *t)
{
	return t->ev_line;
}

uint64_t pt_text_col(const struct pt_text_rd *t, const char *key)
{
	unsigned idx = 0;

	if (!t->ev_sc)
		return 1;
	for (const struct pt_key *k = t->ev_sc->keys; key && k->name && idx < 32; k++, idx++)
		if (!strcmp(k->name, key))
			return t->key_col[idx] ? t->key_col[idx] : t->kind_col;
	return t->kind_col;
}

void pt_text_close(struct pt_text_rd *t)
{
	if (!t)
		return;
	free(t->buf);
	free(t);
}
