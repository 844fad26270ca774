/*
 * flight.c -- `record --flight SIZE --snapshot-on TRIGGER ... -o DIR` (and
 * attach): the program records into a LOOP stream of SIZE that nobody
 * consumes; the recorder follows it without taking anything
 * (pt_ext_follow_*, src/control/snapshot.c) and, when a trigger fires,
 * copies the window [T - before, T + after] around the trigger's time T
 * out of the stream (pt_ext_snapshot_copy) and a writer thread writes it
 * as a log of its own, DIR/NAME-N.ptlog (pt_ext_snapshot_write: names,
 * map of loaded code, threads, descriptions; fsync'ed, then linked into
 * place and the directory synced), while the follower goes on; the copies wait for the writer
 * in a queue of FLIGHT_QUEUE (a window due while it is full is counted,
 * not taken).
 *
 * Triggers (--snapshot-on, up to FLIGHT_TRIGGERS of them):
 *   TYPE[:WHERE]      an event of type TYPE (event:TYPE[:WHERE] when the
 *                     type is named like a keyword below), whose payload
 *                     matches the --where expression WHERE (cli/read/where.c,
 *                     on the type's latest description)
 *   span:NAME>DUR     a span NAME/begin .. NAME/end of one thread longer
 *                     than DUR, tested when the end arrives (a stack per
 *                     thread, as cli/enrich/spans.c pairs them)
 *   trigger:NAME      posixtrace_trigger(NAME) in the program, or
 *                     `posixtrace trigger NAME` (cli/cmd/trigger.c) sent to
 *                     the recorder's socket; NAME may be a glob
 *   full:N%           the stream's sealed chunks above N% of its size,
 *                     once each time it rises above
 * --max N: at most N snapshots; --every DUR: a trigger less than DUR after
 * the last one taken is counted, not taken; a trigger while a snapshot
 * waits for its --after is folded into it.
 *
 * The recorder's socket: the abstract datagram name
 * "posixtrace/flight/PID" (PID the recorder's), whose pid is also in
 * DIR/.posixtrace-recorder; a datagram is a trigger name, taken only
 * from a process of the recorder's own user (or root).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "cmd.h"

enum { TK_TYPE = 1, TK_SPAN, TK_NAMED, TK_FULL };

struct trig {
	int kind;
	const char *text;           /* as given */
	char name[TRACE_EVENT_NAME_MAX + 1]; /* type, span or trigger name */
	struct where *where;
	trace_event_id_t id, end_id; /* type or begin; end */
	uint64_t dur_ns;            /* span: longer than this */
	unsigned permille;          /* full: above this */
	int span_i;                 /* span: its number among the span triggers */
	int above;                  /* full: it was above at the last look */
	uint64_t fired;
};

/* the open spans of one writer (span triggers): begin times, per trigger */
#define SPAN_DEPTH 64
#define SPAN_WRITERS 4096
struct spanw {
	int32_t pid;
	uint32_t level, used;
	uint64_t thread;
	uint8_t depth[FLIGHT_TRIGGERS];
	uint64_t *begin;            /* [span triggers][SPAN_DEPTH] */
};

/* a snapshot waiting for its window's end; ev (has_ev) the trigger event
 * as the follower saw it, its data copied (the snapshot writes it even
 * when the program has overwritten it in the stream by then) */
struct pending {
	uint64_t t, due;
	char why[128];
	int has_ev;
	struct pt_ext_fev ev;
	unsigned char *data;
};

/* a window copied out of the stream, waiting for the writer thread (or
 * being written by it).  Copies wait rather than being given up when the
 * writer is behind (a storm of triggers, each window longer to write than
 * the time between them): each is taken when due, while its window is in
 * the stream, and holds no more than its window's chunks; at most
 * FLIGHT_QUEUE at once, the one being written among them, so that the
 * memory a storm takes is bounded (--every and --max bound it further) */
#define FLIGHT_QUEUE 8
struct job {
	struct pt_ext_snapcopy *cp;
	uint64_t t;                 /* the trigger's time */
	uint64_t copied;            /* (realtime) when the copy was taken */
	uint64_t mono0;             /* (monotonic) when the copy began */
	int has_ev;
	char why[128];
};

/* an event whose type had no description yet when it came (they are taken
 * between polls: the follower holds the stream's lock), tested after */
#define DEFER_MAX 64
struct deferred { struct pt_ext_fev e; int trig; unsigned char data[256]; };

