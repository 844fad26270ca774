/*
 * stream.c -- trace stream identifiers: the table, creating a stream (for
 * this process or another one), and what becomes of them at fork and exit.
 */
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib.h"

pthread_mutex_t pt_ctl_lock = PTHREAD_MUTEX_INITIALIZER;
uint64_t pt_fork_gen;

static struct pt_trid trids[TRACE_SYS_MAX];
static struct pt_trid *trid_alloc(void);
static uint32_t next_gen = 1;
static struct pt_clock_img proc_clock; /* calibrated once per process */

static void atfork_prepare(void)
{
	pthread_mutex_lock(&pt_ctl_lock);
	pt_resync_atfork_prepare();
}

static void atfork_parent(void)
{
	pt_resync_atfork_parent();
	pthread_mutex_unlock(&pt_ctl_lock);
}

/* Drop what this process holds of a stream it controls (no shutdown). */
static void trid_release(struct pt_trid *t)
{
	if (t->fl)
		pt_flusher_forget(t);
	if (t->lr)
		posix_trace_close((trace_id_t)(t->gen << 8 | (unsigned)(t - trids)));
	if (t->hdr)
		pt_map_release(t->hdr, t->map_size);
	if (t->tctl && !t->tctl_own)
		munmap(t->tctl, PT_CTL_SIZE);
	if (t->fd >= 0)
		close(t->fd);
	if (t->sys_fd >= 0)
		close(t->sys_fd);
	pt_reader_free(&t->rd);
	pt_clock_free(&t->clk);
	t->hdr = NULL;
	t->tctl = NULL;
	t->in_use = 0;
}

/* In the child of a fork: trace ids stay with the parent (their locks and
 * stream counts too); an INHERITED stream goes on recording this process,
 * with its own pid (see ctl.c). */
static void atfork_child(void)
{
	pt_pid = getpid();
	pt_fork_gen++;
	pthread_mutex_init(&pt_ctl_lock, NULL);
	pt_objmap_atfork_child();
	pt_ctl_atfork_child();
	pt_record_atfork_child();
	pt_quiesce_atfork_child();
	atomic_store(&pt_proc.sync, 0);
	atomic_store(&pt_proc.seen, 0);
	for (unsigned i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_trid *t = &trids[i];
		atomic_store(&t->lock, 0);
		if (t->in_use)
			trid_release(t);
	}
}

/* A process that exits without shutting its streams down: shut them down
 * (exec and kill are seen by the traced side through the liveness lock). */
__attribute__((destructor)) static void stream_fini(void)
{
	for (unsigned i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_trid *t = &trids[i];
		if (t->in_use && !atomic_load(&t->dead) && t->fork_gen == pt_fork_gen &&
		    t->kind == PT_KIND_STREAM)
			posix_trace_shutdown((trace_id_t)(t->gen << 8 | i));
	}
}

