/*
 * bench_util.h -- what the benchmark programs share: a monotonic clock in
 * microseconds, the comparison qsort needs for their medians, the
 * machine's own write rate to a file system (of data in the writer's
 * cache, and of data another CPU has just written), a thread's CPU
 * time, the floor: the least a per-thread ring recorder does per
 * event, bench_vs_floor(): the one measurement of the recorder against
 * it, which bench.c and ablate.c both print, bench_json(): each
 * figure printed also as a machine-readable row, and bench_scratch():
 * the files a benchmark leaves while it runs, removed if it dies.
 */
#ifndef POSIXTRACE_BENCH_UTIL_H
#define POSIXTRACE_BENCH_UTIL_H

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* Files a benchmark keeps in a shared place while it runs (logs of a GB
 * and more on /dev/shm, which is memory), removed when it exits, also
 * through a die() midway: bench_scratch(path) once for each, from the
 * process that runs the benchmark (a child it forks and execs, or ends
 * with _exit, removes nothing). */
#define BENCH_SCRATCH_MAX 4
static char bench_scratch_paths[BENCH_SCRATCH_MAX][600] __attribute__((unused));

static inline void bench_scratch_clean(void)
{
	for (int i = 0; i < BENCH_SCRATCH_MAX; i++)
		if (bench_scratch_paths[i][0])
			unlink(bench_scratch_paths[i]);
}

static inline void bench_scratch(const char *path)
{
	for (int i = 0; i < BENCH_SCRATCH_MAX; i++) {
		if (!bench_scratch_paths[i][0]) {
			if (i == 0)
				atexit(bench_scratch_clean);
			snprintf(bench_scratch_paths[i], sizeof bench_scratch_paths[i], "%s", path);
			return;
		}
		if (!strcmp(bench_scratch_paths[i], path))
			return;
	}
}

static inline double bench_now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* This thread's CPU time in microseconds: on a machine others load, the
 * time the thread was not running is not counted (what it shares while
 * running, caches and the other hyperthread, still is). */
static inline double bench_cpu_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* A function `name` timing n events through call(id, buf, len), one byte
 * of the payload changed per event so the call cannot be hoisted: ns per
 * event by the clock now_ns() (ns).  (Each loop on a 64-byte boundary of
 * its own: where a loop like this falls moves it by a few tenths of a ns,
 * which would otherwise fall on whichever side of a comparison the link
 * put at a worse place.) */
