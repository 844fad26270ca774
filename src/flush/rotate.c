/*
 * rotate.c -- a stream's log cut into parts (pt_ext_log_rotate, src/ext.h):
 * when a cut is due, the files of the parts (made, numbered, the oldest
 * removed), and the statistics of the cuts.  The cut itself, at a block
 * boundary of the log writer, is the flusher's (flusher.c, log_cut): the
 * part finished with its summary and END block, a new writer on the next
 * part, which begins as a new log does.
 *
 * Only the flusher thread uses a rotation once it is published
 * (pt_flusher_rotate); the statistics are read under r->mu.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "flush.h"

struct part {
	unsigned n;
	uint64_t bytes;
	uint64_t lost, dropped; /* the losses it tells (pt_rotate_switched) */
};

struct pt_rotate {
	int dirfd;            /* ours */
	char name[PT_EXT_ROTATE_NAME_MAX + 1];
	uint64_t size, period, keep, keep_size;
	unsigned n;           /* the part being written */
	int fd;               /* ... its descriptor if ours; -1: the stream's creator's */
	uint64_t started;     /* when it began (monotonic ns) */
	uint64_t checked;     /* when a cut was last found not due */
	int by_size;          /* the cut due is for the size */
	uint64_t t0, c0;      /* when the cut began: monotonic, and the thread's CPU time */
	uint64_t retry_at;    /* after a part could not be made: not before */
	uint64_t wait_since;  /* a cut due waits for older records (monotonic ns); 0: not */
	struct part *done;    /* finished parts still on disk, oldest first */
	size_t ndone, cap;
	uint64_t done_bytes;  /* ... their bytes */
	pthread_mutex_t mu;   /* the statistics */
	struct pt_ext_rotate_stats st;
	struct pt_ext_rotate_stats *out; /* the caller's copy, or NULL */
};

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int pt_rotate_new(const struct pt_ext_rotate *in, struct pt_rotate **out)
{
	struct stat st;
	size_t len;

	if (!in || !in->name || in->first < 1 || (!in->size && !in->period_ns))
		return EINVAL;
	len = strnlen(in->name, PT_EXT_ROTATE_NAME_MAX + 1);
	if (len == 0 || len > PT_EXT_ROTATE_NAME_MAX || in->name[0] == '.' ||
	    memchr(in->name, '/', len))
		return EINVAL;
	if (in->dirfd < 0 || fstat(in->dirfd, &st) != 0 || !S_ISDIR(st.st_mode))
		return EINVAL;
	struct pt_rotate *r = calloc(1, sizeof *r);
	if (!r)
		return ENOMEM;
	if ((r->dirfd = fcntl(in->dirfd, F_DUPFD_CLOEXEC, 3)) < 0) {
		int e = errno;
		free(r);
		return e == EMFILE ? EMFILE : ENOMEM;
	}
	memcpy(r->name, in->name, len);
	r->size = in->size, r->period = in->period_ns;
	r->keep = in->keep, r->keep_size = in->keep_size;
	r->n = in->first;
	r->fd = -1;
	r->started = r->checked = mono();
	r->st.current = r->n;
	if ((r->out = in->stats))
		*r->out = r->st;
	pthread_mutex_init(&r->mu, NULL);
	*out = r;
	return 0;
}

void pt_rotate_free(struct pt_rotate *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	close(r->dirfd);
	pthread_mutex_destroy(&r->mu);
	free(r->done);
	free(r);
}

uint64_t pt_rotate_size(const struct pt_rotate *r)
{
	return r->size;
}

/* A cut is due: the part holds `size` bytes or is `period` old, and holds
 * an event; not between an OVERFLOW and the event after its RESUME. */