struct flight {
	const struct flight_opts *o;
	trace_id_t trid;
	const char *dir, *name;
	struct trig tr[FLIGHT_TRIGGERS];
	int ntr, nspan;
	uint64_t want[PT_NIDS / 64];
	struct pt_ext_follow *fol;
	char *desc[PT_NIDS];        /* latest payload description per type */
	size_t ntypes;
	struct spanw *sw;           /* SPAN_WRITERS, open addressing */
	uint64_t span_dropped;
	struct deferred defer[DEFER_MAX];
	int ndefer;
	unsigned polls;
	uint64_t undescribed;       /* events of a type never described: no field matches */
	int sock;
	char recfile[4096];
	/* snapshots */
	int have_pending;
	int stopped;                /* the last poll stopped at a window's end */
	struct pending pend;
	uint64_t last_taken;        /* trigger time of the last one taken */
	unsigned started;           /* copies taken or tried (the follower's; for --max) */
	uint64_t triggers, limited, folded, busy;
	/* the writer thread: the copies waiting (q), the one it writes
	 * (writing); the counts below under mu, written by whichever thread
	 * writes or fails a snapshot */
	pthread_t wr;
	int wr_started, quit;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job q[FLIGHT_QUEUE];
	int qhead, nq, writing;
	unsigned taken, failed, next_n;
	unsigned lapped, empty; /* snapshots the program overwrote the window of, in part; whole */
};

/* ------------------------------------------------------------ options */

int flight_duration(const char *s, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0 || v != v)
		return -1;
	double mul = !*end || !strcmp(end, "s") ? 1e9 : !strcmp(end, "ms") ? 1e6
	           : !strcmp(end, "us") ? 1e3 : !strcmp(end, "ns") ? 1 : !strcmp(end, "m") ? 60e9 : !strcmp(end, "h") ? 3600e9 : 0;
	if (!mul || v * mul > 1e18)
		return -1;
	*ns = (uint64_t)(v * mul + 0.5);
	return 0;
}

int flight_option(struct flight_opts *f, const char *opt, const char *arg)
{
	if (!strcmp(opt, "flight")) {
		if (parse_size(arg, &f->size) || f->size == 0)
			return usage_error("--flight: '%s' is not a size in bytes (like 64M)", arg);
	} else if (!strcmp(opt, "snapshot-on")) {
		if (f->non >= FLIGHT_TRIGGERS)
			return usage_error("--snapshot-on: at most %d triggers", FLIGHT_TRIGGERS);
		f->on[f->non++] = arg;
	} else if (!strcmp(opt, "before") || !strcmp(opt, "after") || !strcmp(opt, "every")) {
		uint64_t *v = opt[0] == 'b' ? &f->before_ns : opt[0] == 'a' ? &f->after_ns : &f->every_ns;
		if (flight_duration(arg, v))
			return usage_error("--%s: '%s' is not a duration (like 2s, 50ms, 100us)", opt, arg);
		if (opt[0] == 'b')
			f->before_set = 1;
	} else if (!strcmp(opt, "max")) {
		char *end;
		errno = 0;
		unsigned long v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || *arg == '-' || v == 0 || v > 1000000)
			return usage_error("--max: '%s' is not a number of snapshots from 1 to 1000000",
			                   arg);
		f->max = (unsigned)v;
	}
	return 0;
}

