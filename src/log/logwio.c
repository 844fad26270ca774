/*
 * logwio.c -- trace log writer, system side: checking the file
 * descriptor, the file header, and the write loop (short writes,
 * interrupted writes, non-blocking descriptors, SIGPIPE).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include "logpriv.h"

static uint32_t max_payload(const struct pt_attr_img *a)
{
	uint64_t m = a->max_data;

	if (m < PT_LOG_MIN_PAYLOAD)
		m = PT_LOG_MIN_PAYLOAD;
	if (m < 2 * sizeof(trace_event_set_t)) /* FILTER: the largest system event */
		m = 2 * sizeof(trace_event_set_t);
	if (m > TRACE_DATA_MAX)
		m = TRACE_DATA_MAX;
	return (uint32_t)m;
}

/* The smallest block: one writer and one record of the largest payload. */
static uint32_t min_block(const struct pt_attr_img *a)
{
	return PT_LOG_BLK + PT_LOG_WENT + PT_LOG_REC + max_payload(a);
}

uint64_t pt_logw_min_size(const struct pt_attr_img *attr)
{
	return PT_LOG_HDR + PT_LOG_ALIGN8(min_block(attr)) + PT_LOG_STOP_BLK +
	       PT_LOG_ALIGN8(PT_LOG_END_LEN);
}

static uint64_t make_nonce(const void *salt)
{
	uint64_t n = 0;
	struct timespec t;

	if (getrandom(&n, sizeof n, GRND_NONBLOCK) == (ssize_t)sizeof n && n)
		return n;
	clock_gettime(CLOCK_REALTIME, &t);
	n = (uint64_t)t.tv_sec * 1000000007u ^ (uint64_t)t.tv_nsec ^
	    (uint64_t)getpid() << 40 ^ (uint64_t)(uintptr_t)salt;
	n ^= n >> 31, n *= 0x9e3779b97f4a7c15ull, n ^= n >> 29;
	return n ? n : 1;
}

static void put_header(const struct pt_logw *w, unsigned char *h, const struct pt_attr_img *a)
{
	unsigned char *at = h + PT_LOG_H_ATTR;
	int sw = w->swap;

	memset(h, 0, PT_LOG_HDR);
	memcpy(h + PT_LOG_H_MAGIC, PT_LOG_MAGIC, 8);
	pt_log_put32(h + PT_LOG_H_BOM, PT_LOG_BOM, sw);
	pt_log_put16(h + PT_LOG_H_VERSION, (uint16_t)w->version, sw);
	pt_log_put16(h + PT_LOG_H_HDRLEN, PT_LOG_HDR, sw);
	pt_log_put32(h + PT_LOG_H_MAXBLK, w->cap > w->chunk_cap ? w->cap : w->chunk_cap, sw);
	pt_log_put32(h + PT_LOG_H_POLICY, (uint32_t)w->policy, sw);
	pt_log_put64(h + PT_LOG_H_LOGMAX, w->log_max, sw);
	pt_log_put64(h + PT_LOG_H_NONCE, w->nonce, sw);
	pt_log_put64(h + PT_LOG_H_FIRST, PT_LOG_FIRST, sw);
	memcpy(at + PT_LOG_A_NAME, a->name, strnlen(a->name, TRACE_NAME_MAX - 1));
	memcpy(at + PT_LOG_A_VERSION, a->version, strnlen(a->version, TRACE_NAME_MAX - 1));
	pt_log_put64(at + PT_LOG_A_CREATE, (uint64_t)a->create_sec, sw);
	pt_log_put64(at + PT_LOG_A_CREATE_NS, (uint64_t)a->create_nsec, sw);
	pt_log_put64(at + PT_LOG_A_RES, (uint64_t)a->res_sec, sw);
	pt_log_put64(at + PT_LOG_A_RES_NS, (uint64_t)a->res_nsec, sw);
	pt_log_put64(at + PT_LOG_A_STREAM_SIZE, a->stream_size, sw);
	pt_log_put64(at + PT_LOG_A_MAX_DATA, a->max_data, sw);
	pt_log_put64(at + PT_LOG_A_LOG_SIZE, a->log_size, sw);
	pt_log_put32(at + PT_LOG_A_STREAM_POLICY, (uint32_t)a->stream_policy, sw);
	pt_log_put32(at + PT_LOG_A_LOG_POLICY, (uint32_t)a->log_policy, sw);
	pt_log_put32(at + PT_LOG_A_INHERIT, (uint32_t)a->inherit, sw);
	pt_log_put32(at + PT_LOG_A_HAS_LOG, (uint32_t)a->has_log, sw);
	pt_log_put32(h + PT_LOG_H_CRC, pt_log_crc(0, h, PT_LOG_H_CRC), sw);
}