int pt_rotate_due(struct pt_rotate *r, const struct pt_logw *w)
{
	uint64_t now = mono();
	int by_size = r->size && w->written >= r->size;
	int due = by_size || (r->period && now - r->started >= r->period &&
	                      (w->nev || (w->sum && w->sum->events)));

	if (due && (w->gap_open || (r->retry_at && now < r->retry_at)))
		due = 0;
	if (!due)
		r->checked = now; /* (the last look that found no cut due) */
	r->by_size = by_size;
	return due;
}

/* A cut due waits until no record left to write is older than the
 * latest event the part holds (caught_up): CHUNK blocks of threads busy
 * at once overlap in time, and two parts must not.  Meanwhile the flusher
 * writes in time order (pt_rotate_closing), so it catches up, in about a
 * chunk of each busy writer (a part by size ends near its size: a CHUNK
 * block goes into it only with room for the records older than its end
 * too, flush/flushrun.c); after PT_ROTATE_WAIT_NS it cuts anyway (the
 * parts then overlap, as a reader of them says).  1: cut now. */
#define PT_ROTATE_WAIT_NS 100000000u
int pt_rotate_ready(struct pt_rotate *r, int caught_up)
{
	uint64_t now = mono();

	if (!caught_up && !r->wait_since)
		r->wait_since = now ? now : 1;
	if (!caught_up && now - r->wait_since < PT_ROTATE_WAIT_NS)
		return 0;
	r->wait_since = 0;
	return 1;
}

int pt_rotate_closing(const struct pt_rotate *r)
{
	return r->wait_since != 0;
}

/* The next part, made new (O_EXCL: a name taken is stepped over, 64 at
 * most): 0 and its descriptor and number, or the error. */
int pt_rotate_open(struct pt_rotate *r, int *fd, unsigned *n)
{
	char path[PT_EXT_ROTATE_NAME_MAX + 32];
	int e = 0;

	for (unsigned k = r->n + 1; k != r->n + 65 && k > r->n; k++) {
		snprintf(path, sizeof path, "%s-%u.ptlog", r->name, k);
		*fd = openat(r->dirfd, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		             0600);
		if (*fd >= 0) {
			struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			                    .l_start = PT_EXT_LOG_WRITING_BYTE, .l_len = 1 };
			(void)fcntl(*fd, F_OFD_SETLK, &fl); /* being written (ext.h) */
			*n = k;
			r->retry_at = 0;
			return 0;
		}
		if ((e = errno) != EEXIST)
			break;
	}
	r->retry_at = mono() + 1000000000u; /* the part being written goes on meanwhile */
	return e ? e : EEXIST;
}

/* The new part could not be begun: its file goes. */
void pt_rotate_abandon(struct pt_rotate *r, int fd, unsigned n)
{
	char path[PT_EXT_ROTATE_NAME_MAX + 32];

	snprintf(path, sizeof path, "%s-%u.ptlog", r->name, n);
	(void)unlinkat(r->dirfd, path, 0);
	close(fd);
	r->retry_at = mono() + 1000000000u;
}

/* The oldest finished parts, beyond keep and keep_size, removed (a part
 * removed by hand already: ENOENT, nothing to do). */
static void trim(struct pt_rotate *r)
{
	char path[PT_EXT_ROTATE_NAME_MAX + 32];
	size_t k = 0;
	uint64_t lost = 0, dropped = 0;

	while (k < r->ndone && ((r->keep && r->ndone - k + 1 > r->keep) ||
	                        (r->keep_size && r->done_bytes > r->keep_size))) {
		snprintf(path, sizeof path, "%s-%u.ptlog", r->name, r->done[k].n);
		(void)unlinkat(r->dirfd, path, 0);
		r->done_bytes -= r->done[k].bytes;
		lost += r->done[k].lost, dropped += r->done[k].dropped;
		k++;
	}
	if (!k)
		return;
	memmove(r->done, r->done + k, (r->ndone - k) * sizeof *r->done);
	r->ndone -= k;
	pthread_mutex_lock(&r->mu);
	r->st.removed += k;
	r->st.removed_lost += lost;
	r->st.removed_dropped += dropped;
	pthread_mutex_unlock(&r->mu);
}