#define BENCH_EVENT_LOOP(name, call, id, len, now_ns)                                     \
	__attribute__((unused, noinline, aligned(64))) static double name(uint64_t n)     \
	{                                                                                  \
		unsigned char buf[len] = { 0 };                                            \
		double t0 = now_ns();                                                      \
		for (uint64_t i = 0; i < n; i++) {                                         \
			buf[0] = (unsigned char)i;                                         \
			call(id, buf, len);                                                \
		}                                                                          \
		return (now_ns() - t0) / (double)n;                                        \
	}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The machine's own rate: plain write() of 64 KiB blocks into a new file
 * in dir, in MB/s, for `bytes` bytes (the file is removed after); -1 if
 * the file cannot be made or written.  On a VM whose host backs guest
 * memory lazily, pages the guest has not touched lately cost the host a
 * fault each: a first pass pays that, a pass right after reuses the pages
 * the first one freed.  *slowest (if not NULL): the lowest rate over any
 * BENCH_WINDOW_US of the pass, in MB/s (a log writer meets such a stretch
 * with the stream's depth only; -1 if the pass was shorter). */
#define BENCH_WINDOW_US 50000.0
/* Seconds of idle before a pass that should meet pages as a log does
 * between runs: the guest reports memory it freed to its host about 2 s
 * after freeing it (virtio-balloon free page reporting), so by then the
 * pages of files just removed are the host's again. */
#define BENCH_IDLE_S 4
static inline double bench_write_rate(const char *dir, uint64_t bytes, double *slowest)
{
	static unsigned char blk[65536];
	char path[512];
	int fd, ok = 1;
	size_t n = (size_t)(bytes / sizeof blk), done = 0;
	double *t = malloc((n + 1) * sizeof *t);

	snprintf(path, sizeof path, "%s/posixtrace-bench-dd-XXXXXX", dir);
	if (!t || (fd = mkstemp(path)) < 0) {
		free(t);
		return -1;
	}
	memset(blk, 0x5a, sizeof blk);
	t[0] = bench_now_us();
	while (ok && done < n) {
		ok = write(fd, blk, sizeof blk) == (ssize_t)sizeof blk;
		t[++done] = bench_now_us();
	}
	close(fd);
	unlink(path);
	if (slowest) { /* each window: from block i to the first block a window later */
		*slowest = -1;
		for (size_t i = 0, j = 0; ok && i < n; i++) {
			while (j < n && t[j] - t[i] < BENCH_WINDOW_US)
				j++;
			if (t[j] - t[i] < BENCH_WINDOW_US)
				break;
			double r = (double)(j - i) * sizeof blk / (t[j] - t[i]);
			if (*slowest < 0 || r < *slowest)
				*slowest = r;
		}
	}
	double rate = ok ? (double)n * sizeof blk / (t[n] - t[0]) : -1; /* bytes/us = MB/s */
	free(t);
	return rate;
}

/* The copy alone: write() of 64 KiB blocks over the first `bytes` of a
 * file in dir that already has its pages (written once before, not
 * timed), in MB/s; -1 if the file cannot be made or written (it is
 * removed after).  Against bench_write_rate(), what a new file's pages
 * cost the kernel beyond the copy: 1/new - 1/this, per byte. */
static inline double bench_rewrite_rate(const char *dir, uint64_t bytes)
{
	static unsigned char blk[65536];
	char path[512];
	size_t n = (size_t)(bytes / sizeof blk);
	int fd, ok = 1;

	snprintf(path, sizeof path, "%s/posixtrace-bench-rw-XXXXXX", dir);
	if ((fd = mkstemp(path)) < 0)
		return -1;
	memset(blk, 0x5a, sizeof blk);
	for (size_t i = 0; ok && i < n; i++)
		ok = write(fd, blk, sizeof blk) == (ssize_t)sizeof blk;
	double t0 = bench_now_us();
	for (size_t i = 0; ok && i < n; i++)
		ok = pwrite(fd, blk, sizeof blk, (off_t)(i * sizeof blk)) == (ssize_t)sizeof blk;
	double t1 = bench_now_us();
	close(fd);
	unlink(path);
	return ok && t1 > t0 ? (double)n * sizeof blk / (t1 - t0) : -1; /* bytes/us = MB/s */
}

/* A thread's CPU time so far, in user and in kernel mode, in seconds
 * (/proc/PID/task/TID/stat, fields 14 and 15, clock ticks): 1, or 0 if it
 * cannot be read (the thread is gone). */
static inline int bench_task_cpu(pid_t pid, pid_t tid, double *user, double *sys)
{
	char path[64], line[1024];
	unsigned long ut, st;
	FILE *f;
	int ok = 0;

	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (!(f = fopen(path, "r")))
		return 0;
	size_t n = fread(line, 1, sizeof line - 1, f);
	fclose(f);
	line[n] = 0;
	/* after the name, which may hold anything: state (3), fields 4..13 */
	char *q = strrchr(line, ')');
	if (q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
	                &st) == 2) {
		double hz = (double)sysconf(_SC_CLK_TCK);
		*user = (double)ut / hz, *sys = (double)st / hz;
		ok = 1;
	}
	return ok;
}

/* The machine's rate for what a flusher does at full speed: write() of
 * data another CPU has just written.  One thread stores 8-byte words into
 * a 16 MiB ring, 64 KiB at a time, as fast as it can while it is less
 * than the ring ahead; the calling thread write()s each 64 KiB into a new
 * file in dir as soon as it is complete, for `seconds`.  Nothing is
 * encoded, checked or merged: a writer with no work of its own.  The
 * bytes are in the other CPU's cache when they are written, as a
 * producer's records are when its flusher reads them.  MB/s, or -1 if the
 * file cannot be made or written (it is removed after). */
#define BENCH_BEHIND_RING (16u << 20)
#define BENCH_BEHIND_BLK  65536u
struct bench_behind {
	unsigned char *ring;
	_Atomic uint64_t made, taken;
	_Atomic int stop;
};

