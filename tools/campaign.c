/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * campaign.c - the campaign directory: campaign.json, atomic files, the
 * findings index, the triage of one crash and the making of a finding
 * directory (campaign.h).
 *
 * The JSON written here is read back by this file only, one member per line
 * or one object per line: the reader looks for `"key":` in a line and never
 * needs a general parser.  Signatures are [A-Za-z0-9/_.-] (violation.h), so
 * they are written without escapes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "campaign.h"
#include "mm.h"
#include "program.h"
#include "session.h"

const char *campaign_engine_name(enum campaign_engine e)
{
	return e == ENGINE_AFL ? "afl" : "libfuzzer";
}

/* ---- files ---- */

void campaign_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		fprintf(stderr, "ptfuzz: a path under the campaign directory is too long (at most %zu bytes): %.80s...\n",
			size - 1, buf);
		exit(2);
	}
}

int write_atomic(const char *path, const void *data, size_t len)
{
	char tmp[CAMPAIGN_PATH];
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path + 1) : 0;

	if (snprintf(tmp, sizeof(tmp), "%.*s.tmp-%s-%ld", dlen, path, slash ? slash + 1 : path, (long)getpid()) >=
	    (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	const char *p = data;
	size_t left = len;
	while (left) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = errno;
			close(fd);
			unlink(tmp);
			errno = e;
			return -1;
		}
		p += w;
		left -= (size_t)w;
	}
	if (close(fd) || rename(tmp, path)) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
		char *nb = realloc(buf, (cap *= 2) + 1);
		if (!nb)
			free(buf);
		buf = nb;
	}
	fclose(f);
	if (!buf) {
		errno = ENOMEM;
		return NULL;
	}
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		unlink(path);
		return;
	}
	struct dirent *e;
	char sub[CAMPAIGN_PATH];
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		campaign_path(sub, sizeof(sub), "%s/%s", path, e->d_name);
		remove_tree(sub);
	}
	closedir(d);
	rmdir(path);
}

/* remove ".tmp-*" entries of one directory */
static void clean_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	char sub[CAMPAIGN_PATH];
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, ".tmp-", 5))
			continue;
		campaign_path(sub, sizeof(sub), "%s/%s", path, e->d_name);
		remove_tree(sub);
	}
	closedir(d);
}

void campaign_clean_temps(const char *dir)
{
	char path[CAMPAIGN_PATH];

	clean_dir(dir);
	snprintf(path, sizeof(path), "%s/findings", dir);
	clean_dir(path);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char sub[CAMPAIGN_PATH];
		if (e->d_name[0] == '.')
			continue;
		campaign_path(sub, sizeof(sub), "%s/%s", path, e->d_name);
		clean_dir(sub);
	}
	if (d)
		closedir(d);
}

void sig_to_dirname(const char *sig, char *out, size_t size)
{
	size_t i = 0;
	for (; *sig && i + 1 < size; sig++) {
		char c = *sig;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
			  c == '-' || (c == '.' && i);
		out[i++] = ok ? c : '-';
	}
	out[i] = 0;
}

