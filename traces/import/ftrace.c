/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace.c - ftrace text (tracefs `trace` or `trace-cmd report`) as an
 * ops-level ptfuzz trace (ftrace.h says what is read and how it maps).
 *
 * One pass over the input collects the events in memory (an ops-level
 * trace of a workload is small); the header needs the CPU count and the
 * provenance markers, which are only known at the end, and a summary
 * comment leads the output.
 */
#include "ftrace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define FT_LINE_MAX (64u * 1024)	/* longest input line accepted */
#define FT_PAGE 4096ull
#define FT_COMMENT_MAX 1000u

/* Linux uapi values (asm-generic/mman-common.h, mman.h; arm64 uses the generic ones) */
#define L_MAP_SHARED 0x01ull
#define L_MAP_FIXED 0x10ull
#define L_MAP_ANONYMOUS 0x20ull
#define L_MAP_POPULATE 0x8000ull
#define L_MAP_HUGETLB 0x40000ull
#define L_PROT_MASK 0x7ull
#define L_PROT_ARM64 0x30ull		/* PROT_BTI, PROT_MTE: no page-table shape of their own here */
#define L_MREMAP_FLAGS 0x7ull		/* MAYMOVE FIXED DONTUNMAP: the same bits as PT_MREMAP_* */

enum sc { SC_MMAP, SC_MREMAP, SC_MPROTECT, SC_MUNMAP, SC_MADVISE, SC_COUNT };

static const struct {
	const char *name;
	unsigned nargs;
} sc_tab[SC_COUNT] = {
	[SC_MMAP] = { "mmap", 6 },
	[SC_MREMAP] = { "mremap", 5 },
	[SC_MPROTECT] = { "mprotect", 3 },
	[SC_MUNMAP] = { "munmap", 2 },
	[SC_MADVISE] = { "madvise", 3 },
};

struct pending {
	uint32_t pid;		/* thread */
	uint32_t key;		/* process (tgid, or pid) */
	enum sc sc;
	unsigned cpu;
	unsigned line;
	uint64_t a[6];
	struct pt_event *kev;	/* kprobe evidence seen inside the call, written after its op */
	size_t nkev, capkev;
};

struct range {
	uint64_t s, e;
};

struct space {
	struct range *r;
	size_t n, cap;
};

struct asmap {
	uint32_t key;
	uint16_t asid;
};

/* a task created with CLONE_VM: it uses its creator's address space (key) */
struct alias {
	uint32_t pid, key;
};

struct ft {
	const char *name;
	struct pt_error *err;
	struct pt_ftrace_opts opts;
	struct pt_ftrace_info info;
	bool thp;			/* mmaps get order 9 */
	bool have_kernel, have_machine;
	char kernel[128], machine[128];
	unsigned hdr_cpus, max_cpu;
	bool any_cpu;
	bool emitted;			/* do_call() wrote an ops event for the call */
	unsigned line;			/* current line number */
	const char *s;			/* current line */

	struct pending *pend;
	size_t npend, cappend;
	struct asmap *as;
	size_t nas, capas;
	struct alias *al;
	size_t nal, capal;
	struct space *sp;		/* per ASID - 1 */
	size_t nsp;
	uint16_t next_asid;
	struct pt_event *ev;
	size_t nev, capev;
	/* which thread last ran ops on each CPU, and where each thread last ran */
	uint32_t cpu_pid[PT_MAX_CPUS];
	bool cpu_used[PT_MAX_CPUS];
	struct thr {
		uint32_t pid;
		unsigned cpu;
	} *thr;
	size_t nthr, capthr;
};

/* ------------------------------------------------------------------ */
/* errors                                                              */

static int errat(struct ft *x, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int errat(struct ft *x, const char *at, const char *fmt, ...)
{
	char why[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return pt_error_set(x->err, PT_ERR_IMPORT, "%s:%u:%u: %s", x->name, x->line,
			    (unsigned)(at - x->s) + 1, why);
}

/* "got ..." for the text at p: a short quoted excerpt */
static const char *got(const char *p, char buf[48])
{
	size_t n = 0;

	if (!*p)
		return "end of line";
	buf[n++] = '\'';
	while (*p && n < 40) {
		unsigned char c = (unsigned char)*p++;
		buf[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (*p) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n++] = '\'';
	buf[n] = '\0';
	return buf;
}

static int oom(struct ft *x)
{
	return pt_error_set(x->err, PT_ERR_IMPORT, "%s: out of memory", x->name);
}

static int grow(struct ft *x, void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 16;
	void *p = realloc(*v, nc * size);
	if (!p)
		return oom(x);
	*v = p;
	*cap = nc;
	return 0;
}

/* ------------------------------------------------------------------ */
/* output events                                                       */

static int put(struct ft *x, const struct pt_event *e)
{
	if (grow(x, (void **)&x->ev, &x->capev, x->nev, sizeof(*x->ev)))
		return -1;
	x->ev[x->nev++] = *e;
	return 0;
}

static int comment(struct ft *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int comment(struct ft *x, const char *fmt, ...)
{
	char buf[FT_COMMENT_MAX + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (char *p = buf; *p; p++)	/* printable ASCII only: comments must be clean UTF-8 */
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = *p == '\t' ? '\t' : '?';
	char *t = strdup(buf);
	if (!t)
		return oom(x);
	struct pt_event e = { .kind = PT_EV_COMMENT, .text = t };
	if (put(x, &e)) {
		free(t);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* address spaces and the ranges traced mmaps mapped                   */

static int asid_of(struct ft *x, uint32_t key, uint16_t *asid)
{
	for (size_t i = 0; i < x->nas; i++)
		if (x->as[i].key == key) {
			*asid = x->as[i].asid;
			return 0;
		}
	if (x->next_asid == UINT16_MAX)
		return errat(x, x->s, "expected at most %u processes", UINT16_MAX - 1);
	if (grow(x, (void **)&x->as, &x->capas, x->nas, sizeof(*x->as)))
		return -1;
	struct space *sp = realloc(x->sp, (x->nsp + 1) * sizeof(*sp));
	if (!sp)
		return oom(x);
	x->sp = sp;
	x->sp[x->nsp++] = (struct space){ NULL, 0, 0 };
	*asid = ++x->next_asid;
	x->as[x->nas++] = (struct asmap){ key, *asid };
	x->info.asids = x->next_asid;
	return 0;
}

/* the process's next operations use a new address space (exec) */
static void asid_forget(struct ft *x, uint32_t key)
{
	for (size_t i = 0; i < x->nas; i++)
		if (x->as[i].key == key) {
			x->as[i] = x->as[--x->nas];
			return;
		}
}

static struct space *space(struct ft *x, uint16_t asid)
{
	return &x->sp[asid - 1];
}

/* remove [a, b); the caller reserved room for one more range (rs_reserve) */
static void rs_del(struct space *s, uint64_t a, uint64_t b)
{
	for (size_t i = 0; i < s->n;) {
		struct range r = s->r[i];
		if (r.e <= a || r.s >= b) {
			i++;
		} else if (r.s < a && r.e > b) {	/* a hole in the middle: the only range touched */
			memmove(&s->r[i + 2], &s->r[i + 1], (s->n - i - 1) * sizeof(*s->r));
			s->r[i] = (struct range){ r.s, a };
			s->r[i + 1] = (struct range){ b, r.e };
			s->n++;
			return;
		} else if (r.s < a) {
			s->r[i++].e = a;
		} else if (r.e > b) {
			s->r[i++].s = b;
		} else {
			memmove(&s->r[i], &s->r[i + 1], (s->n - i - 1) * sizeof(*s->r));
			s->n--;
		}
	}
}

static int rs_reserve(struct ft *x, struct space *s)
{
	return grow(x, (void **)&s->r, &s->cap, s->n + 1, sizeof(*s->r));
}

static int rs_add(struct ft *x, struct space *s, uint64_t a, uint64_t b)
{
	if (rs_reserve(x, s))
		return -1;
	rs_del(s, a, b);
	if (rs_reserve(x, s))
		return -1;
	size_t i = 0;
	while (i < s->n && s->r[i].s < a)
		i++;
	memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(*s->r));
	s->r[i] = (struct range){ a, b };
	s->n++;
	/* merge neighbours */
	size_t o = 0;
	for (size_t j = 0; j < s->n; j++) {
		if (o && s->r[o - 1].e == s->r[j].s)
			s->r[o - 1].e = s->r[j].e;
		else
			s->r[o++] = s->r[j];
	}
	s->n = o;
	return 0;
}

static bool rs_covers(const struct space *s, uint64_t a, uint64_t b)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].s <= a && a < s->r[i].e)
			return b <= s->r[i].e;
	return false;
}

static bool rs_overlaps(const struct space *s, uint64_t a, uint64_t b)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].s < b && a < s->r[i].e)
			return true;
	return false;
}

