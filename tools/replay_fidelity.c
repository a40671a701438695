/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replay_fidelity.c - the model against a captured kernel's evidence.  An
 * ops-level trace imported from a real kernel (traces/import/ftrace.c) follows each op
 * with `kernel` events: its result (`kernel result ret=`) and what kprobes saw
 * inside it.  Replay records, per op, what the model did (mm_op_result) and
 * the evidence after it, and at the end of the trace reports each disagreement
 * as a divergence, a channel of its own beside the violations:
 *
 *   result       the kernel completed the op and the model failed it, or the
 *                other way round
 *   errno        both failed, with different errors
 *   address      mmap / mremap returned another address
 *   move_page_tables  its first call's arguments (those the capture recorded)
 *   moved        what that call returned (bytes moved)
 *   move_huge_pmd, __split_huge_pmd  how many times the op called it
 *
 * A kprobe kind is compared only when the trace holds at least one event of it
 * (its probe was on); an op without a `kernel result` is not compared on its
 * result.  Ops queued for a scheduled thread have no result at their event and
 * are not compared.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ftrace.h"
#include "mm.h"

static void *grow(void *v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return v;
	size_t nc = *cap ? 2 * *cap : 64;
	void *p = realloc(v, nc * size);
	if (!p) {
		perror("ptfuzz");
		exit(EXIT_BAD);
	}
	*cap = nc;
	return p;
}

void fid_op_done(struct fidelity *f, const struct pt_session *s, const struct pt_event *ev, uint64_t index,
		 uint64_t pt_writes)
{
	const struct mm_op_result *r = pt_session_op_result(s);
	f->ops = grow(f->ops, &f->capops, f->nops, sizeof(*f->ops));
	struct fid_op *o = &f->ops[f->nops++];
	memset(o, 0, sizeof(*o));
	o->ev = *ev;
	o->ev.text = NULL;
	o->index = index;
	o->ran = r->ran;
	o->rc = r->rc;
	o->addr = r->addr;
	o->pt_writes = pt_writes;
	memcpy(o->mcalls, r->calls, sizeof(o->mcalls));
	o->mpt_old = r->mpt_old;
	o->mpt_new = r->mpt_new;
	o->mpt_len = r->mpt_len;
	o->mpt_ret = r->mpt_ret;
	f->ops_pt_writes += pt_writes;
}

/* The op of ev's address space the evidence is about: the last one before it (event.h). */
static struct fid_op *op_of(struct fidelity *f, const struct pt_event *ev)
{
	for (size_t i = f->nops; i-- > 0;) {
		const struct pt_event *o = &f->ops[i].ev;
		bool kernel_op = o->kind == PT_EV_VMALLOC || o->kind == PT_EV_VMAP || o->kind == PT_EV_VUNMAP ||
				 o->kind == PT_EV_VFREE || o->kind == PT_EV_MAP_MEM;
		uint16_t asid = kernel_op ? 0 : o->asid ? o->asid : 1;
		if (asid == (ev->asid ? ev->asid : (kernel_op ? 0 : 1)))
			return &f->ops[i];
	}
	return NULL;
}

void fid_evidence(struct fidelity *f, const struct pt_event *ev)
{
	f->evidence++;
	if (ev->op < PT_KEV_COUNT)
		f->kind_seen[ev->op] = true;
	struct fid_op *o = op_of(f, ev);
	if (!o || ev->op >= PT_KEV_COUNT) {
		f->unattached++;
		return;
	}
	if (ev->op == PT_KEV_RESULT) {
		o->has_result = true;
		o->kret = ev->pa;
		return;
	}
	if (ev->op == PT_KEV_MOVE_PAGE_TABLES && !o->kcalls[ev->op]) {
		o->kmpt_old = ev->va;
		o->kmpt_new = ev->va2;
		o->kmpt_len = ev->len;
	}
	if (ev->op == PT_KEV_MOVE_PAGE_TABLES_RET && !o->kmpt_ret_seen) {
		o->kmpt_ret_seen = true;
		o->kmpt_ret = ev->pa;
	}
	o->kcalls[ev->op]++;
}