/* Parse trigger text into t (names are looked up later). */
static int trig_parse(const char *s, struct trig *t)
{
	char err[200];
	const char *colon;

	memset(t, 0, sizeof *t);
	t->text = s;
	if (!strncmp(s, "span:", 5)) {
		const char *gt = strrchr(s + 5, '>'); /* (a duration has none) */
		size_t n = gt ? (size_t)(gt - (s + 5)) : 0;
		if (!gt || n == 0 || n + 6 > sizeof t->name || flight_duration(gt + 1, &t->dur_ns))
			return usage_error("--snapshot-on '%s': a span trigger is span:NAME>DURATION "
			                   "(like span:request>50ms; NAME/begin and NAME/end pair)", s);
		memcpy(t->name, s + 5, n);
		t->kind = TK_SPAN;
		return 0;
	}
	if (!strncmp(s, "trigger:", 8)) {
		if (!s[8] || strlen(s + 8) > 63)
			return usage_error("--snapshot-on '%s': trigger:NAME, NAME 1 to 63 bytes", s);
		snprintf(t->name, sizeof t->name, "%s", s + 8);
		t->kind = TK_NAMED;
		return 0;
	}
	if (!strncmp(s, "full:", 5)) {
		char *end;
		errno = 0;
		double p = strtod(s + 5, &end);
		if (errno || end == s + 5 || strcmp(end, "%") || p <= 0 || p > 100)
			return usage_error("--snapshot-on '%s': full:N%% with N above 0, at most 100", s);
		t->permille = (unsigned)(p * 10 + 0.5);
		t->kind = TK_FULL;
		return 0;
	}
	/* TYPE[:WHERE], where TYPE may hold ':' itself (a name like
	 * "http:request"): the condition is what follows the last ':' that
	 * begins a valid condition (one with a comparison: a bare word after
	 * a ':' is part of the name); a ':' at the very end closes the name
	 * with no condition, for a name whose tail would read as one */
	const char *ty = !strncmp(s, "event:", 6) ? s + 6 : s;
	size_t len = strlen(ty), n = len;
	const char *bad = NULL; /* the last ':' before a comparison that does not parse */
	char bad_err[200] = "";
	if (len && ty[len - 1] == ':') {
		n = len - 1;
	} else {
		for (colon = ty + len; colon > ty && !t->where;) {
			while (--colon > ty && *colon != ':')
				;
			if (*colon != ':')
				break;
			if ((t->where = where_parse(colon + 1, err, sizeof err)) != NULL)
				n = (size_t)(colon - ty);
			else if (!bad && strpbrk(colon + 1, "<>=!")) {
				bad = colon;
				snprintf(bad_err, sizeof bad_err, "%s", err);
			}
		}
		if (!t->where && bad)
			return usage_error("--snapshot-on '%s': the condition '%s' %s (a type whose "
			                   "name ends so is written with a ':' after it: '%s:')", s,
			                   bad + 1, bad_err, s);
	}
	if (n == 0 || n > TRACE_EVENT_NAME_MAX) {
		where_free(t->where);
		t->where = NULL;
		return usage_error("--snapshot-on '%s': an event type is 1 to %d characters", s,
		                   TRACE_EVENT_NAME_MAX);
	}
	memcpy(t->name, ty, n);
	t->kind = TK_TYPE;
	return 0;
}

int flight_check(struct flight_opts *f)
{
	if (!f->size)
		return f->non || f->before_set || f->after_ns || f->max || f->every_ns
		       ? usage_error("--snapshot-on, --before, --after, --max and --every go with "
		                     "--flight SIZE")
		       : 0;
	if (!f->non)
		return usage_error("--flight: say when to take a snapshot (--snapshot-on TRIGGER)");
	for (int i = 0; i < f->non; i++) {
		struct trig t;
		int rc = trig_parse(f->on[i], &t);
		where_free(t.where);
		if (rc)
			return rc;
	}
	return 0;
}

/* ------------------------------------------------------------ triggers */

static void fire(struct flight *fl, struct trig *t, uint64_t when, const char *why,
                 const struct pt_ext_fev *e)
{
	t->fired++;
	fl->triggers++;
	if (fl->have_pending) {
		fl->folded++; /* its window is being waited for: the same snapshot */
		return;
	}
	if ((fl->o->max && fl->started >= fl->o->max) ||
	    (fl->o->every_ns && fl->last_taken && when < fl->last_taken + fl->o->every_ns)) {
		fl->limited++;
		return;
	}
	fl->have_pending = 1;
	fl->last_taken = when;
	fl->pend.t = when;
	fl->pend.due = when + fl->o->after_ns;
	snprintf(fl->pend.why, sizeof fl->pend.why, "%s", why);
	fl->pend.has_ev = 0;
	if (e) {
		unsigned char *d = realloc(fl->pend.data, e->len ? e->len : 1);
		if (d) {
			memcpy(d, e->data, e->len);
			fl->pend.data = d;
			fl->pend.ev = *e;
			fl->pend.ev.data = d;
			fl->pend.has_ev = 1;
		}
	}
}

static void take_types(struct flight *fl)
{
	struct pt_ext_type ty[16];
	size_t n;
	while (pt_ext_types(fl->trid, fl->ntypes, ty, 16, &n) == 0 && n) {
		for (size_t i = 0; i < n; i++)
			if (ty[i].id < PT_NIDS) {
				free(fl->desc[ty[i].id]);
				fl->desc[ty[i].id] = strdup(ty[i].desc);
			}
		fl->ntypes += n;
	}
}

struct wget { const struct typed_at *at; size_t n; const unsigned char *d; };

/* 1 if e's payload matches t's condition, 0 if not, -1 if its type has
 * no description yet */
static int where_ok(struct flight *fl, const struct trig *t, const struct pt_ext_fev *e)
{
	if (!t->where)
		return 1;
	const char *desc = fl->desc[e->id];
	if (!desc)
		return -1;
	struct typed_at at[PT_EXT_FIELDS_MAX];
	size_t n;
	if (!desc || typed_layout(desc, e->data, e->len, at, &n, NULL, 0))
		return 0;
	struct where_typed g = { at, n, e->data };
	return where_eval(t->where, where_get_typed, &g);
}