static inline void *bench_behind_fill(void *arg)
{
	struct bench_behind *b = arg;
	const uint64_t nblk = BENCH_BEHIND_RING / BENCH_BEHIND_BLK;
	uint64_t i = 0, v = 1;

	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		if (i - atomic_load_explicit(&b->taken, memory_order_acquire) >= nblk)
			continue; /* the ring is full: wait for the writer */
		_Atomic uint64_t *w = (_Atomic uint64_t *)(b->ring + (i % nblk) * BENCH_BEHIND_BLK);
		for (uint32_t k = 0; k < BENCH_BEHIND_BLK / 8; k++)
			atomic_store_explicit(&w[k], v++, memory_order_relaxed);
		atomic_store_explicit(&b->made, ++i, memory_order_release);
	}
	return NULL;
}

static inline double bench_write_behind_rate(const char *dir, double seconds)
{
	struct bench_behind b = { 0 };
	const uint64_t nblk = BENCH_BEHIND_RING / BENCH_BEHIND_BLK;
	char path[512];
	pthread_t th;
	uint64_t done = 0;
	int fd, ok = 1;

	snprintf(path, sizeof path, "%s/posixtrace-bench-behind-XXXXXX", dir);
	if (!(b.ring = aligned_alloc(4096, BENCH_BEHIND_RING)))
		return -1;
	memset(b.ring, 0, BENCH_BEHIND_RING);
	if ((fd = mkstemp(path)) < 0) {
		free(b.ring);
		return -1;
	}
	if (pthread_create(&th, NULL, bench_behind_fill, &b) != 0) {
		close(fd);
		unlink(path);
		free(b.ring);
		return -1;
	}
	double t0 = bench_now_us(), t1 = t0;
	while (ok && t1 - t0 < seconds * 1e6) {
		while (atomic_load_explicit(&b.made, memory_order_acquire) <= done)
			;
		ok = write(fd, b.ring + (done % nblk) * BENCH_BEHIND_BLK, BENCH_BEHIND_BLK) ==
		     (ssize_t)BENCH_BEHIND_BLK;
		atomic_store_explicit(&b.taken, ++done, memory_order_release);
		t1 = bench_now_us();
	}
	atomic_store(&b.stop, 1);
	pthread_join(th, NULL);
	close(fd);
	unlink(path);
	free(b.ring);
	return ok ? (double)done * BENCH_BEHIND_BLK / (t1 - t0) : -1; /* bytes/us = MB/s */
}

/* ---------------------------------------------------------------- the floor
 * A minimal per-thread ring: a timestamp, one header word (timestamp, id,
 * length), the payload in 8-byte words, stored into a private buffer of
 * the stream's size that wraps, and the thread's position kept in
 * thread-local memory.  No control word, no filter, no commit, no waking:
 * nothing another thread or a reader could use.  Any recorder that
 * timestamps and keeps each event must do at least this, so what the
 * library costs above it is what its guarantees (and its overhead) cost. */
struct bench_ring {
	uint64_t *buf;
	size_t words, pos;
};
static _Thread_local struct bench_ring bench_ring __attribute__((unused));

static inline uint64_t bench_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
#endif
}

/* This thread's ring, `bytes` long (a stream's size), its pages touched
 * once as a stream's are: 0, or -1 without memory. */
static inline int bench_ring_init(size_t bytes)
{
	if (bench_ring.buf)
		return 0;
	if (!(bench_ring.buf = aligned_alloc(4096, bytes)))
		return -1;
	memset(bench_ring.buf, 0, bytes);
	bench_ring.words = bytes / 8;
	bench_ring.pos = 0;
	return 0;
}

/* One event into this thread's ring, the timestamp ts already taken
 * (the header word, then the payload: the order the library writes) */
