/*
 * newstream.c -- creating a stream, for this process or another one: its
 * geometry, its segment (a region of the traced process's control memfd,
 * or a memfd of our own), the trusted copies the controller keeps, and the
 * control slot that tells the traced process.  The attributes come checked
 * from api/create.c.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "control.h"

static struct pt_clock_img proc_clock; /* calibrated once per process */

/* In a fork child: drop what this process held of a stream it controls
 * (no shutdown: the stream stays with the parent). */
static void stream_drop(struct pt_trid *t)
{
	if (t->s.fl)
		pt_flusher_forget(&t->s);
	if (t->s.hdr)
		pt_map_release(t->s.hdr, t->s.map_size);
	if (t->s.tctl && !t->tctl_own)
		munmap(t->s.tctl, PT_CTL_SIZE);
	pt_close_own(t->s.fd, &t->fd_id); /* (only if still its file) */
	pt_close_own(t->sys_fd, &t->sys_id);
	pt_reader_free(&t->s.rd);
	pt_clock_free(&t->s.clk);
}

static int stream_status(struct pt_trid *t, struct posix_trace_status_info *si)
{
	pt_status_locked(&t->s, si);
	return 0;
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
		rc = pt_slot_claim(tg, tg->fd, slot);
		pt_target_uncount(tg); /* a claimed slot keeps the segment across exec now */
		if (rc != 0)
			return rc;
		if ((rc = pt_region_alloc(tg, *slot, g->seg_size, g->prealloc, &t->s.region_off)) != 0 ||
		    fstat(tg->fd, &st) != 0) {
			pt_slot_release(tg->ctl, *slot, PT_TICKET_BUSY);
			return rc ? rc : ENOMEM;
		}
		p = mmap(NULL, g->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, tg->fd,
		         (off_t)t->s.region_off);
		if (p == MAP_FAILED) {
			pt_slot_release(tg->ctl, *slot, PT_TICKET_BUSY);
			return ENOMEM;
		}
		t->s.hdr = p;
		t->s.fd = tg->fd; /* holds the slot's lock from now on */
		tg->fd = -1;
		*ino = (uint64_t)st.st_ino;
		return 0;
	}
	if ((rc = pt_segment_create(g, &t->s.fd, &t->s.hdr)) != 0)
		return rc;
	if (tg->ctl && (rc = pt_slot_claim(tg, -1, slot)) != 0) {
		munmap(t->s.hdr, g->seg_size);
		close(t->s.fd);
		t->s.fd = -1;
		return rc;
	}
	*ino = fstat(t->s.fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
	return 0;
}

/* The new stream's segment (placed at t->s.hdr) initialized, and t made
 * from the same values: the view and the clock from our own copies, never
 * read back from the segment, which the traced process may write over
 * from now on; sys_fd, the stream's place among the machine's, is t's. */
static void stream_fill(struct pt_trid *t, const struct pt_geom *g, struct pt_attr_img *img,
                        const struct pt_clock_img *clk_img, const struct pt_clock *clk,
                        const struct pt_target *tg, uint32_t noloss, int sys_fd)
{
	{ /* the resolution the calibration measured, not a guess */
		struct timespec res;
		pt_clock_res(clk_img, &res);
		img->res_sec = res.tv_sec;
		img->res_nsec = res.tv_nsec;
	}
	pt_segment_init(t->s.hdr, g, img, clk_img);
	t->s.hdr->traced_pid = tg->pid;
	t->s.hdr->noloss_ms = noloss;
	t->noloss_ms = noloss;
	if (tg->ctl) /* the names the traced process registered so far */
		pt_names_copy((struct pt_name *)((char *)t->s.hdr + g->names_off), pt_ctl_names(tg->ctl));
	t->s.map_size = g->seg_size;
	pt_reader_reset(&t->s);
	t->s.attr = *img;
	t->s.clk = *clk;
	pt_slot_fill_trusted(&t->s.view, t->s.hdr, g, img);
	if (tg->pid != getpid()) /* (our own stream: as we record into it) */
		for (uint32_t k = 0; pt_slot_warm(&t->s.view, k); k++)
			;
	atomic_store(&t->s.view.gen, 1);
	t->s.view.test_hdr_filter = 1; /* system events obey the filter too */
	if (!tg->own) /* the code of this process, whose system events go in too */
		pt_objmap_dump(&t->s.view, pt_pid, 0);
	memset(&t->s.sys_tw, 0, sizeof t->s.sys_tw);
	t->s.sys_last = 0;
	t->sys_fd = sys_fd;
	pt_fdid_of(t->s.fd, &t->fd_id);
	pt_fdid_of(t->sys_fd, &t->sys_id);
	t->s.pid = tg->pid;
}