static struct spanw *span_writer(struct flight *fl, const struct pt_ext_fev *e)
{
	uint64_t h = (e->thread * 0x9e3779b97f4a7c15ull) ^ (uint64_t)(uint32_t)e->pid * 31 ^ e->level;
	for (unsigned k = 0; k < 64; k++) {
		struct spanw *w = &fl->sw[(h + k) % SPAN_WRITERS];
		if (!w->used) {
			if (!(w->begin = calloc((size_t)fl->nspan * SPAN_DEPTH, sizeof *w->begin)))
				return NULL;
			w->used = 1, w->pid = e->pid, w->thread = e->thread, w->level = e->level;
			return w;
		}
		if (w->pid == e->pid && w->thread == e->thread && w->level == e->level)
			return w;
	}
	return NULL;
}

static int on_event(void *arg, const struct pt_ext_fev *e)
{
	struct flight *fl = arg;
	char why[96];

	for (int i = 0; i < fl->ntr; i++) {
		struct trig *t = &fl->tr[i];
		int ok;
		if (t->kind == TK_TYPE && e->id == t->id && (ok = where_ok(fl, t, e)) != 0) {
			if (ok < 0 && fl->ndefer < DEFER_MAX && e->len <= sizeof fl->defer[0].data) {
				struct deferred *d = &fl->defer[fl->ndefer++];
				d->e = *e;
				d->trig = i;
				memcpy(d->data, e->data, e->len);
				d->e.data = d->data;
				continue;
			}
			if (ok < 0) {
				fl->undescribed++;
				continue;
			}
			snprintf(why, sizeof why, "%s", t->text);
			fire(fl, t, e->ns, why, e);
		} else if (t->kind == TK_NAMED && e->id == PT_EXT_TRIGGER) {
			char nm[64];
			snprintf(nm, sizeof nm, "%.*s", (int)(e->len < 63 ? e->len : 63),
			         (const char *)e->data);
			if (glob_match(t->name, nm, strlen(nm))) {
				snprintf(why, sizeof why, "trigger %s (pid %d)", nm, (int)e->pid);
				fire(fl, t, e->ns, why, e);
			}
		} else if (t->kind == TK_SPAN && (e->id == t->id || e->id == t->end_id)) {
			struct spanw *w = span_writer(fl, e);
			if (!w) {
				fl->span_dropped++;
				continue;
			}
			uint8_t *d = &w->depth[t->span_i];
			uint64_t *b = w->begin + (size_t)t->span_i * SPAN_DEPTH;
			if (e->id == t->id) {
				if (*d < SPAN_DEPTH)
					b[(*d)++] = e->ns;
				else
					fl->span_dropped++; /* deeper than kept: not timed */
			} else if (*d > 0) {
				uint64_t start = b[--(*d)];
				if (e->ns > start && e->ns - start > t->dur_ns) {
					snprintf(why, sizeof why, "span %s of %.3f ms", t->name,
					         (double)(e->ns - start) / 1e6);
					fire(fl, t, e->ns, why, e);
				}
			}
		}
	}
	/* a snapshot's window has ended in the follower's view: the poll
	 * stops there, so that the snapshot is taken now rather than after
	 * the rest of a backlog (tens of ms under a flood, while the program
	 * goes on overwriting the window) */
	fl->stopped = fl->have_pending && e->ns >= fl->pend.due;
	return fl->stopped;
}

static void take_socket(struct flight *fl)
{
	char buf[128], cbuf[CMSG_SPACE(sizeof(struct ucred))];
	for (int k = 0; k < 64 && fl->sock >= 0; k++) {
		struct iovec iov = { buf, sizeof buf - 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
		                    .msg_controllen = sizeof cbuf };
		ssize_t n = recvmsg(fl->sock, &m, MSG_DONTWAIT);
		if (n < 0)
			return;
		const struct ucred *cr = NULL;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
			    c->cmsg_len >= CMSG_LEN(sizeof *cr))
				cr = (const struct ucred *)(const void *)CMSG_DATA(c);
		if (!cr || (cr->uid != geteuid() && cr->uid != 0) || n == 0 || n > 63)
			continue; /* another user's, or not a name */
		buf[n] = 0;
		if (memchr(buf, 0, (size_t)n))
			continue;
		for (int i = 0; i < fl->ntr; i++)
			if (fl->tr[i].kind == TK_NAMED && glob_match(fl->tr[i].name, buf, (size_t)n)) {
				char why[96];
				snprintf(why, sizeof why, "trigger %.63s (from pid %d)", buf, (int)cr->pid);
				fire(fl, &fl->tr[i], now_realtime_ns(), why, NULL);
				break;
			}
	}
}