__attribute__((always_inline)) static inline void bench_ring_put(uint64_t ts, trace_event_id_t id,
                                                                 const void *data, size_t len)
{
	struct bench_ring *r = &bench_ring;
	size_t n = (len + 7) / 8, pos = r->pos;
	if (pos + 1 + n > r->words)
		pos = 0;
	uint64_t *p = r->buf + pos;
	p[0] = (ts & 0xffffffffull) | (uint64_t)id << 32 | (uint64_t)len << 48;
	size_t i = 0;
	for (; i + 8 <= len; i += 8)
		__builtin_memcpy(&p[1 + i / 8], (const char *)data + i, 8);
	if (i < len) {
		uint64_t w = 0;
		for (size_t k = 0; i + k < len; k++)
			w |= (uint64_t)((const unsigned char *)data)[i + k] << (8 * k);
		p[1 + i / 8] = w;
	}
	r->pos = pos + 1 + n;
}

/* The floor's event: a function the compiler cannot inline, as
 * posix_trace_event is to its caller, nor specialize for the callers'
 * constant length (the library cannot either). */
__attribute__((noinline, unused)) static void bench_floor_event(trace_event_id_t id, const void *data,
                                                                size_t len)
{
	__asm__("" : "+r"(id), "+r"(data), "+r"(len));
	bench_ring_put(bench_tsc(), id, data, len);
}

/* ------------------------------------------ the recorder against the floor
 * The one way bench.c and ablate.c both measure the flight recorder's cost
 * above the floor, so that their figures are the same measurement: the
 * same two loops (posix_trace_event into whatever stream the caller has
 * running, and bench_floor_event; BENCH_VS_PAYLOAD bytes, BENCH_VS_EVENTS
 * events per loop, in the thread's CPU time), BENCH_VS_RUNS pairs after a
 * warm-up of each, the order of each pair alternated (floor first on even
 * runs, recorder first on odd ones) so that neither side always follows
 * the other; `also` (if not NULL), a third loop timed after each pair.
 * Medians of each side and of also, and the median and range over pairs
 * of recorder - floor. */
#define BENCH_VS_PAYLOAD 32
#define BENCH_VS_RUNS    9
#define BENCH_VS_EVENTS  10000000ull
struct bench_vs {
	double rec, floor, also; /* ns/event, medians */
	double above, lo, hi;    /* recorder - floor: median, least, most */
};
static trace_event_id_t bench_vs_id __attribute__((unused));

static inline double bench_cpu_ns(void)
{
	return bench_cpu_us() * 1e3;
}
BENCH_EVENT_LOOP(bench_vs_rec_loop, posix_trace_event, bench_vs_id, BENCH_VS_PAYLOAD, bench_cpu_ns)
BENCH_EVENT_LOOP(bench_vs_floor_loop, bench_floor_event, bench_vs_id, BENCH_VS_PAYLOAD,
                 bench_cpu_ns)

/* 0, or -1 without memory for the floor's ring (a 16 MiB stream's size) */
__attribute__((unused)) static int bench_vs_floor(trace_event_id_t id, double (*also)(uint64_t),
                                                  struct bench_vs *out)
{
	double r[BENCH_VS_RUNS], f[BENCH_VS_RUNS], a[BENCH_VS_RUNS], d[BENCH_VS_RUNS];
	const int n = BENCH_VS_RUNS;

	if (bench_ring_init(16u << 20) != 0)
		return -1;
	bench_vs_id = id;
	bench_vs_rec_loop(BENCH_VS_EVENTS / 5);
	bench_vs_floor_loop(BENCH_VS_EVENTS / 5);
	for (int k = 0; k < n; k++) {
		if (k & 1) {
			r[k] = bench_vs_rec_loop(BENCH_VS_EVENTS);
			f[k] = bench_vs_floor_loop(BENCH_VS_EVENTS);
		} else {
			f[k] = bench_vs_floor_loop(BENCH_VS_EVENTS);
			r[k] = bench_vs_rec_loop(BENCH_VS_EVENTS);
		}
		a[k] = also ? also(BENCH_VS_EVENTS) : 0;
		d[k] = r[k] - f[k];
	}
	qsort(r, n, sizeof *r, bench_cmp_double);
	qsort(f, n, sizeof *f, bench_cmp_double);
	qsort(a, n, sizeof *a, bench_cmp_double);
	qsort(d, n, sizeof *d, bench_cmp_double);
	out->rec = r[n / 2], out->floor = f[n / 2], out->also = a[n / 2];
	out->above = d[n / 2], out->lo = d[0], out->hi = d[n - 1];
	return 0;
}