/* [a, a + len) rounded to pages, clamped to the user address space */
static void page_range(uint64_t a, uint64_t len, uint64_t *s, uint64_t *e)
{
	uint64_t end = a + len;
	if (end < a || end > PT_USER_VA_END)
		end = PT_USER_VA_END;
	*s = a & ~(FT_PAGE - 1);
	*e = end > PT_USER_VA_END - FT_PAGE ? PT_USER_VA_END : (end + FT_PAGE - 1) & ~(FT_PAGE - 1);
	if (*s > *e)
		*s = *e;
}

/* ------------------------------------------------------------------ */
/* threads on CPUs                                                     */

/*
 * Thread pid is about to run an operation on cpu.  A thread that ran on
 * another CPU before was switched out there (__switch_to(): dsb(ish) on that
 * CPU); a CPU that ran another thread's operations switched to this one.
 * Without these switches the model would see one thread's page-table stores
 * on one CPU still pending while the same thread, now elsewhere, frees what
 * they map.
 */
static int place(struct ft *x, uint32_t pid, unsigned cpu)
{
	struct thr *t = NULL;
	for (size_t i = 0; i < x->nthr; i++)
		if (x->thr[i].pid == pid)
			t = &x->thr[i];
	if (!t) {
		if (grow(x, (void **)&x->thr, &x->capthr, x->nthr, sizeof(*x->thr)))
			return -1;
		t = &x->thr[x->nthr++];
		*t = (struct thr){ pid, cpu };
	} else if (t->cpu != cpu && x->cpu_used[t->cpu] && x->cpu_pid[t->cpu] == pid) {
		struct pt_event e = { .kind = PT_EV_SWITCH, .cpu = (uint16_t)t->cpu, .tid = 0 };
		if (put(x, &e))
			return -1;
		x->cpu_used[t->cpu] = false;	/* idle */
	}
	if (x->cpu_used[cpu] && x->cpu_pid[cpu] != pid) {
		struct pt_event e = { .kind = PT_EV_SWITCH, .cpu = (uint16_t)cpu, .tid = pid };
		if (put(x, &e))
			return -1;
	}
	x->cpu_used[cpu] = true;
	x->cpu_pid[cpu] = pid;
	t->cpu = cpu;
	return 0;
}

/* ------------------------------------------------------------------ */
/* the operations                                                      */

const char *pt_errno_name(int64_t e)
{
	switch (e) {
	case 1: return "EPERM";
	case 9: return "EBADF";
	case 11: return "EAGAIN";
	case 12: return "ENOMEM";
	case 13: return "EACCES";
	case 14: return "EFAULT";
	case 16: return "EBUSY";
	case 17: return "EEXIST";
	case 19: return "ENODEV";
	case 22: return "EINVAL";
	case 38: return "ENOSYS";
	case 75: return "EOVERFLOW";
	default: return "E?";
	}
}

static int advice_of(uint64_t behavior)
{
	switch (behavior) {
	case 4: return PT_ADV_DONTNEED;
	case 8: return PT_ADV_FREE;
	case 14: return PT_ADV_HUGEPAGE;
	case 15: return PT_ADV_NOHUGEPAGE;
	case 20: return PT_ADV_COLD;
	case 21: return PT_ADV_PAGEOUT;
	default: return -1;
	}
}

/* the call as text, for comments */
static void describe(const struct pending *p, int64_t ret, char *buf, size_t size)
{
	const uint64_t *a = p->a;
	int n;

	switch (p->sc) {
	case SC_MMAP:
		n = snprintf(buf, size, "mmap(addr=0x%llx, len=0x%llx, prot=0x%llx, flags=0x%llx, fd=%lld, off=0x%llx)",
			     (unsigned long long)a[0], (unsigned long long)a[1], (unsigned long long)a[2],
			     (unsigned long long)a[3], (long long)(int32_t)a[4], (unsigned long long)a[5]);
		break;
	case SC_MREMAP:
		n = snprintf(buf, size, "mremap(addr=0x%llx, old_len=0x%llx, new_len=0x%llx, flags=0x%llx, new_addr=0x%llx)",
			     (unsigned long long)a[0], (unsigned long long)a[1], (unsigned long long)a[2],
			     (unsigned long long)a[3], (unsigned long long)a[4]);
		break;
	case SC_MPROTECT:
		n = snprintf(buf, size, "mprotect(start=0x%llx, len=0x%llx, prot=0x%llx)", (unsigned long long)a[0],
			     (unsigned long long)a[1], (unsigned long long)a[2]);
		break;
	case SC_MUNMAP:
		n = snprintf(buf, size, "munmap(addr=0x%llx, len=0x%llx)", (unsigned long long)a[0],
			     (unsigned long long)a[1]);
		break;
	case SC_MADVISE:
	default:
		n = snprintf(buf, size, "madvise(start=0x%llx, len=0x%llx, advice=%llu)", (unsigned long long)a[0],
			     (unsigned long long)a[1], (unsigned long long)a[2]);
		break;
	}
	if (n < 0 || (size_t)n >= size)
		return;
	if (ret < 0 && ret >= -4095)
		snprintf(buf + n, size - n, " = -%s", pt_errno_name(-ret));
	else
		snprintf(buf + n, size - n, " = 0x%llx", (unsigned long long)ret);
}

static int skip(struct ft *x, const struct pending *p, const char *call, const char *why)
{
	x->info.skipped++;
	return comment(x, "line %u: cpu%u pid %u: %s: skipped: %s", p->line, p->cpu, p->pid, call, why);
}

/* an operation leaves [a, b) in a state the model does not know: drop what it knew there */
static int forget_range(struct ft *x, const struct pending *p, uint16_t asid, uint64_t a, uint64_t b)
{
	struct space *s = space(x, asid);
	if (!rs_overlaps(s, a, b))
		return 0;
	struct pt_event e = { .kind = PT_EV_MUNMAP, .cpu = (uint16_t)p->cpu, .asid = asid, .va = a, .len = b - a };
	if (comment(x, "(the model drops [0x%llx, 0x%llx): it no longer holds what was mapped there)",
		    (unsigned long long)a, (unsigned long long)b) ||
	    put(x, &e) || rs_reserve(x, s))
		return -1;
	rs_del(s, a, b);
	return 0;
}

/*
 * The syscalls, one each: p's call (described in call) into ev (kind, fields) on the
 * ranges the traced mmaps made in sp.  @return : 1 an op emitted, 0 skipped (said in a
 * comment), -1 an error.
 */