int pt_logw_init(struct pt_logw *w, int fd, const struct pt_attr_img *attr, int log_policy,
                 uint64_t log_max)
{
	return pt_logw_init_opt(w, fd, attr, log_policy, log_max, NULL);
}

/* Reserving the file's blocks ahead of the writes: an APPEND log written
 * in sequence, a regular file on a disk's file system (not tmpfs or
 * ramfs, where reserving a page is making it, and the writes would do
 * it again).  ext4 then does not reserve and map each block as a write
 * reaches it: `record` of one thread at full speed to ext4 lost 13-16%
 * of its events without, 3-7% with (the writer 12.0-14.0 ns an event
 * against 9.4-11.3; docs/performance.md).  How far ahead grows with the
 * log, an eighth of what it wrote, from 1 MiB to 16 MiB, and none before
 * its first MiB: a log written slowly keeps little of the disk that it
 * does not use yet, a small one none.  Given back by pt_logw_finish only
 * (pt_logw_free is memory only: a forked child frees its copy of its
 * parent's writer, whose file the parent goes on writing). */
#define AHEAD_MIN (1u << 20)
#define AHEAD_MAX (16u << 20)
static int ahead_worth(const struct pt_logw *w, int fd)
{
	struct statfs fs;
	return w->policy == POSIX_TRACE_APPEND && w->seekable && !w->o_append &&
	       fstatfs(fd, &fs) == 0 && fs.f_type != TMPFS_MAGIC && fs.f_type != RAMFS_MAGIC;
}

/* Before a write that ends at end: the blocks up to end and a step
 * reserved, if end is past what is.  A failure (ENOSPC, EOPNOTSUPP) stops
 * the reserving: the writes say what they say. */
static void ahead(struct pt_logw *w, uint64_t end)
{
	if (!w->ahead_on || end <= w->ahead || w->written < AHEAD_MIN)
		return;
	uint64_t step = w->written / 8;
	step = step < AHEAD_MIN ? AHEAD_MIN : step > AHEAD_MAX ? AHEAD_MAX : step;
	uint64_t from = w->ahead > w->pos ? w->ahead : w->pos, to = end + step;
	int saved = errno;
	if (fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from)) == 0)
		w->ahead = to;
	else
		w->ahead_on = 0;
	errno = saved;
}

void pt_logw_ahead_end(struct pt_logw *w)
{
	struct stat st;
	int saved = errno;
	/* (a truncation to its size frees the blocks past it; one that fails
	 * leaves them, and the log is whole all the same) */
	if (w->ahead && w->fd >= 0 && fstat(w->fd, &st) == 0)
		(void)!ftruncate(w->fd, st.st_size);
	errno = saved;
	w->ahead = 0;
	w->ahead_on = 0;
}