/* A benchmark of sizes: what, the load average before and after (the
 * machine may be shared), one(dir, n) for each size given on the command
 * line, else for each of dflt (0-ended). */
static inline void bench_sizes(const char *what, int argc, char **argv, const char *dir,
                               void (*one)(const char *, uint64_t), const uint64_t *dflt)
{
	double load[3] = { 0, 0, 0 };

	if (getloadavg(load, 3) < 0)
		load[0] = -1;
	printf("%s\n(load average %.2f %.2f %.2f on %ld CPUs when it started)\n", what, load[0],
	       load[1], load[2], sysconf(_SC_NPROCESSORS_ONLN));
	if (argc > 1)
		for (int i = 1; i < argc; i++)
			one(dir, strtoull(argv[i], NULL, 10));
	else
		for (; *dflt; dflt++)
			one(dir, *dflt);
	if (getloadavg(load, 3) == 3)
		printf("(load average %.2f %.2f %.2f when it ended)\n", load[0], load[1], load[2]);
}

/* ------------------------------------------------- machine-readable rows
 * With the environment variable BENCH_JSON naming a file (make bench sets
 * it), bench_json(bench, name, key, value, ..., NULL) appends one row to
 * it, a JSON object on a line of its own:
 *   {"bench":"reader","case":"show","load1":1.52,"events":5000000,"s":1.2}
 * bench (the program) and name (the row, as the printed table names it),
 * the 1-minute load average as the row was written, then each key with
 * its value: every value a double (cast ints), null when not finite (a
 * figure the run could not take).  The row goes out in one write() to a
 * file opened O_APPEND, so programs running at once do not mix rows.
 * bench/results.sh gathers the rows with the machine, the date and the
 * load into build/bench/results.json; bench/plots.sh draws from it.
 * Without BENCH_JSON, nothing is written: the figures are only printed. */
static inline void bench_json_str(char *out, size_t cap, size_t *at, const char *s)
{
	for (; *s && *at + 8 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			*at += (size_t)snprintf(out + *at, cap - *at, "\\%c", c);
		else if (c < 0x20)
			*at += (size_t)snprintf(out + *at, cap - *at, "\\u%04x", c);
		else
			out[(*at)++] = (char)c;
	}
	out[*at] = 0;
}

__attribute__((sentinel, unused)) static void bench_json(const char *bench, const char *name, ...)
{
	const char *path = getenv("BENCH_JSON");
	char line[4096];
	size_t at = 0;
	double load = -1;
	va_list ap;

	if (!path || !*path)
		return;
	if (getloadavg(&load, 1) != 1)
		load = -1;
	at += (size_t)snprintf(line + at, sizeof line - at, "{\"bench\":\"");
	bench_json_str(line, sizeof line, &at, bench);
	at += (size_t)snprintf(line + at, sizeof line - at, "\",\"case\":\"");
	bench_json_str(line, sizeof line, &at, name);
	at += (size_t)snprintf(line + at, sizeof line - at, "\",\"load1\":%.2f", load);
	va_start(ap, name);
	for (const char *key; (key = va_arg(ap, const char *)) && at + 64 < sizeof line;) {
		double v = va_arg(ap, double);
		at += (size_t)snprintf(line + at, sizeof line - at, ",\"");
		bench_json_str(line, sizeof line, &at, key);
		if (isfinite(v))
			at += (size_t)snprintf(line + at, sizeof line - at, "\":%.10g", v);
		else
			at += (size_t)snprintf(line + at, sizeof line - at, "\":null");
	}
	va_end(ap);
	if (at + 3 > sizeof line)
		return; /* cannot happen with the rows the programs write */
	line[at++] = '}';
	line[at++] = '\n';
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "bench_json: %s: cannot open\n", path);
		return;
	}
	if (write(fd, line, at) != (ssize_t)at)
		fprintf(stderr, "bench_json: %s: short write\n", path);
	close(fd);
}

/* The program prog as found on $PATH (/usr/bin:/bin without one), in a
 * static buffer; NULL if none is executable. */
static inline const char *bench_which(const char *prog)
{
	static char buf[600];
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog);
		if (access(buf, X_OK) == 0)
			return buf;
		p += n + (p[n] == ':');
	}
	return NULL;
}

#endif