uint64_t content_hash(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* ---- the one-member-per-line JSON this file writes ---- */

/* the value of "key": in s (up to the end of its line), as a string; false if absent */
bool campaign_json_field(const char *s, const char *key, char *out, size_t size)
{
	char pat[80];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(s, pat);
	if (!p)
		return false;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	size_t n = 0;
	if (*p == '"') {
		p++;
		while (*p && *p != '"' && *p != '\n' && n + 1 < size)
			out[n++] = *p++;
	} else {
		while (*p && !strchr(",}\n", *p) && n + 1 < size)
			out[n++] = *p++;
		while (n && out[n - 1] == ' ')
			n--;
	}
	out[n] = 0;
	return true;
}

static uint64_t json_u64_field(const char *s, const char *key, uint64_t dflt)
{
	char v[32];
	if (!campaign_json_field(s, key, v, sizeof(v)))
		return dflt;
	return strtoull(v, NULL, 0);
}

int campaign_meta_read(const char *dir, struct campaign_meta *m, char *why, size_t why_size)
{
	char path[CAMPAIGN_PATH], v[64];
	snprintf(path, sizeof(path), "%s/campaign.json", dir);
	char *s = read_file(path, NULL);
	memset(m, 0, sizeof(*m));
	if (!s) {
		snprintf(why, why_size, "%s: %s", path, strerror(errno));
		return -1;
	}
	int rc = -1;
	if (!campaign_json_field(s, "engine", v, sizeof(v)) || (strcmp(v, "afl") && strcmp(v, "libfuzzer"))) {
		snprintf(why, why_size, "%s: expected \"engine\": \"afl\" or \"libfuzzer\"", path);
		goto out;
	}
	m->engine = strcmp(v, "afl") ? ENGINE_LIBFUZZER : ENGINE_AFL;
	if (!campaign_json_field(s, "variant", m->variant, sizeof(m->variant)) || !strcmp(m->variant, "null"))
		m->variant[0] = 0;
	if (campaign_json_field(s, "contracts", v, sizeof(v)))
		m->contracts = !strcmp(v, "allow");
	if (!campaign_json_field(s, "host", m->host, sizeof(m->host)) || !strcmp(m->host, "null"))
		m->host[0] = 0;
	m->jobs = (unsigned)json_u64_field(s, "jobs", 1);
	m->time_s = json_u64_field(s, "time_s", 0);
	m->start = json_u64_field(s, "start", 0);
	campaign_json_field(s, "version", m->version, sizeof(m->version));
	rc = 0;
out:
	free(s);
	return rc;
}

static void utc(uint64_t t, char *out, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int campaign_meta_write(const char *dir, const struct campaign_meta *m)
{
	char path[CAMPAIGN_PATH], buf[1024], when[32], variant[80], host[48];
	utc(m->start, when, sizeof(when));
	if (m->variant[0])
		snprintf(variant, sizeof(variant), "\"%s\"", m->variant);
	else
		strcpy(variant, "null");
	if (m->host[0])
		snprintf(host, sizeof(host), "\"%s\"", m->host);
	else
		strcpy(host, "null");
	int n = snprintf(buf, sizeof(buf),
			 "{\n"
			 "\"campaign\": \"ptfuzz\",\n"
			 "\"engine\": \"%s\",\n"
			 "\"variant\": %s,\n"
			 "\"host\": %s,\n"
			 "\"contracts\": \"%s\",\n"
			 "\"jobs\": %u,\n"
			 "\"time_s\": %llu,\n"
			 "\"start\": %llu,\n"
			 "\"start_utc\": \"%s\",\n"
			 "\"version\": \"%s\"\n"
			 "}\n",
			 campaign_engine_name(m->engine), variant, host, m->contracts ? "allow" : "strict", m->jobs,
			 (unsigned long long)m->time_s, (unsigned long long)m->start, when, m->version);
	snprintf(path, sizeof(path), "%s/campaign.json", dir);
	return write_atomic(path, buf, (size_t)n);
}

/* ---- the findings index ---- */

struct finding *index_find(struct findings_index *idx, const char *sig)
{
	for (unsigned i = 0; i < idx->n; i++)
		if (!strcmp(idx->f[i].sig, sig))
			return &idx->f[i];
	return NULL;
}

const struct crash_seen *index_crash(const struct findings_index *idx, uint64_t hash)
{
	for (unsigned i = 0; i < idx->nc; i++)
		if (idx->c[i].hash == hash)
			return &idx->c[i];
	return NULL;
}

void index_add_crash(struct findings_index *idx, uint64_t hash, const char *sig)
{
	if (idx->nc == idx->ccap) {
		idx->ccap = idx->ccap ? 2 * idx->ccap : 64;
		idx->c = realloc(idx->c, idx->ccap * sizeof(*idx->c));
		if (!idx->c)
			abort();
	}
	struct crash_seen *c = &idx->c[idx->nc++];
	c->hash = hash;
	snprintf(c->sig, sizeof(c->sig), "%s", sig);
}

struct finding *index_add_finding(struct findings_index *idx, const char *sig, unsigned inv, uint64_t when)
{
	if (idx->n == idx->cap) {
		idx->cap = idx->cap ? 2 * idx->cap : 16;
		idx->f = realloc(idx->f, idx->cap * sizeof(*idx->f));
		if (!idx->f)
			abort();
	}
	struct finding *f = &idx->f[idx->n++];
	memset(f, 0, sizeof(*f));
	snprintf(f->sig, sizeof(f->sig), "%s", sig);
	sig_to_dirname(sig, f->dir, sizeof(f->dir));
	f->inv = inv;
	f->first_seen = when;
	return f;
}

void index_free(struct findings_index *idx)
{
	free(idx->f);
	free(idx->c);
	memset(idx, 0, sizeof(*idx));
}

static unsigned inv_of(const char *sig)
{
	return sig[0] == 'I' ? (unsigned)strtoul(sig + 1, NULL, 10) : 0;
}

/* A finding directory the index does not know (a kill between its rename and the index): its target line. */
static void adopt_dir(struct findings_index *idx, const char *dir, const char *name)
{
	char path[CAMPAIGN_PATH];
	snprintf(path, sizeof(path), "%s/findings/%s/repro.ptt", dir, name);
	char *s = read_file(path, NULL);
	const char *t = s ? strstr(s, "# target: ") : NULL;
	if (t) {
		char sig[CAMPAIGN_SIG];
		size_t n = strcspn(t + 10, "\n");
		snprintf(sig, sizeof(sig), "%.*s", (int)n, t + 10);
		if (!index_find(idx, sig)) {
			struct stat st;
			struct finding *f = index_add_finding(idx, sig, inv_of(sig),
							      stat(path, &st) ? 0 : (uint64_t)st.st_mtime);
			f->count = 1;
			f->minimized = !strstr(s, "# not minimized");
		}
	}
	free(s);
}

void index_load(const char *dir, struct findings_index *idx)
{
	char path[CAMPAIGN_PATH];
	memset(idx, 0, sizeof(*idx));
	snprintf(path, sizeof(path), "%s/findings/index.json", dir);
	char *s = read_file(path, NULL);
	for (char *line = s; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char sig[CAMPAIGN_SIG], v[32];
		if (!strncmp(line, "{\"signature\":", 13) && campaign_json_field(line, "signature", sig, sizeof(sig))) {
			struct finding *f = index_add_finding(idx, sig, inv_of(sig), json_u64_field(line, "first_seen", 0));
			f->count = json_u64_field(line, "count", 1);
			f->ops = (unsigned)json_u64_field(line, "ops", 0);
			f->minimized = campaign_json_field(line, "minimized", v, sizeof(v)) && !strcmp(v, "true");
			campaign_json_field(line, "dir", f->dir, sizeof(f->dir));
		} else if (!strncmp(line, "{\"hash\":", 8) && campaign_json_field(line, "hash", v, sizeof(v))) {
			if (!campaign_json_field(line, "signature", sig, sizeof(sig)) || !strcmp(sig, "null"))
				sig[0] = 0;
			index_add_crash(idx, strtoull(v, NULL, 16), sig);
		} else if (!strncmp(line, "\"unreproduced\":", 15)) {
			idx->unreproduced = strtoull(line + 15, NULL, 10);
		}
		line = nl ? nl + 1 : NULL;
	}
	free(s);
	/* whole finding directories are the truth; the index may lag them by one kill */
	snprintf(path, sizeof(path), "%s/findings", dir);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, "index.json"))
			adopt_dir(idx, dir, e->d_name);
	if (d)
		closedir(d);
}

