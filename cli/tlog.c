/*
 * tlog.c -- a trace log read into memory through the public API:
 * posix_trace_open(), the attributes and status, the event-type list and
 * names, and every event with posix_trace_getnext_event().
 *
 * Threads get a small index per process (1, 2, ... in order of their first
 * event), stable for a given log whatever is later filtered out.
 *
 * A log that is not whole still loads: the reader returns each damaged
 * stretch as a POSIX_TRACE_ERROR event (data: EBADMSG), counted here, and
 * a log whose writer never finished it has no END block, which the loss
 * counts of src/ext.h reveal (no final count).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "typed.h"

struct hslot { int32_t pid; uint32_t used; uint64_t tid; uint32_t idx; };

static uint64_t mix(int32_t pid, uint64_t tid)
{
	uint64_t h = tid * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)pid * 0xc2b2ae3d27d4eb4full;
	return h ^ h >> 29;
}

static int grow_hash(struct tlog *l)
{
	size_t ncap = l->hcap_ ? l->hcap_ * 2 : 256;
	struct hslot *n = calloc(ncap, sizeof *n), *o = l->hash_;

	if (!n)
		return -1;
	for (size_t i = 0; i < l->hcap_; i++)
		if (o[i].used) {
			size_t j = mix(o[i].pid, o[i].tid) & (ncap - 1);
			while (n[j].used)
				j = (j + 1) & (ncap - 1);
			n[j] = o[i];
		}
	free(o);
	l->hash_ = n;
	l->hcap_ = ncap;
	return 0;
}

/* The index of thread (pid, tid), made on first sight. */
static int thread_index(struct tlog *l, int32_t pid, uint64_t tid, uint32_t *out)
{
	if ((l->nth + 1) * 2 > l->hcap_ && grow_hash(l))
		return -1;
	struct hslot *h = l->hash_;
	size_t j = mix(pid, tid) & (l->hcap_ - 1);
	for (; h[j].used; j = (j + 1) & (l->hcap_ - 1))
		if (h[j].pid == pid && h[j].tid == tid) {
			*out = h[j].idx;
			return 0;
		}
	if (l->nth % 64 == 0) {
		struct tthread *n = realloc(l->th, (l->nth + 64) * sizeof *n);
		if (!n)
			return -1;
		l->th = n;
	}
	unsigned idx = 1;
	for (size_t i = 0; i < l->nth; i++)
		idx += l->th[i].pid == pid;
	l->th[l->nth] = (struct tthread){ pid, tid, idx, 0, 0 };
	h[j] = (struct hslot){ pid, 1, tid, (uint32_t)l->nth };
	*out = (uint32_t)l->nth++;
	return 0;
}

void tlog_init(struct tlog *l)
{
	memset(l, 0, sizeof *l);
}

