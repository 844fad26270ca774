/*
 * logwbg.c -- a log writer's writes done by a second thread (log.h,
 * pt_logw_bg_*): the blocks are copied into a ring that the thread
 * writes to the file at their offsets, in order, starting the file's
 * write-back as it goes.  The caller's thread goes on encoding the next
 * blocks meanwhile, so that encoding and the kernel's work on the file
 * (page cache, write-back: two thirds of a flight recorder's snapshot)
 * take two CPUs instead of one after the other.  The bytes written are
 * the same, in the same places: the log is the one a single thread
 * writes.  Each piece put is a block (put_block, logwrite.c): the thread
 * computes its two CRCs before writing it (a tenth of the encoding's
 * instructions, taken off the caller's thread).
 *
 * For a regular file written in sequence (an APPEND log) only.  A write
 * error is kept: every block after it fails too, and so do the drain and
 * the stop (the log is incomplete: its writer gives it up).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "logpriv.h"

struct pt_logw_bg {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t work, room;  /* for the thread; for the caller */
	int fd, err, stop, idle, waiting, swap;
	unsigned char *ring;
	size_t size;
	uint64_t head, tail;        /* bytes put and written since the start */
	uint64_t off0;              /* the file offset of byte 0 of the stream */
	uint64_t sync_step, synced; /* write-back started every sync_step bytes */
	uint64_t prealloc;          /* bytes reserved from off0 on (the rest freed at the stop) */
	uint64_t crc_at;            /* the next block whose CRCs are to be made (the thread's) */
};

/* The largest write the thread makes at once: large writes cost the
 * kernel less a byte, and the caller gets its room back in steps. */
#define BG_WRITE_MAX (512u << 10)

static int write_all(int fd, const struct iovec *iov, int n, uint64_t off)
{
	struct iovec v[2];
	memcpy(v, iov, (size_t)n * sizeof *v);
	struct iovec *p = v;
	while (n) {
		if (!p->iov_len) {
			p++, n--;
			continue;
		}
		ssize_t k = pwritev(fd, p, n, (off_t)off);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (k == 0)
			return EIO;
		off += (uint64_t)k;
		pt_iov_advance(&p, &n, (size_t)k);
	}
	return 0;
}

/* n bytes of the ring at stream position pos copied out to buf (or in,
 * from buf), across its end if they are. */
static void ring_io(struct pt_logw_bg *q, uint64_t pos, unsigned char *buf, size_t n, int in)
{
	size_t at = (size_t)(pos % q->size), k = q->size - at < n ? q->size - at : n;
	memcpy(in ? q->ring + at : buf, in ? buf : q->ring + at, k);
	if (k < n)
		memcpy(in ? q->ring : buf + k, in ? buf + k : q->ring, n - k);
}

static uint32_t ring_crc(const struct pt_logw_bg *q, uint64_t pos, size_t n)
{
	size_t at = (size_t)(pos % q->size), k = q->size - at < n ? q->size - at : n;
	uint32_t crc = pt_log_crc(0, q->ring + at, k);
	return k < n ? pt_log_crc(crc, q->ring, n - k) : crc;
}

/* The CRCs of the blocks put up to end (the stream position after a
 * whole block), as put_block makes them with no thread: the body's
 * (writer table and records), then the header's. */
static void blocks_crc(struct pt_logw_bg *q, uint64_t end)
{
	unsigned char h[PT_LOG_BLK];
	while (q->crc_at < end) {
		ring_io(q, q->crc_at, h, PT_LOG_BLK, 0);
		uint32_t len = pt_log_get32(h + PT_LOG_B_LEN, q->swap);
		if (len < PT_LOG_BLK || PT_LOG_ALIGN8(len) > end - q->crc_at) {
			q->crc_at = end; /* (cannot be: put_block makes them) */
			break;
		}
		pt_log_put32(h + PT_LOG_B_BCRC, ring_crc(q, q->crc_at + PT_LOG_BLK, len - PT_LOG_BLK),
		             q->swap);
		pt_log_put32(h + PT_LOG_B_HCRC, pt_log_crc(0, h, PT_LOG_B_HCRC), q->swap);
		ring_io(q, q->crc_at, h, PT_LOG_BLK, 1);
		q->crc_at += PT_LOG_ALIGN8(len);
	}
}