int pt_logw_init_opt(struct pt_logw *w, int fd, const struct pt_attr_img *attr,
                     int log_policy, uint64_t log_max, const struct pt_logw_opt *opt)
{
	unsigned char h[PT_LOG_HDR];
	struct stat st;
	uint64_t cap;
	int fl, rc;

	memset(w, 0, sizeof *w);
	w->fd = -1;
	fl = fd < 0 ? -1 : fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || (fl & O_PATH) || fstat(fd, &st))
		return EBADF;
	if (!attr || (log_policy != POSIX_TRACE_LOOP && log_policy != POSIX_TRACE_UNTIL_FULL &&
	              log_policy != POSIX_TRACE_APPEND))
		return EINVAL;
	w->policy = log_policy;
	w->seekable = S_ISREG(st.st_mode);
	w->o_append = (fl & O_APPEND) != 0;
	w->is_fifo = S_ISFIFO(st.st_mode);
	w->is_sock = S_ISSOCK(st.st_mode);
	if (log_policy != POSIX_TRACE_APPEND) {
		/* LOOP writes over the start again: it cannot with O_APPEND */
		if (!w->seekable || (log_policy == POSIX_TRACE_LOOP && w->o_append))
			return EINVAL;
		if (log_max < pt_logw_min_size(attr))
			return EINVAL;
		w->log_max = log_max;
	}
	w->limit = log_policy == POSIX_TRACE_LOOP ? log_max
	         : log_policy == POSIX_TRACE_UNTIL_FULL ? log_max - PT_LOG_ALIGN8(PT_LOG_END_LEN)
	         : UINT64_MAX;
	w->max_payload = max_payload(attr);
	cap = opt && opt->block_size ? opt->block_size : PT_LOG_BLOCK_DEFAULT;
	/* LOOP: several blocks a lap, so that a wrap overwrites only the
	 * oldest part of the log and never the whole previous lap */
	if (log_policy == POSIX_TRACE_LOOP && !(opt && opt->block_size) &&
	    cap > (log_max - PT_LOG_FIRST) / 4)
		cap = (log_max - PT_LOG_FIRST) / 4;
	if (cap < min_block(attr))
		cap = min_block(attr);
	if (cap > PT_LOG_BLOCK_LIMIT)
		cap = PT_LOG_BLOCK_LIMIT;
	w->cap = (uint32_t)cap;
	w->swap = opt && opt->swap;
	w->version = opt && opt->version ? opt->version : PT_LOG_VERSION;
	if (w->version != 3 && w->version != 5 && w->version != 6 && w->version != 7 &&
	    w->version != 8 && w->version != 9 && w->version != 10 &&
	    w->version != PT_LOG_VERSION)
		return EINVAL;
	/* (v9) CHUNK blocks: an APPEND log written in place, in this
	 * machine's order, by this thread (logwrite.c, pt_logw_chunk) */
	if (w->version >= 9 && log_policy == POSIX_TRACE_APPEND && w->seekable && !w->o_append &&
	    !w->swap && opt && opt->chunk_size && opt->chunk_size <= PT_LOG_CHUNK_BLOCK - PT_LOG_C_RECS)
		w->chunk_cap = PT_LOG_C_RECS + opt->chunk_size;
	/* (v8) checkpoints: an APPEND log only (a LOOP log has no summary; an
	 * UNTIL_FULL log's room is for events) */
	if (w->version >= 8 && log_policy == POSIX_TRACE_APPEND)
		w->ckpt_every = opt && opt->ckpt_bytes ? opt->ckpt_bytes : PT_LOG_CKPT_BYTES;
	w->prev.legacy = w->version == 3;
	w->nonce = opt && opt->nonce ? opt->nonce : make_nonce(w);

	w->rec = malloc(w->cap);
	w->hdr = malloc(PT_LOG_BLK + PT_LOG_MAX_WRITERS * PT_LOG_WENT);
	w->wt = calloc(PT_LOG_MAX_WRITERS, sizeof *w->wt);
	w->names = calloc(PT_NIDS, sizeof *w->names);
	rc = ENOMEM;
	if (!w->rec || !w->hdr || !w->wt || !w->names)
		goto fail;
	if (log_policy != POSIX_TRACE_LOOP && !w->prev.legacy && pt_logw_sum_init(w))
		goto fail;
	w->fd = fd;
	pt_logw_spill_init(w);
	/* (an empty file is left as it is: on ext4 a truncation to 0 marks
	 * the file as replaced, and its close then writes it all back, 25-45
	 * ms for each 100 MB part of a rotation, in the flusher's cut) */
	if (w->seekable && st.st_size != 0 && ftruncate(fd, 0)) {
		rc = errno;
		goto fail;
	}
	/* LOOP, UNTIL_FULL: the space of the whole log now (ENOSPC here, not
	 * later), where the file system can reserve it */
	if (log_policy != POSIX_TRACE_APPEND &&
	    fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)log_max) && errno == ENOSPC) {
		rc = ENOSPC;
		goto fail;
	}
	w->ahead_on = ahead_worth(w, fd);
	put_header(w, h, attr);
	if ((rc = pt_logw_put(w, h, PT_LOG_HDR, NULL, 0, NULL, 0)))
		goto fail;
	w->pos = w->written = PT_LOG_FIRST;
	w->seq = 1;
	return 0;
fail:
	pt_logw_free(w);
	return rc;
}

void pt_logw_free(struct pt_logw *w)
{
	(void)pt_logw_bg_stop(w);
	pt_logw_sum_free(w);
	free(w->rec);
	free(w->hdr);
	free(w->chunk_buf);
	w->chunk_buf = NULL;

	free(w->wt);
	free(w->names);
	free(w->live);
	for (uint32_t i = w->objs_base; i < w->nobjs; i++)
		free(w->objs[i - w->objs_base]);
	free(w->objs);
	w->objs = NULL;
	w->nobjs = w->objs_cap = w->objs_base = 0;
	w->rec = w->hdr = NULL;
	w->wt = NULL;
	w->names = NULL;
	w->live = NULL;
	w->live_n = w->live_cap = w->live_head = 0;
	w->fd = -1;
}