__attribute__((constructor(102))) static void stream_init(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

void pt_lock_slow(pt_lock_t *l)
{
	for (unsigned spins = 0;; spins++) {
		if (!atomic_load_explicit(l, memory_order_relaxed) &&
		    !atomic_exchange_explicit(l, 1, memory_order_acquire))
			return;
		if (spins >= 64)
			sched_yield();
#if defined(__x86_64__) || defined(__i386__)
		else
			__builtin_ia32_pause();
#endif
	}
}

int pt_trid_lock_any(trace_id_t trid, struct pt_trid **out)
{
	unsigned idx = (unsigned)trid & 0xffu, gen = (unsigned)trid >> 8;
	struct pt_trid *t;

	if (trid <= 0 || idx >= TRACE_SYS_MAX)
		return EINVAL;
	t = &trids[idx];
	pt_lock(&t->lock);
	if (!t->in_use || t->gen != gen || atomic_load(&t->dead) || t->fork_gen != pt_fork_gen) {
		pt_unlock(&t->lock);
		return EINVAL;
	}
	*out = t;
	return 0;
}

int pt_trid_lock(trace_id_t trid, struct pt_trid **out)
{
	int rc = pt_trid_lock_any(trid, out);

	if (rc == 0 && (*out)->kind != PT_KIND_STREAM) {
		pt_unlock(&(*out)->lock);
		return EINVAL; /* a log opened for reading, not a stream */
	}
	return rc;
}

/* A free entry of the table, locked, with a new id.  Under pt_ctl_lock. */
struct pt_trid *pt_trid_new(int kind, trace_id_t *id)
{
	struct pt_trid *t = trid_alloc();

	if (!t)
		return NULL;
	pt_lock(&t->lock);
	memset(&t->rd, 0, sizeof t->rd);
	t->kind = kind;
	t->fd = t->sys_fd = t->slot = -1;
	t->hdr = NULL;
	t->tctl = NULL;
	t->fl = NULL;
	t->lr = NULL;
	t->region_off = 0;
	t->typelist_pos = 0;
	t->noloss_ms = 0;
	t->fork_gen = pt_fork_gen;
	atomic_store(&t->dead, 0);
	t->gen = next_gen;
	next_gen = (next_gen + 1) & 0x7fffffu;
	if (!next_gen)
		next_gen = 1;
	t->in_use = 1;
	*id = (trace_id_t)(t->gen << 8 | (unsigned)(t - trids));
	return t;
}

/* Give the entry back (it is locked). */
void pt_trid_free(struct pt_trid *t)
{
	t->in_use = 0;
	pt_unlock(&t->lock);
}

void pt_trid_unlock(struct pt_trid *t)
{
	pt_unlock(&t->lock);
}

static void attr_image(struct pt_attr_img *img, const trace_attr_t *a, int policy, int has_log)
{
	struct timespec now;

	memset(img, 0, sizeof *img);
	memcpy(img->name, a->__name, TRACE_NAME_MAX);
	img->name[TRACE_NAME_MAX - 1] = 0;
	strcpy(img->version, PT_VERSION_STRING);
	clock_gettime(CLOCK_REALTIME, &now);
	img->create_sec = now.tv_sec;
	img->create_nsec = now.tv_nsec;
	img->res_sec = a->__clock_res.tv_sec;
	img->res_nsec = a->__clock_res.tv_nsec;
	img->stream_size = a->__stream_size;
	img->max_data = a->__max_data_size;
	img->log_size = a->__log_size;
	img->stream_policy = policy;
	img->log_policy = a->__log_policy;
	img->inherit = a->__inherit;
	img->has_log = has_log;
}

void pt_trid_attrs(const struct pt_trid *t, trace_attr_t *a)
{
	const struct pt_attr_img *img = &t->attr;

	pt_attr_defaults(a);
	memcpy(a->__name, img->name, TRACE_NAME_MAX);
	a->__create_time.tv_sec = (time_t)img->create_sec;
	a->__create_time.tv_nsec = (long)img->create_nsec;
	a->__clock_res.tv_sec = (time_t)img->res_sec;
	a->__clock_res.tv_nsec = (long)img->res_nsec;
	a->__stream_size = img->stream_size;
	a->__max_data_size = img->max_data;
	a->__log_size = img->log_size;
	a->__stream_policy = img->stream_policy;
	a->__log_policy = img->log_policy;
	a->__inherit = img->inherit;
	posixtrace_attr_setnoloss(a, t->noloss_ms);
}

static struct pt_trid *trid_alloc(void)
{
	for (unsigned i = 0; i < TRACE_SYS_MAX; i++)
		if (!trids[i].in_use)
			return &trids[i];
	return NULL;
}

/* Where the segment goes: a region of the traced process's control memfd
 * (every process of the library has one), else a memfd of our own (a
 * process that does not use the library: only system events). */
static int place_segment(struct pt_target *tg, const struct pt_geom *g, struct pt_trid *t,
                         unsigned *slot, uint64_t *ino)
{
	struct stat st;
	void *p;
	int rc;

	if (tg->ctl && tg->fd >= 0) {
		if ((rc = pt_slot_claim(tg, tg->fd, slot)) != 0)
			return rc;
		if ((rc = pt_region_alloc(tg, g->seg_size, g->prealloc, &t->region_off)) != 0 ||
		    fstat(tg->fd, &st) != 0) {
			pt_slot_release(tg->ctl, *slot, PT_TICKET_BUSY);
			return rc ? rc : ENOMEM;
		}
		p = mmap(NULL, g->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, tg->fd,
		         (off_t)t->region_off);
		if (p == MAP_FAILED) {
			pt_slot_release(tg->ctl, *slot, PT_TICKET_BUSY);
			return ENOMEM;
		}
		t->hdr = p;
		t->fd = tg->fd; /* holds the slot's lock from now on */
		tg->fd = -1;
		*ino = (uint64_t)st.st_ino;
		return 0;
	}
	if ((rc = pt_segment_create(g, &t->fd, &t->hdr)) != 0)
		return rc;
	if (tg->ctl && (rc = pt_slot_claim(tg, -1, slot)) != 0) {
		munmap(t->hdr, g->seg_size);
		close(t->fd);
		t->fd = -1;
		return rc;
	}
	*ino = fstat(t->fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
	return 0;
}

/* Create a stream tracing pid (0: this process); logfd < 0 for none. */
int pt_stream_create(pid_t pid, const trace_attr_t *attr, int logfd, trace_id_t *trid)
{
	trace_attr_t def;
	struct pt_attr_img img;
	struct pt_geom g;
	struct pt_target tg;
	struct pt_trid *t;
	struct pt_clock_img clk_img;
	struct pt_clock clk;
	int rc, policy, sys_fd = -1;
	unsigned s = 0;
	uint64_t ino = 0;
	trace_id_t id;

	if (!trid)
		return EINVAL;
	if (!attr) {
		posix_trace_attr_init(&def);
		attr = &def;
	} else if (!pt_attr_valid(attr)) {
		return EINVAL;
	}
	policy = attr->__stream_policy ? attr->__stream_policy
	                               : logfd >= 0 ? POSIX_TRACE_FLUSH : POSIX_TRACE_LOOP;
	if (policy == POSIX_TRACE_FLUSH && logfd < 0)
		return EINVAL;
	/* no-loss mode waits for a flusher: only a FLUSH stream has one */
	uint32_t noloss = pt_attr_noloss(attr);
	if (noloss == UINT32_MAX || (noloss && policy != POSIX_TRACE_FLUSH))
		return EINVAL;
	if ((rc = pt_geom_compute(&g, attr->__stream_size, attr->__max_data_size)) != 0)
		return rc;
	if (!pt_geom_backable(&g))
		return ENOMEM; /* before any memfd is grown or backed */
	if ((rc = pt_target_open(pid, &tg)) != 0)
		return rc;
	pt_quiesce_prepare();
	attr_image(&img, attr, policy, logfd >= 0);

	pthread_mutex_lock(&pt_ctl_lock);
	rc = EAGAIN;
	if (trid_alloc() == NULL || (rc = pt_sysmax_take(&sys_fd)) != 0)
		goto out;
	if (!proc_clock.kind)
		pt_clock_calibrate(&proc_clock);
	clk_img = proc_clock; /* with a point and the offset to CLOCK_REALTIME of now */
	pt_clock_restamp(&clk_img);
	rc = ENOMEM;
	if (pt_clock_load(&clk, &clk_img) != 0)
		goto out;
	t = pt_trid_new(PT_KIND_STREAM, &id);
	t->in_use = 0; /* until it is complete */
	rc = place_segment(&tg, &g, t, &s, &ino);
	if (rc != 0) {
		pt_clock_free(&clk);
		pt_trid_free(t);
		goto out;
	}
	{ /* the resolution the calibration measured, not a guess */
		struct timespec res;
		pt_clock_res(&clk_img, &res);
		img.res_sec = res.tv_sec;
		img.res_nsec = res.tv_nsec;
	}
	pt_segment_init(t->hdr, &g, &img, &clk_img);
	t->hdr->traced_pid = tg.pid;
	t->hdr->noloss_ms = noloss;
	t->noloss_ms = noloss;
	/* the traced process may write over the segment from now on: the
	 * view and the clock come from our own copies, never from it */
	if (tg.ctl) /* the names the traced process registered so far */
		pt_names_copy((struct pt_name *)((char *)t->hdr + g.names_off), pt_ctl_names(tg.ctl));
	t->map_size = g.seg_size;
	pt_reader_reset(t);
	t->attr = img;
	t->clk = clk;
	pt_slot_fill_trusted(&t->view, t->hdr, &g, &img);
	atomic_store(&t->view.gen, 1);
	t->view.test_hdr_filter = 1; /* system events obey the filter too */
	if (!tg.own) /* the code of this process, whose system events go in too */
		pt_objmap_dump(&t->view, pt_pid, 0);
	memset(&t->sys_tw, 0, sizeof t->sys_tw);
	t->sys_fd = sys_fd;
	sys_fd = -1;
	t->pid = tg.pid;
	if (tg.ctl) { /* tell the traced process: it maps the stream once started */
		int own_mem = t->region_off == 0; /* a memfd of its own: this process */
		t->slot = (int)s;
		t->tctl = tg.ctl;
		t->tctl_own = tg.own;
		tg.ctl = NULL;
		pt_slot_publish(&(struct pt_target){ .ctl = t->tctl }, s, t->region_off, g.seg_size,
		                own_mem ? t->fd : -1, ino, &t->ticket);
		if (own_mem) /* a private memfd, nobody else can see it: no liveness lock */
			atomic_store(&t->tctl->slot[s].lock_byte, UINT32_MAX);
		else if (tg.own) /* the recording side will use this mapping too */
			pt_selfmap_add(s, t->ticket, t->hdr, g.seg_size);
	}
	t->in_use = 1;
	if (logfd >= 0 && (rc = pt_flusher_start(t, logfd)) != 0) {
		pt_unlock(&t->lock);
		pthread_mutex_unlock(&pt_ctl_lock);
		pt_target_close(&tg);
		posix_trace_shutdown(id);
		return rc;
	}
	*trid = id;
	pt_unlock(&t->lock);
	rc = 0;
out:
	if (sys_fd >= 0)
		close(sys_fd);
	pthread_mutex_unlock(&pt_ctl_lock);
	pt_target_close(&tg);
	return rc;
}

PT_API int posix_trace_create(pid_t pid, const trace_attr_t *restrict attr,
                              trace_id_t *restrict trid)
{
	return pt_stream_create(pid, attr, -1, trid);
}
