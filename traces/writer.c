/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * writer.c - pt_writer: validate each event, encode it (text.c or
 * binary.c), and commit the file only when everything was written.
 *
 * A file is written as PATH.tmp.XXXXXX beside PATH, then fsync()ed and
 * rename()d over PATH by pt_writer_close(), so that a reader never sees a
 * half-written trace under the final name; any failure unlinks the
 * temporary file.  A symlink PATH is written through: its target is
 * replaced (beside it), the link stays.  An existing PATH keeps its mode.
 * The temporary files of open writers are registered so that a signal
 * handler can remove them (pt_writer_unlink_temps()).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_impl.h"

struct pt_writer {
	char *path;		/* final name; NULL for stdout and memory */
	char *tmp;		/* temporary file */
	FILE *f;
	bool is_mem;		/* pt_writer_open_mem() */
	bool direct;		/* path is a device or a FIFO: written in place, never replaced */
	char *mem;		/* open_memstream() buffer */
	size_t mem_size;
	enum pt_encoding enc;
	unsigned cpus;
	uint64_t nevents;
	bool failed;		/* a write failed: close commits nothing */
	int err_no;
	struct pt_bin_wr *bin;
	char line[PT_MAX_LINE + 2];
};

/*
 * Temporary files of open writers, for pt_writer_unlink_temps() in a signal
 * handler: a slot holds a complete string or NULL, set and cleared with
 * single pointer stores; a writer beyond the slots is just not registered.
 */
#define TEMP_SLOTS 16
static char *volatile temps[TEMP_SLOTS];

static void temp_register(char *tmp)
{
	for (unsigned i = 0; i < TEMP_SLOTS; i++) {
		if (!temps[i]) {
			temps[i] = tmp;
			return;
		}
	}
}

static void temp_unregister(const char *tmp)
{
	for (unsigned i = 0; tmp && i < TEMP_SLOTS; i++)
		if (temps[i] == tmp)
			temps[i] = NULL;
}

void pt_writer_unlink_temps(void)
{
	for (unsigned i = 0; i < TEMP_SLOTS; i++) {
		char *tmp = temps[i];
		if (tmp)
			unlink(tmp);	/* async-signal-safe */
	}
}

static const char *wname(const struct pt_writer *w)
{
	return w->path ? w->path : w->is_mem ? "<memory>" : "<stdout>";
}

static void writer_free(struct pt_writer *w)
{
	temp_unregister(w->tmp);
	pt_bin_wr_free(w->bin);
	free(w->path);
	free(w->tmp);
	free(w->mem);
	free(w);
}

/* Write the header in the writer's encoding; 0 or -1 with errno. */
static int writer_start(struct pt_writer *w, const struct pt_header *h)
{
	if (w->enc == PT_ENC_BINARY) {
		w->bin = pt_bin_wr_open(w->f, h);
		return w->bin ? 0 : -1;
	}
	size_t n = pt_header_format_text(h, w->line, sizeof(w->line));
	w->line[n++] = '\n';
	return fwrite(w->line, 1, n, w->f) == n ? 0 : -1;
}

static int check_header(const struct pt_header *h, const char *name, struct pt_error *err)
{
	char why[160];
	enum pt_err code = pt_header_check(h, why, sizeof(why), NULL);

	return code ? pt_error_set(err, code, "%s: header: %s", name, why) : 0;
}

struct pt_writer *pt_writer_open(const char *path, enum pt_encoding enc, const struct pt_header *h,
				 struct pt_error *err)
{
	struct pt_writer *w;