/* The stream published in slot s of the traced process's control segment
 * (tg->ctl, which t takes over), at inode ino: the process maps it once
 * it is started. */
static void stream_publish(struct pt_trid *t, struct pt_target *tg, const struct pt_geom *g,
                           unsigned s, uint64_t ino)
{
	int own_mem = t->s.region_off == 0; /* a memfd of its own: this process */

	t->slot = (int)s;
	t->s.tctl = tg->ctl;
	t->tctl_own = tg->own;
	tg->ctl = NULL;
	t->ticket = pt_slot_ticket(t->s.tctl);
	/* the recording side will use this mapping too; registered before
	 * the ticket is published, or a thread that attaches at once would
	 * map the segment a second time, a mapping the shutdown cannot
	 * recognise and leaves behind */
	if (!own_mem && tg->own)
		pt_selfmap_add(s, t->ticket, t->s.hdr, g->seg_size);
	if (own_mem) /* the recording side maps it from this fd, ours */
		pt_slot_own_fd(s, t->s.fd, 0);
	/* a private memfd (own_mem), which nobody else can see, has no
	 * liveness lock; else the slot's byte of the region file is it */
	pt_slot_publish(&(struct pt_target){ .ctl = t->s.tctl }, s, t->s.region_off, g->seg_size,
	                own_mem ? t->s.fd : -1, ino, own_mem ? UINT32_MAX : s, t->ticket);
}

/* Create a stream tracing pid (0: this process); logfd < 0 for none.  attr
 * is valid; policy and noloss are what it comes to.  If the log cannot be
 * started, *undo is the new id, which the caller shuts down. */
int pt_stream_create(pid_t pid, const trace_attr_t *attr, int policy, uint32_t noloss, int logfd,
                     trace_id_t *trid, trace_id_t *undo)
{
	struct pt_attr_img img;
	struct pt_geom g;
	struct pt_target tg;
	struct pt_trid *t;
	struct pt_clock_img clk_img;
	struct pt_clock clk;
	int rc, sys_fd = -1;
	unsigned s = 0;
	uint64_t ino = 0;
	trace_id_t id;

	*undo = 0;
	if ((rc = pt_geom_compute(&g, attr->__stream_size, attr->__max_data_size)) != 0)
		return rc;
	if (!pt_geom_backable(&g))
		return ENOMEM; /* before any memfd is grown or backed */
	if ((rc = pt_target_open(pid, &tg)) != 0)
		return rc;
	pt_quiesce_prepare();
	pt_trid_fork_handlers(stream_drop);
	attr_image(&img, attr, policy, logfd >= 0);

	pthread_mutex_lock(&pt_trid_table_lock);
	rc = EAGAIN;
	if (!pt_trid_room() || (rc = pt_sysmax_take(&sys_fd)) != 0)
		goto out;
	if (!proc_clock.kind)
		pt_clock_calibrate(&proc_clock);
	clk_img = proc_clock; /* with a point and the offset to CLOCK_REALTIME of now */
	pt_clock_restamp(&clk_img);
	rc = ENOMEM;
	if (pt_clock_load(&clk, &clk_img) != 0)
		goto out;
	t = pt_trid_new(PT_KIND_STREAM, &id);
	t->status = stream_status;
	t->in_use = 0; /* until it is complete */
	rc = place_segment(&tg, &g, t, &s, &ino);
	if (rc != 0) {
		pt_clock_free(&clk);
		pt_trid_free(t);
		goto out;
	}
	stream_fill(t, &g, &img, &clk_img, &clk, &tg, noloss, sys_fd);
	sys_fd = -1; /* (t's) */
	if (tg.ctl) /* tell the traced process: it maps the stream once started */
		stream_publish(t, &tg, &g, s, ino);
	t->in_use = 1;
	if (logfd >= 0 && (rc = pt_flusher_start(&t->s, logfd)) != 0) {
		pt_unlock(&t->s.lock);
		pthread_mutex_unlock(&pt_trid_table_lock);
		pt_target_close(&tg);
		*undo = id; /* the caller shuts it down */
		return rc;
	}
	*trid = id;
	pt_unlock(&t->s.lock);
	rc = 0;
out:
	if (sys_fd >= 0)
		close(sys_fd);
	pthread_mutex_unlock(&pt_trid_table_lock);
	pt_target_close(&tg);
	return rc;
}