int tlog_add(struct tlog *l, const struct posix_trace_event_info *ev, const void *data,
             size_t len)
{
	uint32_t th;

	if (l->nev == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 4096;
		struct tev *n = realloc(l->ev, ncap * sizeof *n);
		if (!n)
			return -1;
		l->ev = n;
		l->cap = ncap;
	}
	if (l->ndata + len > l->dcap) {
		size_t ncap = l->dcap ? l->dcap * 2 : 65536;
		while (ncap < l->ndata + len)
			ncap *= 2;
		unsigned char *n = realloc(l->data, ncap);
		if (!n)
			return -1;
		l->data = n;
		l->dcap = ncap;
	}
	if (thread_index(l, ev->posix_pid, (uint64_t)ev->posix_thread_id, &th))
		return -1;
	struct tev *e = &l->ev[l->nev++];
	e->ts = (uint64_t)ev->posix_timestamp.tv_sec * 1000000000u +
	        (uint64_t)ev->posix_timestamp.tv_nsec;
	e->addr = (uint64_t)(uintptr_t)ev->posix_prog_address;
	e->data = l->ndata;
	e->len = (uint32_t)len;
	e->thread = th;
	e->id = (uint16_t)(ev->posix_event_id < PT_NIDS ? ev->posix_event_id : 0);
	e->trunc = (uint8_t)ev->posix_truncation_status;
	e->pad_ = 0;
	memcpy(l->data + l->ndata, data, len);
	l->ndata += len;
	l->count[e->id]++;
	l->th[th].count++;
	l->overflows += e->id == POSIX_TRACE_OVERFLOW;
	l->errors += e->id == POSIX_TRACE_ERROR;
	return 0;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct tproc *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

void tlog_finish(struct tlog *l)
{
	free(l->pr);
	l->pr = NULL;
	l->npr = 0;
	for (size_t i = 0; i < l->nth; i++) {
		size_t p;
		for (p = 0; p < l->npr && l->pr[p].pid != l->th[i].pid; p++)
			;
		if (p == l->npr) {
			struct tproc *n = realloc(l->pr, (l->npr + 1) * sizeof *n);
			if (!n)
				return;
			l->pr = n;
			l->pr[l->npr++] = (struct tproc){ l->th[i].pid, 0, 0, UINT64_MAX, 0 };
		}
		l->pr[p].nthreads++;
		l->pr[p].count += l->th[i].count;
	}
	qsort(l->pr, l->npr, sizeof *l->pr, cmp_proc);
	for (size_t i = 0; i < l->nth; i++)
		l->th[i].proc = (uint32_t)(tlog_proc(l, l->th[i].pid) - l->pr);
	for (size_t i = 0; i < l->nev; i++) {
		struct tproc *p = &l->pr[l->th[l->ev[i].thread].proc];
		if (l->ev[i].ts < p->first)
			p->first = l->ev[i].ts;
		if (l->ev[i].ts > p->last)
			p->last = l->ev[i].ts;
	}
}

const struct tproc *tlog_proc(const struct tlog *l, int32_t pid)
{
	struct tproc key = { .pid = pid };
	return bsearch(&key, l->pr, l->npr, sizeof key, cmp_proc);
}

const char tlog_unfinished[] =
	"the log has no final status: the recording was cut short (killed, or the disk "
	"filled); events up to the last complete block are kept";

/* "stretches of the log could not be read (...)", after the count */
void tlog_damage_text(const struct tlog *l, char *buf, size_t cap)
{
	snprintf(buf, cap, "stretch%s of the log could not be read (%s a posix_trace_error event)",
	         l->damaged == 1 ? "" : "es", l->damaged == 1 ? "it is" : "each is");
}

void tlog_warn(const struct tlog *l)
{
	char text[120];

	if (l->unfinished)
		err_msg("%s: %s", l->path, tlog_unfinished);
	if (l->damaged) {
		tlog_damage_text(l, text, sizeof text);
		err_msg("%s: %llu damaged %s", l->path, (unsigned long long)l->damaged, text);
	}
}

/* The format version in the header (docs/log-format.md: u16 at 12, in the
 * order of the byte-order mark at 8), 0 if unknown.  A version 1 log never
 * has a final loss count, finished or not: there we cannot tell. */
static unsigned log_version(int fd)
{
	unsigned char h[14];
	uint32_t bom;
	uint16_t v;

	if (pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h, "PSXTRLOG", 8))
		return 0;
	memcpy(&bom, h + 8, 4);
	memcpy(&v, h + 12, 2);
	if (bom == 0x04030201u)
		v = (uint16_t)(v >> 8 | v << 8);
	else if (bom != 0x01020304u)
		return 0;
	return v;
}

static int is_damage(const struct posix_trace_event_info *ev, const void *data, size_t len)
{
	int e;

	if (ev->posix_event_id != POSIX_TRACE_ERROR || len != sizeof e)
		return 0;
	memcpy(&e, data, sizeof e);
	return e == EBADMSG;
}

static int fail(const char *path, const char *what, int rc)
{
	if (rc == EINVAL)
		err_msg("%s: not a posixtrace log (or damaged beyond reading): %s", path, what);
	else
		err_msg("%s: %s: %s", path, what, strerror(rc));
	return 1;
}

/* The map of loaded code the log carries. */
static int tlog_objects(struct tlog *l, trace_id_t trid)
{
	for (;;) {
		size_t n = 0, cap = l->nobjs + 256;
		struct pt_ext_obj *o = realloc(l->objs, cap * sizeof *o);
		if (!o)
			return ENOMEM;
		l->objs = o;
		if (pt_ext_objects(trid, l->nobjs, o + l->nobjs, cap - l->nobjs, &n) != 0 || n == 0)
			return 0;
		l->nobjs += n;
	}
}

