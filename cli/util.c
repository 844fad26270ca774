/*
 * util.c -- messages, argument parsing, time formatting, the terminal,
 * the progress line and opening output files without overwriting them.
 */
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

const char *prog_cmd = "posixtrace";

void err_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog_cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog_cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see '%s --help')\n", prog_cmd);
	return EXIT_USAGE;
}

/* 4096, 64K, 64KiB, 16M, 1G: multiples of 1024. */
int parse_size(const char *s, size_t *out)
{
	static const char units[] = "kmgt";
	char *end;
	errno = 0;
	double v = strtod(s, &end);

	if (end == s || errno || v < 0 || !isfinite(v))
		return -1;
	if (*end) {
		const char *u = strchr(units, *end | 0x20);
		if (!u || !*u)
			return -1;
		for (long i = 0; i <= u - units; i++)
			v *= 1024;
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
		if (*end)
			return -1;
	}
	if (v > 1e18 || v != floor(v))
		return -1;
	*out = (size_t)v;
	return 0;
}

int parse_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);

	if (end == s || errno || !isfinite(v) || v < 0)
		return -1;
	if (*end == 's' && !end[1])
		end++;
	else if (!strcmp(end, "ms")) {
		v /= 1e3;
		end += 2;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int parse_pid(const char *s, pid_t *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);

	if (end == s || *end || errno || v <= 0 || v > 0x3fffffff)
		return -1;
	*out = (pid_t)v;
	return 0;
}

static uint64_t now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t now_realtime_ns(void) { return now(CLOCK_REALTIME); }
uint64_t now_mono_ns(void) { return now(CLOCK_MONOTONIC); }

void fmt_rel(char *buf, size_t cap, uint64_t ns)
{
	snprintf(buf, cap, "%llu.%09llu", (unsigned long long)(ns / 1000000000u),
	         (unsigned long long)(ns % 1000000000u));
}

void fmt_abs(char *buf, size_t cap, uint64_t ns)
{
	time_t s = (time_t)(ns / 1000000000u);
	struct tm tm;
	char d[32];

	gmtime_r(&s, &tm);
	strftime(d, sizeof d, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, cap, "%s.%09lluZ", d, (unsigned long long)(ns % 1000000000u));
}

void fmt_duration(char *buf, size_t cap, uint64_t ns)
{
	if (ns >= 1000000000u)
		snprintf(buf, cap, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000u)
		snprintf(buf, cap, "%.3f ms", (double)ns / 1e6);
	else if (ns >= 1000u)
		snprintf(buf, cap, "%.3f us", (double)ns / 1e3);
	else
		snprintf(buf, cap, "%llu ns", (unsigned long long)ns);
}

int terminal_width(void)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS");

	if (c && atoi(c) >= 20)
		return atoi(c);
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

int utf8_output(void)
{
	static int v = -1;

	if (v < 0) {
		setlocale(LC_CTYPE, "");
		const char *cs = nl_langinfo(CODESET);
		v = cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
		setlocale(LC_CTYPE, "C");
	}
	return v;
}

/* -h / --help anywhere before "--". */
int want_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	}
	return 0;
}

/* How long a job runs before its progress line appears: half a second, or
 * POSIXTRACE_PROGRESS_MS milliseconds (0: at once; the tests use it, so
 * that what they check does not depend on how fast the machine is). */
static uint64_t progress_delay_ns(void)
{
	const char *e = getenv("POSIXTRACE_PROGRESS_MS");
	char *end;
	unsigned long long ms = e ? strtoull(e, &end, 10) : 0;

	return e && *e && !*end && ms <= 3600000 ? ms * 1000000u : 500000000u;
}

void progress_begin(struct progress *p, const char *what, uint64_t total)
{
	p->what = what;
	p->total = total;
	p->done = 0;
	p->start_ns = now_mono_ns();
	p->last_ns = 0; /* the first line as soon as the delay is over */
	p->delay_ns = progress_delay_ns();
	p->shown = 0;
}

/* Shown only on a terminal, once the job has run for the delay, then every
 * tenth of a second. */
void progress_update(struct progress *p, uint64_t done)
{
	p->done = done;
	if ((done & 1023) != 0 || !isatty(STDERR_FILENO))
		return;
	uint64_t t = now_mono_ns();
	if (t - p->start_ns < p->delay_ns || t - p->last_ns < 100000000u)
		return;
	p->last_ns = t;
	p->shown = 1;
	if (!p->total)
		fprintf(stderr, "\r%s: %llu events", p->what, (unsigned long long)done);
	else
		fprintf(stderr, "\r%s: %3d%% (%llu of %llu events)", p->what,
		        (int)(done * 100 / p->total), (unsigned long long)done,
		        (unsigned long long)p->total);
}

void progress_end(struct progress *p)
{
	if (p->shown && !p->total)
		fprintf(stderr, "\r%s: %llu events            \n", p->what,
		        (unsigned long long)p->done);
	else if (p->shown)
		fprintf(stderr, "\r%s: 100%% (%llu events)            \n", p->what,
		        (unsigned long long)p->total);
	p->shown = 0;
}

static int create_mode(const char *path, int force, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), mode);

	if (fd < 0) {
		if (errno == EEXIST)
			err_msg("%s already exists; choose another name with -o, or add --force "
			        "to overwrite it", path);
		else
			err_msg("cannot create %s: %s", path, strerror(errno));
	}
	return fd;
}

int create_output(const char *path, int force)
{
	return create_mode(path, force, 0644);
}

/* A trace log and its .maps: what the program did, its arguments as event
 * data, its memory layout -- for its owner's eyes only, as perf record's
 * files are.  A file replaced with --force is made 0600 too (when it is
 * ours: fchmod fails otherwise, and the log is written anyway). */
int create_private_output(const char *path, int force)
{
	int fd = create_mode(path, force, 0600);

	if (fd >= 0 && force && fchmod(fd, 0600) != 0 && errno != EPERM)
		err_msg("%s: cannot make it private: %s", path, strerror(errno));
	return fd;
}