static void *bg_main(void *arg)
{
	struct pt_logw_bg *q = arg;
	/* the file's blocks reserved at once, so that the writes and the
	 * write-back do not each reserve and allocate theirs (a quarter of
	 * the kernel's time on ext4); a failure is the writes' to tell (a
	 * part reserved before it is freed at the stop all the same) */
	if (q->prealloc)
		(void)fallocate(q->fd, FALLOC_FL_KEEP_SIZE, (off_t)q->off0, (off_t)q->prealloc);
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->head == q->tail && !q->stop) {
			q->idle = 1;
			if (q->waiting)
				pthread_cond_signal(&q->room);
			pthread_cond_wait(&q->work, &q->mu);
		}
		q->idle = 0;
		if (q->head == q->tail)
			break; /* (stopped, all written) */
		uint64_t tail = q->tail, head = q->head, n = head - tail;
		int err = q->err;
		pthread_mutex_unlock(&q->mu);
		if (!err)
			blocks_crc(q, head);
		if (n > BG_WRITE_MAX)
			n = BG_WRITE_MAX;
		if (!err) {
			size_t at = (size_t)(tail % q->size), first = q->size - at;
			struct iovec v[2] = { { q->ring + at, n < first ? n : first },
			                      { q->ring, n < first ? 0 : n - first } };
			uint64_t off = q->off0 + tail;
			err = write_all(q->fd, v, 2, off);
			/* the file's pages sent to the disk as they are written,
			 * so that the fsync at the end waits for the last ones */
			if (!err && q->sync_step && off + n - q->synced >= q->sync_step) {
				(void)sync_file_range(q->fd, (off_t)q->synced,
				                      (off_t)(off + n - q->synced), SYNC_FILE_RANGE_WRITE);
				q->synced = off + n;
			}
		}
		pthread_mutex_lock(&q->mu);
		if (err && !q->err)
			q->err = err;
		q->tail = tail + n;
		if (q->waiting)
			pthread_cond_signal(&q->room);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

int pt_logw_bg_start(struct pt_logw *w, void *ring, size_t size, uint64_t sync_step,
                     uint64_t prealloc)
{
	struct pt_logw_bg *q;
	sigset_t all, old;

	if (w->bg || !w->rec || w->finished)
		return EINVAL;
	/* a regular file written in sequence; room for the largest block */
	if (!w->seekable || w->o_append || w->policy != POSIX_TRACE_APPEND || !ring ||
	    size < 2 * ((size_t)w->cap + PT_LOG_BLK + PT_LOG_MAX_WRITERS * PT_LOG_WENT + 8))
		return EINVAL;
	if (!(q = calloc(1, sizeof *q)))
		return ENOMEM;
	q->fd = w->fd, q->ring = ring, q->size = size, q->off0 = w->pos;
	q->sync_step = sync_step, q->synced = w->pos, q->prealloc = prealloc;
	q->swap = w->swap;
	if (pthread_mutex_init(&q->mu, NULL)) {
		free(q);
		return ENOMEM;
	}
	pthread_cond_init(&q->work, NULL);
	pthread_cond_init(&q->room, NULL);
	/* every signal blocked: they are the process's other threads' */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&q->th, NULL, bg_main, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_cond_destroy(&q->work);
		pthread_cond_destroy(&q->room);
		pthread_mutex_destroy(&q->mu);
		free(q);
		return rc;
	}
	w->bg = q;
	return 0;
}

/* Waits until the thread has written everything put (if all) or until
 * need bytes of the ring are free; the error kept. */
static int bg_wait(struct pt_logw_bg *q, int all, size_t need)
{
	pthread_mutex_lock(&q->mu);
	while (!q->err && (all ? q->tail != q->head : q->size - (q->head - q->tail) < need)) {
		q->waiting = 1;
		pthread_cond_wait(&q->room, &q->mu);
	}
	q->waiting = 0;
	int err = q->err;
	pthread_mutex_unlock(&q->mu);
	return err;
}

int pt_logw_bg_put(struct pt_logw *w, const struct iovec *v, int n, uint64_t off)
{
	struct pt_logw_bg *q = w->bg;
	size_t total = 0;

	for (int i = 0; i < n; i++)
		total += v[i].iov_len;
	if (total > q->size)
		return EINVAL;
	int err = bg_wait(q, off != q->off0 + q->head, total);
	if (err)
		return err;
	if (off != q->off0 + q->head) { /* (not in sequence: from there on, all written) */
		q->off0 = off - q->head;
		q->crc_at = q->head;
		q->synced = off < q->synced ? off : q->synced;
	}
	/* the bytes [head, head + total) of the ring are the caller's until
	 * head moves: the thread writes only below it */
	size_t at = (size_t)(q->head % q->size);
	for (int i = 0; i < n; i++) {
		const unsigned char *p = v[i].iov_base;
		size_t len = v[i].iov_len;
		while (len) {
			size_t k = q->size - at < len ? q->size - at : len;
			memcpy(q->ring + at, p, k);
			p += k, len -= k;
			at = (at + k) % q->size;
		}
	}
	pthread_mutex_lock(&q->mu);
	q->head += total;
	if (q->idle)
		pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

int pt_logw_bg_drain(struct pt_logw *w)
{
	return w->bg ? bg_wait(w->bg, 1, 0) : 0;
}

int pt_logw_bg_stop(struct pt_logw *w)
{
	struct pt_logw_bg *q = w->bg;
	if (!q)
		return 0;
	pthread_mutex_lock(&q->mu);
	q->stop = 1;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->th, NULL);
	int err = q->err;
	/* what was reserved beyond the log's end given back (a truncation
	 * to the size the file has frees the blocks past it; after an
	 * error, to the size it has, not beyond) */
	struct stat st;
	if (q->prealloc && (!err || !fstat(q->fd, &st)) &&
	    ftruncate(q->fd, err ? st.st_size : (off_t)(q->off0 + q->head)) && !err)
		err = errno;
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->room);
	pthread_mutex_destroy(&q->mu);
	free(q);
	w->bg = NULL;
	return err;
}
