/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * casemate.c - a Casemate log as a ptfuzz trace (casemate.h; the mapping
 * and its limits are in docs/casemate.md).
 *
 * Two passes over the log.  ptfuzz must be told up front what Casemate
 * learns on the way: the CPU count (the header), and for each frame that
 * Casemate's mem-init makes known, whether it is a page table and at which
 * level (page_alloc).  The first pass learns that from the tree the log
 * builds (roots are what TTBR0_EL2 / VTTBR_EL2 and set_root_lock name;
 * a table descriptor written into a table at level L makes its target a
 * level L+1 table); the second pass emits the events.
 *
 * Semantics follow Casemate 3.0.2's model (src/lib/src/model.c): the lock
 * discipline binds only tables of an installed root (a location becomes a
 * "pte" when TTBR/VTTBR registration walks it), so lock_rule is emitted
 * when the root is installed, not at set_root_lock.
 */
#include "casemate.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CM_ATOM_MAX 512		/* longest token or string */
#define CM_ITEMS_MAX 12		/* fields in one record */
#define CM_FIELDS_MAX 6
#define CM_PAGE 4096ull
#define CM_PAGE_MASK (~(CM_PAGE - 1))
#define CM_MAX_INIT (1ull << 30)	/* largest mem-init / mem-free / mem-set, bytes */
#define CM_TLBI_PAGE_MASK ((1ull << 44) - 1)	/* Xt[43:0]: VA[55:12] / IPA[55:12] */
#define CM_COMMENT_MAX 1024
#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* input: characters with their line and column                        */

struct cm_in {
	FILE *f;
	const char *name;
	int c;			/* current character, EOF at the end */
	unsigned line, col;	/* position of c, 1-based */
};

static void in_start(struct cm_in *in, FILE *f, const char *name)
{
	in->f = f;
	in->name = name;
	in->line = 1;
	in->col = 1;
	in->c = getc(f);
}

static void in_next(struct cm_in *in)
{
	if (in->c == '\n') {
		in->line++;
		in->col = 1;
	} else if (in->c != EOF) {
		in->col++;
	}
	in->c = getc(in->f);
}

static bool is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_word(int c)
{
	return c > 0x20 && c < 0x7f && c != '(' && c != ')' && c != '"';
}

static void skip_space(struct cm_in *in)
{
	while (is_space(in->c))
		in_next(in);
}

/* How to show the current character in "got ..." */
static const char *shown(int c, char buf[16])
{
	if (c == EOF)
		return "end of file";
	if (c > 0x20 && c < 0x7f)
		snprintf(buf, 16, "'%c'", c);
	else if (c == '\n')
		snprintf(buf, 16, "end of line");
	else
		snprintf(buf, 16, "byte 0x%02x", c & 0xff);
	return buf;
}