/* ------------------------------------------------------------ snapshots */

/* The directory's entry for a snapshot made durable too: until the
 * directory is synced, a crash can leave the file's blocks on the disk
 * without its name (0 or an error number; a file system that cannot sync
 * a directory is taken at its word). */
static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int rc = fsync(fd) && errno != EINVAL && errno != EROFS ? errno : 0;
	close(fd);
	return rc;
}

/* The log of a copied window, written, fsync'ed and linked into place
 * (the writer thread; the follower's, when no thread could be made). */
static void write_job(struct flight *fl, struct job *j)
{
	char path[4096], tmp[4096];
	int fd = -1, rc = 0;
	struct pt_ext_snap s;

	for (int tries = 0; tries < 1000; tries++) {
		unsigned n = ++fl->next_n;
		snprintf(path, sizeof path, "%s/%s-%u.ptlog", fl->dir, fl->name, n);
		snprintf(tmp, sizeof tmp, "%s/.%s-%u.ptlog.part", fl->dir, fl->name, n);
		if (access(path, F_OK) == 0)
			continue;
		if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) >= 0 ||
		    errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err_msg("snapshot %s: %s (recording goes on)", tmp, strerror(errno));
		pthread_mutex_lock(&fl->mu);
		fl->failed++;
		pthread_mutex_unlock(&fl->mu);
		return;
	}
	rc = pt_ext_snapshot_write(j->cp, fd, &s);
	if (close(fd) && !rc)
		rc = errno;
	/* into place under a name nobody took meanwhile (link fails on an
	 * existing name, where rename would replace it) */
	for (int tries = 0; !rc && link(tmp, path) != 0; tries++) {
		if (errno != EEXIST || tries >= 1000) {
			rc = errno;
			break;
		}
		snprintf(path, sizeof path, "%s/%s-%u.ptlog", fl->dir, fl->name, ++fl->next_n);
	}
	unlink(tmp);
	if (!rc)
		rc = sync_dir(fl->dir);
	if (rc) {
		pthread_mutex_lock(&fl->mu);
		fl->failed++;
		pthread_mutex_unlock(&fl->mu);
		err_msg("snapshot %s: %s (trigger: %s; recording goes on)", path, strerror(rc),
		        j->why);
		return;
	}
	uint64_t took = now_mono_ns() - j->mono0;
	/* overwritten up to the trigger: its event gone from the stream, or
	 * none of its thread's before it left (or, with no event, a thread's
	 * chunks all begun after the window) */
	int lapped = s.events && (s.trig_kept || s.trig_alone || (!j->has_ev && s.lapped));
	pthread_mutex_lock(&fl->mu);
	fl->taken++;
	fl->empty += !s.events;
	fl->lapped += lapped;
	pthread_mutex_unlock(&fl->mu);
	if (!s.events) { /* nothing of its window is left: said as such, not as a snapshot */
		err_msg("snapshot %s holds no event: the program overwrote its window in the "
		        "stream (%llu thread%s lapped it, %llu chunk%s dropped while copied) "
		        "before it could be copied, %.1f ms after the trigger (%s); a larger "
		        "--flight keeps more", path, (unsigned long long)s.lapped,
		        s.lapped == 1 ? "" : "s", (unsigned long long)s.dropped,
		        s.dropped == 1 ? "" : "s",
		        (double)(j->copied - j->t) / 1e6, j->why);
		return;
	}
	char dropped[160];
	snprintf(dropped, sizeof dropped, " (%llu chunk%s, about %llu events, overwritten while "
	         "copied were left out)", (unsigned long long)s.dropped, s.dropped == 1 ? "" : "s",
	         (unsigned long long)s.dropped_events);
	err_msg("snapshot %s: %llu events, %.3f s before and %.3f s after the trigger (%s); "
	        "copied %.1f ms after it, written in %.1f ms%s", path,
	        (unsigned long long)s.events,
	        s.first < j->t ? (double)(j->t - s.first) / 1e9 : 0.0,
	        s.last > j->t ? (double)(s.last - j->t) / 1e9 : 0.0,
	        j->why, (double)(j->copied - j->t) / 1e6, (double)took / 1e6,
	        s.dropped ? dropped : "");
	if (lapped)
		err_msg("snapshot %s lacks most of its window: the program overwrote it in the "
		        "stream before it could be copied, %.1f ms after the trigger (%s); a larger "
		        "--flight keeps more", path, (double)(j->copied - j->t) / 1e6,
		        s.trig_kept ? "the trigger event is there, from the recorder's own look, "
		                      "after a loss"
		        : s.trig_alone ? "none of the trigger's thread's events before it is left"
		                       : "threads' events up to the trigger are lost");
}

