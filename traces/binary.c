/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * binary.c - the binary encoding (.ptt.zst): a zstd stream of
 * [varint length][protobuf message] records, one Header then Events
 * (traces/ptfuzz.proto is the contract).
 *
 * Reading streams through two fixed buffers - compressed input and a
 * window of decompressed records - and unpacks each message with
 * protobuf-c into a bump arena that is reset per record (or, for the
 * common small Event, with a hand decoder that protobuf-c checks in debug
 * and fuzzing builds), so memory does not depend on the length of the
 * trace and nothing is allocated per event.  A length is checked against
 * PT_MAX_MESSAGE before anything is read or allocated for it.
 *
 * Frames: the writer ends a zstd frame every BIN_FRAME bytes of records
 * (at a record boundary), each frame with its content checksum, so the file
 * is still one plain `zstd -d`-able stream.  The reader decodes a whole
 * frame into the window and hands out its records only once zstd has
 * verified it (complete, checksum matches): damage is reported at its frame
 * and nothing of a damaged or truncated frame reaches the caller, while the
 * records of the frames before it still do.  A frame too large for the
 * window (a single-frame trace written before frames were bounded, or
 * another writer's) is read as it is decoded, as before: damage in it shows
 * only at its end.
 *
 * Offsets in errors: "byte N (decompressed)" is the start of the record
 * in the decompressed stream (message-level errors); "byte N (compressed)"
 * is where in the file zstd stopped (frame-level errors), followed by the
 * offset of the frame it stopped in.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "ptfuzz.pb-c.h"
#include "trace_impl.h"

/* The wire values are the C values: EventKind = enum pt_kind, and each op
 * enum of the .proto = its C enum. */
#define SAME(proto, c) _Static_assert((int)(proto) == (int)(c), #proto " != " #c)
#define KIND(k) SAME(PTFUZZ__EVENT_KIND__EVENT_KIND_##k, PT_EV_##k)
KIND(NONE); KIND(PT_WRITE); KIND(PT_ZERO); KIND(DSB); KIND(DMB); KIND(ISB); KIND(TLBI);
KIND(TTBR0); KIND(TTBR1); KIND(ACCESS); KIND(PAGE_ALLOC); KIND(PAGE_FREE); KIND(LOCK);
KIND(UNLOCK); KIND(IRQ_ENTER); KIND(IRQ_EXIT); KIND(SWITCH); KIND(MIGRATE); KIND(BEGIN);
KIND(END); KIND(MM_EXIT); KIND(LOCK_RULE); KIND(COMMENT); KIND(VMAP_AREA); KIND(MMAP); KIND(MUNMAP);
KIND(MREMAP); KIND(MPROTECT); KIND(MADVISE); KIND(TOUCH); KIND(VMALLOC); KIND(VMAP);
KIND(VUNMAP); KIND(VFREE); KIND(PAGEOUT); KIND(MAP_MEM); KIND(THREAD); KIND(SCHED); KIND(IRQ);
KIND(HUGETLB);
SAME(PTFUZZ__BARRIER__BARRIER_ISHLD, PT_BAR_ISHLD);
SAME(PTFUZZ__TLBI__TLBI_RVAALE1, PT_TLBI_RVAALE1);
SAME(PTFUZZ__TLBI__TLBI_VAE1, PT_TLBI_VAE1);
SAME(PTFUZZ__FRAME_TYPE__FRAME_TABLE, PT_FRAME_TABLE);
SAME(PTFUZZ__LOCK_CLASS__LOCK_OTHER, PT_LOCK_OTHER);
SAME(PTFUZZ__OP_KIND__OP_HUGETLB, PT_OP_HUGETLB);
SAME(PTFUZZ__ADVICE__ADVICE_NOHUGEPAGE, PT_ADV_NOHUGEPAGE);
SAME(PTFUZZ__HUGETLB_OP__HUGETLB_ACCESS_FLAGS, PT_HUGE_ACCESS_FLAGS);
SAME(PTFUZZ__SCHED_ON__SCHED_ACCESS, PT_SCHED_ACCESS);
SAME(PTFUZZ__VMAP_AREA_EV__VMAP_AREA_PURGE, PT_VMAP_AREA_PURGE);
_Static_assert(PT_EV_KIND_COUNT == 57, "a new kind needs a new EventKind value in ptfuzz.proto");

/* Debug and fuzzing builds check the hand decoder against protobuf-c on every record. */
#if !defined(NDEBUG) && !defined(PT_BIN_CROSSCHECK)
#define PT_BIN_CROSSCHECK 1
#endif

/*
 * The Event's fields other than kind, cpu, op and text, each once:
 * X(name, PT_F_ field, .proto tag, struct pt_event type).  The C name is the
 * .proto name and the text key's field; a field of the .proto's uint64 takes
 * any value, the narrower ones have a range (pt_field_max()).  Every
 * conversion between Ptfuzz__Event and struct pt_event goes through this list.
 */
#define EVENT_FIELDS(X)				\
	X(va, PT_F_VA, 6, uint64_t)		\
	X(pa, PT_F_PA, 4, uint64_t)		\
	X(val, PT_F_VAL, 5, uint64_t)		\
	X(len, PT_F_LEN, 7, uint64_t)		\
	X(va2, PT_F_VA2, 17, uint64_t)		\
	X(len2, PT_F_LEN2, 18, uint64_t)	\
	X(asid, PT_F_ASID, 8, uint16_t)		\
	X(level, PT_F_LEVEL, 9, uint8_t)	\
	X(num, PT_F_NUM, 14, uint8_t)		\
	X(scale, PT_F_SCALE, 15, uint8_t)	\
	X(order, PT_F_ORDER, 11, uint8_t)	\
	X(node, PT_F_NODE, 16, uint8_t)		\
	X(tid, PT_F_TID, 13, uint32_t)		\
	X(prot, PT_F_PROT, 12, uint8_t)		\
	X(flags, PT_F_FLAGS, 10, uint32_t)
/* a .proto uint64: any value; else a range checked against b->max[] */
#define FIELD_WIDE(name) (sizeof(((const Ptfuzz__Event *)NULL)->name) == sizeof(uint64_t))

#define BIN_IN (32u * 1024)		/* compressed input buffer */
#define BIN_FRAME (64u * 1024)		/* records per zstd frame the writer makes, bytes at most */
#define BIN_WINDOW (256u * 1024)	/* decompressed: a frame, the record left from the one before,
					 * and room for other writers' larger frames */
#define BIN_WINDOW_LOG_MAX 24		/* zstd window: 16 MiB at most (zstd -19 uses 8) */

/*
 * The protobuf-c arena, allocated on first use.  protobuf_c_message_unpack()
 * allocates the message, strings and unknown fields and, past 16 fields,
 * slabs of scanned members (32 bytes per field, doubling).  A message of
 * PT_MAX_MESSAGE bytes has at most 2048 fields (2 bytes each at least):
 * slabs of 130 KiB, strings of 25 KiB at most, unless fields are unknown -
 * and a message with unknown fields is refused anyway (PT_ERR_PROTOBUF,
 * which is also what running out of arena gives).
 */
#define BIN_ARENA (256u * 1024)

struct arena {
	uint8_t *base;
	size_t cap, used;
};

static void *arena_alloc(void *data, size_t size)
{
	struct arena *a = data;

	if (!a->base) {
		a->base = malloc(BIN_ARENA);
		a->cap = a->base ? BIN_ARENA : 0;
	}
	if (size > a->cap - a->used)
		return NULL;
	size = (size + 15) & ~(size_t)15;
	if (size > a->cap - a->used)
		return NULL;
	void *p = a->base + a->used;
	a->used += size;
	return p;
}

static void arena_free(void *data, void *ptr)
{
	(void)data;
	(void)ptr;	/* the arena is reset per record */
}

/* ---- reader ---- */

struct pt_bin_rd {
	struct pt_src *src;
	const char *name;
	unsigned cpus;
	ZSTD_DStream *zd;
	uint8_t *in;		/* compressed input */
	size_t in_cap;
	ZSTD_inBuffer zin;
	uint64_t in_base;	/* file offset of in[0] */
	size_t zret;		/* last ZSTD_decompressStream(): 0 = frame complete */
	uint64_t frame_off;	/* file offset of the frame being decoded */
	bool streaming;		/* that frame outgrew the window: handed out unverified */
	uint8_t *win;		/* decompressed: win[pos..ok) verified and unread, [ok..len) the
				 * frame being decoded, not yet verified */
	size_t win_pos, win_ok, win_len;
	uint64_t win_base;	/* stream offset of win[0] */
	uint64_t rec_off;	/* stream offset of the record being decoded */
	size_t zerr;		/* a zstd error, reported once the data before it is used up */
	uint64_t zerr_off;
	struct arena arena;
	ProtobufCAllocator alloc;
	/* the schema, flattened for the per-event check: fields each kind uses,
	 * its op count, and the ranges of the fields narrower than the wire */
	uint32_t used[PT_EV_KIND_COUNT];
	uint8_t nops[PT_EV_KIND_COUNT];
	bool known[PT_EV_KIND_COUNT];
	uint64_t max[PT_F_COUNT];
};

#define BERR(code, ...) pt_err_at_byte(err, code, b->name, b->rec_off, false, __VA_ARGS__)
#define ZERR(code, off, ...) pt_err_at_byte(err, code, b->name, (off), true, __VA_ARGS__)

static const char *frame_fate(const struct pt_bin_rd *b)
{
	return b->streaming ? "" : "; none of its events were read";
}

static int truncated_frame(struct pt_bin_rd *b, struct pt_error *err)
{
	return ZERR(PT_ERR_TRUNCATED, b->in_base + b->zin.size,
		    "expected more zstd data: the input ends inside the zstd frame at byte %llu "
		    "(truncated file)%s", (unsigned long long)b->frame_off, frame_fate(b));
}

/*
 * Decompress until need verified bytes are unread in the window, or the
 * input ends.  A frame's bytes become readable (win_ok) when zstd reports
 * the frame complete, i.e. its checksum verified; a zstd error discards
 * what was decoded of the frame it is in.
 */
static int bin_fill(struct pt_bin_rd *b, size_t need, struct pt_error *err)
{
	while (b->win_ok - b->win_pos < need) {
		if (b->win_pos) {
			memmove(b->win, b->win + b->win_pos, b->win_len - b->win_pos);
			b->win_base += b->win_pos;
			b->win_ok -= b->win_pos;
			b->win_len -= b->win_pos;
			b->win_pos = 0;
		}
		if (b->zerr)
			return ZERR(PT_ERR_ZSTD, b->zerr_off,
				    "expected a valid zstd frame: %s (in the frame at byte %llu%s)",
				    ZSTD_getErrorName(b->zerr), (unsigned long long)b->frame_off, frame_fate(b));
		if (b->win_len == BIN_WINDOW) {
			/* the frame does not fit: hand it out as it comes (frames of older writers) */
			b->streaming = true;
			b->win_ok = b->win_len;
			continue;
		}
		if (b->zin.pos == b->zin.size && !pt_src_end(b->src)) {
			b->in_base += b->zin.size;
			b->zin.size = pt_src_read(b->src, b->in, b->in_cap);
			b->zin.pos = 0;
			if (b->src->err_no)
				return pt_error_set(err, PT_ERR_IO, "%s: read error: %s", b->name,
						    strerror(b->src->err_no));
			continue;
		}
		ZSTD_outBuffer zout = { b->win, BIN_WINDOW, b->win_len };
		size_t in_before = b->zin.pos;
		size_t ret = ZSTD_decompressStream(b->zd, &zout, &b->zin);
		bool progress = zout.pos != b->win_len || b->zin.pos != in_before;
		b->win_len = zout.pos;
		if (ZSTD_isError(ret)) {
			/* the frames before the bad one are still delivered, nothing of it */
			b->zerr = ret;
			b->zerr_off = b->in_base + b->zin.pos;
			if (!b->streaming)
				b->win_len = b->win_ok;
			continue;
		}
		if (b->streaming)
			b->win_ok = b->win_len;
		if (progress) {
			b->zret = ret;	/* an idle call after a frame reports the next frame's need */
			if (ret == 0) {	/* the frame is complete and its checksum matched */
				b->win_ok = b->win_len;
				b->streaming = false;
				b->frame_off = b->in_base + b->zin.pos;
			}
		} else {
			if (b->zin.pos == b->zin.size && pt_src_end(b->src))
				break;	/* everything is out */
			if (b->zin.pos != b->zin.size)	/* zstd promises progress; never spin */
				return ZERR(PT_ERR_ZSTD, b->in_base + b->zin.pos,
					    "expected a valid zstd frame: the decoder made no progress");
		}
	}
	return 0;
}

/*
 * The next record: 1 and *msg, *len; 0 at the clean end, -1 error.  A
 * record that is complete in the window is delivered even if decoding
 * further failed: the error comes with the record it spoils.
 */
static int bin_record(struct pt_bin_rd *b, const uint8_t **msg, size_t *len, struct pt_error *err)
{
	int failed = 0;

	if (b->win_ok - b->win_pos < 10)
		failed = bin_fill(b, 10, err);

	size_t avail = b->win_ok - b->win_pos;
	const uint8_t *p = b->win + b->win_pos;
	uint64_t v = 0;
	size_t k;

	b->rec_off = b->win_base + b->win_pos;
	if (!avail)
		return failed ? -1 : b->zret ? truncated_frame(b, err) : 0;
	for (k = 0; k < avail && k < 10; k++) {
		v |= (uint64_t)(p[k] & 0x7f) << (7 * k);
		if (!(p[k] & 0x80))
			break;
	}
	if (k == 10)
		return BERR(PT_ERR_VARINT, "expected a record length varint of at most 10 bytes");
	if (k == avail)
		return failed ? -1 : b->zret ? truncated_frame(b, err)
			: BERR(PT_ERR_TRUNCATED, "expected a record length varint; the stream ends "
			       "inside it after %zu bytes", avail);
	if (k == 9 && p[9] > 1)
		return BERR(PT_ERR_VARINT, "expected a record length varint below 2^64; it overflows");
	k++;
	if (v > PT_MAX_MESSAGE)
		return BERR(PT_ERR_LENGTH, "expected a record length of at most %u bytes, got %llu",
			    PT_MAX_MESSAGE, (unsigned long long)v);
	if (avail < k + v) {
		if (failed || bin_fill(b, k + v, err))
			return -1;
		avail = b->win_ok - b->win_pos;
		p = b->win + b->win_pos;
		if (avail < k + v)
			return b->zret ? truncated_frame(b, err)
				       : BERR(PT_ERR_TRUNCATED, "expected a message of %llu bytes; the "
					      "stream ends after %zu", (unsigned long long)v, avail - k);
	}
	*msg = p + k;
	*len = (size_t)v;
	b->win_pos += k + (size_t)v;
	return 1;
}

static int unknown_fields(struct pt_bin_rd *b, const ProtobufCMessage *m, const char *what,
			  struct pt_error *err)
{
	if (!m->n_unknown_fields)
		return 0;
	return BERR(PT_ERR_PROTOBUF, "expected only format-%u fields in the %s message, got field %u",
		    PT_FORMAT_VERSION, what, m->unknown_fields[0].tag);
}

static int read_header(struct pt_bin_rd *b, struct pt_header *h, struct pt_error *err)
{
	const uint8_t *p;
	size_t len;
	int rc = bin_record(b, &p, &len, err);

	if (rc < 0)
		return -1;
	if (rc == 0)
		return BERR(PT_ERR_HEADER, "expected a Header record; the stream is empty");
	b->arena.used = 0;
	Ptfuzz__Header *m = ptfuzz__header__unpack(&b->alloc, len, p);
	if (!m)
		return BERR(PT_ERR_PROTOBUF, "expected a Header message; this one (%zu bytes) does not unpack", len);

	memset(h, 0, sizeof(*h));
	h->version = m->version;
	if (h->version != PT_FORMAT_VERSION)
		return BERR(PT_ERR_VERSION, "expected format version %u, got %u", PT_FORMAT_VERSION,
			    h->version);
	if (unknown_fields(b, &m->base, "Header", err))
		return -1;
	h->granule = m->granule;
	h->va_bits = m->va_bits;
	h->lpa2 = m->lpa2;
	h->cpus = m->cpus;
	const struct { const char *name, *src; char *dst; size_t size; } strs[] = {
		{ "kernel", m->kernel, h->kernel, sizeof(h->kernel) },
		{ "machine", m->machine, h->machine, sizeof(h->machine) },
		{ "method", m->method, h->method, sizeof(h->method) },
	};
	for (size_t i = 0; i < 3; i++) {
		const char *s = strs[i].src ? strs[i].src : "";
		size_t n = strlen(s);
		if (n >= strs[i].size)
			return BERR(PT_ERR_HEADER, "expected a Header %s of at most %zu bytes, got %zu",
				    strs[i].name, strs[i].size - 1, n);
		memcpy(strs[i].dst, s, n + 1);
	}
	char why[160];
	enum pt_err code = pt_header_check(h, why, sizeof(why), NULL);
	if (code)
		return BERR(code, "Header: %s", why);
	return 0;
}

#define FIELD_NAME(name, id, tag, type) [id] = #name,
static const char *const field_names[PT_F_COUNT] = { EVENT_FIELDS(FIELD_NAME) };

/* Why m does not fit the schema: the precise message for event_from_msg(). */
static int event_diagnose(struct pt_bin_rd *b, const Ptfuzz__Event *m, struct pt_error *err)
{
#define FIELD_VALUE(name, id, tag, type) [id] = m->name,
	const uint64_t v[PT_F_COUNT] = { EVENT_FIELDS(FIELD_VALUE) };
	const struct pt_kind_schema *sc = pt_kind_schema((unsigned)m->kind);
	const char *text = m->text ? m->text : "";

	if (!sc)
		return BERR(PT_ERR_UNKNOWN_KIND, "expected an EventKind (1..%u or %u..%u), got %d",
			    PT_EV_VMAP_AREA, PT_EV_MMAP, PT_EV_KIND_COUNT - 1, (int)m->kind);
	if (sc->ops && m->op >= sc->nops)
		return BERR(PT_ERR_UNKNOWN_OP, "expected a %s op 0..%u, got %u", sc->name, sc->nops - 1,
			    m->op);
	if (!sc->ops && m->op)
		return BERR(PT_ERR_FIELD, "expected op 0: %s has no operation, got %u", sc->name, m->op);
	if (m->kind == PTFUZZ__EVENT_KIND__EVENT_KIND_COMMENT) {
		char why[160];
		if (m->cpu)
			return BERR(PT_ERR_FIELD, "expected cpu 0 in a comment event, got %u", m->cpu);
		if (pt_comment_check(text, why, sizeof(why)))
			return BERR(PT_ERR_FIELD, "%s", why);
	} else {
		char why[160];
		if (m->cpu >= b->cpus)
			return BERR(PT_ERR_CPU, "expected cpu 0..%u (the header has cpus=%u), got %u",
				    b->cpus - 1, b->cpus, m->cpu);
		if (pt_comment_check(text, why, sizeof(why)))	/* its end-of-line comment */
			return BERR(PT_ERR_FIELD, "%s", why);
	}

	const struct pt_key *by_field[PT_F_COUNT] = { NULL };
	for (const struct pt_key *k = sc->keys; k->name; k++)
		by_field[k->field] = k;
	for (unsigned f = 0; f < PT_F_COUNT; f++) {
		if (!v[f])
			continue;
		if (!by_field[f])
			return BERR(PT_ERR_FIELD, "expected no %s in event kind %s (not one of its fields), "
				    "got %llu", field_names[f], sc->name, (unsigned long long)v[f]);
		if (v[f] > pt_field_max(f))
			return BERR(PT_ERR_FIELD, "expected %s (%s=) of event kind %s at most %llu, got %llu",
				    field_names[f], by_field[f]->name, sc->name,
				    (unsigned long long)pt_field_max(f), (unsigned long long)v[f]);
	}
	/* the checks above are the schema's, as pt_event_valid() applies it */
	return BERR(PT_ERR_FIELD, "expected an event that fits the %s schema", sc->name);
}

/*
 * m into ev, if it is an event the schema allows (the same rules as
 * pt_event_valid(), flattened into masks so that the common case costs a
 * few instructions); else a precise error from event_diagnose().
 */
static int event_from_msg(struct pt_bin_rd *b, const Ptfuzz__Event *m, struct pt_event *ev,
			  struct pt_error *err)
{
	unsigned kind = (unsigned)m->kind;
	bool ok;

	if (unknown_fields(b, &m->base, "Event", err))
		return -1;
#define FIELD_NONZERO(name, id, tag, type) | (uint32_t)(m->name != 0) << id
#define FIELD_OVER(name, id, tag, type) | (!FIELD_WIDE(name) && m->name > b->max[id])
	uint32_t nz = 0 EVENT_FIELDS(FIELD_NONZERO);
	bool over = false EVENT_FIELDS(FIELD_OVER);
	if (kind == PT_EV_COMMENT)
		ok = !nz && !m->op && !m->cpu && !pt_comment_check(m->text ? m->text : "", NULL, 0);
	else
		ok = kind < PT_EV_KIND_COUNT && b->known[kind] && !(nz & ~b->used[kind]) && !over &&
		     m->op < b->nops[kind] && m->cpu < b->cpus &&
		     (!m->text || !*m->text || !pt_comment_check(m->text, NULL, 0));
	if (!ok)
		return event_diagnose(b, m, err);

	ev->kind = (uint8_t)kind;
	ev->op = (uint8_t)m->op;
	ev->cpu = (uint16_t)m->cpu;
#define FIELD_TO_EVENT(name, id, tag, type) ev->name = (type)m->name;
	EVENT_FIELDS(FIELD_TO_EVENT)
	/* a comment's text, or another event's end-of-line comment */
	ev->text = kind == PT_EV_COMMENT ? (m->text ? m->text : "") : m->text && *m->text ? m->text : NULL;
	assert(pt_event_valid(ev, b->cpus));
	return 1;
}

/* Flatten the schema for event_from_msg(). */
static void schema_init(struct pt_bin_rd *b)
{
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++) {
		const struct pt_kind_schema *sc = pt_kind_schema(k);
		if (!sc)
			continue;
		b->known[k] = true;
		b->nops[k] = (uint8_t)(sc->ops ? sc->nops : 1);	/* no ops: op must be 0 */
		for (const struct pt_key *key = sc->keys; key->name; key++)
			b->used[k] |= 1u << key->field;
	}
	for (unsigned f = 0; f < PT_F_COUNT; f++)
		b->max[f] = pt_field_max(f);
	/* EVENT_FIELDS has the .proto's field numbers (the hand decoder reads them) */
#define FIELD_TAG_OK(name, fid, tag, type) \
	assert(protobuf_c_message_descriptor_get_field_by_name(&ptfuzz__event__descriptor, #name)->id == tag);
	EVENT_FIELDS(FIELD_TAG_OK)
}

void pt_bin_close(struct pt_bin_rd *b)
{
	if (!b)
		return;
	ZSTD_freeDStream(b->zd);
	free(b->in);
	free(b->win);
	free(b->arena.base);
	free(b);
}

struct pt_bin_rd *pt_bin_open(struct pt_src *src, const char *name, struct pt_header *h,
			      struct pt_error *err)
{
	struct pt_bin_rd *b = calloc(1, sizeof(*b));

	if (!b)
		goto nomem;
	b->src = src;
	b->name = name;
	b->zret = 1;	/* no frame seen yet */
	b->in_cap = BIN_IN;
	b->in = malloc(b->in_cap);
	b->win = malloc(BIN_WINDOW);
	b->zd = ZSTD_createDStream();
	if (!b->in || !b->win || !b->zd)
		goto nomem;
	b->zin.src = b->in;
	b->alloc.alloc = arena_alloc;
	b->alloc.free = arena_free;
	b->alloc.allocator_data = &b->arena;
	schema_init(b);
	/* bound the window a frame may ask for before zstd allocates it */
	if (ZSTD_isError(ZSTD_DCtx_setParameter(b->zd, ZSTD_d_windowLogMax, BIN_WINDOW_LOG_MAX)))
		goto nomem;
	if (read_header(b, h, err)) {
		pt_bin_close(b);
		return NULL;
	}
	b->cpus = h->cpus;
	return b;
nomem:
	pt_bin_close(b);
	pt_error_set(err, PT_ERR_IO, "%s: out of memory", name);
	return NULL;
}

/*
 * The common Event - only fields 1..15, all varints, no text - decoded by
 * hand: protobuf_c_message_unpack() is general and costs several times the
 * rest of the reader together.  Anything else (a field >= 16, another wire
 * type, an unknown field, a varint protobuf-c would read differently)
 * returns false and goes to protobuf-c, which stays the reference: in
 * debug and fuzzing builds (PT_BIN_CROSSCHECK) every record is decoded
 * both ways and must agree.
 */
static bool event_unpack_fast(const uint8_t *p, size_t len, Ptfuzz__Event *m)
{
	const uint8_t *end = p + len;

	while (p < end) {
		unsigned tag = *p++;
		uint64_t v = 0;
		unsigned k;

		if (tag & 0x87)		/* a tag over one byte, or not a varint */
			return false;
		for (k = 0; k < 10 && p + k < end; k++) {
			v |= (uint64_t)(p[k] & 0x7f) << (7 * k);
			if (!(p[k] & 0x80))
				break;
		}
		if (k == 10 || p + k == end || (k == 9 && p[9] > 1))
			return false;	/* unterminated or overflowing: protobuf-c decides */
		p += k + 1;
		switch (tag >> 3) {
		case 1: m->kind = (Ptfuzz__EventKind)(int32_t)(uint32_t)v; break;
		case 2: m->cpu = (uint32_t)v; break;
		case 3: m->op = (uint32_t)v; break;
#define FIELD_UNPACK(name, id, tag, type) \
		case tag: m->name = FIELD_WIDE(name) ? v : (uint32_t)v; break;
		EVENT_FIELDS(FIELD_UNPACK)	/* the tags over 15 do not come here */
		default: return false;	/* field 0 */
		}
	}
	return true;
}

#ifdef PT_BIN_CROSSCHECK
static void crosscheck(struct pt_bin_rd *b, const uint8_t *p, size_t len, const Ptfuzz__Event *f)
{
	b->arena.used = 0;
	const Ptfuzz__Event *m = ptfuzz__event__unpack(&b->alloc, len, p);
#define FIELD_DIFFERS(name, id, tag, type) || m->name != f->name
	if (!m || m->base.n_unknown_fields || m->kind != f->kind || m->cpu != f->cpu || m->op != f->op
	    EVENT_FIELDS(FIELD_DIFFERS) || (m->text && *m->text)) {
		fprintf(stderr, "%s: byte %llu: the hand decoder and protobuf-c disagree\n", b->name,
			(unsigned long long)b->rec_off);
		abort();
	}
}
#endif

int pt_bin_next(struct pt_bin_rd *b, struct pt_event *ev, struct pt_error *err)
{
	const uint8_t *p;
	size_t len;
	int rc = bin_record(b, &p, &len, err);

	if (rc <= 0)
		return rc;
	Ptfuzz__Event fast = PTFUZZ__EVENT__INIT;
	if (event_unpack_fast(p, len, &fast)) {
#ifdef PT_BIN_CROSSCHECK
		crosscheck(b, p, len, &fast);
#endif
		return event_from_msg(b, &fast, ev, err);
	}
	b->arena.used = 0;
	Ptfuzz__Event *m = ptfuzz__event__unpack(&b->alloc, len, p);
	if (!m)
		return BERR(PT_ERR_PROTOBUF, "expected an Event message; this one (%zu bytes) does not unpack", len);
	return event_from_msg(b, m, ev, err);
}

uint64_t pt_bin_offset(const struct pt_bin_rd *b)
{
	return b->rec_off;
}

/* ---- writer ---- */

struct pt_bin_wr {
	FILE *f;
	ZSTD_CCtx *cc;
	uint8_t *in;		/* packed records of the frame being made */
	size_t in_len, in_cap;
	uint64_t frames;	/* frames ended */
	uint8_t *out;
	size_t out_cap;
};

#define BIN_LEVEL 3

static int wr_flush(struct pt_bin_wr *w, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer zi = { w->in, w->in_len, 0 };
	size_t ret;

	do {
		ZSTD_outBuffer zo = { w->out, w->out_cap, 0 };
		ret = ZSTD_compressStream2(w->cc, &zo, &zi, mode);
		if (ZSTD_isError(ret)) {
			errno = EIO;
			return -1;
		}
		if (zo.pos && fwrite(w->out, 1, zo.pos, w->f) != zo.pos)
			return -1;
	} while (mode == ZSTD_e_end ? ret != 0 : zi.pos < zi.size);
	w->in_len = 0;
	if (mode == ZSTD_e_end)
		w->frames++;
	return 0;
}

static int wr_record(struct pt_bin_wr *w, const ProtobufCMessage *m)
{
	size_t size = protobuf_c_message_get_packed_size(m);

	if (size > PT_MAX_MESSAGE) {	/* the caller validated; never reached */
		errno = EMSGSIZE;
		return -1;
	}
	/* a frame ends before the record that would overflow it: readers verify a frame before
	 * they use it, so a frame is what damage can cost */
	if (w->in_cap - w->in_len < 10 + size && wr_flush(w, ZSTD_e_end))
		return -1;
	uint8_t *p = w->in + w->in_len;
	size_t v = size;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	p += protobuf_c_message_pack(m, p);
	w->in_len = (size_t)(p - w->in);
	return 0;
}

void pt_bin_wr_free(struct pt_bin_wr *w)
{
	if (!w)
		return;
	ZSTD_freeCCtx(w->cc);
	free(w->in);
	free(w->out);
	free(w);
}

struct pt_bin_wr *pt_bin_wr_open(FILE *f, const struct pt_header *h)
{
	struct pt_bin_wr *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->f = f;
	w->in_cap = BIN_FRAME;
	w->out_cap = ZSTD_CStreamOutSize();
	w->in = malloc(w->in_cap);
	w->out = malloc(w->out_cap);
	w->cc = ZSTD_createCCtx();
	if (!w->in || !w->out || !w->cc ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cc, ZSTD_c_compressionLevel, BIN_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cc, ZSTD_c_checksumFlag, 1)))
		goto fail;

	Ptfuzz__Header m = PTFUZZ__HEADER__INIT;
	m.version = h->version;
	m.granule = h->granule;
	m.va_bits = h->va_bits;
	m.lpa2 = h->lpa2;
	m.cpus = h->cpus;
	m.kernel = (char *)h->kernel;
	m.machine = (char *)h->machine;
	m.method = (char *)h->method;
	if (wr_record(w, &m.base))
		goto fail;
	return w;
fail:
	pt_bin_wr_free(w);
	return NULL;
}

int pt_bin_wr_put(struct pt_bin_wr *w, const struct pt_event *ev)
{
	Ptfuzz__Event m = PTFUZZ__EVENT__INIT;

	m.kind = (Ptfuzz__EventKind)ev->kind;
	m.cpu = ev->cpu;
	m.op = ev->op;
#define FIELD_FROM_EVENT(name, id, tag, type) m.name = ev->name;
	EVENT_FIELDS(FIELD_FROM_EVENT)
	if (ev->text && (ev->kind == PT_EV_COMMENT || *ev->text))
		m.text = (char *)ev->text;	/* a comment, or an event's end-of-line comment */
	return wr_record(w, &m.base);
}

int pt_bin_wr_finish(struct pt_bin_wr *w)
{
	if (!w->in_len && w->frames)
		return 0;	/* the last record ended a frame: no empty frame after it */
	return wr_flush(w, ZSTD_e_end);
}