int index_save(const char *dir, const struct findings_index *idx)
{
	size_t cap = 4096 + (size_t)idx->n * 512 + (size_t)idx->nc * 192, n = 0;
	char *buf = malloc(cap), when[32], path[CAMPAIGN_PATH];
	if (!buf)
		return -1;
#define PUT(...) (n += (size_t)snprintf(buf + n, cap - n, __VA_ARGS__))
	PUT("{\n\"findings\": [\n");
	for (unsigned i = 0; i < idx->n; i++) {
		const struct finding *f = &idx->f[i];
		utc(f->first_seen, when, sizeof(when));
		PUT("{\"signature\": \"%s\", \"invariant\": \"I%u\", \"dir\": \"%s\", \"first_seen\": %llu, "
		    "\"first_seen_utc\": \"%s\", \"count\": %llu, \"minimized\": %s, \"ops\": %u}%s\n",
		    f->sig, f->inv, f->dir, (unsigned long long)f->first_seen, when, (unsigned long long)f->count,
		    f->minimized ? "true" : "false", f->ops, i + 1 < idx->n ? "," : "");
	}
	PUT("],\n\"unreproduced\": %llu,\n\"crashes\": [\n", (unsigned long long)idx->unreproduced);
	for (unsigned i = 0; i < idx->nc; i++) {
		if (idx->c[i].sig[0])
			PUT("{\"hash\": \"%016llx\", \"signature\": \"%s\"}%s\n", (unsigned long long)idx->c[i].hash,
			    idx->c[i].sig, i + 1 < idx->nc ? "," : "");
		else
			PUT("{\"hash\": \"%016llx\", \"signature\": null}%s\n", (unsigned long long)idx->c[i].hash,
			    i + 1 < idx->nc ? "," : "");
	}
	PUT("]\n}\n");
#undef PUT
	snprintf(path, sizeof(path), "%s/findings/index.json", dir);
	int rc = write_atomic(path, buf, n);
	free(buf);
	return rc;
}