/* The part being written (bytes long, finished, telling lost events of
 * the stream's and dropped of the log's lost) is done; part n, open on
 * fd, is the one being written now (its names and map too). */
void pt_rotate_switched(struct pt_rotate *r, uint64_t bytes, uint64_t lost, uint64_t dropped,
                        int fd, unsigned n)
{
	uint64_t now = mono(), t0 = r->t0, cpu = cpu_ns() - r->c0;
	uint64_t over_b = r->size && bytes > r->size ? bytes - r->size : 0;
	/* how long after its threshold: by size, since the last look that
	 * found none due (the part reached its size after it: a bound); by
	 * time, since it was due */
	uint64_t over_ns = r->by_size ? now - r->checked : now - (r->started + r->period);

	if (r->fd >= 0)
		close(r->fd);
	if (r->ndone == r->cap) {
		size_t ncap = r->cap ? 2 * r->cap : 16;
		struct part *p = realloc(r->done, ncap * sizeof *p);
		if (p)
			r->done = p, r->cap = ncap;
	}
	if (r->ndone < r->cap) { /* (else it is not kept track of: never removed) */
		r->done[r->ndone++] = (struct part){ r->n, bytes, lost, dropped };
		r->done_bytes += bytes;
	}
	r->fd = fd, r->n = n;
	r->started = r->checked = now;
	pthread_mutex_lock(&r->mu);
	r->st.cuts++;
	r->st.current = n;
	if (over_b > r->st.max_over_bytes)
		r->st.max_over_bytes = over_b;
	if (over_ns > r->st.max_over_ns)
		r->st.max_over_ns = over_ns;
	if (now - t0 > r->st.max_cut_ns)
		r->st.max_cut_ns = now - t0;
	r->st.total_cut_ns += now - t0;
	if (cpu > r->st.max_cut_cpu_ns)
		r->st.max_cut_cpu_ns = cpu;
	pthread_mutex_unlock(&r->mu);
	trim(r);
	if (r->out)
		*r->out = r->st; /* (only this thread writes r->st) */
}

void pt_rotate_stats(struct pt_rotate *r, struct pt_ext_rotate_stats *out)
{
	pthread_mutex_lock(&r->mu);
	*out = r->st;
	pthread_mutex_unlock(&r->mu);
}

void pt_rotate_begin(struct pt_rotate *r)
{
	r->t0 = mono();
	r->c0 = cpu_ns();
}

/* The status an intermediate part ends with: the stream's, read without
 * taking anything a later get_status would report (overrun flags, the
 * flush error).  t locked. */
void pt_rotate_status(struct pt_stream *t, struct posix_trace_status_info *si)
{
	uint32_t st = atomic_load(&t->hdr->state);

	memset(si, 0, sizeof *si);
	si->posix_stream_status = st & PT_ST_RUNNING ? POSIX_TRACE_RUNNING : POSIX_TRACE_SUSPENDED;
	si->posix_stream_full_status = st & PT_ST_FULL ? POSIX_TRACE_FULL : POSIX_TRACE_NOT_FULL;
	si->posix_stream_overrun_status = atomic_load(&t->hdr->overrun) ? POSIX_TRACE_OVERRUN
	                                                                : POSIX_TRACE_NO_OVERRUN;
	si->posix_stream_flush_status = POSIX_TRACE_NOT_FLUSHING;
	si->posix_log_overrun_status = POSIX_TRACE_NO_OVERRUN;
	si->posix_log_full_status = POSIX_TRACE_NOT_FULL;
}

/* In a fork child: the descriptors are the library's, the thread is not
 * (nor the mutex, which another thread may have held at the fork). */
void pt_rotate_forget(struct pt_rotate *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	close(r->dirfd);
	free(r->done);
	free(r);
}