static void *writer(void *arg)
{
	struct flight *fl = arg;
	/* the copies' memory made ready while nothing is due, so that the
	 * first snapshot meets no fresh page (a copy taken meanwhile makes
	 * its own, as without); not for a flight recorder written only at
	 * the end */
	if (fl->ntr)
		(void)pt_ext_snapshot_prepare(fl->trid);
	pthread_mutex_lock(&fl->mu);
	for (;;) {
		while (!fl->nq && !fl->quit)
			pthread_cond_wait(&fl->cv, &fl->mu);
		if (!fl->nq)
			break; /* (quit, and nothing left to write) */
		struct job j = fl->q[fl->qhead];
		fl->qhead = (fl->qhead + 1) % FLIGHT_QUEUE;
		fl->nq--;
		fl->writing = 1;
		pthread_mutex_unlock(&fl->mu);
		write_job(fl, &j);
		pt_ext_snapshot_free(j.cp);
		pthread_mutex_lock(&fl->mu);
		fl->writing = 0;
	}
	pthread_mutex_unlock(&fl->mu);
	return NULL;
}

/* The pending snapshot's window copied out of the stream now (the
 * follower's thread: a copy of chunks, fast), its log written by the
 * writer thread, so that the follower goes on looking meanwhile.  At
 * most FLIGHT_QUEUE copies wait or are written at once: a window due
 * while they all are is not taken, counted (busy). */
static void take_snapshot(struct flight *fl)
{
	fl->have_pending = 0;
	pthread_mutex_lock(&fl->mu);
	int full = fl->nq + fl->writing >= FLIGHT_QUEUE;
	pthread_mutex_unlock(&fl->mu);
	if (full) {
		fl->busy++;
		return;
	}
	fl->started++;
	struct job j = { NULL, fl->pend.t, now_realtime_ns(), now_mono_ns(), fl->pend.has_ev, "" };
	snprintf(j.why, sizeof j.why, "%s", fl->pend.why);
	uint64_t from = fl->o->before_set && fl->pend.t > fl->o->before_ns
	              ? fl->pend.t - fl->o->before_ns : 0;
	int rc = pt_ext_snapshot_copy(fl->trid, from, fl->pend.t + fl->o->after_ns,
	                              fl->pend.has_ev ? &fl->pend.ev : NULL, &j.cp);
	if (rc) {
		pthread_mutex_lock(&fl->mu);
		fl->failed++;
		pthread_mutex_unlock(&fl->mu);
		err_msg("snapshot: cannot copy the window: %s (trigger: %s; recording goes on)",
		        strerror(rc), j.why);
		return;
	}
	if (!fl->wr_started) {
		write_job(fl, &j);
		pt_ext_snapshot_free(j.cp);
		return;
	}
	pthread_mutex_lock(&fl->mu);
	fl->q[(fl->qhead + fl->nq) % FLIGHT_QUEUE] = j;
	fl->nq++;
	pthread_cond_signal(&fl->cv);
	pthread_mutex_unlock(&fl->mu);
}

/* ------------------------------------------------------------ the loop */

static int open_socket(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int one = 1;
	int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "posixtrace/flight/%d",
	                 (int)getpid());
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -1;
	if (setsockopt(s, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) ||
	    bind(s, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	                                               (size_t)n))) {
		close(s);
		return -1;
	}
	return s;
}

int flight_prepare(const char *dir)
{
	struct stat st;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err_msg("%s: cannot make the snapshots' directory: %s", dir, strerror(errno));
		return 1;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		err_msg("%s: not a directory (with --flight, -o names the snapshots' directory)", dir);
		return 1;
	}
	return 0;
}