static ssize_t put_once(const struct pt_logw *w, const struct iovec *v, int n, uint64_t off)
{
	if (w->seekable && !w->o_append)
		return pwritev(w->fd, v, n, (off_t)off);
	if (w->is_sock) {
		struct msghdr m = { .msg_iov = (struct iovec *)v, .msg_iovlen = (size_t)n };
		return sendmsg(w->fd, &m, MSG_NOSIGNAL);
	}
	return writev(w->fd, v, n);
}

int pt_logw_put(struct pt_logw *w, const void *a, uint32_t alen, const void *b,
                uint32_t blen, const void *c, uint32_t clen)
{
	return pt_logw_put_at(w, w->pos, a, alen, b, blen, c, clen);
}

/* The pieces written at off, to the end or an error (0 or an errno). */
static int put_all(const struct pt_logw *w, struct iovec *v, int n, uint64_t off)
{
	while (n) {
		ssize_t k;

		if (!v->iov_len) {
			v++, n--;
			continue;
		}
		k = put_once(w, v, n, off);
		if (k < 0) {
			struct pollfd p = { w->fd, POLLOUT, 0 };

			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				(void)poll(&p, 1, -1);
				continue;
			}
			return errno;
		}
		if (k == 0)
			return EIO;
		off += (uint64_t)k;
		pt_iov_advance(&v, &n, (size_t)k);
	}
	return 0;
}

/* The signal a failed write raised in this thread taken back (it is the
 * thread's own, and a signal is taken from the thread's pending ones
 * before the process's) */
static void take_back(int sig)
{
	sigset_t one;
	struct timespec zero = { 0, 0 };

	sigemptyset(&one);
	sigaddset(&one, sig);
	(void)sigtimedwait(&one, NULL, &zero);
}

int pt_logw_put_at(struct pt_logw *w, uint64_t off, const void *a, uint32_t alen, const void *b,
                   uint32_t blen, const void *c, uint32_t clen)
{
	struct iovec iov[3] = { { (void *)a, alen }, { (void *)b, blen }, { (void *)c, clen } };
	sigset_t sigs, old, pend, drop;
	int rc, guard, pending = 0, pending_fsz;

	if (w->bg) /* (written by w's thread, logwbg.c) */
		return pt_logw_bg_put(w, iov, 3, off);
	ahead(w, off + alen + blen + clen);
	/* a closed pipe, or a log past RLIMIT_FSIZE, must fail the write, not
	 * kill the process: SIGPIPE and SIGXFSZ held, and one that this write
	 * raised taken back.  A thread that holds every signal already (the
	 * flusher) only takes back what a failed write raised: the kernel
	 * raises SIGXFSZ only with EFBIG, SIGPIPE only with EPIPE (4 system
	 * calls fewer a write) */
	if (w->quiet_set && pthread_equal(w->quiet, pthread_self())) {
		rc = put_all(w, iov, 3, off);
		if (rc == EFBIG)
			take_back(SIGXFSZ);
		if (rc == EPIPE && w->is_fifo)
			take_back(SIGPIPE);
		goto out;
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGXFSZ);
	if (w->is_fifo)
		sigaddset(&sigs, SIGPIPE);
	if (sigpending(&pend) != 0)
		sigfillset(&pend);
	pending = sigismember(&pend, SIGPIPE);
	pending_fsz = sigismember(&pend, SIGXFSZ);
	guard = pthread_sigmask(SIG_BLOCK, &sigs, &old) == 0;
	rc = put_all(w, iov, 3, off);
	if (guard) {
		struct timespec zero = { 0, 0 };
		sigemptyset(&drop);
		if (rc == EPIPE && w->is_fifo && !pending)
			sigaddset(&drop, SIGPIPE);
		if (!pending_fsz)
			sigaddset(&drop, SIGXFSZ);
		while (sigpending(&pend) == 0 &&
		       ((sigismember(&drop, SIGPIPE) && sigismember(&pend, SIGPIPE)) ||
		        (sigismember(&drop, SIGXFSZ) && sigismember(&pend, SIGXFSZ)))) {
			int sig = sigtimedwait(&drop, NULL, &zero);
			if (sig < 0)
				break;
			sigdelset(&drop, sig);
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
out:
	/* a sequential log loses the partial block: the next one goes there */
	if (rc && w->seekable && w->policy != POSIX_TRACE_LOOP && ftruncate(w->fd, (off_t)w->pos))
		(void)0;
	return rc;
}
