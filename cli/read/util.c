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
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "read.h"

const char *prog_cmd = "posixtrace";

static _Thread_local char *capture;
static _Thread_local size_t capture_cap;

void err_capture(char *buf, size_t cap)
{
	capture = buf;
	capture_cap = cap;
	if (buf && cap)
		buf[0] = 0;
}

void err_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (capture && capture_cap) {
		vsnprintf(capture, capture_cap, fmt, ap);
		va_end(ap);
		return;
	}
	flockfile(stderr); /* (one line, whole, from each thread: the flight recorder's writer) */
	fprintf(stderr, "%s: ", prog_cmd);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (capture && capture_cap) { /* (err_capture: no --help to point to) */
		vsnprintf(capture, capture_cap, fmt, ap);
		va_end(ap);
		return EXIT_USAGE;
	}
	fprintf(stderr, "%s: ", prog_cmd);
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

int parse_rows(const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || errno || *s < '0' || *s > '9' || v > 100000000)
		return -1;
	*out = (unsigned)v;
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

void fmt_since(char *buf, size_t cap, uint64_t ts, uint64_t t0)
{
	if (ts >= t0 || cap < 2) {
		fmt_rel(buf, cap, ts >= t0 ? ts - t0 : 0);
		return;
	}
	buf[0] = '-';
	fmt_rel(buf + 1, cap - 1, t0 - ts);
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

void fmt_quantile(char *buf, size_t cap, uint64_t ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	double v = (double)ns;
	int u = 0;

	if (ns < 256) { /* exact there */
		snprintf(buf, cap, "%llu ns", (unsigned long long)ns);
		return;
	}
	while (u < 3 && v >= 999.5) {
		v /= 1000;
		u++;
	}
	snprintf(buf, cap, "%.3g %s", v, unit[u]);
}

/* COLUMNS, else the terminal's width, else 80; bounded as --width is
 * (40 to 1000), so that no environment makes a chart of a billion cells. */
int terminal_width(void)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS");
	long w = 0;

	if (c && *c) {
		char *end;
		errno = 0;
		w = strtol(c, &end, 10);
		if (errno || *end || w < 20)
			w = 0;
	}
	if (!w && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		w = ws.ws_col;
	if (!w)
		w = 80;
	return w < TERM_WIDTH_MIN ? TERM_WIDTH_MIN : w > TERM_WIDTH_MAX ? TERM_WIDTH_MAX : (int)w;
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

/* Why an existing path may not be replaced with --force, or NULL.  What
 * is replaced must be an ordinary file (or, want_dir, a directory) of
 * this user's: never through a symbolic link, never a FIFO or a device,
 * never another user's file. */
const char *output_refused(const struct stat *st, int want_dir)
{
	if (S_ISLNK(st->st_mode))
		return "it is a symbolic link";
	if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		return want_dir ? "it is not a directory" :
		       S_ISDIR(st->st_mode) ? "it is a directory" :
		                              "it is not a regular file (a FIFO, a device or a socket)";
	if (st->st_uid != geteuid())
		return "it belongs to another user";
	return NULL;
}

/* A log `record` is writing carries an OFD write lock on one byte far past
 * any data, held through the open file the log is written with: the
 * kernel drops it when that file is closed, the log finished, or when the
 * recorder dies.  So a reader tells a log being written from one cut
 * short (no final status either way). */
#define LOG_WRITING_BYTE PT_EXT_LOG_WRITING_BYTE /* (so are the parts of --rotate) */
void log_mark_writing(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = LOG_WRITING_BYTE,
	                    .l_len = 1 };
	(void)fcntl(fd, F_OFD_SETLK, &fl); /* (without it: "cut short" if read meanwhile) */
}

int log_being_written(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = LOG_WRITING_BYTE,
	                    .l_len = 1 };
	return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

/* name in the directory dirfd (AT_FDCWD: the current one; shown as path),
 * created 0600 for writing.  Without force an existing name is an error.
 * With force a new file is made under a random name beside it (O_EXCL,
 * no symbolic link followed) and renamed over the old name at once: the
 * old file is never opened, and what held the name is replaced, not
 * written through. */
int create_output_at(int dirfd, const char *name, const char *path, int force)
{
	struct stat st;
	char tmp[4352];
	int fd;

	if (!force) {
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST)
			err_msg("%s already exists; choose another name with -o, or add --force "
			        "to overwrite it", path);
		else if (fd < 0)
			err_msg("cannot create %s: %s", path, strerror(errno));
		return fd;
	}
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		const char *why = output_refused(&st, 0);
		if (why) {
			err_msg("%s: will not overwrite it: %s", path, why);
			return -1;
		}
	} else if (errno != ENOENT) {
		err_msg("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	for (int tries = 0;; tries++) {
		unsigned char r[6];
		if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
			err_msg("getrandom: %s", strerror(errno));
			return -1;
		}
		if (snprintf(tmp, sizeof tmp, "%s.%02x%02x%02x%02x%02x%02x.tmp", name, r[0], r[1],
		             r[2], r[3], r[4], r[5]) >= (int)sizeof tmp) {
			err_msg("cannot create %s: %s", path, strerror(ENAMETOOLONG));
			return -1;
		}
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST || tries >= 16)
			break;
	}
	if (fd < 0) {
		err_msg("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	if (renameat(dirfd, tmp, dirfd, name) != 0) {
		int e = errno;
		unlinkat(dirfd, tmp, 0);
		close(fd);
		err_msg("cannot replace %s: %s", path, strerror(e));
		return -1;
	}
	return fd;
}

/* Logs, their .maps and exports: what the program did, its arguments as
 * event data, its memory layout -- for its owner's eyes only (0600), as
 * perf record's files are. */
int create_output(const char *path, int force)
{
	return create_output_at(AT_FDCWD, path, path, force);
}

int create_private_output(const char *path, int force)
{
	return create_output(path, force);
}