static int errat(struct pt_error *err, const char *name, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int errat(struct pt_error *err, const char *name, unsigned line, unsigned col, const char *fmt, ...)
{
	char why[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return pt_error_set(err, PT_ERR_IMPORT, "%s:%u:%u: %s", name, line, col, why);
}

/* ------------------------------------------------------------------ */
/* records: ( kind item* ), item = atom | "string" | ( key value )     */

struct cm_atom {
	char s[CM_ATOM_MAX];
	unsigned len;
	bool str;		/* a "string" */
	unsigned line, col;
};

struct cm_item {
	bool keyed;
	struct cm_atom key;
	struct cm_atom v;
};

struct cm_rec {
	struct cm_atom kind;
	unsigned n;
	struct cm_item it[CM_ITEMS_MAX];
};

static int read_word(struct cm_in *in, struct cm_atom *a, struct pt_error *err)
{
	a->line = in->line;
	a->col = in->col;
	a->len = 0;
	a->str = false;
	while (is_word(in->c)) {
		if (a->len + 1 >= CM_ATOM_MAX)
			return errat(err, in->name, a->line, a->col,
				     "expected a token of at most %u characters", CM_ATOM_MAX - 1);
		a->s[a->len++] = (char)in->c;
		in_next(in);
	}
	a->s[a->len] = '\0';
	return 0;
}

static int read_string(struct cm_in *in, struct cm_atom *a, struct pt_error *err)
{
	char b[16];

	a->line = in->line;
	a->col = in->col;
	a->len = 0;
	a->str = true;
	in_next(in);	/* the opening quote */
	while (in->c != '"') {
		if (in->c == EOF || in->c == '\n')
			return errat(err, in->name, in->line, in->col,
				     "expected '\"' to close the string opened at %u:%u, got %s", a->line,
				     a->col, shown(in->c, b));
		if (a->len + 1 >= CM_ATOM_MAX)
			return errat(err, in->name, a->line, a->col,
				     "expected a string of at most %u characters", CM_ATOM_MAX - 1);
		a->s[a->len++] = (char)in->c;
		in_next(in);
	}
	in_next(in);
	a->s[a->len] = '\0';
	return 0;
}

static int read_value(struct cm_in *in, struct cm_atom *a, const char *key, struct pt_error *err)
{
	char b[16];

	if (in->c == '"')
		return read_string(in, a, err);
	if (is_word(in->c))
		return read_word(in, a, err);
	return errat(err, in->name, in->line, in->col, "expected a value for (%s ...), got %s", key,
		     shown(in->c, b));
}

/* a `!` line (in at the '!'): Casemate's verdict, its text into verdict (printable, trimmed) */
static void read_verdict(struct cm_in *in, char *verdict, size_t vsize)
{
	size_t n = 0;

	in_next(in);
	while (in->c == ' ' || in->c == '\t')
		in_next(in);
	while (in->c != '\n' && in->c != EOF) {
		if (n + 1 < vsize)
			verdict[n++] = (in->c >= 0x20 && in->c < 0x7f) ? (char)in->c : '?';
		in_next(in);
	}
	while (n && (verdict[n - 1] == ' ' || verdict[n - 1] == '\r'))
		n--;
	verdict[n] = '\0';
}

/* one field of a record: (KEY VALUE), a bare "string" or a bare word */
static int read_item(struct cm_in *in, struct cm_item *it, struct pt_error *err)
{
	char b[16];

	it->keyed = false;
	if (in->c == '"')
		return read_string(in, &it->v, err);
	if (is_word(in->c))
		return read_word(in, &it->v, err);
	if (in->c != '(')
		return errat(err, in->name, in->line, in->col, "expected a field or ')', got %s", shown(in->c, b));
	in_next(in);
	skip_space(in);
	if (!is_word(in->c))
		return errat(err, in->name, in->line, in->col, "expected a field name after '(', got %s",
			     shown(in->c, b));
	if (read_word(in, &it->key, err))
		return -1;
	it->keyed = true;
	skip_space(in);
	if (read_value(in, &it->v, it->key.s, err))
		return -1;
	skip_space(in);
	if (in->c != ')')
		return errat(err, in->name, in->line, in->col, "expected ')' after the value of (%s ...), got %s",
			     it->key.s, shown(in->c, b));
	in_next(in);
	return 0;
}

/*
 * read_record() : the next record into r, or the text of a `!` verdict
 * line into verdict.  @return : 1 record, 2 verdict, 0 end of input, -1 error.
 */
static int read_record(struct cm_in *in, struct cm_rec *r, char *verdict, size_t vsize, struct pt_error *err)
{
	unsigned line, col;
	char b[16];

	skip_space(in);
	if (in->c == EOF)
		return ferror(in->f) ? pt_error_set(err, PT_ERR_IO, "%s: read error: %s", in->name,
						     strerror(errno))
				     : 0;
	if (in->c == '!') {
		read_verdict(in, verdict, vsize);
		return 2;
	}
	line = in->line;
	col = in->col;
	if (in->c != '(')
		return errat(err, in->name, in->line, in->col, "expected '(' to start a record, got %s",
			     shown(in->c, b));
	in_next(in);
	skip_space(in);
	if (!is_word(in->c))
		return errat(err, in->name, in->line, in->col, "expected the record kind after '(', got %s",
			     shown(in->c, b));
	if (read_word(in, &r->kind, err))
		return -1;
	r->n = 0;
	for (;;) {
		skip_space(in);
		if (in->c == ')') {
			in_next(in);
			return 1;
		}
		if (in->c == EOF)
			return errat(err, in->name, in->line, in->col,
				     "expected ')' to close the record opened at %u:%u, got end of file", line,
				     col);
		if (r->n == CM_ITEMS_MAX)
			return errat(err, in->name, in->line, in->col,
				     "expected ')': a %s record has at most %u fields", r->kind.s, CM_ITEMS_MAX);
		if (read_item(in, &r->it[r->n++], err))
			return -1;
	}
}

/* ------------------------------------------------------------------ */
/* the record schema (Casemate's parser.c and trace-format.adoc)       */

enum cm_kind {
	CM_MEM_WRITE, CM_MEM_READ, CM_MEM_INIT, CM_MEM_FREE, CM_MEM_SET, CM_SYSREG,
	CM_BARRIER, CM_TLBI, CM_HINT, CM_LOCK, CM_UNLOCK,
};

enum cm_type { CM_DEC, CM_HEX, CM_WORD };

struct cm_field {
	const char *name;	/* key; NULL ends the list */
	enum cm_type type;
	bool req;
};

struct cm_kind_desc {
	const char *name;
	enum cm_kind kind;
	struct cm_field f[CM_FIELDS_MAX + 1];
};

/* Every record starts with id and tid: fields 0 and 1. */
#define F_ID { "id", CM_DEC, true }
#define F_TID { "tid", CM_DEC, true }
#define F_END { NULL, 0, false }

static const struct cm_kind_desc cm_kinds[] = {
	{ "mem-write", CM_MEM_WRITE, { F_ID, F_TID, { "mem-order", CM_WORD, true }, { "address", CM_HEX, true },
				       { "value", CM_HEX, true }, F_END } },
	{ "mem-read", CM_MEM_READ, { F_ID, F_TID, { "address", CM_HEX, true }, { "value", CM_HEX, true }, F_END } },
	{ "mem-init", CM_MEM_INIT, { F_ID, F_TID, { "address", CM_HEX, true }, { "size", CM_HEX, true }, F_END } },
	{ "mem-free", CM_MEM_FREE, { F_ID, F_TID, { "address", CM_HEX, true }, { "size", CM_HEX, true }, F_END } },
	{ "mem-set", CM_MEM_SET, { F_ID, F_TID, { "address", CM_HEX, true }, { "size", CM_HEX, true },
				   { "value", CM_HEX, true }, F_END } },
	{ "sysreg-write", CM_SYSREG, { F_ID, F_TID, { "sysreg", CM_WORD, true }, { "value", CM_HEX, true }, F_END } },
	{ "msr", CM_SYSREG, { F_ID, F_TID, { "sysreg", CM_WORD, true }, { "value", CM_HEX, true }, F_END } },
	/* `dsb (kind ish)`: the barrier itself is a bare word */
	{ "barrier", CM_BARRIER, { F_ID, F_TID, { "barrier", CM_WORD, true }, { "kind", CM_WORD, false }, F_END } },
	{ "tlbi", CM_TLBI, { F_ID, F_TID, { "op", CM_WORD, true }, { "value", CM_HEX, false }, F_END } },
	{ "hint", CM_HINT, { F_ID, F_TID, { "kind", CM_WORD, true }, { "location", CM_HEX, true },
			     { "value", CM_HEX, true }, F_END } },
	{ "lock", CM_LOCK, { F_ID, F_TID, { "address", CM_HEX, true }, F_END } },
	{ "unlock", CM_UNLOCK, { F_ID, F_TID, { "address", CM_HEX, true }, F_END } },
};

#define NKINDS NELEMS(cm_kinds)

/* A record with its fields resolved. */
struct cm_ev {
	enum cm_kind kind;
	const struct cm_kind_desc *desc;
	uint64_t num[CM_FIELDS_MAX];
	const char *word[CM_FIELDS_MAX];
	bool set[CM_FIELDS_MAX];
	const char *src;	/* NULL if none */
	unsigned line, col;
};

/* field indices after id (0) and tid (1) */
enum { F_A = 2, F_B = 3, F_C = 4 };

static int parse_hex(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!*s)
		return -1;
	for (; *s; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return -1;
		if (v >> 60)
			return -2;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

static int parse_dec(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_hex(s, out);
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -2;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int set_field(const char *name, struct cm_ev *e, unsigned i, const struct cm_atom *a, struct pt_error *err)
{
	const struct cm_field *f = &e->desc->f[i];
	int rc;

	if (e->set[i])
		return errat(err, name, a->line, a->col, "expected (%s ...) once in a %s record, got it twice",
			     f->name, e->desc->name);
	if (f->type == CM_WORD) {
		if (a->str)
			return errat(err, name, a->line, a->col, "expected a word for (%s ...), got a string",
				     f->name);
		e->word[i] = a->s;
	} else {
		if (a->str)
			return errat(err, name, a->line, a->col, "expected a %s number for (%s ...), got a string",
				     f->type == CM_HEX ? "hexadecimal" : "decimal", f->name);
		rc = f->type == CM_HEX ? parse_hex(a->s, &e->num[i]) : parse_dec(a->s, &e->num[i]);
		if (rc == -2)
			return errat(err, name, a->line, a->col, "expected a 64-bit number for (%s ...), got '%s'",
				     f->name, a->s);
		if (rc)
			return errat(err, name, a->line, a->col, "expected a %s number for (%s ...), got '%s'",
				     f->type == CM_HEX ? "hexadecimal" : "decimal", f->name, a->s);
	}
	e->set[i] = true;
	return 0;
}

static bool key_is(const char *key, const char *field)
{
	return !strcasecmp(key, field) || (!strcasecmp(field, "tid") && !strcasecmp(key, "thread"));
}

/* e->desc: the kind of record r */
static int resolve_kind(const char *name, const struct cm_rec *r, struct cm_ev *e, struct pt_error *err)
{
	for (size_t k = 0; k < NKINDS; k++) {
		if (!strcasecmp(r->kind.s, cm_kinds[k].name)) {
			e->desc = &cm_kinds[k];
			break;
		}
	}
	if (!e->desc)
		return errat(err, name, r->kind.line, r->kind.col,
			     "expected a Casemate event kind (mem-write, mem-read, mem-init, mem-free, mem-set, "
			     "sysreg-write, barrier, tlbi, hint, lock, unlock), got unknown kind '%s'",
			     r->kind.s);
	e->kind = e->desc->kind;
	return 0;
}

/* the keyed fields (KEY VALUE), where their key says; (src ...) once */
static int resolve_keyed(const char *name, const struct cm_rec *r, struct cm_ev *e, struct pt_error *err)
{
	for (unsigned i = 0; i < r->n; i++) {
		const struct cm_item *it = &r->it[i];
		unsigned f;
		if (!it->keyed)
			continue;
		if (!strcasecmp(it->key.s, "src")) {
			if (e->src)
				return errat(err, name, it->key.line, it->key.col,
					     "expected (src ...) once in a record, got it twice");
			e->src = it->v.s;
			continue;
		}
		for (f = 0; e->desc->f[f].name; f++)
			if (key_is(it->key.s, e->desc->f[f].name))
				break;
		if (!e->desc->f[f].name)
			return errat(err, name, it->key.line, it->key.col,
				     "expected a field of a %s record, got unknown field (%s ...)", e->desc->name,
				     it->key.s);
		if (set_field(name, e, f, &it->v, err))
			return -1;
	}
	return 0;
}

/* the bare values: the fields the keyed ones left, in order; a bare string is the source location */
static int resolve_positional(const char *name, const struct cm_rec *r, struct cm_ev *e, struct pt_error *err)
{
	unsigned next = 0;

	for (unsigned i = 0; i < r->n; i++) {
		const struct cm_item *it = &r->it[i];
		if (it->keyed)
			continue;
		if (it->v.str) {
			if (e->src)
				return errat(err, name, it->v.line, it->v.col,
					     "expected one source location in a record, got a second string");
			e->src = it->v.s;
			continue;
		}
		while (e->desc->f[next].name && e->set[next])
			next++;
		if (!e->desc->f[next].name)
			return errat(err, name, it->v.line, it->v.col,
				     "expected ')': a %s record has no field left for '%s'", e->desc->name,
				     it->v.s);
		if (set_field(name, e, next, &it->v, err))
			return -1;
	}
	return 0;
}

/*
 * resolve() : the fields of a record.  Keyed fields go where their key
 * says; bare values fill the remaining fields in order (the positional
 * form); a bare string is the source location.
 */
static int resolve(const char *name, const struct cm_rec *r, struct cm_ev *e, struct pt_error *err)
{
	memset(e, 0, sizeof(*e));
	e->line = r->kind.line;
	e->col = r->kind.col - 1;	/* the '(' */
	if (resolve_kind(name, r, e, err) || resolve_keyed(name, r, e, err) || resolve_positional(name, r, e, err))
		return -1;
	for (unsigned f = 0; e->desc->f[f].name; f++)
		if (e->desc->f[f].req && !e->set[f])
			return errat(err, name, e->line, e->col, "expected (%s %s) in a %s record", e->desc->f[f].name,
				     e->desc->f[f].type == CM_HEX ? "HEX" : e->desc->f[f].type == CM_DEC ? "N" : "WORD",
				     e->desc->name);
	return 0;
}

/* ------------------------------------------------------------------ */
/* a small u64 -> u64 map (open addressing; entries are never removed) */

struct cm_map {
	uint64_t *keys, *vals;
	uint8_t *used;
	size_t cap, n;
};

static size_t map_slot(const struct cm_map *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (m->cap - 1);
}

static uint64_t *map_get(const struct cm_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = map_slot(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i])
			return NULL;
		if (m->keys[i] == key)
			return &m->vals[i];
	}
}

static int map_grow(struct cm_map *m)
{
	struct cm_map g = { NULL, NULL, NULL, m->cap ? m->cap * 2 : 64, 0 };

	g.keys = calloc(g.cap, sizeof(*g.keys));
	g.vals = calloc(g.cap, sizeof(*g.vals));
	g.used = calloc(g.cap, 1);
	if (!g.keys || !g.vals || !g.used) {
		free(g.keys);
		free(g.vals);
		free(g.used);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		size_t j = map_slot(&g, m->keys[i]);
		while (g.used[j])
			j = (j + 1) & (g.cap - 1);
		g.used[j] = 1;
		g.keys[j] = m->keys[i];
		g.vals[j] = m->vals[i];
		g.n++;
	}
	free(m->keys);
	free(m->vals);
	free(m->used);
	*m = g;
	return 0;
}

/* map_put() : the value slot of key, inserted as 0 if absent; NULL if out of memory. */
static uint64_t *map_put(struct cm_map *m, uint64_t key)
{
	uint64_t *v = map_get(m, key);

	if (v)
		return v;
	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return NULL;
	size_t i = map_slot(m, key);
	while (m->used[i])
		i = (i + 1) & (m->cap - 1);
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = 0;
	m->n++;
	return &m->vals[i];
}

static void map_clear(struct cm_map *m)
{
	if (m->cap)
		memset(m->used, 0, m->cap);
	m->n = 0;
}

static void map_free(struct cm_map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ */
/* the conversion state                                                */

/* One life of a frame, from the mem-init that makes it known to its release. */
struct cm_inc {
	uint64_t pa;
	int8_t level;		/* table level, -1: not (known as) a table */
	uint8_t stage;		/* 0 unknown, 1 TTBR0_EL2 tree, 2 VTTBR_EL2 tree */
};

/* A table descriptor written into one frame life pointing at another. */
struct cm_edge {
	uint32_t parent, child;
	unsigned line, col;
};

/* What a table root has been told (set_root_lock) and how it was installed. */
struct cm_root {
	uint64_t lock;
	bool has_lock, installed, ruled;
	bool vttbr;		/* installed in VTTBR_EL2, with VMID id */
	uint16_t id;
	uint64_t ruled_lock;	/* the key of the lock_rule last emitted */
};

struct cm_conv {
	const char *name;
	const struct pt_casemate_sink *sink;
	struct pt_error *err;
	struct pt_casemate_info info;
	bool emitting;		/* second pass */

	/* frame lives, shared by both passes (the second replays the numbering) */
	struct cm_inc *inc;
	size_t ninc, capinc, next_inc;
	struct cm_map alive;	/* frame pa -> life index + 1 (0: not alive) */
	struct cm_edge *edge;
	size_t nedge, capedge;
	struct cm_map edges;	/* parent << 32 | child -> 1 */

	/* second pass */
	struct cm_root *root;
	size_t nroot, caproot;
	struct cm_map roots;	/* root pa -> index + 1 */
	struct cm_map vmid_root;	/* VMID -> pa + 1 of the root last installed with it */
	uint16_t vmid[PT_MAX_CPUS];	/* VMID of each CPU's VTTBR_EL2 */
	uint64_t cur[2][PT_MAX_CPUS];	/* pa + 1 of each CPU's TTBR0_EL2 [0] and VTTBR_EL2 [1] root, 0: none */
	unsigned max_tid;
	char text[CM_COMMENT_MAX];
};

static int oom(struct cm_conv *x)
{
	return pt_error_set(x->err, PT_ERR_IMPORT, "%s: out of memory", x->name);
}

static int64_t life_of(const struct cm_conv *x, uint64_t pa)
{
	const uint64_t *v = map_get(&x->alive, pa & CM_PAGE_MASK);
	return v && *v ? (int64_t)(*v - 1) : -1;
}

/* A frame becomes known (mem-init): a new life, unless it is alive already. */
static int64_t life_begin(struct cm_conv *x, uint64_t frame, bool *fresh)
{
	uint64_t *v = map_put(&x->alive, frame);

	*fresh = false;
	if (!v)
		return -2;
	if (*v)
		return (int64_t)(*v - 1);
	size_t i = x->next_inc++;
	if (!x->emitting) {
		if (x->ninc == x->capinc) {
			size_t cap = x->capinc ? x->capinc * 2 : 64;
			struct cm_inc *n = realloc(x->inc, cap * sizeof(*n));
			if (!n)
				return -2;
			x->inc = n;
			x->capinc = cap;
		}
		x->inc[x->ninc++] = (struct cm_inc){ frame, -1, 0 };
	}
	*v = i + 1;
	*fresh = true;
	return (int64_t)i;
}

static void life_end(struct cm_conv *x, uint64_t frame)
{
	uint64_t *v = map_get(&x->alive, frame);
	if (v)
		*v = 0;
}

static struct cm_root *root_of(struct cm_conv *x, uint64_t pa)
{
	uint64_t *v = map_put(&x->roots, pa);

	if (!v)
		return NULL;
	if (!*v) {
		if (x->nroot == x->caproot) {
			size_t cap = x->caproot ? x->caproot * 2 : 16;
			struct cm_root *n = realloc(x->root, cap * sizeof(*n));
			if (!n)
				return NULL;
			x->root = n;
			x->caproot = cap;
		}
		memset(&x->root[x->nroot], 0, sizeof(x->root[0]));
		*v = ++x->nroot;
	}
	return &x->root[*v - 1];
}

/* ------------------------------------------------------------------ */
/* emitting                                                            */

static int put(struct cm_conv *x, struct pt_event *ev)
{
	x->info.events++;
	return x->sink->event(x->sink->ctx, ev, x->err);
}

static int comment(struct cm_conv *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int comment(struct cm_conv *x, const char *fmt, ...)
{
	struct pt_event ev = { .kind = PT_EV_COMMENT, .text = x->text };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->text, sizeof(x->text), fmt, ap);
	va_end(ap);
	return put(x, &ev);
}

/* The record as one line (whitespace normalized), for the comment that precedes its events. */
static int comment_record(struct cm_conv *x, const struct cm_rec *r)
{
	struct pt_event ev = { .kind = PT_EV_COMMENT, .text = x->text };
	size_t n = 0, cap = sizeof(x->text) - 4;

#define ADD(...)                                                                       \
	do {                                                                           \
		if (n < cap)                                                           \
			n += (size_t)snprintf(x->text + n, cap - n, __VA_ARGS__);      \
	} while (0)
	ADD("(%s", r->kind.s);
	for (unsigned i = 0; i < r->n; i++) {
		const struct cm_item *it = &r->it[i];
		const char *q = it->v.str ? "\"" : "";
		if (it->keyed)
			ADD(" (%s %s%s%s)", it->key.s, q, it->v.s, q);
		else
			ADD(" %s%s%s", q, it->v.s, q);
	}
	ADD(")");
#undef ADD
	if (n >= cap)
		strcpy(x->text + cap - 1, "...");
	for (char *p = x->text; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	return put(x, &ev);
}

static struct pt_event arch(unsigned kind, unsigned cpu)
{
	struct pt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = (uint8_t)kind;
	ev.cpu = (uint16_t)cpu;
	return ev;
}

/* ------------------------------------------------------------------ */
/* descriptors                                                         */

static bool desc_is_leaf(uint64_t d, int level)
{
	if (!(d & PT_DESC_VALID))
		return false;
	return level == 3 ? (d & 3) == 3 : level > 0 && (d & 3) == 1;
}

/*
 * A stage-2 leaf in the stage-1 layout ptfuzz models.  Valid/table bits,
 * the output address, SH, AF, DBM, Contiguous, XN and the software bits
 * sit at the same places.  S2AP[1] (bit 7) *grants* write where stage 1's
 * AP[2] (bit 7) *removes* it, so it is inverted; S2AP[0] (read) stays in
 * bit 6; MemAttr[3:0] (bits 5:2) stays raw, so that a change of memory
 * type is still a change of attributes.  Stage-2 translations are tagged
 * with the VMID, which ptfuzz models as the ASID: the leaf becomes nG.
 */
static uint64_t s2_leaf_as_s1(uint64_t d)
{
	return (d ^ PT_DESC_RDONLY) | PT_DESC_NG;
}

/* ------------------------------------------------------------------ */
/* the two passes                                                      */

/* Each record's (mem-init address size) range as frames; checked in both passes. */
static int frame_range(struct cm_conv *x, const struct cm_ev *e, uint64_t *first, uint64_t *last)
{
	uint64_t a = e->num[F_A], sz = e->num[F_B];

	*first = *last = 0;	/* defined on every return, not only on success */
	if (!sz)
		return 1;
	if (sz > CM_MAX_INIT || a + sz < a || a + sz > PT_USER_VA_END)
		return errat(x->err, x->name, e->line, e->col,
			     "expected a %s range inside 48-bit physical memory of at most 1 GiB, got address "
			     "0x%llx size 0x%llx",
			     e->desc->name, (unsigned long long)a, (unsigned long long)sz);
	*first = a & CM_PAGE_MASK;
	*last = (a + sz - 1) & CM_PAGE_MASK;
	return 0;
}

static int note_level(struct cm_conv *x, const struct cm_ev *e, uint64_t pa, int level, unsigned stage)
{
	int64_t l = life_of(x, pa);

	if (l < 0)
		return 0;	/* not initialised: Casemate's own problem, ptfuzz gets the event as is */
	struct cm_inc *c = &x->inc[l];
	if (c->level >= 0 && c->level != level)
		return errat(x->err, x->name, e->line, e->col,
			     "expected table 0x%llx at one level, got level %d and level %d (ptfuzz tables have "
			     "one level per allocation)",
			     (unsigned long long)pa, c->level, level);
	c->level = (int8_t)level;
	if (stage && c->stage && c->stage != stage)
		return errat(x->err, x->name, e->line, e->col,
			     "expected root 0x%llx in one regime, got it under both TTBR0_EL2 and VTTBR_EL2",
			     (unsigned long long)pa);
	if (stage)
		c->stage = (uint8_t)stage;
	return 0;
}

static int add_edge(struct cm_conv *x, const struct cm_ev *e, uint64_t parent_pa, uint64_t val)
{
	int64_t p = life_of(x, parent_pa), c;

	if (p < 0 || (val & 3) != 3)
		return 0;
	c = life_of(x, val & PT_DESC_OA_MASK);
	if (c < 0)
		return 0;
	uint64_t *seen = map_put(&x->edges, (uint64_t)p << 32 | (uint64_t)c);
	if (!seen)
		return oom(x);
	if (*seen)
		return 0;
	*seen = 1;
	if (x->nedge == x->capedge) {
		size_t cap = x->capedge ? x->capedge * 2 : 64;
		struct cm_edge *n = realloc(x->edge, cap * sizeof(*n));
		if (!n)
			return oom(x);
		x->edge = n;
		x->capedge = cap;
	}
	x->edge[x->nedge++] = (struct cm_edge){ (uint32_t)p, (uint32_t)c, e->line, e->col };
	return 0;
}

/*
 * TCR_EL2 / VTCR_EL2: Casemate starts walks at level (48 - (64 - T0SZ)) / 9
 * (pgtable.c, read_start_level()); ptfuzz walks 48-bit VAs from level 0.
 */
static int check_tcr(struct cm_conv *x, const struct cm_ev *e)
{
	unsigned t0sz = (unsigned)(e->num[F_B] & 0x3f);

	if (t0sz > 24)
		return errat(x->err, x->name, e->line, e->col,
			     "expected %s.T0SZ <= 24 (walks from level 0, as ptfuzz models), got T0SZ %u",
			     e->word[F_A], t0sz);
	return 0;
}

static int decode_ttbr(struct cm_conv *x, const struct cm_ev *e, uint64_t *baddr, uint16_t *id)
{
	uint64_t v = e->num[F_B];

	*baddr = v & 0x0000fffffffffffeull;	/* BADDR[47:1]; bit 0 is CnP */
	*id = (uint16_t)(v >> 48);
	if (*baddr & ~CM_PAGE_MASK)
		return errat(x->err, x->name, e->line, e->col,
			     "expected a page-aligned table base in %s, got 0x%llx", e->word[F_A],
			     (unsigned long long)*baddr);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the words a record may use, checked in the first pass              */

/*
 * Casemate's TLBIs (EL2 and the EL1&0 regime seen from EL2) as the EL1
 * stage-1 operations ptfuzz models.  VMIDs stand as ASIDs (VTTBR_EL2 ->
 * ttbr0 asid=VMID), TTBR0_EL2's translations are global kernel (TTBR1)
 * translations.  docs/casemate.md gives the reasoning for each line.
 */
enum cm_scope {
	SC_ALL,		/* every translation */
	SC_VMID,	/* the current VMID's translations (aside*) */
	SC_EL2_VA,	/* an EL2 VA, all ASIDs (vaae* / vaale*) */
	SC_IPA,		/* an IPA of the current VMID (vae* / vale*) */
};

static const struct cm_tlbi {
	const char *cm;
	enum cm_scope scope;
	unsigned op;
} cm_tlbis[] = {
	{ "vmalls12e1is", SC_VMID, PT_TLBI_ASIDE1IS },
	{ "vmalls12e1", SC_VMID, PT_TLBI_ASIDE1 },
	{ "vmalle1is", SC_VMID, PT_TLBI_ASIDE1IS },
	{ "vmalle1", SC_VMID, PT_TLBI_ASIDE1 },
	{ "alle1is", SC_ALL, PT_TLBI_VMALLE1IS },
	{ "alle1", SC_ALL, PT_TLBI_VMALLE1 },
	{ "alle2is", SC_ALL, PT_TLBI_VMALLE1IS },
	{ "alle2", SC_ALL, PT_TLBI_VMALLE1 },
	{ "vae2is", SC_EL2_VA, PT_TLBI_VAAE1IS },
	{ "vae2", SC_EL2_VA, PT_TLBI_VAAE1 },
	{ "vale2is", SC_EL2_VA, PT_TLBI_VAALE1IS },
	{ "vale2", SC_EL2_VA, PT_TLBI_VAALE1 },
	{ "ipas2e1is", SC_IPA, PT_TLBI_VAE1IS },
	{ "ipas2e1", SC_IPA, PT_TLBI_VAE1 },
	{ "ipas2le1is", SC_IPA, PT_TLBI_VALE1IS },
	{ "ipas2le1", SC_IPA, PT_TLBI_VALE1 },
};

static const struct cm_tlbi *tlbi_lookup(const char *name)
{
	for (size_t i = 0; i < NELEMS(cm_tlbis); i++)
		if (!strcasecmp(name, cm_tlbis[i].cm))
			return &cm_tlbis[i];
	return NULL;
}

/* A DSB/DMB domain as ptfuzz's enum pt_barrier, -1 if unknown. */
static int barrier_domain(const char *name)
{
	static const char *const dom[PT_BAR_COUNT] = { "sy", "ish", "ishst", "nsh", "ishld" };

	for (int d = 0; d < PT_BAR_COUNT; d++)
		if (!strcasecmp(name, dom[d]))
			return d;
	return -1;
}

static bool word_in(const char *w, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(w, set[i]))
			return true;
	return false;
}

static const char *const cm_sysregs[] = { "vttbr_el2", "ttbr0_el2", "vtcr_el2", "tcr_el2", "hcr_el2",
					   "sctlr_el2", "mair_el2" };
static const char *const cm_hints[] = { "set_root_lock", "set_owner_root", "release_table",
					"set_pte_thread_owner" };


static int check_tlbi(struct cm_conv *x, const struct cm_ev *e)
{
	const struct cm_tlbi *t = tlbi_lookup(e->word[F_A]);
	bool by_addr;

	if (!t)
		return errat(x->err, x->name, e->line, e->col,
			     "expected a TLBI Casemate knows (vmalls12e1[is], vmalle1[is], alle1[is], alle2[is], "
			     "vae2[is], vale2[is], ipas2e1is), got unknown TLBI '%s'",
			     e->word[F_A]);
	by_addr = t->scope == SC_EL2_VA || t->scope == SC_IPA;
	if (by_addr && !e->set[F_B])
		return errat(x->err, x->name, e->line, e->col, "expected (value HEX) for TLBI %s", t->cm);
	if (!by_addr && e->set[F_B])
		return errat(x->err, x->name, e->line, e->col, "expected no (value ...) for TLBI %s", t->cm);
	if (by_addr && ((e->num[F_B] & CM_TLBI_PAGE_MASK) << 12) >= PT_USER_VA_END)
		return errat(x->err, x->name, e->line, e->col, "expected a TLBI address below 2^48, got 0x%llx",
			     (unsigned long long)((e->num[F_B] & CM_TLBI_PAGE_MASK) << 12));
	return 0;
}

/* Everything a record can get wrong, so that a bad log fails before any event is produced. */
static int check_record(struct cm_conv *x, const struct cm_ev *e)
{
	const char *w = e->word[F_A];

	switch (e->kind) {
	case CM_MEM_WRITE:
		if (strcasecmp(w, "plain") && strcasecmp(w, "release"))
			return errat(x->err, x->name, e->line, e->col, "expected mem-order plain or release, got '%s'",
				     w);
		return 0;
	case CM_MEM_SET:
		if ((e->num[F_A] | e->num[F_B]) & 7)
			return errat(x->err, x->name, e->line, e->col,
				     "expected an 8-byte aligned mem-set address and size, got 0x%llx size 0x%llx",
				     (unsigned long long)e->num[F_A], (unsigned long long)e->num[F_B]);
		return 0;
	case CM_BARRIER:
		if (!strcasecmp(w, "isb"))
			return 0;
		if (strcasecmp(w, "dsb") && strcasecmp(w, "dmb"))
			return errat(x->err, x->name, e->line, e->col, "expected barrier dsb, dmb or isb, got '%s'", w);
		if (!e->set[F_B])
			return errat(x->err, x->name, e->line, e->col, "expected (kind ish|ishst|nsh|sy) after %s", w);
		if (barrier_domain(e->word[F_B]) < 0)
			return errat(x->err, x->name, e->line, e->col,
				     "expected a %s kind ish, ishst, ishld, nsh or sy, got '%s'", w, e->word[F_B]);
		return 0;
	case CM_TLBI:
		return check_tlbi(x, e);
	case CM_SYSREG:
		if (!word_in(w, cm_sysregs, NELEMS(cm_sysregs)))
			return errat(x->err, x->name, e->line, e->col,
				     "expected a system register Casemate knows (vttbr_el2, ttbr0_el2, vtcr_el2, "
				     "tcr_el2, hcr_el2, sctlr_el2, mair_el2), got '%s'",
				     w);
		return 0;
	case CM_HINT:
		if (!word_in(w, cm_hints, NELEMS(cm_hints)))
			return errat(x->err, x->name, e->line, e->col,
				     "expected a hint kind set_root_lock, set_owner_root, release_table or "
				     "set_pte_thread_owner, got '%s'",
				     w);
		return 0;
	default:
		return 0;
	}
}

/* mem-init (begin) or mem-free (!begin): the lives of the frames of its range */
static int pass1_frames(struct cm_conv *x, const struct cm_ev *e, bool begin)
{
	uint64_t first, last;
	bool fresh;
	int rc = frame_range(x, e, &first, &last);

	if (rc)
		return rc < 0 ? -1 : 0;
	for (uint64_t f = first;; f += CM_PAGE) {
		if (!begin)
			life_end(x, f);
		else if (life_begin(x, f, &fresh) < -1)
			return oom(x);
		if (f == last)
			break;
	}
	return 0;
}

/* mem-set: a write of the byte, repeated, to every frame of its range */
static int pass1_mem_set(struct cm_conv *x, const struct cm_ev *e)
{
	uint64_t first, last, b = e->num[F_C] & 0xff;
	int rc = frame_range(x, e, &first, &last);

	if (rc)
		return rc < 0 ? -1 : 0;
	for (uint64_t f = first;; f += CM_PAGE) {
		if (add_edge(x, e, f, b * 0x0101010101010101ull))
			return -1;
		if (f == last)
			break;
	}
	return 0;
}

/* sysreg-write: the translation control registers checked, the roots noted at level 0 */
static int pass1_sysreg(struct cm_conv *x, const struct cm_ev *e)
{
	uint64_t root;
	uint16_t id;

	if (!strcasecmp(e->word[F_A], "tcr_el2") || !strcasecmp(e->word[F_A], "vtcr_el2"))
		return check_tcr(x, e);
	if (!strcasecmp(e->word[F_A], "ttbr0_el2") || !strcasecmp(e->word[F_A], "vttbr_el2")) {
		if (decode_ttbr(x, e, &root, &id))
			return -1;
		return note_level(x, e, root, 0, !strcasecmp(e->word[F_A], "ttbr0_el2") ? 1 : 2);
	}
	return 0;
}

static int pass1_record(struct cm_conv *x, const struct cm_ev *e)
{
	if (check_record(x, e))
		return -1;
	switch (e->kind) {
	case CM_MEM_INIT:
		return pass1_frames(x, e, /* begin= */true);
	case CM_MEM_FREE:
		return pass1_frames(x, e, /* begin= */false);
	case CM_MEM_WRITE:
		return add_edge(x, e, e->num[F_B], e->num[F_C]);
	case CM_MEM_SET:
		return pass1_mem_set(x, e);
	case CM_SYSREG:
		return pass1_sysreg(x, e);
	case CM_HINT:
		if (!strcasecmp(e->word[F_A], "set_root_lock"))
			return note_level(x, e, e->num[F_B], 0, 0);
		if (!strcasecmp(e->word[F_A], "release_table"))
			life_end(x, e->num[F_B] & CM_PAGE_MASK);
		return 0;
	default:
		return 0;
	}
}

/* After the first pass: a table descriptor in a level-L table makes its target level L+1. */
static int settle_levels(struct cm_conv *x)
{
	bool changed = true;

	while (changed) {
		changed = false;
		for (size_t i = 0; i < x->nedge; i++) {
			const struct cm_edge *d = &x->edge[i];
			const struct cm_inc *p = &x->inc[d->parent];
			struct cm_inc *c = &x->inc[d->child];
			if (p->level < 0 || p->level > 2)
				continue;	/* unknown, or a level-3 page descriptor */
			if (c->level < 0) {
				c->level = (int8_t)(p->level + 1);
				changed = true;
			} else if (c->level != p->level + 1) {
				return errat(x->err, x->name, d->line, d->col,
					     "expected table 0x%llx at one level, got level %d and level %d (ptfuzz "
					     "tables have one level per allocation)",
					     (unsigned long long)c->pa, c->level, p->level + 1);
			}
			if (!c->stage && p->stage) {
				c->stage = p->stage;
				changed = true;
			}
		}
	}
	return 0;
}

/* --- second pass: one function per Casemate event kind --- */

static int emit_alloc_run(struct cm_conv *x, unsigned cpu, uint64_t pa, uint64_t frames)
{
	/* a run of data frames as naturally aligned power-of-two blocks */
	while (frames) {
		unsigned order = 0;
		while (order < 18 && (2ull << order) <= frames && !(pa & ((CM_PAGE << (order + 1)) - 1)))
			order++;
		struct pt_event ev = arch(PT_EV_PAGE_ALLOC, cpu);
		ev.op = PT_FRAME_DATA;
		ev.pa = pa;
		ev.order = (uint8_t)order;
		if (put(x, &ev))
			return -1;
		pa += CM_PAGE << order;
		frames -= 1ull << order;
	}
	return 0;
}

/*
 * mem-init: Casemate's memory is known and zero.  Table frames become
 * `page_alloc table level=L flags=zero`, the rest data frames.  Casemate's
 * initialisation is not a store a walker could miss (its model has every
 * CPU see memory at once), so the zeroing is ordered right away by a
 * synthesised `dmb ishst` (marked by a comment): in ptfuzz a DMB orders
 * the zeroing before later stores (smp_wmb() in pmd_install()) and does
 * nothing else - it neither completes TLBIs nor publishes pending stores.
 * Without it ptfuzz would see a table published before its zeroing is
 * visible (I7) wherever the log links a table before its next DSB.
 */
static int emit_mem_init(struct cm_conv *x, const struct cm_ev *e, unsigned cpu)
{
	uint64_t first, last, run = 0, run_pa = 0;
	bool fresh, tables = false;
	int rc = frame_range(x, e, &first, &last);

	if (rc)
		return rc < 0 ? -1 : 0;
	for (uint64_t f = first;; f += CM_PAGE) {
		int64_t l = life_begin(x, f, &fresh);
		if (l < -1)
			return oom(x);
		const struct cm_inc *c = &x->inc[l];
		if (!fresh || c->level >= 0) {
			if (emit_alloc_run(x, cpu, run_pa, run))
				return -1;
			run = 0;
		}
		if (fresh && c->level >= 0) {
			struct pt_event ev = arch(PT_EV_PAGE_ALLOC, cpu);
			ev.op = PT_FRAME_TABLE;
			ev.pa = f;
			ev.level = (uint8_t)c->level;
			ev.flags = PT_ALLOC_ZERO;
			if (put(x, &ev))
				return -1;
			tables = true;
		} else if (fresh) {
			if (!run)
				run_pa = f;
			run++;
		}
		if (f == last)
			break;
	}
	if (emit_alloc_run(x, cpu, run_pa, run))
		return -1;
	if (tables) {
		struct pt_event ev = arch(PT_EV_DMB, cpu);
		ev.op = PT_BAR_ISHST;
		if (comment(x, "casemate: synthesised: mem-init memory is zero for every walker") || put(x, &ev))
			return -1;
	}
	return 0;
}

/*
 * Casemate's release_table of a root that no CPU has installed retires the
 * root and its VMID (model.c: try_unregister_root()); in ptfuzz a retired
 * address space is `mm_exit asid=VMID` (its ASID is not reused before a
 * flush), without which the root would stay the VMID's root and freeing it
 * would be freeing a hooked table.  A root still installed is freed as it
 * is: Casemate refuses that ("cannot release table still in use"), ptfuzz
 * reports the hooked table (I1).
 */
static int emit_retire_vmid(struct cm_conv *x, unsigned cpu, uint64_t frame, const struct cm_root *r)
{
	uint64_t *owner = map_get(&x->vmid_root, r->id);

	if (!r->vttbr || !owner || *owner != frame + 1)
		return 0;
	for (unsigned c = 0; c <= x->max_tid; c++)
		if (x->cur[0][c] == frame + 1 || x->cur[1][c] == frame + 1)
			return 0;
	*owner = 0;
	struct pt_event ev = arch(PT_EV_MM_EXIT, cpu);
	ev.asid = r->id;
	if (comment(x, "casemate: releasing root 0x%llx retires VMID %u", (unsigned long long)frame, r->id))
		return -1;
	return put(x, &ev);
}

static int emit_free_frame(struct cm_conv *x, unsigned cpu, uint64_t frame)
{
	struct pt_event ev = arch(PT_EV_PAGE_FREE, cpu);
	uint64_t *r = map_get(&x->roots, frame);

	ev.pa = frame;
	life_end(x, frame);
	if (r && *r) {
		if (emit_retire_vmid(x, cpu, frame, &x->root[*r - 1]))
			return -1;
		/* release_table also drops the root's lock and registration */
		memset(&x->root[*r - 1], 0, sizeof(x->root[0]));
	}
	return put(x, &ev);
}

static int emit_mem_free(struct cm_conv *x, const struct cm_ev *e, unsigned cpu)
{
	uint64_t first, last;
	int rc = frame_range(x, e, &first, &last);

	if (rc)
		return rc < 0 ? -1 : 0;
	for (uint64_t f = first;; f += CM_PAGE) {
		if (life_of(x, f) >= 0 && emit_free_frame(x, cpu, f))
			return -1;
		if (f == last)
			break;
	}
	return 0;
}

/* A store to memory: a pt_write if the frame is a page table, nothing otherwise. */
static int emit_store(struct cm_conv *x, unsigned cpu, uint64_t pa, uint64_t val, bool quiet)
{
	int64_t l = life_of(x, pa);

	if (l < 0 || x->inc[l].level < 0) {
		if (quiet)
			return 0;
		return comment(x, "casemate: 0x%llx is %s: no ptfuzz event", (unsigned long long)pa,
			       l < 0 ? "not initialised memory" : "not a page table");
	}
	const struct cm_inc *c = &x->inc[l];
	struct pt_event ev = arch(PT_EV_PT_WRITE, cpu);
	ev.pa = pa & ~7ull;
	ev.val = val;
	if (c->stage == 2 && desc_is_leaf(val, c->level))
		ev.val = s2_leaf_as_s1(val);
	return put(x, &ev);
}

static int emit_mem_set(struct cm_conv *x, const struct cm_ev *e, unsigned cpu)
{
	uint64_t a = e->num[F_A], sz = e->num[F_B];
	uint64_t val = (e->num[F_C] & 0xff) * 0x0101010101010101ull;

	for (uint64_t p = a; p < a + sz; p += 8)
		if (emit_store(x, cpu, p, val, true))
			return -1;
	return 0;
}

static int emit_barrier(struct cm_conv *x, const struct cm_ev *e, unsigned cpu)
{
	const char *b = e->word[F_A];
	struct pt_event ev;

	if (!strcasecmp(b, "isb")) {
		ev = arch(PT_EV_ISB, cpu);
		return put(x, &ev);
	}
	ev = arch(!strcasecmp(b, "dsb") ? PT_EV_DSB : PT_EV_DMB, cpu);
	int d = barrier_domain(e->word[F_B]);
	assert(d >= 0);		/* check_record() */
	ev.op = (uint8_t)d;
	return put(x, &ev);
}

static int emit_tlbi(struct cm_conv *x, const struct cm_ev *e, unsigned cpu)
{
	const struct cm_tlbi *t = tlbi_lookup(e->word[F_A]);
	struct pt_event ev = arch(PT_EV_TLBI, cpu);

	assert(t);		/* check_record() */
	ev.op = (uint8_t)t->op;
	if (t->scope == SC_VMID || t->scope == SC_IPA)
		ev.asid = x->vmid[cpu];
	if (t->scope == SC_EL2_VA || t->scope == SC_IPA) {
		uint64_t addr = (e->num[F_B] & CM_TLBI_PAGE_MASK) << 12;
		unsigned ttl = (unsigned)(e->num[F_B] >> 44) & 0xf;
		ev.va = t->scope == SC_EL2_VA ? PT_KERNEL_VA_BASE | addr : addr;
		/* TTL[3:2] = 0b00: no hint; else TTL[1:0] is the level (0: none in ptfuzz) */
		if (ttl >= 4)
			ev.level = (uint8_t)(ttl & 3);
	}
	return put(x, &ev);
}

/* The lock rule of a root binds once the root is installed (Casemate registers roots at TTBR writes). */
static int emit_lock_rule(struct cm_conv *x, unsigned cpu, uint64_t root_pa, struct cm_root *r)
{
	if (!r->installed || !r->has_lock || (r->ruled && r->ruled_lock == r->lock))
		return 0;
	struct pt_event ev = arch(PT_EV_LOCK_RULE, cpu);
	ev.op = PT_LOCK_OTHER;
	ev.pa = root_pa;
	ev.va = r->lock;
	r->ruled = true;
	r->ruled_lock = r->lock;
	return put(x, &ev);
}

static int emit_sysreg(struct cm_conv *x, const struct cm_ev *e, unsigned cpu)
{
	const char *reg = e->word[F_A];
	bool s1 = !strcasecmp(reg, "ttbr0_el2");
	uint64_t baddr;
	uint16_t id;

	if (!s1 && strcasecmp(reg, "vttbr_el2"))
		return 0;	/* no ptfuzz state: the record comment says it */
	if (decode_ttbr(x, e, &baddr, &id))
		return -1;
	struct pt_event ev = arch(s1 ? PT_EV_TTBR1 : PT_EV_TTBR0, cpu);
	ev.pa = baddr;
	if (s1 && id && comment(x, "casemate: TTBR0_EL2.ASID %u dropped: ptfuzz's TTBR1 has no ASID", id))
		return -1;
	if (!s1) {
		ev.asid = id;
		x->vmid[cpu] = id;
	}
	x->cur[!s1][cpu] = baddr + 1;
	if (put(x, &ev))
		return -1;
	struct cm_root *r = root_of(x, baddr);
	uint64_t *owner = s1 ? NULL : map_put(&x->vmid_root, id);
	if (!r || (!s1 && !owner))
		return oom(x);
	r->installed = true;
	if (!s1) {
		r->vttbr = true;
		r->id = id;
		*owner = baddr + 1;
	}
	return emit_lock_rule(x, cpu, baddr, r);
}

static int emit_hint(struct cm_conv *x, const struct cm_ev *e, unsigned cpu)
{
	const char *k = e->word[F_A];
	uint64_t loc = e->num[F_B], val = e->num[F_C];

	if (!strcasecmp(k, "set_root_lock")) {
		struct cm_root *r = root_of(x, loc);
		if (!r)
			return oom(x);
		r->has_lock = true;
		r->lock = val;
		return emit_lock_rule(x, cpu, loc, r);
	}
	if (!strcasecmp(k, "set_pte_thread_owner"))
		return comment(x, "casemate: not mapped: ptfuzz has no per-entry thread ownership");
	if (!strcasecmp(k, "release_table")) {
		if (life_of(x, loc) < 0)
			return comment(x, "casemate: 0x%llx is not initialised memory: nothing to free",
				       (unsigned long long)loc);
		return emit_free_frame(x, cpu, loc & CM_PAGE_MASK);
	}
	assert(!strcasecmp(k, "set_owner_root"));	/* check_record() */
	return 0;	/* ownership follows the tree in ptfuzz; the record comment keeps it */
}

static int emit_record(struct cm_conv *x, const struct cm_ev *e)
{
	unsigned cpu = (unsigned)e->num[1];
	struct pt_event ev;

	switch (e->kind) {
	case CM_MEM_INIT:
		return emit_mem_init(x, e, cpu);
	case CM_MEM_FREE:
		return emit_mem_free(x, e, cpu);
	case CM_MEM_WRITE:
		return emit_store(x, cpu, e->num[F_B], e->num[F_C], false);
	case CM_MEM_SET:
		return emit_mem_set(x, e, cpu);
	case CM_MEM_READ:
		return 0;
	case CM_BARRIER:
		return emit_barrier(x, e, cpu);
	case CM_TLBI:
		return emit_tlbi(x, e, cpu);
	case CM_SYSREG:
		return emit_sysreg(x, e, cpu);
	case CM_HINT:
		return emit_hint(x, e, cpu);
	case CM_LOCK:
	case CM_UNLOCK:
		ev = arch(e->kind == CM_LOCK ? PT_EV_LOCK : PT_EV_UNLOCK, cpu);
		ev.op = PT_LOCK_OTHER;
		ev.pa = e->num[F_A];
		return put(x, &ev);
	}
	return 0;
}

static int run_pass(struct cm_conv *x, FILE *in, struct cm_rec *r)
{
	struct cm_in rd;
	struct cm_ev e;
	char verdict[sizeof(x->info.verdict)];
	int rc;

	if (fseek(in, 0, SEEK_SET))
		return pt_error_set(x->err, PT_ERR_IO, "%s: cannot read the log twice: %s", x->name,
				    strerror(errno));
	map_clear(&x->alive);
	x->next_inc = 0;
	in_start(&rd, in, x->name);
	while ((rc = read_record(&rd, r, verdict, sizeof(verdict), x->err)) > 0) {
		if (rc == 2) {
			if (!x->emitting && !x->info.verdict[0])
				memcpy(x->info.verdict, verdict, sizeof(verdict));
			if (x->emitting && comment(x, "casemate verdict: ! %s", verdict))
				return -1;
			continue;
		}
		if (resolve(x->name, r, &e, x->err))
			return -1;
		if (!x->emitting) {
			x->info.records++;
			if (e.num[1] >= PT_MAX_CPUS)
				return errat(x->err, x->name, e.line, e.col,
					     "expected a tid below %u (ptfuzz CPUs), got %llu", PT_MAX_CPUS,
					     (unsigned long long)e.num[1]);
			if (e.num[1] > x->max_tid)
				x->max_tid = (unsigned)e.num[1];
			if (pass1_record(x, &e))
				return -1;
		} else {
			if (comment_record(x, r) || emit_record(x, &e))
				return -1;
		}
	}
	return rc;
}

int pt_import_casemate_stream(FILE *in, const char *name, const struct pt_casemate_sink *sink,
			      struct pt_casemate_info *info, struct pt_error *err)
{
	struct cm_conv *x = calloc(1, sizeof(*x));
	struct cm_rec *r = malloc(sizeof(*r));
	struct pt_header h;
	int rc = -1;

	if (!x || !r) {
		pt_error_set(err, PT_ERR_IMPORT, "%s: out of memory", name);
		goto out;
	}
	x->name = name;
	x->sink = sink;
	x->err = err;
	if (run_pass(x, in, r) || settle_levels(x))
		goto out;

	pt_header_default(&h);
	h.cpus = x->max_tid + 1;
	snprintf(h.machine, sizeof(h.machine), "casemate log (Arm EL2: TTBR0_EL2 stage 1, VTTBR_EL2 stage 2)");
	snprintf(h.method, sizeof(h.method), "casemate");
	x->info.cpus = h.cpus;
	if (sink->header(sink->ctx, &h, err))
		goto out;

	x->emitting = true;
	rc = run_pass(x, in, r);
out:
	if (info && x)
		*info = x->info;
	if (x) {
		map_free(&x->alive);
		map_free(&x->edges);
		map_free(&x->roots);
		map_free(&x->vmid_root);
		free(x->inc);
		free(x->edge);
		free(x->root);
	}
	free(x);
	free(r);
	return rc;
}

int pt_import_casemate_mem(const void *buf, size_t size, const char *name,
			   const struct pt_casemate_sink *sink, struct pt_casemate_info *info,
			   struct pt_error *err)
{
	/* glibc (>= 2.22) accepts an empty buffer */
	FILE *f = fmemopen((void *)(size ? buf : ""), size, "r");
	int rc;

	if (!f)
		return pt_error_set(err, PT_ERR_IO, "%s: cannot read buffer: %s", name, strerror(errno));
	rc = pt_import_casemate_stream(f, name, sink, info, err);
	fclose(f);
	return rc;
}

/* ---- into a trace file ---- */

struct file_sink {
	const char *path;
	struct pt_writer *w;
};

static int file_header(void *ctx, const struct pt_header *h, struct pt_error *err)
{
	struct file_sink *fs = ctx;

	fs->w = pt_writer_open(fs->path, pt_encoding_for_path(fs->path), h, err);
	return fs->w ? 0 : -1;
}

static int file_event(void *ctx, const struct pt_event *ev, struct pt_error *err)
{
	struct file_sink *fs = ctx;

	return pt_writer_put(fs->w, ev, err);
}

int pt_import_casemate_info(const char *in_path, const char *out_path, struct pt_casemate_info *info,
			    struct pt_error *err)
{
	struct file_sink fs = { out_path, NULL };
	const struct pt_casemate_sink sink = { file_header, file_event, &fs };
	const char *name = in_path;
	FILE *in;
	int rc;

	if (!strcmp(in_path, "-")) {
		/* read twice: keep standard input in a temporary file */
		char buf[65536];
		size_t n;
		name = "<stdin>";
		in = tmpfile();
		if (!in)
			return pt_error_set(err, PT_ERR_IO, "%s: cannot create a temporary file: %s", name,
					    strerror(errno));
		while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0) {
			if (fwrite(buf, 1, n, in) != n) {
				fclose(in);
				return pt_error_set(err, PT_ERR_IO, "%s: cannot buffer the log: %s", name,
						    strerror(errno));
			}
		}
		if (ferror(stdin)) {
			fclose(in);
			return pt_error_set(err, PT_ERR_IO, "%s: read error: %s", name, strerror(errno));
		}
	} else {
		in = fopen(in_path, "rb");
		if (!in)
			return pt_error_set(err, PT_ERR_IO, "%s: cannot open: %s", in_path, strerror(errno));
	}
	rc = pt_import_casemate_stream(in, name, &sink, info, err);
	fclose(in);
	if (rc) {
		if (fs.w)
			pt_writer_abort(fs.w);
		return -1;
	}
	return pt_writer_close(fs.w, err);
}

int pt_import_casemate(const char *in_path, const char *out_path, struct pt_error *err)
{
	return pt_import_casemate_info(in_path, out_path, NULL, err);
}