/* ---- triage of one crash ---- */

#define MAX_SIGS 64

struct sigs {
	unsigned n;
	char sig[MAX_SIGS][96];
	unsigned id[MAX_SIGS];
};

static void run_program(const struct pt_program *p, const char *variant, struct sigs *out)
{
	struct pt_session *s = pt_session_new(&p->h);
	out->n = 0;
	if (!s)
		return;
	if (variant && pt_session_set_variant(s, variant))
		_exit(3);
	for (unsigned i = 0; i < p->n; i++)
		pt_session_event(s, &p->ev[i]);
	pt_session_finish(s);
	for (unsigned i = 0; i < pt_session_nviolations(s) && out->n < MAX_SIGS; i++) {
		const struct pt_violation *v = pt_session_violation(s, i);
		out->id[out->n] = v->id;
		memcpy(out->sig[out->n], v->signature, sizeof(out->sig[0]));
		out->n++;
	}
	pt_session_free(s);
}

/* In the child: the harness's rule (fuzzers/ops_invariants.c), the result as one line on fd. */
static void triage_child(const struct campaign_meta *m, const uint8_t *data, size_t len, int fd)
{
	static struct sigs a, def;
	struct pt_program p;
	struct pt_program_opts o = { .allow_contract = m->contracts };
	const char *variant = m->variant[0] ? m->variant : NULL;
	char line[256];

	pt_program_init(&p);
	pt_program_decode(data, len, &o, &p);
	run_program(&p, variant, &a);
	if (variant && a.n)
		run_program(&p, NULL, &def);
	int n = snprintf(line, sizeof(line), "none %u\n", p.n);
	for (unsigned i = 0; i < a.n; i++) {
		bool in_default = false;
		for (unsigned j = 0; variant && j < def.n; j++)
			in_default |= !strcmp(def.sig[j], a.sig[i]);
		if (in_default)
			continue;
		n = snprintf(line, sizeof(line), "finding %u %u %s\n", p.n, a.id[i], a.sig[i]);
		break;
	}
	if (write(fd, line, (size_t)n) != n)
		_exit(4);
	_exit(0);
}

static const char *signame(int sig)
{
	switch (sig) {
	case SIGABRT: return "SIGABRT";
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGFPE: return "SIGFPE";
	case SIGILL: return "SIGILL";
	case SIGKILL: return "SIGKILL";
	default: return "SIGNAL";
	}
}

/* what the child writes to fd, into buf (NUL-terminated); true if it ran past timeout_s (it is killed) */
static bool read_answer(int fd, pid_t pid, unsigned timeout_s, char *buf, size_t size)
{
	size_t got = 0;
	struct timespec t0;
	bool timed_out = false;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pl = { .fd = fd, .events = POLLIN };
		int rc = poll(&pl, 1, 200);
		if (rc > 0) {
			ssize_t k = read(fd, buf + got, size - 1 - got);
			if (k <= 0)
				break;
			got += (size_t)k;
			continue;
		}
		if (rc < 0 && errno != EINTR)
			break;
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((unsigned)(t.tv_sec - t0.tv_sec) >= timeout_s) {
			kill(pid, SIGKILL);
			timed_out = true;
			break;
		}
	}
	buf[got] = 0;
	return timed_out;
}