	if (check_header(h, path, err))
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w) {
		pt_error_set(err, PT_ERR_IO, "%s: out of memory", path);
		return NULL;
	}
	w->enc = enc;
	w->cpus = h->cpus;
	struct stat st;
	bool exists = false;
	if (!strcmp(path, "-")) {
		w->f = stdout;
	} else if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		/* a device, FIFO or /dev/stdout: there is no file to replace atomically, and
		 * renaming over it would destroy it; write to it as it is */
		w->path = strdup(path);
		w->direct = true;
		w->f = w->path ? fopen(path, "wb") : NULL;
		if (!w->f) {
			pt_error_set(err, PT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
			goto fail;
		}
	} else {
		struct stat lst;
		exists = !stat(path, &st);
		if (!lstat(path, &lst) && S_ISLNK(lst.st_mode)) {
			/* write through the link: replace its target, keep the link */
			w->path = realpath(path, NULL);
			if (!w->path) {
				pt_error_set(err, PT_ERR_IO, "%s: cannot resolve the symlink: %s", path,
					     strerror(errno));
				goto fail;
			}
		} else {
			w->path = strdup(path);
		}
		if (w->path && asprintf(&w->tmp, "%s.tmp.XXXXXX", w->path) < 0)
			w->tmp = NULL;
		if (!w->path || !w->tmp) {
			pt_error_set(err, PT_ERR_IO, "%s: out of memory", path);
			goto fail;
		}
		/* no interrupting signal between the file's creation and its registration, where
		 * the handler's pt_writer_unlink_temps() would not know it (it came at once when
		 * sent as soon as the file showed: tests/cli interrupted_write_leaves_nothing) */
		sigset_t fatal, old;
		sigemptyset(&fatal);
		sigaddset(&fatal, SIGINT);
		sigaddset(&fatal, SIGTERM);
		sigaddset(&fatal, SIGHUP);
		sigprocmask(SIG_BLOCK, &fatal, &old);
		int fd = mkstemp(w->tmp);
		if (fd >= 0)
			temp_register(w->tmp);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (fd < 0) {
			pt_error_set(err, PT_ERR_IO, "%s: cannot create %s: %s", path, w->tmp, strerror(errno));
			goto fail;
		}
		/* mkstemp() makes 0600: give the file the mode of the one it replaces, or the one
		 * open(O_CREAT) would */
		mode_t mask = umask(0);
		umask(mask);
		fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask);
		w->f = fdopen(fd, "wb");
		if (!w->f) {
			pt_error_set(err, PT_ERR_IO, "%s: cannot open %s: %s", path, w->tmp, strerror(errno));
			close(fd);
			unlink(w->tmp);
			goto fail;
		}
	}
	if (writer_start(w, h)) {
		pt_error_set(err, PT_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
		pt_writer_abort(w);
		return NULL;
	}
	return w;
fail:
	writer_free(w);
	return NULL;
}

struct pt_writer *pt_writer_open_mem(enum pt_encoding enc, const struct pt_header *h, struct pt_error *err)
{
	struct pt_writer *w;

	if (check_header(h, "<memory>", err))
		return NULL;
	w = calloc(1, sizeof(*w));
	if (w) {
		w->is_mem = true;
		w->f = open_memstream(&w->mem, &w->mem_size);
	}
	if (!w || !w->f) {
		free(w);
		pt_error_set(err, PT_ERR_IO, "<memory>: out of memory");
		return NULL;
	}
	w->enc = enc;
	w->cpus = h->cpus;
	if (writer_start(w, h)) {
		pt_error_set(err, PT_ERR_IO, "<memory>: cannot write: %s", strerror(errno));
		pt_writer_abort(w);
		return NULL;
	}
	return w;
}

/* The event fits the format: what the readers would accept. */
static int check_event(const struct pt_writer *w, const struct pt_event *ev, struct pt_error *err)
{
	const struct pt_kind_schema *sc = pt_kind_schema(ev->kind);
	char why[160];

	if (!sc)
		return pt_error_set(err, PT_ERR_UNKNOWN_KIND, "%s: event %llu: unknown kind %u", wname(w),
				    (unsigned long long)w->nevents, ev->kind);
	if (sc->ops && ev->op >= sc->nops)
		return pt_error_set(err, PT_ERR_UNKNOWN_OP, "%s: event %llu: unknown %s op %u", wname(w),
				    (unsigned long long)w->nevents, sc->name, ev->op);
	if (ev->kind == PT_EV_COMMENT) {
		if (ev->cpu)
			return pt_error_set(err, PT_ERR_FIELD, "%s: event %llu: expected cpu 0 in a comment",
					    wname(w), (unsigned long long)w->nevents);
		if (ev->text && pt_comment_check(ev->text, why, sizeof(why)))
			return pt_error_set(err, PT_ERR_FIELD, "%s: event %llu: %s", wname(w),
					    (unsigned long long)w->nevents, why);
	} else if (ev->cpu >= w->cpus) {
		return pt_error_set(err, PT_ERR_CPU, "%s: event %llu: cpu %u, but the header has cpus=%u",
				    wname(w), (unsigned long long)w->nevents, ev->cpu, w->cpus);
	} else if (ev->text && pt_comment_check(ev->text, why, sizeof(why))) {
		return pt_error_set(err, PT_ERR_FIELD, "%s: event %llu: end-of-line comment: %s", wname(w),
				    (unsigned long long)w->nevents, why);
	}
	if (!pt_event_valid(ev, w->cpus))
		return pt_error_set(err, PT_ERR_FIELD,
				    "%s: event %llu: a %s event with a field its kind does not use, "
				    "or out of range", wname(w), (unsigned long long)w->nevents, sc->name);
	return 0;
}

