/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * driver.c - run a fuzz target without a fuzzer: feed each file named on
 * the command line (every file under each directory, recursively, in name
 * order) to LLVMFuzzerTestOneInput().  Linked with each target as
 * <target>_regress, so that CI replays the corpus and the regressions in
 * every build.  If an input crashes, the driver names it and prints how
 * to reproduce it.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
extern void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static const char *prog;
static const char *current;	/* the input being run */
static unsigned long nrun;

static void say(const char *s)
{
	ssize_t r = write(2, s, strlen(s));
	(void)r;
}

static void report(void)
{
	if (!current)
		return;
	say("\n");
	say(prog);
	say(": the input that failed: ");
	say(current);
	say("\nreproduce with: ");
	say(prog);
	say(" ");
	say(current);
	say("\n");
}

static void on_signal(int sig)
{
	report();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	int bad = ferror(f);
	fclose(f);
	if (!buf || bad) {
		fprintf(stderr, "%s: %s: cannot read\n", prog, path);
		free(buf);
		return -1;
	}
	/* an exact-size copy, so that ASan sees reads past the input */
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy) {
		free(buf);
		return -1;
	}
	memcpy(copy, buf, len);
	free(buf);
	current = path;
	LLVMFuzzerTestOneInput(copy, len);
	current = NULL;
	free(copy);
	nrun++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path)
{
	struct stat st;

	if (stat(path, &st)) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);

	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));
			if (!nn) {
				rc = -1;
				break;
			}
			names = nn;
		}
		if (asprintf(&names[n], "%s/%s", path, e->d_name) < 0) {
			rc = -1;
			break;
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		if (!rc && run_path(names[i]))
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0;

	prog = argv[0];
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n"
			"Runs the fuzz target once on each file (recursively under each directory).\n", prog);
		return 2;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(report);
	signal(SIGABRT, on_signal);
	signal(SIGSEGV, on_signal);
	signal(SIGBUS, on_signal);
	signal(SIGILL, on_signal);
	signal(SIGFPE, on_signal);
	for (int i = 1; i < argc; i++)
		if (run_path(argv[i]))
			rc = 1;
	fprintf(stderr, "%s: %lu inputs ran%s\n", prog, nrun, rc ? ", some could not be read" : ", no failure");
	return rc;
}