struct flight *flight_start(const struct flight_opts *o, trace_id_t trid, const char *dir,
                            const char *name)
{
	struct flight *fl = calloc(1, sizeof *fl);
	if (!fl || !(fl->sw = calloc(SPAN_WRITERS, sizeof *fl->sw))) {
		free(fl);
		err_msg("out of memory");
		return NULL;
	}
	fl->o = o, fl->trid = trid, fl->dir = dir, fl->name = name, fl->sock = -1;
	pthread_mutex_init(&fl->mu, NULL);
	pthread_cond_init(&fl->cv, NULL);
	for (int i = 0; i < o->non; i++) {
		struct trig *t = &fl->tr[fl->ntr++];
		trig_parse(o->on[i], t); /* (checked by flight_check) */
		char nm[TRACE_EVENT_NAME_MAX + 16];
		int rc = 0;
		if (t->kind == TK_TYPE) {
			rc = posix_trace_trid_eventid_open(trid, t->name, &t->id);
		} else if (t->kind == TK_SPAN) {
			t->span_i = fl->nspan++;
			snprintf(nm, sizeof nm, "%s/begin", t->name);
			if (!(rc = posix_trace_trid_eventid_open(trid, nm, &t->id))) {
				snprintf(nm, sizeof nm, "%s/end", t->name);
				rc = posix_trace_trid_eventid_open(trid, nm, &t->end_id);
			}
		}
		if (rc) {
			err_msg("--snapshot-on '%s': %s", t->text, strerror(rc));
			flight_end(fl, 0);
			return NULL;
		}
		if (t->kind == TK_TYPE || t->kind == TK_SPAN) {
			fl->want[t->id / 64] |= 1ull << (t->id % 64);
			fl->want[t->end_id / 64] |= t->kind == TK_SPAN ? 1ull << (t->end_id % 64) : 0;
		}
		if (t->kind == TK_NAMED) {
			fl->want[PT_EXT_TRIGGER / 64] |= 1ull << (PT_EXT_TRIGGER % 64);
			if (fl->sock < 0 && (fl->sock = open_socket()) < 0)
				err_msg("cannot listen for 'posixtrace trigger': %s (the program's own "
				        "triggers still work)", strerror(errno));
		}
	}
	int rc = pt_ext_follow_open(trid, fl->want, &fl->fol);
	if (rc) {
		err_msg("cannot follow the stream: %s", strerror(rc));
		flight_end(fl, 0);
		return NULL;
	}
	/* the writer thread, with every signal blocked (they are the
	 * recorder's main thread's); with none, snapshots are written inline */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	fl->wr_started = pthread_create(&fl->wr, NULL, writer, fl) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fl->sock >= 0) {
		snprintf(fl->recfile, sizeof fl->recfile, "%s/.posixtrace-recorder", dir);
		int fd = open(fl->recfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0) {
			dprintf(fd, "%d\n", (int)getpid());
			close(fd);
		} else {
			fl->recfile[0] = 0;
		}
	}
	return fl;
}

/* its window's end is past once the clock is: the copy then waits for
 * the events in flight (stamped, not yet committed: src/control/snapshot.c,
 * settle), so the grace only covers the distance between the stream's
 * clock, as converted, and CLOCK_REALTIME */
#define FLIGHT_GRACE_NS 200000ull
static int due(const struct flight *fl)
{
	return fl->have_pending && now_realtime_ns() >= fl->pend.due + FLIGHT_GRACE_NS;
}

/* How long until the pending snapshot is due: the caller's loop wakes
 * then rather than at its next look (a look every 1 ms would add up to
 * 1 ms to the trigger's latency). */
uint64_t flight_wait_ns(struct flight *fl)
{
	if (!fl || !fl->have_pending)
		return UINT64_MAX;
	uint64_t now = now_realtime_ns(), at = fl->pend.due + FLIGHT_GRACE_NS;
	return at > now ? at - now : 0;
}

void flight_step(struct flight *fl)
{
	if (!fl)
		return;
	if (due(fl)) /* (before the follower goes on) */
		take_snapshot(fl);
	fl->stopped = 0;
	pt_ext_follow_poll(fl->fol, on_event, fl);
	/* the map's area (thread and process identities, descriptions, code)
	 * is a ring the reader must drain, or its later entries are lost:
	 * taken every 100 ms (descriptions kept for conditions, the rest for
	 * the snapshots) */
	if (++fl->polls % 50 == 0)
		take_types(fl);
	if (fl->ndefer) { /* their descriptions came after the last look? */
		take_types(fl);
		for (int k = 0; k < fl->ndefer; k++) {
			struct deferred *d = &fl->defer[k];
			int ok = where_ok(fl, &fl->tr[d->trig], &d->e);
			if (ok > 0)
				fire(fl, &fl->tr[d->trig], d->e.ns, fl->tr[d->trig].text, &d->e);
			fl->undescribed += ok < 0;
		}
		fl->ndefer = 0;
	}
	take_socket(fl);
	for (int i = 0; i < fl->ntr; i++) {
		struct trig *t = &fl->tr[i];
		unsigned use;
		if (t->kind != TK_FULL || pt_ext_stream_use(fl->trid, &use))
			continue;
		if (use >= t->permille && !t->above) {
			char why[96];
			snprintf(why, sizeof why, "the stream %.1f%% full", use / 10.0);
			fire(fl, t, now_realtime_ns(), why, NULL);
		}
		t->above = use >= t->permille;
	}
	if (due(fl))
		take_snapshot(fl);
}