int pt_writer_put(struct pt_writer *w, const struct pt_event *ev, struct pt_error *err)
{
	if (w->failed)
		return pt_error_set(err, PT_ERR_IO, "%s: cannot write: %s", wname(w), strerror(w->err_no));
	if (check_event(w, ev, err))
		return -1;
	int rc;
	if (w->bin) {
		rc = pt_bin_wr_put(w->bin, ev);
	} else {
		size_t n = pt_event_format_text(ev, w->line, sizeof(w->line));
		w->line[n++] = '\n';
		rc = fwrite(w->line, 1, n, w->f) == n ? 0 : -1;
	}
	if (rc) {
		w->failed = true;
		w->err_no = errno ? errno : EIO;
		return pt_error_set(err, PT_ERR_IO, "%s: cannot write: %s", wname(w), strerror(w->err_no));
	}
	w->nevents++;
	return 0;
}

/* Finish the encoding and flush; 0 or -1 with errno. */
static int writer_finish(struct pt_writer *w)
{
	if (w->failed) {
		errno = w->err_no;
		return -1;
	}
	if (w->bin && pt_bin_wr_finish(w->bin))
		return -1;
	if (fflush(w->f) || ferror(w->f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

static void sync_dir(const char *path)
{
	char *copy = strdup(path);

	if (!copy)
		return;
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		fsync(fd);	/* make the rename durable; a failure here loses nothing */
		close(fd);
	}
	free(copy);
}

int pt_writer_close(struct pt_writer *w, struct pt_error *err)
{
	int rc = 0;

	if (w->is_mem) {
		void *data;
		size_t size;
		rc = pt_writer_close_mem(w, &data, &size, err);
		free(data);
		return rc;
	}
	errno = 0;
	if (w->direct) {
		if (writer_finish(w) | fclose(w->f))
			rc = pt_error_set(err, PT_ERR_IO, "%s: cannot write: %s", wname(w), strerror(errno));
		w->f = NULL;
		writer_free(w);
		return rc;
	}
	if (writer_finish(w)) {
		rc = pt_error_set(err, PT_ERR_IO, "%s: cannot write: %s", wname(w), strerror(errno));
	} else if (w->path) {
		if (fsync(fileno(w->f)))
			rc = pt_error_set(err, PT_ERR_IO, "%s: cannot sync %s: %s", w->path, w->tmp,
					  strerror(errno));
	}
	if (w->path) {
		if (fclose(w->f) && !rc)
			rc = pt_error_set(err, PT_ERR_IO, "%s: cannot write %s: %s", w->path, w->tmp,
					  strerror(errno));
		if (!rc && rename(w->tmp, w->path))
			rc = pt_error_set(err, PT_ERR_IO, "%s: cannot rename %s over it: %s", w->path, w->tmp,
					  strerror(errno));
		if (rc)
			unlink(w->tmp);
		else
			sync_dir(w->path);
	}
	writer_free(w);
	return rc;
}

int pt_writer_close_mem(struct pt_writer *w, void **data, size_t *size, struct pt_error *err)
{
	int rc = 0;

	*data = NULL;
	*size = 0;
	if (!w->is_mem) {
		pt_writer_abort(w);
		return pt_error_set(err, PT_ERR_USAGE, "pt_writer_close_mem() on a file writer");
	}
	errno = 0;
	if (writer_finish(w))
		rc = pt_error_set(err, PT_ERR_IO, "<memory>: cannot write: %s", strerror(errno));
	fclose(w->f);	/* publishes mem / mem_size */
	w->f = NULL;
	if (!rc) {
		*data = w->mem;
		*size = w->mem_size;
		w->mem = NULL;
	}
	writer_free(w);
	return rc;
}

void pt_writer_abort(struct pt_writer *w)
{
	if (!w)
		return;
	if (w->f && w->f != stdout)
		fclose(w->f);
	else if (w->f == stdout)
		fflush(stdout);
	if (w->tmp)
		unlink(w->tmp);
	writer_free(w);
}