static int do_mmap(struct ft *x, const struct pending *p, const char *call, struct space *sp,
		   struct pt_event *ev, int64_t ret)
{
	const uint64_t *a = p->a;
	uint64_t va = (uint64_t)ret, len = a[1], flags = a[3];
	uint64_t s, e;

	page_range(va, len, &s, &e);
	if (!(flags & L_MAP_ANONYMOUS) || (flags & L_MAP_HUGETLB) || (a[2] & ~(L_PROT_MASK | L_PROT_ARM64))) {
		const char *why = !(flags & L_MAP_ANONYMOUS) ? "a file mapping (the model maps anonymous memory)"
				  : (flags & L_MAP_HUGETLB) ? "MAP_HUGETLB (hugetlbfs is not imported)"
							    : "prot bits beyond PROT_READ|WRITE|EXEC";
		return skip(x, p, call, why) || forget_range(x, p, ev->asid, s, e) ? -1 : 0;
	}
	ev->kind = PT_EV_MMAP;
	ev->va = va;
	ev->len = len;
	ev->prot = (uint8_t)(a[2] & L_PROT_MASK);
	ev->flags = ((flags & L_MAP_FIXED) ? PT_MAP_FIXED : 0) | ((flags & L_MAP_POPULATE) ? PT_MAP_POPULATE : 0);
	ev->order = x->thp ? 9 : 0;
	if (flags & L_MAP_SHARED && comment(x, "line %u: MAP_SHARED: the model maps it private", p->line))
		return -1;
	if (put(x, ev) || rs_add(x, sp, s, e))
		return -1;
	return 1;
}

static int do_munmap(struct ft *x, const struct pending *p, const char *call, struct space *sp,
		     struct pt_event *ev)
{
	const uint64_t *a = p->a;
	uint64_t s, e;

	page_range(a[0], a[1], &s, &e);
	if (!rs_overlaps(sp, s, e))
		return skip(x, p, call, "no traced mmap mapped anything there");
	ev->kind = PT_EV_MUNMAP;
	ev->va = a[0];
	ev->len = a[1];
	if (put(x, ev) || rs_reserve(x, sp))
		return -1;
	rs_del(sp, s, e);
	return 1;
}

static int do_mprotect(struct ft *x, const struct pending *p, const char *call, struct space *sp,
		       struct pt_event *ev)
{
	const uint64_t *a = p->a;
	uint64_t s, e;

	page_range(a[0], a[1], &s, &e);
	if (a[2] & ~(L_PROT_MASK | L_PROT_ARM64))
		return skip(x, p, call, "prot bits beyond PROT_READ|WRITE|EXEC");
	if (!rs_covers(sp, s, e))
		return skip(x, p, call, "not all of the range was mapped by a traced mmap");
	ev->kind = PT_EV_MPROTECT;
	ev->va = a[0];
	ev->len = a[1];
	ev->prot = (uint8_t)(a[2] & L_PROT_MASK);
	return put(x, ev) ? -1 : 1;
}

static int do_madvise(struct ft *x, const struct pending *p, const char *call, struct space *sp,
		      struct pt_event *ev)
{
	const uint64_t *a = p->a;
	int adv = advice_of(a[2]);
	uint64_t s, e;

	page_range(a[0], a[1], &s, &e);
	if (adv < 0)
		return skip(x, p, call, "an advice the model does not take");
	if (!rs_covers(sp, s, e))
		return skip(x, p, call, "not all of the range was mapped by a traced mmap");
	ev->kind = PT_EV_MADVISE;
	ev->op = (uint8_t)adv;
	ev->va = a[0];
	ev->len = a[1];
	return put(x, ev) ? -1 : 1;
}

static int do_mremap(struct ft *x, const struct pending *p, const char *call, struct space *sp,
		     struct pt_event *ev, int64_t ret)
{
	const uint64_t *a = p->a;
	uint64_t old = a[0], old_len = a[1], new_len = a[2], flags = a[3], nva = (uint64_t)ret;
	uint64_t s, e, ns, ne;

	page_range(old, old_len, &s, &e);
	page_range(nva, new_len, &ns, &ne);
	if (!old_len || (flags & ~L_MREMAP_FLAGS) || !rs_covers(sp, s, e)) {
		/* what the kernel did, the model cannot: it loses the old range (unless the
		 * kernel left it mapped), and the new one is unknown */
		const char *why = !old_len ? "old_len 0 (a shared-mapping duplicate)"
				  : (flags & ~L_MREMAP_FLAGS) ? "unknown flags"
							      : "not all of the range was mapped by a traced mmap";
		if (skip(x, p, call, why))
			return -1;
		if (old_len && !(flags & 4) && forget_range(x, p, ev->asid, s, e))
			return -1;
		return forget_range(x, p, ev->asid, ns, ne) ? -1 : 0;
	}
	ev->kind = PT_EV_MREMAP;
	ev->va = old;
	ev->len = old_len;
	ev->va2 = nva;
	ev->len2 = new_len;
	ev->flags = (uint32_t)(flags & L_MREMAP_FLAGS);
	if (nva != old && !(flags & PT_MREMAP_FIXED) &&
	    comment(x, "line %u: the kernel moved it to 0x%llx (new_va=): kept as asked, without MREMAP_FIXED",
		    p->line, (unsigned long long)nva))
		return -1;
	if (put(x, ev) || rs_reserve(x, sp))
		return -1;
	if (nva == old && !(flags & 2)) {
		if (ne < e)
			rs_del(sp, ne, e);	/* shrunk in place */
		else if (rs_add(x, sp, s, ne))	/* grown in place */
			return -1;
	} else {
		if (!(flags & 4))	/* MREMAP_DONTUNMAP leaves the old range mapped (empty) */
			rs_del(sp, s, e);
		if (rs_add(x, sp, ns, ne))
			return -1;
	}
	return 1;
}

static int do_call(struct ft *x, const struct pending *p, int64_t ret)
{
	char call[256];
	uint16_t asid;
	struct pt_event ev = { .cpu = (uint16_t)p->cpu };
	bool addr_ret = p->sc == SC_MMAP || p->sc == SC_MREMAP;
	bool ok = addr_ret ? !(ret < 0 && ret >= -4095) : ret == 0;
	int rc;

	x->info.syscalls++;
	describe(p, ret, call, sizeof(call));
	if (!ok) {
		x->info.failed++;
		return comment(x, "line %u: cpu%u pid %u: %s: failed in the kernel", p->line, p->cpu, p->pid, call);
	}
	if (asid_of(x, p->key, &asid))
		return -1;
	struct space *sp = space(x, asid);
	ev.asid = asid;
	if (place(x, p->pid, p->cpu))
		return -1;

	switch (p->sc) {
	case SC_MMAP: rc = do_mmap(x, p, call, sp, &ev, ret); break;
	case SC_MUNMAP: rc = do_munmap(x, p, call, sp, &ev); break;
	case SC_MPROTECT: rc = do_mprotect(x, p, call, sp, &ev); break;
	case SC_MADVISE: rc = do_madvise(x, p, call, sp, &ev); break;
	case SC_MREMAP: rc = do_mremap(x, p, call, sp, &ev, ret); break;
	default: return 0;
	}
	if (rc <= 0)
		return rc;
	x->info.ops++;
	x->emitted = true;
	return 0;
}

/* an evidence event as text, for comments */
static void describe_kev(const struct pt_event *k, char *buf, size_t size)
{
	snprintf(buf, size, "kernel %s va=0x%llx new_va=0x%llx len=0x%llx ret=0x%llx", pt_op_name(PT_EV_KERNEL, k->op),
		 (unsigned long long)k->va, (unsigned long long)k->va2, (unsigned long long)k->len,
		 (unsigned long long)k->pa);
}