int flight_end(struct flight *fl, int final)
{
	if (!fl)
		return 0;
	if (final) {
		/* the program ended: a window ends there too; the follower to
		 * the end of the stream.  A poll stops at a window's end (and
		 * flight_step may take that window itself), so it is the poll
		 * that says whether the end is reached: a follower behind the
		 * program has a backlog of triggers still to see here. */
		for (;;) {
			flight_step(fl);
			if (fl->have_pending)
				take_snapshot(fl);
			if (!fl->stopped)
				break;
		}
	}
	if (fl->wr_started) { /* the copies taken are written before the end */
		pthread_mutex_lock(&fl->mu);
		fl->quit = 1;
		pthread_cond_signal(&fl->cv);
		pthread_mutex_unlock(&fl->mu);
		pthread_join(fl->wr, NULL);
		fl->wr_started = 0;
	}
	if (final) {
		err_msg("flight recorder: %llu trigger%s, %u snapshot%s written to %s/%s", 
		        (unsigned long long)fl->triggers, fl->triggers == 1 ? "" : "s", fl->taken,
		        fl->taken == 1 ? "" : "s", fl->dir, fl->taken ? "" : " (none)");
		if (fl->limited || fl->folded)
			err_msg("flight recorder: %llu trigger%s over --max or --every, %llu during a "
			        "snapshot's --after (in that snapshot)", (unsigned long long)fl->limited,
			        fl->limited == 1 ? "" : "s", (unsigned long long)fl->folded);
		if (fl->busy)
			err_msg("flight recorder: %llu snapshot%s not taken: %d others were waiting or "
			        "being written when %s window ended", (unsigned long long)fl->busy,
			        fl->busy == 1 ? "" : "s", FLIGHT_QUEUE, fl->busy == 1 ? "its" : "their");
		if (fl->undescribed)
			err_msg("flight recorder: %llu event%s of a type with a condition but no payload "
			        "description: not matched", (unsigned long long)fl->undescribed,
			        fl->undescribed == 1 ? "" : "s");
		if (fl->failed)
			err_msg("flight recorder: %u snapshot%s could not be written (see above)",
			        fl->failed, fl->failed == 1 ? "" : "s");
		if (fl->empty || fl->lapped)
			err_msg("flight recorder: %u snapshot%s hold%s no event and %u lack%s most of "
			        "the window: overwritten by the program before they were copied (see "
			        "above)", fl->empty, fl->empty == 1 ? "" : "s", fl->empty == 1 ? "s" : "",
			        fl->lapped, fl->lapped == 1 ? "s" : "");
		uint64_t missed = fl->fol ? pt_ext_follow_missed(fl->fol) : 0;
		if (missed || fl->span_dropped)
			err_msg("flight recorder: triggers may have been missed: %llu chunk%s overwritten "
			        "before the recorder looked at them, %llu span event%s not paired",
			        (unsigned long long)missed, missed == 1 ? "" : "s",
			        (unsigned long long)fl->span_dropped, fl->span_dropped == 1 ? "" : "s");
	}
	int failed = fl->failed > 0 || fl->empty > 0;
	while (fl->nq) { /* (copies never written: the thread could not finish) */
		pt_ext_snapshot_free(fl->q[fl->qhead].cp);
		fl->qhead = (fl->qhead + 1) % FLIGHT_QUEUE;
		fl->nq--;
	}
	pthread_mutex_destroy(&fl->mu);
	pthread_cond_destroy(&fl->cv);
	free(fl->pend.data);
	pt_ext_follow_close(fl->fol);
	for (int i = 0; i < fl->ntr; i++)
		where_free(fl->tr[i].where);
	for (size_t i = 0; i < PT_NIDS; i++)
		free(fl->desc[i]);
	for (size_t i = 0; i < SPAN_WRITERS; i++)
		free(fl->sw[i].begin);
	free(fl->sw);
	if (fl->sock >= 0)
		close(fl->sock);
	if (fl->recfile[0])
		unlink(fl->recfile);
	free(fl);
	return failed;
}

unsigned flight_taken(struct flight *fl)
{
	if (!fl)
		return 0;
	pthread_mutex_lock(&fl->mu);
	unsigned n = fl->taken;
	pthread_mutex_unlock(&fl->mu);
	return n;
}
