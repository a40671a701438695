/* SPDX-License-Identifier: GPL-2.0-only */
/* test_trace_writer.c - the writer commits whole files only, and refuses what it cannot encode. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace.h"

static char dir[] = "/tmp/ptfuzz-writer-XXXXXX";
static char path[256];

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/out.ptt", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

/* Number of entries in dir (other than . and ..); *tmp set if one is a temporary file. */
static int entries(bool *tmp)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	*tmp = false;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		if (strstr(e->d_name, ".tmp."))
			*tmp = true;
	}
	closedir(d);
	return n;
}

static struct pt_event isb(unsigned cpu)
{
	struct pt_event ev = { .kind = PT_EV_ISB, .cpu = (uint16_t)cpu };
	return ev;
}

static void test_file_appears_only_when_closed(void **state)
{
	struct pt_header h;
	struct pt_error err = { 0 };
	struct pt_event ev = isb(1);
	bool tmp;
	(void)state;

	for (int enc = PT_ENC_TEXT; enc <= PT_ENC_BINARY; enc++) {
		unlink(path);
		pt_header_default(&h);
		struct pt_writer *w = pt_writer_open(path, enc, &h, &err);
		assert_non_null(w);
		assert_int_equal(pt_writer_put(w, &ev, &err), 0);
		assert_int_equal(access(path, F_OK), -1);	/* not there yet */
		assert_int_equal(entries(&tmp), 1);
		assert_true(tmp);
		assert_int_equal(pt_writer_close(w, &err), 0);
		assert_int_equal(entries(&tmp), 1);
		assert_false(tmp);

		struct pt_reader *r = pt_reader_open(path, &err);
		assert_non_null(r);
		assert_int_equal(pt_reader_encoding(r), enc);
		struct pt_event back;
		assert_int_equal(pt_reader_next(r, &back, &err), 1);
		assert_int_equal(back.cpu, 1);
		assert_int_equal(pt_reader_next(r, &back, &err), 0);
		pt_reader_close(r);
	}
	/* the mode is what a plain create gives, not mkstemp()'s 0600 */
	struct stat st;
	mode_t mask = umask(0);
	umask(mask);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
}