const char *fid_what_name(enum fid_what w)
{
	static const char *const names[FID_WHAT_COUNT] = {
		[FID_RESULT] = "result", [FID_ERRNO] = "errno", [FID_ADDRESS] = "address",
		[FID_MOVE_PAGE_TABLES] = "move_page_tables", [FID_MOVED] = "moved",
		[FID_MOVE_HUGE_PMD] = "move_huge_pmd", [FID_SPLIT_HUGE_PMD] = "__split_huge_pmd",
	};
	return w < FID_WHAT_COUNT ? names[w] : "?";
}

static bool returns_addr(const struct fid_op *o)
{
	return o->ev.kind == PT_EV_MMAP || o->ev.kind == PT_EV_MREMAP;
}

/* the kernel's ret= as an errno (0: it did not fail) */
static int kernel_errno(const struct fid_op *o)
{
	int64_t r = (int64_t)o->kret;
	if (returns_addr(o))
		return r < 0 && r >= -4095 ? (int)-r : 0;
	return r < 0 && r >= -4095 ? (int)-r : r ? 22 : 0;	/* a non-zero non-errno: not a success */
}

static void diverge(struct fidelity *f, size_t op, enum fid_what what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void diverge(struct fidelity *f, size_t op, enum fid_what what, const char *fmt, ...)
{
	va_list ap;
	f->div = grow(f->div, &f->capdiv, f->ndiv, sizeof(*f->div));
	struct fid_div *d = &f->div[f->ndiv++];
	d->op = op;
	d->what = what;
	va_start(ap, fmt);
	vsnprintf(d->text, sizeof(d->text), fmt, ap);
	va_end(ap);
	f->count[what]++;
}

static void judge_result(struct fidelity *f, size_t i)
{
	const struct fid_op *o = &f->ops[i];
	int ke = kernel_errno(o);
	if (!ke && o->rc) {
		if (returns_addr(o))
			diverge(f, i, FID_RESULT, "the kernel completed it (returned 0x%" PRIx64 "), the model failed it (%s)",
				o->kret, pt_errno_name(o->rc));
		else
			diverge(f, i, FID_RESULT, "the kernel completed it, the model failed it (%s)",
				pt_errno_name(o->rc));
	} else if (ke && !o->rc) {
		diverge(f, i, FID_RESULT, "the kernel failed it (%s), the model completed it", pt_errno_name(ke));
	} else if (ke && o->rc && ke != o->rc) {
		diverge(f, i, FID_ERRNO, "the kernel failed it with %s, the model with %s", pt_errno_name(ke),
			pt_errno_name(o->rc));
	} else if (!ke && returns_addr(o) && o->kret != o->addr) {
		diverge(f, i, FID_ADDRESS, "the kernel returned 0x%" PRIx64 ", the model 0x%" PRIx64, o->kret, o->addr);
	}
}

static void judge_calls(struct fidelity *f, size_t i)
{
	static const struct {
		unsigned kev;
		enum fid_what what;
	} counted[] = {
		{ PT_KEV_MOVE_PAGE_TABLES, FID_MOVE_PAGE_TABLES },
		{ PT_KEV_MOVE_HUGE_PMD, FID_MOVE_HUGE_PMD },
		{ PT_KEV_SPLIT_HUGE_PMD, FID_SPLIT_HUGE_PMD },
	};
	const struct fid_op *o = &f->ops[i];
	for (size_t k = 0; k < sizeof(counted) / sizeof(counted[0]); k++) {
		unsigned kev = counted[k].kev;
		if (!f->kind_seen[kev] || o->kcalls[kev] == o->mcalls[kev])
			continue;
		diverge(f, i, counted[k].what, "the kernel called %s %" PRIu32 " time%s, the model %" PRIu32,
			pt_op_name(PT_EV_KERNEL, kev), o->kcalls[kev], o->kcalls[kev] == 1 ? "" : "s", o->mcalls[kev]);
	}
	if (o->kcalls[PT_KEV_MOVE_PAGE_TABLES] && o->mcalls[PT_KEV_MOVE_PAGE_TABLES]) {
		/* the arguments the capture recorded (0: not recorded) */
		if ((o->kmpt_old && o->kmpt_old != o->mpt_old) || (o->kmpt_new && o->kmpt_new != o->mpt_new) ||
		    (o->kmpt_len && o->kmpt_len != o->mpt_len))
			diverge(f, i, FID_MOVE_PAGE_TABLES,
				"the kernel's first move_page_tables(old_addr=0x%" PRIx64 ", new_addr=0x%" PRIx64
				", len=0x%" PRIx64 "), the model's (0x%" PRIx64 ", 0x%" PRIx64 ", 0x%" PRIx64 ")",
				o->kmpt_old, o->kmpt_new, o->kmpt_len, o->mpt_old, o->mpt_new, o->mpt_len);
		if (o->kmpt_ret_seen && o->kmpt_ret != o->mpt_ret)
			diverge(f, i, FID_MOVED, "the kernel's first move_page_tables() moved 0x%" PRIx64
				" bytes, the model's 0x%" PRIx64, o->kmpt_ret, o->mpt_ret);
	}
}

void fid_judge(struct fidelity *f, uint64_t total_pt_writes)
{
	if (f->judged)
		return;
	f->judged = true;
	f->trace_pt_writes = total_pt_writes;
	for (size_t i = 0; i < f->nops; i++) {
		const struct fid_op *o = &f->ops[i];
		bool any = o->has_result;
		for (unsigned k = 0; k < PT_KEV_COUNT && !any; k++)
			any = o->kcalls[k] != 0;
		if (any)
			f->with_evidence++;
		if (!o->ran)
			continue;
		if (o->has_result)
			judge_result(f, i);
		else if (o->ev.kind == PT_EV_TOUCH && o->rc && f->evidence)
			/* a capture's touch marker: the workload went on to touch the range, so the
			 * kernel faulted it in */
			diverge(f, i, FID_RESULT, "the workload touched it (the kernel faulted it in), the model failed "
				"it (%s)", pt_errno_name(o->rc));
		if (f->evidence)
			judge_calls(f, i);
	}
}

bool fid_populated_nothing(const struct fidelity *f)
{
	return f->nops && !f->trace_pt_writes;
}

void fid_free(struct fidelity *f)
{
	free(f->ops);
	free(f->div);
	memset(f, 0, sizeof(*f));
}

static void op_text(const struct fid_op *o, char *buf, size_t size)
{
	pt_event_format_text(&o->ev, buf, size);
	size_t n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
}

void fid_text(FILE *out, const char *name, const struct fidelity *f, bool list)
{
	if (fid_populated_nothing(f))
		fprintf(out, "%s: warning: its %zu ops wrote no page-table entry: nothing was mapped, so "
			"0 violations proves nothing (an ops-level capture without touches?)\n", name, f->nops);
	if (!f->evidence)
		return;
	fprintf(out, "%s: kernel evidence: %" PRIu64 " events for %" PRIu64 " of %zu ops", name, f->evidence,
		f->with_evidence, f->nops);
	if (f->unattached)
		fprintf(out, " (%" PRIu64 " after no op)", f->unattached);
	fprintf(out, ", %zu divergence%s", f->ndiv, f->ndiv == 1 ? "" : "s");
	if (f->ndiv) {
		const char *sep = " (";
		for (unsigned w = 0; w < FID_WHAT_COUNT; w++) {
			if (!f->count[w])
				continue;
			fprintf(out, "%s%s x%" PRIu64, sep, fid_what_name(w), f->count[w]);
			sep = ", ";
		}
		fputc(')', out);
	}
	fputc('\n', out);
	if (!list)
		return;
	for (size_t i = 0; i < f->ndiv; i++) {
		char op[PT_MAX_LINE + 256];
		const struct fid_div *d = &f->div[i];
		op_text(&f->ops[d->op], op, sizeof(op));
		fprintf(out, "  divergence %zu (%s) at event %" PRIu64 ": %s\n      %s\n", i + 1, fid_what_name(d->what),
			f->ops[d->op].index, op, d->text);
	}
}

void fid_json(struct json *j, const struct fidelity *f)
{
	json_key(j, "populated");
	json_bool(j, !fid_populated_nothing(f));
	json_key(j, "warnings");
	json_array_begin(j);
	if (fid_populated_nothing(f))
		json_string(j, "the ops wrote no page-table entry: 0 violations proves nothing");
	json_array_end(j);
	json_key(j, "evidence");
	json_u64(j, f->evidence);
	json_key(j, "divergences");
	json_array_begin(j);
	for (size_t i = 0; i < f->ndiv; i++) {
		const struct fid_div *d = &f->div[i];
		const struct fid_op *o = &f->ops[d->op];
		json_object_begin(j);
		json_key(j, "what");
		json_string(j, fid_what_name(d->what));
		json_key(j, "event");
		json_u64(j, o->index);
		json_key(j, "op");
		json_string(j, pt_kind_name(o->ev.kind));
		json_key(j, "text");
		json_string(j, d->text);
		json_object_end(j);
	}
	json_array_end(j);
}

void fid_ops_json(struct json *j, const struct fidelity *f)
{
	json_array_begin(j);
	for (size_t i = 0; i < f->nops; i++) {
		const struct fid_op *o = &f->ops[i];
		json_object_begin(j);
		json_key(j, "event");
		json_u64(j, o->index);
		json_key(j, "op");
		json_string(j, pt_kind_name(o->ev.kind));
		json_key(j, "cpu");
		json_u64(j, o->ev.cpu);
		json_key(j, "asid");
		json_u64(j, o->ev.asid);
		json_key(j, "va");
		json_hex(j, o->ev.va);
		json_key(j, "len");
		json_hex(j, o->ev.len);
		json_key(j, "ran");
		json_bool(j, o->ran);
		json_key(j, "error");
		json_string(j, o->ran && o->rc ? pt_errno_name(o->rc) : NULL);
		json_key(j, "addr");
		if (o->ran && !o->rc && returns_addr(o))
			json_hex(j, o->addr);
		else
			json_null(j);
		json_key(j, "pt_writes");
		json_u64(j, o->pt_writes);
		json_key(j, "kernel");
		bool any = o->has_result;
		for (unsigned k = 1; k < PT_KEV_COUNT && !any; k++)
			any = o->kcalls[k] != 0;
		if (any) {
			json_object_begin(j);
			json_key(j, "ret");
			if (!o->has_result)
				json_null(j);
			else if (kernel_errno(o) && (int64_t)o->kret < 0)
				json_string(j, pt_errno_name(kernel_errno(o)));
			else
				json_hex(j, o->kret);
			json_key(j, "calls");
			json_object_begin(j);
			for (unsigned k = 1; k < PT_KEV_COUNT; k++) {
				if (!o->kcalls[k])
					continue;
				json_key(j, pt_op_name(PT_EV_KERNEL, k));
				json_u64(j, o->kcalls[k]);
			}
			json_object_end(j);
			json_object_end(j);
		} else {
			json_null(j);
		}
		json_object_end(j);
	}
	json_array_end(j);
}

int cli_kernel_arg(const char *cmd, const char *name)
{
	char names[256] = "auto";
	size_t n = strlen(names);
	if (!strcmp(name, "auto") || mm_profile_lookup(name) >= 0)
		return 0;
	for (unsigned i = 0; i < mm_profile_count() && n < sizeof(names); i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, ", %s", mm_profile_info(i)->name);
	cli_usage_error(cmd, "unknown kernel profile '%s' (%s)", name, names);
	return EXIT_BAD;
}