/* r from how the child ended (st) and what it said: "finding OPS ID SIG" or "none OPS" */
static void triage_verdict(const char *buf, int st, bool timed_out, struct triage_result *r)
{
	unsigned ops = 0, id = 0;
	char sig[CAMPAIGN_SIG];

	if (timed_out) {
		r->kind = TRIAGE_TIMEOUT;
		snprintf(r->sig, sizeof(r->sig), "triage-timeout");
	} else if (WIFSIGNALED(st)) {
		r->kind = TRIAGE_ENGINE_CRASH;
		snprintf(r->sig, sizeof(r->sig), "engine-crash/%s", signame(WTERMSIG(st)));
	} else if (sscanf(buf, "finding %u %u %127s", &ops, &id, sig) == 3) {
		r->kind = TRIAGE_FINDING;
		r->ops = ops;
		r->inv = id;
		snprintf(r->sig, sizeof(r->sig), "%s", sig);
	} else if (sscanf(buf, "none %u", &ops) == 1) {
		r->kind = TRIAGE_NONE;
		r->ops = ops;
	}
}

void triage_crash(const struct campaign_meta *m, const uint8_t *data, size_t len, unsigned timeout_s,
		  struct triage_result *r)
{
	int pfd[2];
	memset(r, 0, sizeof(*r));
	r->kind = TRIAGE_UNREADABLE;
	if (pipe(pfd))
		return;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	if (!pid) {
		close(pfd[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		triage_child(m, data, len, pfd[1]);
	}
	close(pfd[1]);
	char buf[256];
	bool timed_out = read_answer(pfd[0], pid, timeout_s, buf, sizeof(buf));
	close(pfd[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	triage_verdict(buf, st, timed_out, r);
}

/* ---- subprocesses ---- */

int run_command(const char *cwd, char *const argv[], const char *out_path, const char *const env[], unsigned timeout_s)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		int null = open("/dev/null", O_RDWR);
		dup2(null, STDIN_FILENO);
		if (cwd && chdir(cwd))
			_exit(127);
		if (out_path) {
			int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0)
				_exit(127);
			dup2(fd, STDOUT_FILENO);
		} else {
			dup2(null, STDOUT_FILENO);
		}
		dup2(null, STDERR_FILENO);
		for (unsigned i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		execv(argv[0], argv);
		_exit(127);
	}
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int st;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -1;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (timeout_s && (unsigned)(t.tv_sec - t0.tv_sec) >= timeout_s) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(20000);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- a new finding directory ---- */

static int write_file_plain(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t w = fwrite(data, 1, len, f);
	return fclose(f) || w != len ? -1 : 0;
}

static unsigned count_events(const char *path)
{
	char *s = read_file(path, NULL);
	unsigned n = 0;
	for (char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		n += !strncmp(l, "cpu", 3);
	free(s);
	return n;
}

/* repro.ptt without minimize: the converted trace with the header replay reads */
static int unminimized_repro(const char *trace, const char *repro, const struct campaign_meta *m,
			     const struct finding *f, const char *why)
{
	char *s = read_file(trace, NULL);
	if (!s)
		return -1;
	char *body = s;
	char head[1024];
	size_t hl = 0;
	/* the @ptt header line stays first */
	if (!strncmp(s, "@ptt", 4)) {
		size_t n = strcspn(s, "\n");
		hl = (size_t)snprintf(head, sizeof(head), "%.*s\n", (int)n, s);
		body = s + n + (s[n] ? 1 : 0);
	}
	hl += (size_t)snprintf(head + hl, sizeof(head) - hl,
			       "# not minimized (%s): the crash converted with ptfuzz convert\n"
			       "%s%s%s"
			       "# expect: I%u\n# target: %s\n",
			       why, m->variant[0] ? "# variant: " : "", m->variant, m->variant[0] ? "\n" : "", f->inv,
			       f->sig);
	size_t bl = strlen(body);
	char *out = malloc(hl + bl);
	int rc = -1;
	if (out) {
		memcpy(out, head, hl);
		memcpy(out + hl, body, bl);
		rc = write_file_plain(repro, out, hl + bl);
		free(out);
	}
	free(s);
	return rc;
}

/* ---- the report of a finding ---- */

/* The value of "key": after the violation object whose "signature" is sig in ptfuzz replay --json's output. */
static bool violation_field(const char *json, const char *sig, const char *key, char *out, size_t size)
{
	char pat[CAMPAIGN_SIG + 20];
	snprintf(pat, sizeof(pat), "\"signature\": \"%s\"", sig);
	const char *v = json ? strstr(json, pat) : NULL;
	return v && campaign_json_field(v, key, out, size);
}

void finding_summary(const char *sig, const char *what, char *out, size_t size)
{
	const char *fn = strrchr(sig, '/');
	fn = fn ? fn + 1 : sig;
	size_t fl = strlen(fn);
	/* "FUNCTION: what", unless what already starts with the function's name */
	size_t n = !strncmp(what, fn, fl) && what[fl] == ' ' ? 0 : (size_t)snprintf(out, size, "%s: ", fn);
	/* the sentence without its parenthesised details (asid, since which event) */
	int depth = 0;
	for (const char *p = what; *p && n + 1 < size; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && depth)
			depth--;
		else if (!depth && !(*p == ' ' && (p[1] == '(' || (n && out[n - 1] == ' '))))
			out[n++] = *p;
	}
	out[n < size ? n : size - 1] = 0;
}

void campaign_json_text(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* what report.txt and report.json say about a finding, from the replay's JSON */
struct report_facts {
	char what[512], rule[1024], kind[64];
	char stale_desc[160];		/* the stale entry's descriptor */
	char summary[600], when[32];
	char page[32];			/* the page a stale entry points at: pg@PA or blk@PA (a table: tbl@PA) */
	bool table;
};

static void report_facts(const char *json, const struct finding *f, struct report_facts *x)
{
	memset(x, 0, sizeof(*x));
	violation_field(json, f->sig, "what", x->what, sizeof(x->what));
	violation_field(json, f->sig, "rule", x->rule, sizeof(x->rule));
	snprintf(x->kind, sizeof(x->kind), "%s", f->inv ? pt_inv_kind(f->inv) : "engine-crash");
	violation_field(json, f->sig, "desc", x->stale_desc, sizeof(x->stale_desc));
	finding_summary(f->sig, x->what[0] ? x->what : f->sig, x->summary, sizeof(x->summary));
	utc(f->first_seen, x->when, sizeof(x->when));
	const char *at = strchr(x->stale_desc, '@');
	x->table = !strncmp(x->stale_desc, "tbl@", 4);
	if (at)
		snprintf(x->page, sizeof(x->page), "%.*s", (int)strcspn(at + 1, ","), at + 1);
}

/* report.txt: the facts, the ops of repro (its cpu lines), then the replay's own report text */
static int write_report_txt(const char *path, const struct campaign_meta *m, const struct finding *f,
			    const struct report_facts *x, const char *repro, const char *text)
{
	FILE *t = fopen(path, "w");

	if (!t)
		return -1;
	fprintf(t, "summary: %s\n", x->summary);
	fprintf(t, "invariant: I%u %s: %s\n", f->inv, x->kind, x->rule);
	fprintf(t, "signature: %s\n", f->sig);
	fprintf(t, "found: %s campaign, variant %s, first seen %s\n", campaign_engine_name(m->engine),
		m->variant[0] ? m->variant : "default", x->when);
	if (x->stale_desc[0])
		fprintf(t, "stale entry points at: %s %s (%s)\n", x->table ? "the page table at" : "the page at", x->page,
			x->stale_desc);
	fprintf(t, "minimal ops (repro.ptt, %u events%s; ptfuzz replay%s%s repro.ptt):\n", f->ops,
		f->minimized ? ", 1-minimal" : ", not minimized", m->variant[0] ? " --variant " : "", m->variant);
	for (const char *l = repro; *l;) {
		size_t n = strcspn(l, "\n");
		if (!strncmp(l, "cpu", 3))
			fprintf(t, "  %.*s\n", (int)n, l);
		l += n + (l[n] ? 1 : 0);
	}
	fprintf(t, "\n%s", text);
	return fclose(t) ? -1 : 0;
}

/* report.json: the same facts, the ops as strings, and the replay's JSON document whole */
static int write_report_json(const char *path, const struct campaign_meta *m, const struct finding *f,
			     const struct report_facts *x, char *repro, const char *json)
{
	FILE *j = fopen(path, "w");

	if (!j)
		return -1;
	fputs("{\n\"signature\": ", j);
	campaign_json_text(j, f->sig);
	fprintf(j, ",\n\"invariant\": \"I%u\",\n\"kind\": ", f->inv);
	campaign_json_text(j, x->kind);
	fputs(",\n\"summary\": ", j);
	campaign_json_text(j, x->summary);
	fprintf(j, ",\n\"stale_points_at\": \"%s\"", !x->page[0] ? "none" : x->table ? "table" : "page");
	fputs(",\n\"what\": ", j);
	campaign_json_text(j, x->what);
	fputs(",\n\"rule\": ", j);
	campaign_json_text(j, x->rule);
	fprintf(j, ",\n\"found\": [{\"engine\": \"%s\", \"variant\": ", campaign_engine_name(m->engine));
	campaign_json_text(j, m->variant[0] ? m->variant : "default");
	fprintf(j, ", \"first_seen_utc\": \"%s\"}],\n\"stale_page\": ", x->when);
	if (x->page[0])
		campaign_json_text(j, x->page);
	else
		fputs("null", j);
	fprintf(j, ",\n\"minimized\": %s,\n\"ops\": [", f->minimized ? "true" : "false");
	bool first = true;
	for (char *l = repro; *l;) {
		size_t n = strcspn(l, "\n");
		if (!strncmp(l, "cpu", 3)) {
			char c = l[n];
			l[n] = 0;
			fputs(first ? "\n" : ",\n", j);
			campaign_json_text(j, l);
			l[n] = c;
			first = false;
		}
		l += n + (l[n] ? 1 : 0);
	}
	fprintf(j, "\n],\n\"replay\": %s}\n", json);
	return fclose(j) ? -1 : 0;
}

/*
 * In the finding's directory (cwd-relative names): report.txt and report.json
 * around what `ptfuzz replay` wrote there (replay.txt, replay.json): the
 * summary line, the invariant in one sentence, where the finding was made,
 * the minimal ops, the stale entry and the page it points at; then the
 * replay's report (its interleaving is drawn one column per CPU).
 */
static int finding_report(const char *fdir, const struct campaign_meta *m, const struct finding *f)
{
	char path[CAMPAIGN_PATH];
	struct report_facts x;
	snprintf(path, sizeof(path), "%s/replay.json", fdir);
	char *json = read_file(path, NULL);
	snprintf(path, sizeof(path), "%s/replay.txt", fdir);
	char *text = read_file(path, NULL);
	snprintf(path, sizeof(path), "%s/repro.ptt", fdir);
	char *repro = read_file(path, NULL);
	int rc = -1;
	if (json && text && repro) {
		report_facts(json, f, &x);
		snprintf(path, sizeof(path), "%s/report.txt", fdir);
		rc = write_report_txt(path, m, f, &x, repro, text);
		snprintf(path, sizeof(path), "%s/report.json", fdir);
		if (!rc)
			rc = write_report_json(path, m, f, &x, repro, json);
	}
	free(json);
	free(text);
	free(repro);
	if (!rc) {
		snprintf(path, sizeof(path), "%s/replay.json", fdir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/replay.txt", fdir);
		unlink(path);
	}
	return rc;
}

/* In the finding's directory tmp: crash.bin converted and minimized into repro.ptt (the converted crash if that fails). */
static int make_repro(const char *self, const char *tmp, const struct campaign_meta *m, struct finding *f,
		      const char *const env[], char *why, size_t why_size)
{
	char crash[CAMPAIGN_PATH], trace[CAMPAIGN_PATH], repro[CAMPAIGN_PATH];

	campaign_path(crash, sizeof(crash), "%s/crash.bin", tmp);
	campaign_path(trace, sizeof(trace), "%s/crash.ptt", tmp);
	campaign_path(repro, sizeof(repro), "%s/repro.ptt", tmp);
	/* the tools run inside the finding's directory: its files name each other relatively */
	char *conv[] = { (char *)self, "convert", "--text", "crash.bin", "crash.ptt", NULL };
	if (run_command(tmp, conv, NULL, env, 60)) {
		snprintf(why, why_size, "ptfuzz convert %s failed", crash);
		return -1;
	}
	char *min[] = { (char *)self, "minimize", "crash.ptt", "-o", "repro.ptt", "-f", "-q", "--signature", f->sig,
			"--max-replays", "20000", m->variant[0] ? "--variant" : NULL, (char *)m->variant, NULL };
	int st = run_command(tmp, min, NULL, env, 300);
	f->minimized = st == 0;
	if (!f->minimized) {
		const char *reason = st < 0 ? "ptfuzz minimize failed or timed out" : "ptfuzz minimize failed";
		if (unminimized_repro(trace, repro, m, f, reason)) {
			snprintf(why, why_size, "%s: cannot write", repro);
			return -1;
		}
	}
	unlink(trace);
	f->ops = count_events(repro);
	return 0;
}

int finding_create(const char *self, const char *dir, const struct campaign_meta *m, struct finding *f,
		   const uint8_t *data, size_t len, char *why, size_t why_size)
{
	char tmp[CAMPAIGN_PATH], final[CAMPAIGN_PATH], crash[CAMPAIGN_PATH];
	static char contracts_env[] = "PTFUZZ_CONTRACTS=allow";
	const char *env[] = { m->contracts ? contracts_env : NULL, NULL };

	snprintf(final, sizeof(final), "%s/findings/%s", dir, f->dir);
	snprintf(tmp, sizeof(tmp), "%s/findings/.tmp-%s-%ld", dir, f->dir, (long)getpid());
	remove_tree(tmp);
	if (mkdir(tmp, 0755)) {
		snprintf(why, why_size, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	campaign_path(crash, sizeof(crash), "%s/crash.bin", tmp);
	if (write_file_plain(crash, data, len)) {
		snprintf(why, why_size, "%s: %s", crash, strerror(errno));
		goto fail;
	}
	if (make_repro(self, tmp, m, f, env, why, why_size))
		goto fail;
	char *rep[] = { (char *)self, "replay", "repro.ptt", m->variant[0] ? "--variant" : NULL, (char *)m->variant,
			NULL };
	char *repj[] = { (char *)self, "replay", "--json", "repro.ptt", m->variant[0] ? "--variant" : NULL,
			 (char *)m->variant, NULL };
	if (run_command(tmp, rep, "replay.txt", env, 120) != 1 || run_command(tmp, repj, "replay.json", env, 120) != 1) {
		snprintf(why, why_size, "ptfuzz replay %s/repro.ptt: the reproducer does not show a violation", tmp);
		goto fail;
	}
	if (finding_report(tmp, m, f)) {
		snprintf(why, why_size, "%s/report.txt: cannot write the report", tmp);
		goto fail;
	}
	if (rename(tmp, final)) {
		snprintf(why, why_size, "%s: %s", final, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	remove_tree(tmp);
	return -1;
}

/* ---- the crash files an engine keeps ---- */

static void list_add(char ***list, unsigned *n, unsigned *cap, const char *path)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*list = realloc(*list, *cap * sizeof(**list));
		if (!*list)
			abort();
	}
	(*list)[(*n)++] = strdup(path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void scan(const char *path, const char *prefix, char ***list, unsigned *n, unsigned *cap)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[CAMPAIGN_PATH];
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		campaign_path(sub, sizeof(sub), "%s/%s", path, e->d_name);
		list_add(list, n, cap, sub);
	}
	if (d)
		closedir(d);
}

char **crash_list(const char *dir, const struct campaign_meta *m, unsigned *n)
{
	char **list = NULL, path[CAMPAIGN_PATH];
	unsigned cap = 0;
	*n = 0;
	if (m->engine == ENGINE_LIBFUZZER) {
		snprintf(path, sizeof(path), "%s/crashes", dir);
		scan(path, "crash-", &list, n, &cap);
	} else {
		/* sync/INSTANCE/crashes and the crashes.DATE an in-place resume leaves */
		snprintf(path, sizeof(path), "%s/sync", dir);
		DIR *d = opendir(path);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char inst[CAMPAIGN_PATH];
			campaign_path(inst, sizeof(inst), "%s/%s", path, e->d_name);
			DIR *id = opendir(inst);
			struct dirent *c;
			while (id && (c = readdir(id))) {
				if (strncmp(c->d_name, "crashes", 7))
					continue;
				char cd[CAMPAIGN_PATH];
				campaign_path(cd, sizeof(cd), "%s/%s", inst, c->d_name);
				scan(cd, "id:", &list, n, &cap);
			}
			if (id)
				closedir(id);
		}
		if (d)
			closedir(d);
	}
	if (*n)
		qsort(list, *n, sizeof(*list), cmp_str);
	return list;
}

void crash_list_free(char **list, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(list[i]);
	free(list);
}