/*
 * The call as the kernel was asked (do_call()), then the kernel's evidence:
 * its result, and what kprobes saw inside it.  A call that is not replayed
 * (failed in the kernel, or skipped) keeps its evidence as comments.
 */
static int do_op(struct ft *x, const struct pending *p, int64_t ret)
{
	char buf[256];
	uint16_t asid;

	x->emitted = false;
	if (do_call(x, p, ret))
		return -1;
	if (!x->emitted || x->opts.no_evidence) {
		for (size_t i = 0; !x->opts.no_evidence && i < p->nkev; i++) {
			describe_kev(&p->kev[i], buf, sizeof(buf));
			if (comment(x, "line %u: evidence of the call above, not replayed: %s", p->line, buf))
				return -1;
		}
		return 0;
	}
	if (asid_of(x, p->key, &asid))
		return -1;
	struct pt_event r = { .kind = PT_EV_KERNEL, .op = PT_KEV_RESULT, .cpu = (uint16_t)p->cpu, .asid = asid,
			      .pa = (uint64_t)ret };
	if (put(x, &r))
		return -1;
	x->info.evidence++;
	for (size_t i = 0; i < p->nkev; i++) {
		struct pt_event k = p->kev[i];
		if (k.asid)
			k.asid = asid;
		if (put(x, &k))
			return -1;
		x->info.evidence++;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* lexing                                                              */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_ident(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static const char *skip_sp(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static bool starts(const char *p, const char *w)
{
	return !strncmp(p, w, strlen(w));
}

/* a decimal number; *end after it; false if none or overflow */
static bool dec(const char *p, uint64_t *v, const char **end)
{
	uint64_t x = 0;
	const char *q = p;
	while (is_digit(*q)) {
		unsigned d = (unsigned)(*q - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
		q++;
	}
	if (q == p)
		return false;
	*v = x;
	*end = q;
	return true;
}

/* hexadecimal, 0x optional (tracefs prints "%lx", trace-cmd "0x%lx") */
static bool hex(const char *p, uint64_t *v, const char **end)
{
	const char *q = p;
	uint64_t x = 0;
	unsigned n = 0;
	if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X') && is_hex(q[2]))
		q += 2;
	while (is_hex(*q)) {
		char c = *q++;
		unsigned d = is_digit(c) ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
		if (++n > 16 && x >> 60)
			return false;
		x = x << 4 | d;
	}
	if (!n)
		return false;
	*v = x;
	*end = q;
	return true;
}

static int sc_by_name(const char *p, size_t n)
{
	for (int i = 0; i < SC_COUNT; i++)
		if (strlen(sc_tab[i].name) == n && !memcmp(sc_tab[i].name, p, n))
			return i;
	return -1;
}

/* ------------------------------------------------------------------ */
/* syscall events                                                      */

/*
 * The arguments of an enter event, "name: value" separated by ", ", up to
 * `close` (')' for tracefs, '\0' for trace-cmd).  With options/verbose the
 * types come first ("unsigned long addr: 0"): only the word before ':' counts.
 */
static int parse_args(struct ft *x, const char *p, char close, enum sc sc, uint64_t *a)
{
	unsigned n = 0, want = sc_tab[sc].nargs;
	char b[48];

	p = skip_sp(p);
	while (*p && *p != close) {
		const char *colon = strchr(p, ':');
		if (!colon)
			return errat(x, p, "expected 'NAME: VALUE' in the arguments of %s, got %s", sc_tab[sc].name,
				     got(p, b));
		const char *v = skip_sp(colon + 1), *end;
		if (n == want)
			return errat(x, p, "expected %u arguments of %s, got more", want, sc_tab[sc].name);
		if (!hex(v, &a[n], &end))
			return errat(x, v, "expected a hexadecimal value, got %s", got(v, b));
		n++;
		p = skip_sp(end);
		if (*p == ',')
			p = skip_sp(p + 1);
		else if (*p != close)
			return errat(x, p, "expected ',' or %s after an argument, got %s",
				     close ? "')'" : "the end of the line", got(p, b));
	}
	if (*p != close)
		return errat(x, p, "expected ')' to close the arguments of %s, got end of line", sc_tab[sc].name);
	if (close && *skip_sp(p + 1))
		return errat(x, skip_sp(p + 1), "expected the end of the line after ')', got %s", got(skip_sp(p + 1), b));
	if (n != want)
		return errat(x, p, "expected %u arguments of %s, got %u", want, sc_tab[sc].name, n);
	return 0;
}

static struct pending *pending_of(struct ft *x, uint32_t pid)
{
	for (size_t i = 0; i < x->npend; i++)
		if (x->pend[i].pid == pid)
			return &x->pend[i];
	return NULL;
}

static void pending_free(struct pending *p)
{
	free(p->kev);
	p->kev = NULL;
	p->nkev = p->capkev = 0;
}

static void pending_drop(struct ft *x, struct pending *p)
{
	*p = x->pend[--x->npend];
}

static int on_sys_enter(struct ft *x, enum sc sc, const char *args, char close, uint32_t pid, uint32_t key, unsigned cpu)
{
	struct pending np = { .pid = pid, .key = key, .sc = sc, .cpu = cpu, .line = x->line };
	if (parse_args(x, args, close, sc, np.a))
		return -1;
	struct pending *p = pending_of(x, pid);
	if (p) {
		x->info.unpaired++;
		if (comment(x, "line %u: pid %u: %s entered without an exit (line %u): dropped", x->line, pid,
			    sc_tab[p->sc].name, p->line))
			return -1;
		pending_free(p);
		*p = np;
		return 0;
	}
	if (grow(x, (void **)&x->pend, &x->cappend, x->npend, sizeof(*x->pend)))
		return -1;
	x->pend[x->npend++] = np;
	return 0;
}

static int on_sys_exit(struct ft *x, enum sc sc, const char *r, uint32_t pid)
{
	char b[48];
	const char *end;
	uint64_t v;
	int64_t ret;

	r = skip_sp(r);
	if (r[0] == '-' && is_digit(r[1])) {
		if (!dec(r + 1, &v, &end) || v > (uint64_t)INT64_MAX)
			return errat(x, r, "expected a return value, got %s", got(r, b));
		ret = -(int64_t)v;
	} else if (r[0] == '0' && (r[1] == 'x' || r[1] == 'X')) {
		if (!hex(r, &v, &end))
			return errat(x, r, "expected a return value (0x...), got %s", got(r, b));
		ret = (int64_t)v;
	} else if (dec(r, &v, &end)) {
		ret = (int64_t)v;
	} else {
		return errat(x, r, "expected a return value (0x...), got %s", got(r, b));
	}
	if (*skip_sp(end))
		return errat(x, skip_sp(end), "expected the end of the line after the return value, got %s",
			     got(skip_sp(end), b));
	struct pending *p = pending_of(x, pid);
	if (!p || p->sc != sc) {
		x->info.unpaired++;
		return comment(x, "line %u: pid %u: exit of %s without its enter: dropped", x->line, pid,
			       sc_tab[sc].name);
	}
	struct pending done = *p;
	pending_drop(x, p);
	int rc = do_op(x, &done, ret);
	pending_free(&done);
	return rc;
}

/* ------------------------------------------------------------------ */
/* markers                                                             */

static void copy_trim(char *dst, size_t size, const char *src)
{
	src = skip_sp(src);
	size_t n = strlen(src);
	while (n && (src[n - 1] == ' ' || src[n - 1] == '\t'))
		n--;
	if (n >= size)
		n = size - 1;
	for (size_t i = 0; i < n; i++)
		dst[i] = (unsigned char)src[i] >= 0x20 && (unsigned char)src[i] < 0x7f ? src[i] : '?';
	dst[n] = '\0';
}

/* ------------------------------------------------------------------ */
/* kprobe evidence (traces/capture/capture.sh: events/ptfuzz/ptk_FUNC)  */

static const struct {
	const char *name;	/* FUNC, the kprobe event is ptk_FUNC */
	uint8_t op;		/* enum pt_kernel_ev */
	bool kernel;		/* a kernel-space function (vmalloc...): asid 0 */
} kp_tab[] = {
	{ "move_page_tables", PT_KEV_MOVE_PAGE_TABLES, false },
	{ "move_page_tables_ret", PT_KEV_MOVE_PAGE_TABLES_RET, false },
	{ "move_huge_pmd", PT_KEV_MOVE_HUGE_PMD, false },
	{ "move_huge_pud", PT_KEV_MOVE_HUGE_PUD, false },
	{ "__split_huge_pmd", PT_KEV_SPLIT_HUGE_PMD, false },
	{ "change_huge_pmd", PT_KEV_CHANGE_HUGE_PMD, false },
	{ "zap_huge_pmd", PT_KEV_ZAP_HUGE_PMD, false },
	{ "do_huge_pmd_anonymous_page", PT_KEV_HUGE_PMD_FAULT, false },
	{ "free_pgtables", PT_KEV_FREE_PGTABLES, false },
	{ "tlb_finish_mmu", PT_KEV_TLB_FINISH_MMU, false },
	{ "__pte_alloc", PT_KEV_PTE_ALLOC, false },
	{ "__pmd_alloc", PT_KEV_PMD_ALLOC, false },
	{ "__vmalloc_node_range", PT_KEV_VMALLOC, true },
	{ "__vmalloc_node_range_ret", PT_KEV_VMALLOC_RET, true },
	{ "__vmalloc_node_range_noprof", PT_KEV_VMALLOC, true },
	{ "__vmalloc_node_range_noprof_ret", PT_KEV_VMALLOC_RET, true },
	{ "vmap", PT_KEV_VMAP, true },
	{ "vmap_ret", PT_KEV_VMAP_RET, true },
	{ "vunmap", PT_KEV_VUNMAP, true },
	{ "vfree", PT_KEV_VFREE, true },
};

/* which field a kprobe argument of capture.sh's table fills (others are kept out) */
static enum pt_field kp_field(const char *n, size_t len)
{
	static const struct {
		const char *name;
		enum pt_field f;
	} m[] = {
		{ "old_addr", PT_F_VA }, { "address", PT_F_VA }, { "addr", PT_F_VA }, { "floor", PT_F_VA },
		{ "start", PT_F_VA }, { "new_addr", PT_F_VA2 }, { "ceiling", PT_F_VA2 }, { "end", PT_F_VA2 },
		{ "len", PT_F_LEN }, { "size", PT_F_LEN }, { "count", PT_F_LEN },
		{ "ret", PT_F_PA },
	};
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (strlen(m[i].name) == len && !memcmp(m[i].name, n, len))
			return m[i].f;
	return PT_F_COUNT;
}

/*
 * "ptk_FUNC: (SYM+OFF/SIZE) NAME=VALUE ..." (a return probe: "(CALLER <- FUNC)").
 * Inside a traced syscall of the same thread it is that call's evidence,
 * written after its op; outside one (a fault after a touch) it is written now.
 */
/* a probe argument's value: 0x-prefixed hex or decimal, up to end_at */
static bool kp_number(const char *v, const char *end_at, uint64_t *val)
{
	const char *end;
	bool ok = v[0] == '0' && (v[1] == 'x' || v[1] == 'X') ? hex(v, val, &end) : dec(v, val, &end);

	return ok && end == end_at;
}

/*
 * The arguments of ptk_FN, "(SYM+OFF/SIZE) NAME=VALUE ...", into ev (the fields
 * of enum pt_field; others dropped) and *pmdval (pmdval=, the PMD
 * __split_huge_pmd() was called on, as the probe read it).
 */
static int kp_args(struct ft *x, const char *fn, size_t fnl, const char *p, struct pt_event *ev, uint64_t *pmdval,
		   bool *have_pmdval)
{
	char b[48];

	p = skip_sp(p);
	if (*p == '(') {
		const char *c = strchr(p, ')');
		if (!c)
			return errat(x, p, "expected ')' after the probed address of ptk_%.*s, got end of line", (int)fnl,
				     fn);
		p = skip_sp(c + 1);
	}
	while (*p) {
		const char *n = p;
		while (is_ident(*p))
			p++;
		if (p == n || *p != '=')
			return errat(x, n, "expected NAME=VALUE in the arguments of ptk_%.*s, got %s", (int)fnl, fn,
				     got(n, b));
		enum pt_field f = kp_field(n, (size_t)(p - n));
		bool is_pmdval = p - n == 6 && !memcmp(n, "pmdval", 6);
		const char *v = ++p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (is_pmdval) {
			if (!kp_number(v, p, pmdval))
				return errat(x, v, "expected a number (0x...) for pmdval of ptk_%.*s, got %s", (int)fnl, fn,
					     got(v, b));
			*have_pmdval = true;
		} else if (f != PT_F_COUNT) {
			uint64_t val;
			if (!kp_number(v, p, &val))
				return errat(x, v, "expected a number (0x...) for %.*s of ptk_%.*s, got %s",
					     (int)(v - 1 - n), n, (int)fnl, fn, got(v, b));
			pt_event_set(ev, f, val);
		}
		p = skip_sp(p);
	}
	return 0;
}

/* evidence ev of thread pid: with its call when one is open, else after the op before it */
static int kp_put(struct ft *x, const struct pt_event *ev, uint32_t pid, uint32_t key)
{
	struct pending *pe = pending_of(x, pid);
	struct pt_event e = *ev;

	if (pe) {
		if (grow(x, (void **)&pe->kev, &pe->capkev, pe->nkev, sizeof(*pe->kev)))
			return -1;
		pe->kev[pe->nkev++] = e;
		return 0;
	}
	if (e.asid && asid_of(x, key, &e.asid))
		return -1;
	if (put(x, &e))
		return -1;
	x->info.evidence++;
	return 0;
}

static int on_kprobe(struct ft *x, const char *fn, size_t fnl, const char *p, uint32_t pid, uint32_t key,
		     unsigned cpu)
{
	size_t k = 0;

	while (k < sizeof(kp_tab) / sizeof(kp_tab[0]) &&
	       !(strlen(kp_tab[k].name) == fnl && !memcmp(kp_tab[k].name, fn, fnl)))
		k++;
	if (k == sizeof(kp_tab) / sizeof(kp_tab[0])) {
		x->info.ignored++;
		return 0;
	}
	struct pt_event ev = { .kind = PT_EV_KERNEL, .op = kp_tab[k].op, .cpu = (uint16_t)cpu,
			       .asid = kp_tab[k].kernel ? 0 : 1 };
	uint64_t pmdval = 0;
	bool have_pmdval = false;
	if (kp_args(x, fn, fnl, p, &ev, &pmdval, &have_pmdval))
		return -1;
	if (x->opts.no_evidence)
		return 0;
	/* __split_huge_pmd() on an empty PMD or a PTE table splits nothing (vma_adjust_trans_huge()
	 * calls it at every unaligned VMA boundary): not a split, kept as a comment */
	if (ev.op == PT_KEV_SPLIT_HUGE_PMD && have_pmdval && (!pmdval || (pmdval & 3) == 3)) {
		x->info.ignored++;
		return comment(x, "line %u: cpu%u pid %u: ptk___split_huge_pmd at 0x%llx on pmd 0x%llx (%s): nothing split",
			       x->line, cpu, pid, (unsigned long long)ev.va, (unsigned long long)pmdval,
			       pmdval ? "a PTE table" : "empty");
	}
	return kp_put(x, &ev, pid, key);
}

/* `ptfuzz mapped START END [NAME]` (m at "mapped"): a mapping that existed before the trace */
static int marker_mapped(struct ft *x, const char *m, uint32_t pid, uint32_t key, unsigned cpu)
{
	char b[48];
	uint64_t s, e;
	const char *p = skip_sp(m + 7), *end;

	if (!hex(p, &s, &end))
		return errat(x, p, "expected the start of `ptfuzz mapped START END [NAME]`, got %s", got(p, b));
	p = skip_sp(end);
	if (*p == '-')
		p = skip_sp(p + 1);	/* /proc/self/maps' START-END */
	if (!hex(p, &e, &end))
		return errat(x, p, "expected the end of `ptfuzz mapped START END [NAME]`, got %s", got(p, b));
	if (e <= s || (s | e) & (FT_PAGE - 1))
		return errat(x, p, "`ptfuzz mapped`: [0x%llx, 0x%llx) is not a page-aligned range",
			     (unsigned long long)s, (unsigned long long)e);
	const char *name = skip_sp(end);
	uint16_t asid;
	if (asid_of(x, key, &asid))
		return -1;
	if (e > PT_USER_VA_END) {
		x->info.skipped++;
		return comment(x, "line %u: mapped before the trace: %s 0x%llx-0x%llx: skipped: beyond the "
			       "user address space", x->line, *name ? name : "(anonymous)", (unsigned long long)s,
			       (unsigned long long)e);
	}
	if (rs_overlaps(space(x, asid), s, e)) {
		x->info.skipped++;
		return comment(x, "line %u: mapped before the trace: %s 0x%llx-0x%llx: skipped: a traced mmap "
			       "mapped part of it", x->line, *name ? name : "(anonymous)", (unsigned long long)s,
			       (unsigned long long)e);
	}
	if (place(x, pid, cpu) ||
	    comment(x, "line %u: mapped before the trace: %s 0x%llx-0x%llx (held by the model, never touched)",
		    x->line, *name ? name : "(anonymous)", (unsigned long long)s, (unsigned long long)e))
		return -1;
	struct pt_event ev = { .kind = PT_EV_MMAP, .cpu = (uint16_t)cpu, .asid = asid, .va = s, .len = e - s };
	if (put(x, &ev))
		return -1;
	x->info.ops++;
	return 0;
}

/* `ptfuzz touch VA LEN [w|r]` (m at "touch"): the workload is about to touch [VA, VA+LEN) */
static int marker_touch(struct ft *x, const char *m, uint32_t pid, uint32_t key, unsigned cpu)
{
	char b[48];
	uint64_t va, len, s, e;
	const char *p = skip_sp(m + 6), *end;

	if (!hex(p, &va, &end))
		return errat(x, p, "expected the address of `ptfuzz touch VA LEN [w|r]`, got %s", got(p, b));
	p = skip_sp(end);
	if (!hex(p, &len, &end))
		return errat(x, p, "expected the length of `ptfuzz touch VA LEN [w|r]`, got %s", got(p, b));
	p = skip_sp(end);
	uint32_t flags = PT_ACC_WRITE;
	if (*p == 'r' || *p == 'w') {
		flags = *p == 'w' ? PT_ACC_WRITE : 0;
		p = skip_sp(p + 1);
	}
	if (*p)
		return errat(x, p, "expected the end of `ptfuzz touch VA LEN [w|r]`, got %s", got(p, b));
	uint16_t asid;
	if (asid_of(x, key, &asid))
		return -1;
	page_range(va, len, &s, &e);
	if (!len || !rs_covers(space(x, asid), s, e)) {
		x->info.skipped++;
		return comment(x, "line %u: cpu%u pid %u: touch 0x%llx+0x%llx: skipped: not all of the range "
			       "was mapped by a traced mmap", x->line, cpu, pid, (unsigned long long)va,
			       (unsigned long long)len);
	}
	if (place(x, pid, cpu))
		return -1;
	struct pt_event ev = { .kind = PT_EV_TOUCH, .cpu = (uint16_t)cpu, .asid = asid, .va = va, .len = len,
			       .flags = flags };
	if (put(x, &ev))
		return -1;
	x->info.ops++;
	return 0;
}

static int on_marker(struct ft *x, const char *t, uint32_t pid, uint32_t key, unsigned cpu)
{
	t = skip_sp(t);
	if (!starts(t, "ptfuzz "))
		return comment(x, "line %u: cpu%u pid %u: marker: %s", x->line, cpu, pid, t);
	const char *m = skip_sp(t + 7);
	if (starts(m, "kernel:")) {
		if (!x->have_kernel)
			copy_trim(x->kernel, sizeof(x->kernel), m + 7);
		x->have_kernel = true;
		return 0;
	}
	if (starts(m, "machine:")) {
		if (!x->have_machine)
			copy_trim(x->machine, sizeof(x->machine), m + 8);
		x->have_machine = true;
		return 0;
	}
	if (starts(m, "thp:")) {
		const char *v = skip_sp(m + 4);
		/* the sysfs file's text, "always [madvise] never", or one word */
		const char *sel = strchr(v, '[');
		if (sel)
			v = sel + 1;
		if (x->opts.thp == PT_FTRACE_THP_TRACE)
			x->thp = starts(v, "always");
		return comment(x, "line %u: transparent hugepages: %s", x->line, skip_sp(m + 4));
	}
	if (starts(m, "mapped "))
		return marker_mapped(x, m, pid, key, cpu);
	if (starts(m, "touch "))
		return marker_touch(x, m, pid, key, cpu);
	return comment(x, "%s", m);
}

/* ------------------------------------------------------------------ */
/* lines                                                               */

/*
 * Find "TASK-PID [(TGID)] [CPU]": the first "[digits]" preceded by
 * "-digits" (and an optional parenthesised TGID).  Task names may
 * themselves contain '-', digits and blanks.
 */
static bool find_head(const char *s, uint32_t *pid, uint32_t *tgid, bool *has_tgid, unsigned *cpu, const char **after)
{
	for (const char *b = strchr(s, '['); b; b = strchr(b + 1, '[')) {
		const char *q = b + 1, *end;
		uint64_t c, v;
		if (!dec(q, &c, &end) || *end != ']' || c > 0xffff)
			continue;
		const char *rb = end;
		const char *k = b;
		while (k > s && (k[-1] == ' ' || k[-1] == '\t'))
			k--;
		bool ht = false;
		uint64_t tg = 0;
		if (k > s && k[-1] == ')') {
			const char *o = k - 1;
			while (o > s && *o != '(')
				o--;
			if (*o != '(')
				continue;
			const char *in = skip_sp(o + 1), *e2;
			if (dec(in, &tg, &e2) && skip_sp(e2) == k - 1)
				ht = tg <= UINT32_MAX;
			k = o;
			while (k > s && (k[-1] == ' ' || k[-1] == '\t'))
				k--;
		}
		const char *d = k;
		while (d > s && is_digit(d[-1]))
			d--;
		if (d == k || d == s || d[-1] != '-' || !dec(d, &v, &end) || v > UINT32_MAX)
			continue;
		*pid = (uint32_t)v;
		*tgid = (uint32_t)tg;
		*has_tgid = ht && tg;
		*cpu = (unsigned)c;
		*after = rb + 1;
		return true;
	}
	return false;
}

/* lines that are not events: headers of tracefs and trace-cmd, lost-event notes */
static int other_line(struct ft *x, const char *p)
{
	char b[48];
	const char *end;
	uint64_t v;

	if (*p == '#') {
		const char *c = strstr(p, "#P:");
		if (c && dec(c + 3, &v, &end) && v >= 1 && v <= PT_MAX_CPUS)
			x->hdr_cpus = (unsigned)v;
		return 0;
	}
	if (starts(p, "cpus=")) {
		if (!dec(p + 5, &v, &end) || v < 1 || v > PT_MAX_CPUS)
			return errat(x, p + 5, "expected a CPU count 1..%u, got %s", PT_MAX_CPUS, got(p + 5, b));
		x->hdr_cpus = (unsigned)v;
		return 0;
	}
	if (starts(p, "CPU:") || starts(p, "CPU ")) {
		const char *l = strstr(p, "[LOST ");
		if (l) {
			if (!dec(l + 6, &v, &end))
				v = 1;	/* "[LOST EVENTS]" of trace-cmd: the count is unknown */
			x->info.lost += v;
			return comment(x, "line %u: %s: the trace lost events here; what follows may not "
				       "replay as it ran", x->line, p);
		}
		if (strstr(p, "is empty"))
			return 0;
	}
	if (starts(p, "version =") || starts(p, "version=") || starts(p, "trace-cmd:"))
		return 0;
	return errat(x, p, "expected a trace line 'TASK-PID [CPU] TIMESTAMP: EVENT', got %s", got(p, b));
}

/* the address space a line's thread runs in: its TGID, else its PID or the creator it shares memory with */
static uint32_t line_key(const struct ft *x, uint32_t pid, uint32_t tgid, bool has_tgid)
{
	uint32_t key = has_tgid ? tgid : pid;

	for (size_t i = 0; !has_tgid && i < x->nal; i++)
		if (x->al[i].pid == pid)
			key = x->al[i].key;
	return key;
}

/* "[flags] SECONDS.FRACTION:" at p; *after is what follows the ':'; -1 with the error set */
static int parse_timestamp(struct ft *x, const char *p, const char **after)
{
	char b[48];
	const char *end;
	uint64_t v;

	if (!(dec(p, &v, &end) && (*end == ':' || *end == '.'))) {
		while (*p && *p != ' ' && *p != '\t')
			p++;
		p = skip_sp(p);
	}
	if (!dec(p, &v, &end))
		return errat(x, p, "expected a timestamp (SECONDS.FRACTION:), got %s", got(p, b));
	if (*end == '.' && !dec(end + 1, &v, &end))
		return errat(x, end + 1, "expected a timestamp (SECONDS.FRACTION:), got %s", got(end + 1, b));
	if (*end != ':')
		return errat(x, end, "expected ':' after the timestamp, got %s", got(end, b));
	*after = skip_sp(end + 1);
	return 0;
}

/* "task_newtask: pid=N comm=NAME clone_flags=HEX oom_score_adj=N", by the creator (address space key) */
static int on_newtask(struct ft *x, const char *p, uint32_t key)
{
	char b[48];
	const char *f = strstr(p, " pid="), *c = strstr(p, " clone_flags="), *end;
	uint64_t child, cf;

	if (!f || !dec(f + 5, &child, &end) || child > UINT32_MAX)
		return errat(x, f ? f + 5 : p, "expected pid=N in task_newtask, got %s", got(f ? f + 5 : p, b));
	if (!c || !hex(c + 13, &cf, &end))
		return errat(x, c ? c + 13 : p, "expected clone_flags=HEX in task_newtask, got %s",
			     got(c ? c + 13 : p, b));
	for (size_t i = 0; i < x->nal; i++)
		if (x->al[i].pid == (uint32_t)child)
			x->al[i] = x->al[--x->nal];	/* a reused PID */
	if (cf & 0x100) {	/* CLONE_VM */
		if (grow(x, (void **)&x->al, &x->capal, x->nal, sizeof(*x->al)))
			return -1;
		x->al[x->nal++] = (struct alias){ (uint32_t)child, key };
	}
	return 0;
}

/* "sched_process_exec: filename=... pid=N old_pid=M": the next operations get a new address space */
static int on_exec(struct ft *x, const char *p, uint32_t pid, uint32_t key)
{
	char b[48];
	const char *f = strstr(p, " pid="), *end;
	uint64_t v;

	if (!f || !dec(f + 5, &v, &end) || v > UINT32_MAX)
		return errat(x, f ? f + 5 : p, "expected pid=N in sched_process_exec, got %s", got(f ? f + 5 : p, b));
	for (size_t i = 0; i < x->nal; i++)
		if (x->al[i].pid == pid) {
			/* a CLONE_VM child (vfork) that execs gets its own address space;
			 * its creator keeps the one they shared */
			x->al[i] = x->al[--x->nal];
			key = pid;
			break;
		}
	asid_forget(x, key);
	if ((uint32_t)v != key)
		asid_forget(x, (uint32_t)v);
	return 0;
}

/* the syscall events, both forms: trace-cmd's sys_enter_NAME: / sys_exit_NAME:, tracefs' sys_NAME( / -> */
static int on_syscall_event(struct ft *x, const char *n, size_t nl, const char *p, uint32_t pid, uint32_t key,
			    unsigned cpu)
{
	char b[48];
	int sc;

	if (nl > 10 && starts(n, "sys_enter_") && *p == ':') {
		if ((sc = sc_by_name(n + 10, nl - 10)) < 0)
			goto ignored;
		return on_sys_enter(x, (enum sc)sc, p + 1, '\0', pid, key, cpu);
	}
	if (nl > 9 && starts(n, "sys_exit_") && *p == ':') {
		if ((sc = sc_by_name(n + 9, nl - 9)) < 0)
			goto ignored;
		return on_sys_exit(x, (enum sc)sc, p + 1, pid);
	}
	if ((sc = sc_by_name(n + 4, nl - 4)) < 0)
		goto ignored;
	if (*p == '(')
		return on_sys_enter(x, (enum sc)sc, p + 1, ')', pid, key, cpu);
	const char *r = skip_sp(p);
	if (!starts(r, "->"))
		return errat(x, r, "expected '(' or '->' after sys_%s, got %s", sc_tab[sc].name, got(r, b));
	return on_sys_exit(x, (enum sc)sc, r + 2, pid);
ignored:
	x->info.ignored++;
	return 0;
}

/* one event: n (nl bytes) its name, p what follows the name */
static int on_event(struct ft *x, const char *n, size_t nl, const char *p, uint32_t pid, uint32_t key, unsigned cpu)
{
	if ((nl > 10 && starts(n, "sys_enter_") && *p == ':') || (nl > 9 && starts(n, "sys_exit_") && *p == ':') ||
	    (nl > 4 && starts(n, "sys_") && (*p == '(' || *p == ' ')))
		return on_syscall_event(x, n, nl, p, pid, key, cpu);
	if (nl > 4 && starts(n, "ptk_") && *p == ':')
		return on_kprobe(x, n + 4, nl - 4, p + 1, pid, key, cpu);
	if (nl == 18 && starts(n, "tracing_mark_write") && *p == ':')
		return on_marker(x, p + 1, pid, key, cpu);
	if (nl == 5 && starts(n, "print") && *p == ':') {
		/* trace-cmd: "print: tracing_mark_write: TEXT" (the ip as a symbol or an address) */
		const char *q = skip_sp(p + 1), *c = q;
		while (*c && *c != ' ' && *c != ':')
			c++;
		if (*c == ':' && c > q)
			q = c + 1;
		return on_marker(x, q, pid, key, cpu);
	}
	if (nl == 12 && starts(n, "task_newtask") && *p == ':')
		return on_newtask(x, p, key);
	if (nl == 18 && starts(n, "sched_process_exec") && *p == ':')
		return on_exec(x, p, pid, key);
	x->info.ignored++;
	return 0;
}

static int parse_line(struct ft *x, const char *s)
{
	char b[48];
	uint32_t pid, tgid;
	bool has_tgid;
	unsigned cpu;
	const char *p = skip_sp(s);

	if (!*p)
		return 0;
	if (*p == '#' || !find_head(p, &pid, &tgid, &has_tgid, &cpu, &p))
		return other_line(x, p);
	x->info.events++;
	if (cpu >= PT_MAX_CPUS)
		return errat(x, s, "expected a CPU number below %u, got %u", PT_MAX_CPUS, cpu);
	if (!x->any_cpu || cpu > x->max_cpu)
		x->max_cpu = cpu;
	x->any_cpu = true;
	uint32_t key = line_key(x, pid, tgid, has_tgid);

	if (parse_timestamp(x, skip_sp(p), &p))
		return -1;
	const char *n = p;
	while (is_ident(*p))
		p++;
	if (p == n)
		return errat(x, n, "expected an event name, got %s", got(n, b));
	return on_event(x, n, (size_t)(p - n), p, pid, key, cpu);
}

/* ------------------------------------------------------------------ */
/* the whole input                                                     */

static void ft_free(struct ft *x)
{
	for (size_t i = 0; i < x->nev; i++)
		if (x->ev[i].kind == PT_EV_COMMENT)
			free((char *)x->ev[i].text);
	for (size_t i = 0; i < x->nsp; i++)
		free(x->sp[i].r);
	free(x->sp);
	free(x->ev);
	for (size_t i = 0; i < x->npend; i++)
		pending_free(&x->pend[i]);
	free(x->pend);
	free(x->as);
	free(x->al);
	free(x->thr);
}

static int ft_read(struct ft *x, FILE *in)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	errno = 0;
	while ((n = getline(&buf, &cap, in)) >= 0) {
		x->line++;
		x->info.lines++;
		x->s = buf;
		if ((size_t)n > FT_LINE_MAX) {
			rc = errat(x, buf, "expected a line of at most %u bytes", FT_LINE_MAX);
			break;
		}
		if (memchr(buf, '\0', (size_t)n)) {
			rc = errat(x, (const char *)memchr(buf, '\0', (size_t)n), "expected text, got a NUL byte");
			break;
		}
		while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			buf[--n] = '\0';
		if (parse_line(x, buf)) {
			rc = -1;
			break;
		}
	}
	if (!rc && ferror(in))
		rc = pt_error_set(x->err, PT_ERR_IO, "%s: read error: %s", x->name, strerror(errno));
	free(buf);
	if (rc)
		return -1;
	/* enters still open at the end: the trace stopped inside the call */
	for (size_t i = 0; i < x->npend; i++) {
		x->info.unpaired++;
		if (comment(x, "line %u: pid %u: %s without an exit before the end of the trace: dropped",
			    x->pend[i].line, x->pend[i].pid, sc_tab[x->pend[i].sc].name))
			return -1;
	}
	return 0;
}

static int ft_write(struct ft *x, struct pt_writer *w, const struct pt_header *h)
{
	char sum[512];
	struct pt_event c = { .kind = PT_EV_COMMENT, .text = sum };

	snprintf(sum, sizeof(sum),
		 "imported by ptfuzz import-ftrace from %s: %llu lines, %llu syscalls (%llu failed in the kernel), "
		 "%llu ops, %llu kernel evidence, %llu kept as comments, %llu unpaired, %llu other events, %llu lost; "
		 "%u address spaces",
		 x->name, (unsigned long long)x->info.lines, (unsigned long long)x->info.syscalls,
		 (unsigned long long)x->info.failed, (unsigned long long)x->info.ops,
		 (unsigned long long)x->info.evidence, (unsigned long long)x->info.skipped, (unsigned long long)x->info.unpaired,
		 (unsigned long long)x->info.ignored, (unsigned long long)x->info.lost, x->info.asids);
	for (char *q = sum; *q; q++)
		if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
			*q = '?';
	if (pt_writer_put(w, &c, x->err))
		return -1;
	for (size_t i = 0; i < x->nev; i++)
		if (pt_writer_put(w, &x->ev[i], x->err))
			return -1;
	(void)h;
	return 0;
}

static void ft_header(struct ft *x, struct pt_header *h)
{
	pt_header_default(h);
	unsigned cpus = x->any_cpu ? x->max_cpu + 1 : 1;
	if (x->hdr_cpus > cpus)
		cpus = x->hdr_cpus;
	h->cpus = cpus;
	x->info.cpus = cpus;
	snprintf(h->kernel, sizeof(h->kernel), "%s", x->kernel);
	snprintf(h->machine, sizeof(h->machine), "%s", x->machine);
	snprintf(h->method, sizeof(h->method), "ftrace");
}

static void ft_init(struct ft *x, const char *name, const struct pt_ftrace_opts *opts, struct pt_error *err)
{
	memset(x, 0, sizeof(*x));
	x->name = name;
	x->err = err;
	if (opts)
		x->opts = *opts;
	x->thp = x->opts.thp == PT_FTRACE_THP_ALWAYS;
	x->s = "";
}

int pt_import_ftrace_opts(const char *in_path, const char *out_path, const struct pt_ftrace_opts *opts,
			  struct pt_ftrace_info *info, struct pt_error *err)
{
	bool std = !strcmp(in_path, "-");
	const char *name = std ? "<stdin>" : in_path;
	struct ft x;
	struct pt_header h;
	FILE *in = std ? stdin : fopen(in_path, "rb");
	int rc = -1;

	if (!in)
		return pt_error_set(err, PT_ERR_IO, "%s: cannot open: %s", in_path, strerror(errno));
	ft_init(&x, name, opts, err);
	if (ft_read(&x, in))
		goto out;
	ft_header(&x, &h);
	struct pt_writer *w = pt_writer_open(out_path, pt_encoding_for_path(out_path), &h, err);
	if (!w)
		goto out;
	if (ft_write(&x, w, &h)) {
		pt_writer_abort(w);
		goto out;
	}
	rc = pt_writer_close(w, err);
out:
	if (info)
		*info = x.info;
	ft_free(&x);
	if (!std)
		fclose(in);
	return rc;
}

int pt_import_ftrace(const char *in, const char *out, struct pt_error *err)
{
	return pt_import_ftrace_opts(in, out, NULL, NULL, err);
}

int pt_import_ftrace_mem(const void *buf, size_t size, const char *name, const struct pt_ftrace_opts *opts,
			 enum pt_encoding enc, void **data, size_t *dsize, struct pt_ftrace_info *info,
			 struct pt_error *err)
{
	struct ft x;
	struct pt_header h;
	int rc = -1;

	*data = NULL;
	*dsize = 0;
	/* glibc (>= 2.22) accepts an empty buffer */
	FILE *in = fmemopen((void *)(size ? buf : ""), size, "r");
	if (!in)
		return pt_error_set(err, PT_ERR_IO, "%s: cannot read buffer: %s", name, strerror(errno));
	ft_init(&x, name, opts, err);
	if (ft_read(&x, in))
		goto out;
	ft_header(&x, &h);
	struct pt_writer *w = pt_writer_open_mem(enc, &h, err);
	if (!w)
		goto out;
	if (ft_write(&x, w, &h)) {
		pt_writer_abort(w);
		goto out;
	}
	rc = pt_writer_close_mem(w, data, dsize, err);
out:
	if (info)
		*info = x.info;
	ft_free(&x);
	fclose(in);
	return rc;
}