int tlog_load(struct tlog *l, const char *path)
{
	static unsigned char buf[TRACE_DATA_MAX + 1];
	trace_id_t trid;
	struct stat sb;
	int rc, fd = open(path, O_RDONLY | O_CLOEXEC);

	tlog_init(l);
	l->path = path;
	if (fd < 0) {
		err_msg("cannot open %s: %s%s", path, strerror(errno),
		        errno == ENOENT ? " (give the path of a log written by 'posixtrace record')"
		                        : "");
		return 1;
	}
	if (fstat(fd, &sb) == 0) {
		l->file_size = sb.st_size;
		if (!S_ISREG(sb.st_mode)) { /* the library would only say "not a log" */
			err_msg("%s: %s (give the path of a log written by 'posixtrace record')",
			        path, S_ISDIR(sb.st_mode) ? "is a directory" : "not a regular file");
			close(fd);
			return 1;
		}
	}
	if ((rc = posix_trace_open(fd, &trid)) != 0) {
		close(fd);
		return fail(path, "posix_trace_open", rc);
	}
	posix_trace_attr_init(&l->attr);
	if ((rc = posix_trace_get_attr(trid, &l->attr)) != 0 ||
	    (rc = posix_trace_get_status(trid, &l->st)) != 0) {
		posix_trace_close(trid);
		close(fd);
		return fail(path, "reading the attributes", rc);
	}
	for (;;) {
		trace_event_id_t id;
		int none;
		char name[TRACE_EVENT_NAME_MAX + 1];
		if (posix_trace_eventtypelist_getnext_id(trid, &id, &none) != 0 || none)
			break;
		if (id < PT_NIDS && posix_trace_eventid_get_name(trid, id, name) == 0) {
			l->listed[id] = 1;
			free(l->names[id]);
			l->names[id] = strdup(name);
		}
	}
	struct progress p;
	char what[300];
	snprintf(what, sizeof what, "reading %s", path);
	progress_begin(&p, what, 0); /* (how many events, the log does not say) */
	for (uint64_t n = 1;; n++) {
		struct posix_trace_event_info ev;
		size_t len = 0;
		int none = 0;
		rc = posix_trace_getnext_event(trid, &ev, buf, sizeof buf, &len, &none);
		if (rc || none)
			break;
		progress_update(&p, n);
		if (tlog_add(l, &ev, buf, len) || tlog_note_loss(l, trid, &ev)) {
			rc = ENOMEM;
			break;
		}
		l->damaged += is_damage(&ev, buf, len);
	}
	progress_end(&p);
	if (!rc)
		rc = tlog_objects(l, trid);
	if (!rc && (!(l->thrs = thrmap_load(trid)) || !(l->types = typemap_load(trid))))
		rc = ENOMEM;
	if (!rc) {
		tlog_note_totals(l, trid);
		l->unfinished = !l->lost_final && log_version(fd) >= 2;
	}
	posix_trace_close(trid);
	close(fd);
	if (rc)
		return fail(path, "reading events", rc);
	tlog_finish(l);
	free(l->hash_);
	l->hash_ = NULL;
	l->hcap_ = 0;
	return 0;
}

void tlog_free(struct tlog *l)
{
	for (unsigned i = 0; i < PT_NIDS; i++)
		free(l->names[i]);
	free(l->ev);
	free(l->data);
	free(l->th);
	free(l->pr);
	free(l->hash_);
	free(l->gaps);
	free(l->objs);
	thrmap_free(l->thrs);
	typemap_free(l->types);
	posix_trace_attr_destroy(&l->attr);
	memset(l, 0, sizeof *l);
}

/* The name of type id: the log's, the standard one, or "event-ID". */
const char *tlog_name(const struct tlog *l, unsigned id, char *buf, size_t cap)
{
	if (id < PT_NIDS && l->names[id])
		return l->names[id];
	const char *s = system_event_name(id);
	if (s)
		return s;
	snprintf(buf, cap, "event-%u", id);
	return buf;
}