static void test_abort_leaves_the_old_file_and_no_temporary(void **state)
{
	struct pt_header h;
	struct pt_error err = { 0 };
	struct pt_event ev = isb(0);
	bool tmp;
	(void)state;

	FILE *f = fopen(path, "w");
	fputs("cpu0 dsb sy\n", f);
	fclose(f);
	pt_header_default(&h);
	struct pt_writer *w = pt_writer_open(path, PT_ENC_TEXT, &h, &err);
	assert_non_null(w);
	assert_int_equal(pt_writer_put(w, &ev, &err), 0);
	pt_writer_abort(w);
	assert_int_equal(entries(&tmp), 1);
	assert_false(tmp);
	char buf[64] = { 0 };
	f = fopen(path, "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "cpu0 dsb sy\n");
}

static void test_open_in_a_missing_directory_names_the_path(void **state)
{
	struct pt_header h;
	struct pt_error err = { 0 };
	char p[300];
	(void)state;

	snprintf(p, sizeof(p), "%s/no/such/dir/x.ptt.zst", dir);
	pt_header_default(&h);
	assert_null(pt_writer_open(p, PT_ENC_BINARY, &h, &err));
	assert_int_equal(err.code, PT_ERR_IO);
	assert_non_null(strstr(err.msg, p));
}

static void test_invalid_header_is_refused_at_open(void **state)
{
	struct pt_header h;
	struct pt_error err = { 0 };
	bool tmp;
	(void)state;

	unlink(path);
	pt_header_default(&h);
	h.cpus = 0;
	assert_null(pt_writer_open(path, PT_ENC_TEXT, &h, &err));
	assert_int_equal(err.code, PT_ERR_HEADER);
	pt_header_default(&h);
	h.version = 9;
	assert_null(pt_writer_open_mem(PT_ENC_BINARY, &h, &err));
	assert_int_equal(err.code, PT_ERR_VERSION);
	pt_header_default(&h);
	strcpy(h.kernel, "two\nlines");
	assert_null(pt_writer_open_mem(PT_ENC_TEXT, &h, &err));
	assert_int_equal(err.code, PT_ERR_HEADER);
	assert_int_equal(entries(&tmp), 0);
}

static void test_unencodable_events_are_refused_and_the_writer_goes_on(void **state)
{
	struct pt_header h;
	struct pt_error err = { 0 };
	struct pt_event ev;
	char comment[PT_MAX_COMMENT + 2];
	void *data;
	size_t size;
	(void)state;

	pt_header_default(&h);
	h.cpus = 2;
	for (int enc = PT_ENC_TEXT; enc <= PT_ENC_BINARY; enc++) {
		struct pt_writer *w = pt_writer_open_mem(enc, &h, &err);
		assert_non_null(w);
		ev = isb(2);
		assert_int_equal(pt_writer_put(w, &ev, &err), -1);
		assert_int_equal(err.code, PT_ERR_CPU);
		ev = (struct pt_event){ .kind = 30 };
		assert_int_equal(pt_writer_put(w, &ev, &err), -1);
		assert_int_equal(err.code, PT_ERR_UNKNOWN_KIND);
		ev = (struct pt_event){ .kind = PT_EV_TLBI, .op = PT_TLBI_COUNT };
		assert_int_equal(pt_writer_put(w, &ev, &err), -1);
		assert_int_equal(err.code, PT_ERR_UNKNOWN_OP);
		ev = (struct pt_event){ .kind = PT_EV_DSB, .va = 1 };
		assert_int_equal(pt_writer_put(w, &ev, &err), -1);
		assert_int_equal(err.code, PT_ERR_FIELD);
		ev = (struct pt_event){ .kind = PT_EV_COMMENT, .cpu = 1, .text = "x" };
		assert_int_equal(pt_writer_put(w, &ev, &err), -1);
		assert_int_equal(err.code, PT_ERR_FIELD);
		ev = (struct pt_event){ .kind = PT_EV_COMMENT, .text = "a\nb" };
		assert_int_equal(pt_writer_put(w, &ev, &err), -1);
		assert_int_equal(err.code, PT_ERR_FIELD);
		memset(comment, 'c', sizeof(comment) - 1);
		comment[sizeof(comment) - 1] = '\0';
		ev = (struct pt_event){ .kind = PT_EV_COMMENT, .text = comment };
		assert_int_equal(pt_writer_put(w, &ev, &err), -1);
		assert_int_equal(err.code, PT_ERR_FIELD);
		comment[PT_MAX_COMMENT] = '\0';	/* the longest comment fits both encodings */
		assert_int_equal(pt_writer_put(w, &ev, &err), 0);
		ev = (struct pt_event){ .kind = PT_EV_COMMENT, .text = NULL };	/* an empty comment */
		assert_int_equal(pt_writer_put(w, &ev, &err), 0);
		ev = isb(1);
		assert_int_equal(pt_writer_put(w, &ev, &err), 0);
		assert_int_equal(pt_writer_close_mem(w, &data, &size, &err), 0);

		struct pt_reader *r = pt_reader_open_mem(data, size, "m", &err);
		assert_non_null(r);
		assert_int_equal(pt_reader_next(r, &ev, &err), 1);
		assert_int_equal(strlen(ev.text), PT_MAX_COMMENT);
		assert_int_equal(pt_reader_next(r, &ev, &err), 1);
		assert_string_equal(ev.text, "");
		assert_int_equal(pt_reader_next(r, &ev, &err), 1);
		assert_int_equal(ev.kind, PT_EV_ISB);
		assert_int_equal(pt_reader_next(r, &ev, &err), 0);
		pt_reader_close(r);
		free(data);
	}
}

static void test_write_failure_commits_nothing(void **state)
{
	struct pt_header h;
	struct pt_error err = { 0 };
	struct pt_event ev = isb(0);
	(void)state;

	/* /dev/full: every write fails with ENOSPC; the rename never happens */
	if (access("/dev/full", W_OK))
		skip();
	pt_header_default(&h);
	struct pt_writer *w = pt_writer_open("-", PT_ENC_TEXT, &h, &err);
	assert_non_null(w);
	pt_writer_abort(w);	/* stdout is left open */
	assert_int_equal(fflush(stdout), 0);

	FILE *saved = stdout;
	stdout = fopen("/dev/full", "w");
	assert_non_null(stdout);
	w = pt_writer_open("-", PT_ENC_BINARY, &h, &err);
	assert_non_null(w);
	for (int i = 0; i < 100000; i++)
		if (pt_writer_put(w, &ev, &err))
			break;
	assert_int_equal(pt_writer_close(w, &err), -1);
	assert_int_equal(err.code, PT_ERR_IO);
	assert_non_null(strstr(err.msg, "<stdout>"));
	fclose(stdout);
	stdout = saved;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_appears_only_when_closed),
		cmocka_unit_test(test_abort_leaves_the_old_file_and_no_temporary),
		cmocka_unit_test(test_open_in_a_missing_directory_names_the_path),
		cmocka_unit_test(test_invalid_header_is_refused_at_open),
		cmocka_unit_test(test_unencodable_events_are_refused_and_the_writer_goes_on),
		cmocka_unit_test(test_write_failure_commits_nothing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
