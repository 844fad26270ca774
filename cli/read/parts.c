/*
 * parts.c -- a set of logs read as one trace: the parts a recording was
 * cut into (DIR/NAME-N.ptlog, `record --rotate`), or several logs named
 * on the command line.  A command gives its LOG operands to
 * tlog_operands(); trace.c hands a path that names a set (a directory, or
 * that list) to parts_load(), and its reading functions to the ones here;
 * each part is read as one log (tlog.c's tlog_one_* functions).
 *
 * Order: by each part's first timestamp, taken cheaply -- its summary
 * (events, first), else its first events block's base, else its creation
 * time from the header -- ties by N in NAME-N.ptlog, then by name.
 *
 * Totals: each part's totals are read in turn (tlog_totals: its summary,
 * else the count made when it was opened) and added up; one part is
 * open at a time, never all of them.  Threads are one thread across parts
 * when they are the same writer (pid, pthread_t), event types when they
 * have the same name (a part's ids are mapped onto the set's: system ids
 * stay, a name met again takes its first id, a new name its own id when
 * free, else the lowest free one).  Thread and process identities,
 * payload descriptions and the map of loaded code are the parts' entries
 * in time order, an entry that only repeats what is already known (each
 * part says again who its threads are) kept once.  Memory: threads,
 * types, objects and parts, never events.
 *
 * Reading: the parts one after another (a rotated recording's parts do
 * not overlap in time), each event's thread and type mapped onto the
 * set's.  Logs that do overlap (recorded at the same time) are a group,
 * open together and merged by time, said in a note.  Losses stay where
 * they were (a part's RESUME events);
 * a missing part (NAME-3 between NAME-2 and NAME-4) is a note on stderr
 * and in `info`, not an error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "read.h"

struct tpart {
	char *path;
	uint64_t first;       /* its first timestamp (ns), as cheaply known */
	unsigned long num;    /* N of NAME-N.ptlog, when has_num */
	int has_num;
	size_t stem;          /* bytes of its name before "-N.ptlog" */
	const char *name;     /* its file name (in path) */
	uint64_t nev, last;   /* from its totals */
	int unfinished, writing;
	uint64_t damaged;
	int32_t tracer;       /* its recorder's pid, as its totals found it (0: none) */
	uint64_t created;     /* its stream's creation time (ns), from the header */
	int loop;             /* its stream's full policy was LOOP (a flight recorder's) */
	dev_t dev;            /* the file (a file named twice is read once) */
	ino_t ino;
	int damage_said;      /* a damaged stretch met in reading, said */
};

/* A part open for reading. */
struct tmember {
	size_t part;          /* its index in tparts.v */
	struct tlog in;
	uint16_t idmap[PT_NIDS];  /* its event ids -> the set's */
	uint32_t *thmap;      /* its threads -> the set's (UINT32_MAX: not yet) */
	size_t nthmap;
	struct tev pend;      /* its next event, the set's thread and id (has) */
	int has, done;
};

struct tparts {
	struct tpart *v;
	size_t n;
	char **notes;         /* missing parts, overlaps: said once on stderr, listed by info */
	size_t nnotes;
	/* reading: parts that overlap in time make one group, read together
	 * (merged by time); the others are groups of one, read one by one */
	size_t *group;        /* group k: parts group[k] to group[k + 1] - 1 */
	uint64_t *gfirst;     /* group k's first timestamp (its parts' smallest) */
	size_t ngroups;
	size_t g;             /* the group open (nm > 0), else the next to open */
	struct tmember *m;    /* the open group's parts (room for the largest group) */
	size_t nm;
	uint64_t until;
	int until_on;
};

/* ------------------------------------------------------------ operands */

/* The lists of several LOG operands: a command's operands outlive it. */
static struct opset { char *name; char *const *paths; size_t n; } opsets[8];
static size_t nopsets;

const char *tlog_operands(int n, char *const *paths)
{
	if (n == 1 || nopsets == sizeof opsets / sizeof *opsets)
		return paths[0];
	size_t len = strlen(paths[0]) + 40;
	char *name = malloc(len);
	if (!name)
		return paths[0];
	snprintf(name, len, "%s (and %d more log%s)", paths[0], n - 1, n == 2 ? "" : "s");
	opsets[nopsets++] = (struct opset){ name, paths, (size_t)n };
	return name;
}

static const struct opset *opset_of(const char *path)
{
	for (size_t i = 0; i < nopsets; i++)
		if (opsets[i].name == path) /* (the very string tlog_operands() gave) */
			return &opsets[i];
	return NULL;
}

int tlog_is_set(const char *path)
{
	struct stat sb;
	return opset_of(path) || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
}

/* ------------------------------------------------------------ listing */

static unsigned short swap16(unsigned short v) { return (unsigned short)(v >> 8 | v << 8); }
static uint64_t swap64(uint64_t v) { return __builtin_bswap64(v); }

/* The first timestamp of the log open on fd, without reading its events
 * (docs/log-format.md): the summary's, else the base of the first block
 * if it is an events block, else the creation time in the header; and
 * from the header, its stream's creation time and whether the stream was
 * a LOOP one (a flight recorder's: record --flight's snapshots are logs
 * of one such stream).  0, or -1: not a log. */
static int part_first(int fd, struct tpart *p)
{
	uint64_t *first = &p->first;
	unsigned char h[256], b[48];
	uint32_t bom;
	int swap;
	struct pt_ext_summary *s;

	if (pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h, "PSXTRLOG", 8))
		return -1;
	memcpy(&bom, h + 8, 4);
	if (bom != 0x01020304u && bom != 0x04030201u)
		return -1;
	swap = bom == 0x04030201u;
	int64_t sec, nsec; /* the attributes' creation time (at 48 + 128) */
	int32_t policy;    /* ... and stream-full policy (at 48 + 184) */
	memcpy(&sec, h + 176, 8);
	memcpy(&nsec, h + 184, 8);
	memcpy(&policy, h + 232, 4);
	if (swap) {
		sec = (int64_t)swap64((uint64_t)sec), nsec = (int64_t)swap64((uint64_t)nsec);
		policy = (int32_t)__builtin_bswap32((uint32_t)policy);
	}
	uint64_t created = sec > 0 && nsec >= 0 && nsec < 1000000000 &&
	                   (uint64_t)sec < UINT64_MAX / 1000000000u
	                           ? (uint64_t)sec * 1000000000u + (uint64_t)nsec : 0;
	p->created = created;
	p->loop = policy == POSIX_TRACE_LOOP;
	if (pt_ext_log_summary(fd, &s) == 0) {
		uint64_t f = s->first, nev = s->events;
		pt_ext_summary_free(s);
		if (nev) {
			*first = f;
			return 0;
		}
	}
	if (pread(fd, b, sizeof b, 256) == (ssize_t)sizeof b && !memcmp(b, "PTLB", 4)) {
		unsigned short type;
		uint64_t base;
		memcpy(&type, b + 4, 2);
		memcpy(&base, b + 40, 8);
		if ((swap ? swap16(type) : type) == 1) {
			*first = swap ? swap64(base) : base;
			return 0;
		}
	}
	*first = created;
	return 0;
}

/* N of NAME-N.ptlog (name: a file name ending in .ptlog). */
static void part_number(struct tpart *p)
{
	size_t len = strlen(p->name) - 6, i = len;
	while (i > 0 && p->name[i - 1] >= '0' && p->name[i - 1] <= '9')
		i--;
	p->stem = len;
	if (i == len || i < 2 || p->name[i - 1] != '-' || len - i > 9)
		return;
	p->num = strtoul(p->name + i, NULL, 10);
	p->has_num = 1;
	p->stem = i - 1;
}

static int cmp_part(const void *a, const void *b)
{
	const struct tpart *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	if (x->has_num && y->has_num && x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return strcmp(x->path, y->path);
}

static int ends_with_ptlog(const char *s)
{
	size_t n = strlen(s);
	return n > 6 && !strcmp(s + n - 6, ".ptlog");
}

static void add_note(struct tparts *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One more part: path (taken over), checked a log and its first
 * timestamp read.  0, or 1 after a message naming it. */
static int add_part(struct tparts *P, char *path)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* (a FIFO: no wait for a writer) */

	if (fd < 0) {
		err_msg("cannot open %s: %s", path, strerror(errno));
		free(path);
		return 1;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		err_msg("%s: not a regular file (give logs written by 'posixtrace record', or a "
		        "directory of them)", path);
		close(fd);
		free(path);
		return 1;
	}
	for (size_t i = 0; i < P->n; i++)
		if (P->v[i].dev == sb.st_dev && P->v[i].ino == sb.st_ino) {
			if (strcmp(path, P->v[i].path))
				add_note(P, "%s is the same file as %s: read once", path, P->v[i].path);
			else
				add_note(P, "%s is named twice: read once", path);
			close(fd);
			free(path);
			return 0;
		}
	struct tpart p = { .path = path, .dev = sb.st_dev, .ino = sb.st_ino };
	if (part_first(fd, &p) != 0) {
		err_msg("%s: not a posixtrace log", path);
		close(fd);
		free(path);
		return 1;
	}
	close(fd);
	if (P->n % 16 == 0) {
		struct tpart *v = realloc(P->v, (P->n + 16) * sizeof *v);
		if (!v) {
			err_msg("%s: out of memory", path);
			free(path);
			return 1;
		}
		P->v = v;
	}
	const char *slash = strrchr(path, '/');
	p.name = slash ? slash + 1 : path;
	if (ends_with_ptlog(p.name))
		part_number(&p);
	else
		p.stem = strlen(p.name);
	P->v[P->n++] = p;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.ptlog files of directory dir.  0, or 1 after a message. */
static int add_dir(struct tparts *P, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!d) {
		err_msg("cannot open %s: %s", dir, strerror(errno));
		return 1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !ends_with_ptlog(de->d_name))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *nn);
			if (!nn) {
				rc = 1;
				break;
			}
			names = nn;
		}
		size_t len = strlen(dir) + strlen(de->d_name) + 2;
		if (!(names[n] = malloc(len))) {
			rc = 1;
			break;
		}
		snprintf(names[n++], len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
		         de->d_name);
	}
	closedir(d);
	if (rc)
		err_msg("%s: out of memory", dir);
	else if (!n)
		err_msg("%s: no logs in this directory (its parts are its *.ptlog files)", dir);
	if (n)
		qsort(names, n, sizeof *names, cmp_str); /* (the order of messages) */
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = add_part(P, names[i]);
		else
			free(names[i]);
	}
	free(names);
	return rc || !n;
}

static void add_note(struct tparts *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(struct tparts *P, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	char **v = realloc(P->notes, (P->nnotes + 1) * sizeof *v);

	if (!v)
		return;
	P->notes = v;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if ((P->notes[P->nnotes] = strdup(buf)))
		P->nnotes++;
}

/* The bytes of p's path up to its NAME (of NAME-N.ptlog). */
static size_t name_len(const struct tpart *p)
{
	return (size_t)(p->name - p->path) + p->stem;
}

static int cmp_named(const void *a, const void *b)
{
	const struct tpart *x = *(const struct tpart *const *)a, *y = *(const struct tpart *const *)b;
	size_t lx = name_len(x), ly = name_len(y);
	int c = lx != ly ? (lx < ly ? -1 : 1) : memcmp(x->path, y->path, lx);
	return c ? c : (x->num > y->num) - (x->num < y->num);
}

/* Missing parts: NAME-N with NAME-M and NAME-K, M < N < K, in the set
 * (and no NAME-N): the parts by NAME and N, each next to the one after. */
static void find_gaps(struct tparts *P)
{
	const struct tpart **v = malloc((P->n ? P->n : 1) * sizeof *v);
	size_t n = 0;

	if (!v)
		return;
	for (size_t i = 0; i < P->n; i++)
		if (P->v[i].has_num)
			v[n++] = &P->v[i];
	qsort(v, n, sizeof *v, cmp_named);
	for (size_t i = 0; i + 1 < n; i++) {
		const struct tpart *a = v[i], *next = v[i + 1];
		if (name_len(a) != name_len(next) || memcmp(a->path, next->path, name_len(a)) ||
		    next->num <= a->num + 1)
			continue;
		if (next->num == a->num + 2)
			add_note(P, "part %.*s-%lu.ptlog is missing (between %s and %s): the trace has "
			         "a gap there", (int)a->stem, a->name, a->num + 1, a->name, next->name);
		else
			add_note(P, "parts %.*s-%lu.ptlog to %.*s-%lu.ptlog are missing (between %s and "
			         "%s): the trace has a gap there", (int)a->stem, a->name, a->num + 1,
			         (int)a->stem, a->name, next->num - 1, a->name, next->name);
	}
	free(v);
}

/* ------------------------------------------------------------ totals */

/* The set's id of name (a part's type), or -1. */
static int set_id_of(const struct tlog *l, const char *name)
{
	for (unsigned id = 0; id < PT_NIDS; id++)
		if (l->names[id] && !posixtrace_eventid_system_name(id) && !strcmp(l->names[id], name))
			return (int)id;
	return -1;
}

static int id_free(const struct tlog *l, unsigned id)
{
	return !l->names[id] && !l->count[id] && !posixtrace_eventid_system_name(id);
}

/* The part's ids onto the set's (map[id]): a name the set has takes its
 * id; with make, a new name takes its own id when free, else the lowest
 * free one (named then).  0, or 1 after a message. */
static int map_ids(struct tlog *l, const struct tlog *pl, uint16_t *map, int make)
{
	for (unsigned id = 0; id < PT_NIDS; id++) {
		map[id] = (uint16_t)id;
		if (!pl->names[id] || posixtrace_eventid_system_name(id)) { /* (the same in every log) */
			if (pl->names[id] && !l->names[id] && !(l->names[id] = strdup(pl->names[id]))) {
				err_msg("%s: out of memory", pl->path);
				return 1;
			}
			l->listed[id] |= pl->listed[id];
			continue;
		}
		int s = set_id_of(l, pl->names[id]);
		if (s < 0 && make) {
			s = id_free(l, id) ? (int)id : -1;
			/* (above the system ids, as a stream numbers user types) */
			for (unsigned k = POSIX_TRACE_UNNAMED_USEREVENT + 1; s < 0 && k < PT_NIDS; k++)
				if (id_free(l, k))
					s = (int)k;
			if (s < 0) {
				err_msg("%s: more than %u event types in the logs together", pl->path,
				        PT_NIDS);
				return 1;
			}
			if (!(l->names[s] = strdup(pl->names[id]))) {
				err_msg("%s: out of memory", pl->path);
				return 1;
			}
		}
		if (s >= 0) {
			map[id] = (uint16_t)s;
			l->listed[s] |= pl->listed[id];
		}
	}
	return 0;
}

static int cmp_thr(const void *a, const void *b)
{
	const struct pt_ext_thread *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static int cmp_type(const void *a, const void *b)
{
	const struct pt_ext_type *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static int same_obj(const struct pt_ext_obj *a, const struct pt_ext_obj *b)
{
	return a->pid == b->pid && a->kind == b->kind && a->base == b->base && a->lo == b->lo &&
	       a->hi == b->hi && a->bid_len == b->bid_len && a->flags == b->flags &&
	       !memcmp(a->bid, b->bid, sizeof a->bid) && !strncmp(a->path, b->path, sizeof a->path);
}

struct objix { int32_t pid; size_t at; };

static int cmp_objix(const void *a, const void *b)
{
	const struct objix *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

/* What the set holds of who and what, as entries gathered part by part. */
struct gather {
	struct pt_ext_thread *thr;
	size_t nthr;
	struct pt_ext_type *typ;
	size_t ntyp;
};

static void *grow(void *p, size_t n, size_t more, size_t elem)
{
	return realloc(p, (n + more ? n + more : 1) * elem);
}

/* The part's entries added to the set's, repeats dropped.  0, or -1 out
 * of memory. */
static int gather_part(struct tlog *l, struct gather *g, const struct tlog *pl,
                       const uint16_t *idmap)
{
	size_t n = thrmap_count(pl->thrs), k;
	struct pt_ext_thread *t = grow(g->thr, g->nthr, n, sizeof *t);
	if (!t)
		return -1;
	g->thr = t;
	for (size_t i = 0; i < n; i++)
		t[g->nthr++] = *thrmap_at(pl->thrs, i);
	qsort(t, g->nthr, sizeof *t, cmp_thr);
	for (size_t i = k = 0; i < g->nthr; i++) /* (the rule thrmap_from keeps) */
		if (!k || t[k - 1].pid != t[i].pid || t[k - 1].thread != t[i].thread ||
		    t[k - 1].tid != t[i].tid || strcmp(t[k - 1].name, t[i].name))
			t[k++] = t[i];
	g->nthr = k;

	n = typemap_count(pl->types);
	struct pt_ext_type *y = grow(g->typ, g->ntyp, n, sizeof *y);
	if (!y)
		return -1;
	g->typ = y;
	for (size_t i = 0; i < n; i++) {
		y[g->ntyp] = *typemap_at(pl->types, i);
		if (y[g->ntyp].id < PT_NIDS)
			y[g->ntyp].id = idmap[y[g->ntyp].id];
		g->ntyp++;
	}
	qsort(y, g->ntyp, sizeof *y, cmp_type);
	for (size_t i = k = 0; i < g->ntyp; i++)
		if (!k || y[k - 1].pid != y[i].pid || y[k - 1].id != y[i].id ||
		    strcmp(y[k - 1].desc, y[i].desc))
			y[k++] = y[i];
	g->ntyp = k;

	struct pt_ext_proc *p = grow(l->procs, l->nprocs, pl->nprocs, sizeof *p);
	if (!p)
		return -1;
	l->procs = p;
	memcpy(p + l->nprocs, pl->procs, pl->nprocs * sizeof *p);
	l->nprocs += pl->nprocs;
	tlog_sort_procs(l);
	p = l->procs;
	for (size_t i = k = 0; i < l->nprocs; i++) /* (an entry a part wrote again: its time) */
		if (!k || p[k - 1].pid != p[i].pid || p[k - 1].ts != p[i].ts ||
		    p[k - 1].ppid != p[i].ppid || p[k - 1].cut != p[i].cut ||
		    p[k - 1].cont != p[i].cont || strcmp(p[k - 1].cmdline, p[i].cmdline))
			p[k++] = p[i];
	l->nprocs = k;

	/* the map of loaded code: in time order, part after part; an entry
	 * the map of its process already holds (the same entry since that
	 * process's last BEGIN, DEL or LOST) is not added again.  The
	 * entries so far by process (and place), to look through only its */
	size_t old = l->nobjs;
	struct pt_ext_obj *o = grow(l->objs, l->nobjs, pl->nobjs, sizeof *o);
	if (!o)
		return -1;
	l->objs = o;
	struct objix *ix = malloc((old ? old : 1) * sizeof *ix);
	if (!ix)
		return -1;
	for (size_t j = 0; j < old; j++)
		ix[j] = (struct objix){ o[j].pid, j };
	qsort(ix, old, sizeof *ix, cmp_objix);
	for (size_t i = 0; i < pl->nobjs; i++) {
		const struct pt_ext_obj *e = &pl->objs[i];
		size_t lo = 0, hi = old; /* after the last entry of e's process */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (ix[mid].pid <= e->pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		int dup = 0;
		for (size_t x = lo; x-- > 0 && ix[x].pid == e->pid;) {
			const struct pt_ext_obj *was = &o[ix[x].at];
			if (same_obj(was, e)) {
				dup = 1;
				break;
			}
			if (was->kind != PT_EXT_OBJ_ADD)
				break;
		}
		if (!dup)
			o[l->nobjs++] = *e;
	}
	free(ix);
	return 0;
}

/* The totals of part pl added to the set's. */
static int add_totals(struct tlog *l, const struct tlog *pl, const uint16_t *idmap, int firstpart)
{
	for (unsigned id = 0; id < PT_NIDS; id++) {
		if (!pl->count[id])
			continue;
		unsigned s = idmap[id];
		l->count[s] += pl->count[id];
		l->tfirst[s] = pl->tfirst[id] < l->tfirst[s] ? pl->tfirst[id] : l->tfirst[s];
		l->tlast[s] = pl->tlast[id] > l->tlast[s] ? pl->tlast[id] : l->tlast[s];
	}
	for (size_t i = 0; i < pl->nth; i++) {
		const struct tthread *t = &pl->th[i];
		uint32_t s;
		if (tlog_thread(l, t->pid, t->tid, t->count ? t->first : t->born, &s))
			return -1;
		struct tthread *u = &l->th[s];
		u->count += t->count;
		tthread_waits(u, t->waits, t->wait_ns, t->wait_max);
		if (t->count) {
			u->first = t->first < u->first ? t->first : u->first;
			u->last = t->last > u->last ? t->last : u->last;
		}
	}
	if (pl->nev) {
		l->first = pl->first < l->first ? pl->first : l->first;
		l->last = pl->last > l->last ? pl->last : l->last;
	}
	l->nev += pl->nev;
	l->overflows += pl->overflows;
	l->errors += pl->errors;
	l->ngaps += pl->ngaps;
	l->lost_at += pl->lost_at;
	l->lost_stream += pl->lost_stream;
	l->lost_final = firstpart ? pl->lost_final : l->lost_final && pl->lost_final;
	l->lost_implausible |= pl->lost_implausible;
	l->log_overwritten += pl->log_overwritten;
	l->log_dropped += pl->log_dropped;
	l->damaged += pl->damaged;
	l->file_size += pl->file_size;
	l->summary = firstpart ? pl->summary : l->summary && pl->summary;
	l->waits_known = firstpart ? pl->waits_known : l->waits_known && pl->waits_known;
	if (firstpart)
		l->attr = pl->attr;
	if (!l->tracer) { /* (the first part that has one) */
		l->recorder = pl->recorder;
		l->tracer = pl->tracer;
	}
	l->st = pl->st; /* (the last part's: the recording's final status) */
	l->unfinished = pl->unfinished;
	l->writing = pl->writing;
	return 0;
}

static void parts_free_(struct tparts *P)
{
	if (!P)
		return;
	for (size_t i = 0; i < P->nm; i++) {
		tlog_one_free(&P->m[i].in);
		free(P->m[i].thmap);
	}
	for (size_t i = 0; i < P->n; i++)
		free(P->v[i].path);
	for (size_t i = 0; i < P->nnotes; i++)
		free(P->notes[i]);
	free(P->notes);
	free(P->v);
	free(P->group);
	free(P->gfirst);
	free(P->m);
	free(P);
}

/* Notes said on stderr once per set a process reads (view and info read
 * it again), even while err_msg() is captured (query's tables take their
 * errors so); never by the SQLite extension, inside another program. */
static void say_notes(const struct tlog *l, const struct tparts *P)
{
#ifdef PT_SQLITE_EXT
	(void)l, (void)P;
#else
	static char *said[8];
	static size_t nsaid;

	for (size_t i = 0; i < nsaid; i++)
		if (!strcmp(said[i], l->path))
			return;
	if (nsaid < sizeof said / sizeof *said)
		said[nsaid++] = strdup(l->path);
	for (size_t i = 0; i < P->nnotes; i++)
		fprintf(stderr, "%s: %s: %s\n", prog_cmd, l->path, P->notes[i]);
#endif
}

/* The groups of parts read together: a part that begins before the
 * parts before it have all ended (logs recorded at the same time, not
 * the parts of one recording) joins their group, said in a note.  Two
 * snapshots of one flight recorder (logs of one LOOP stream, made at the
 * same time) that overlap hold the same events twice: they cannot be
 * read as one trace.  0; -1 out of memory; 1 after a message. */
static int make_groups(struct tparts *P)
{
	size_t biggest = 1, start = 0;
	uint64_t last = 0;
	int any = 0;

	if (!(P->group = malloc((P->n + 1) * sizeof *P->group)) ||
	    !(P->gfirst = malloc((P->n + 1) * sizeof *P->gfirst)))
		return -1;
	P->ngroups = 0;
	for (size_t k = 0; k < P->n; k++) {
		const struct tpart *p = &P->v[k];
		/* (a snapshot may hold events of one time only, one event even:
		 * beginning where the group so far ends is sharing that time) */
		int touches = k && p->nev && any && p->first <= last;
		if (touches)
			for (size_t j = start; j < k; j++)
				if (p->loop && P->v[j].loop && p->created && p->created == P->v[j].created) {
					err_msg("%s and %s are snapshots of one flight recorder whose "
					        "windows overlap (the same events in both): read them "
					        "one at a time", P->v[j].path, p->path);
					return 1;
				}
		if (touches && p->first < last) { /* overlaps the group so far */
			add_note(P, "%s and %s overlap in time: read together, merged by time",
			         P->v[k - 1].name, p->name);
		} else {
			if (P->ngroups && k - start > biggest)
				biggest = k - start;
			start = k;
			P->group[P->ngroups] = k;
			P->gfirst[P->ngroups++] = p->nev ? p->first : UINT64_MAX;
			any = 0;
			last = 0;
		}
		if (p->nev) {
			last = p->last > last ? p->last : last;
			any = 1;
			uint64_t *gf = &P->gfirst[P->ngroups - 1];
			*gf = p->first < *gf ? p->first : *gf;
		}
	}
	if (P->n - start > biggest)
		biggest = P->n - start;
	P->group[P->ngroups] = P->n;
	return (P->m = calloc(biggest, sizeof *P->m)) ? 0 : -1;
}

int parts_load(struct tlog *l, const char *path, const struct tlog_front *f)
{
	struct tparts *P = calloc(1, sizeof *P);
	const struct opset *ops = opset_of(path);
	struct gather g = { 0 };
	uint16_t idmap[PT_NIDS];
	int rc = 0;

	tlog_init(l);
	if (f)
		l->front = *f;
	l->path = path;
	posix_trace_attr_init(&l->attr);
	if (!P) {
		err_msg("%s: out of memory", path);
		return 1;
	}
	l->parts_ = P;
	for (size_t i = 0; !rc && i < (ops ? ops->n : 1); i++) {
		const char *p = ops ? ops->paths[i] : path;
		struct stat sb;
		if (stat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			rc = add_dir(P, p);
		} else {
			char *c = strdup(p);
			rc = c ? add_part(P, c) : (err_msg("%s: out of memory", p), 1);
		}
	}
	if (rc)
		goto fail;
	qsort(P->v, P->n, sizeof *P->v, cmp_part);
	find_gaps(P);
	for (size_t k = 0; k < P->n; k++) {
		struct tpart *pt = &P->v[k];
		struct tlog pl;
		struct tlog_front pf = l->front;
		pf.recorder = l->tracer; /* (the parts' before, for one without a START) */
		rc = tlog_one_totals_as(&pl, pt->path, &pf);
		if (rc)
			goto fail;
		/* (its entries first: each process's start, births.c, names the
		 * set's process of each of its threads) */
		if (map_ids(l, &pl, idmap, 1) ||
		    ((gather_part(l, &g, &pl, idmap) || tlog_births(l) ||
		      add_totals(l, &pl, idmap, k == 0)) &&
		     (err_msg("%s: out of memory", pt->path), 1))) {
			tlog_one_free(&pl);
			goto fail;
		}
		pt->nev = pl.nev;
		pt->last = pl.last;
		pt->unfinished = pl.unfinished;
		pt->writing = pl.writing;
		pt->damaged = pl.damaged;
		pt->tracer = pl.tracer;
		tlog_one_free(&pl);
	}
	int grc = make_groups(P);
	if (grc) {
		if (grc < 0)
			err_msg("%s: out of memory", path);
		goto fail;
	}
	l->thrs = thrmap_from(g.thr, g.nthr);
	l->types = typemap_from(g.typ, g.ntyp);
	g.thr = NULL, g.typ = NULL; /* (taken over, or freed) */
	if (!l->thrs || !l->types) {
		err_msg("%s: out of memory", path);
		goto fail;
	}
	tlog_finish(l);
	if (l->first == UINT64_MAX || !l->nev)
		l->first = 0;
	l->totals = 1;
	say_notes(l, P);
	return 0;
fail:
	free(g.thr);
	free(g.typ);
	parts_free(l);
	tlog_one_free(l);
	return 1;
}

/* ------------------------------------------------------------ reading */

static void leave(struct tparts *P)
{
	for (size_t i = 0; i < P->nm; i++) {
		tlog_one_free(&P->m[i].in);
		free(P->m[i].thmap);
	}
	P->nm = 0;
}

/* Part k opened for reading as the open group's next member; its types
 * and threads mapped.  0, or -1 after a message. */
static int enter(struct tlog *l, struct tparts *P, size_t k)
{
	struct tmember *m = &P->m[P->nm];

	struct tlog_front pf = l->front;
	pf.recorder = P->v[k].tracer; /* (what its totals found: the same again) */
	if (tlog_one_load_as(&m->in, P->v[k].path, &pf))
		return -1;
	P->nm++;
	m->part = k;
	m->has = m->done = 0;
	m->thmap = NULL;
	if (map_ids(l, &m->in, m->idmap, 0))
		return -1;
	m->nthmap = m->in.nth;
	if (!(m->thmap = malloc((m->nthmap ? m->nthmap : 1) * sizeof *m->thmap))) {
		err_msg("%s: out of memory", P->v[k].path);
		return -1;
	}
	memset(m->thmap, 0xff, (m->nthmap ? m->nthmap : 1) * sizeof *m->thmap);
	if (P->until_on && tlog_one_until(&m->in, P->until))
		return -1;
	return 0;
}

/* Group P->g opened, or 0 when there is none left (-1 after a message). */
static int open_group(struct tlog *l, struct tparts *P)
{
	if (P->g >= P->ngroups)
		return 0;
	if (P->until_on && P->gfirst[P->g] != UINT64_MAX && P->gfirst[P->g] > P->until) {
		P->g = P->ngroups; /* (nothing at or before the bound follows) */
		return 0;
	}
	for (size_t k = P->group[P->g]; k < P->group[P->g + 1]; k++)
		if (enter(l, P, k)) {
			leave(P);
			return -1;
		}
	return 1;
}

/* The set's thread of member m's thread t. */
static int map_thread(struct tlog *l, struct tmember *m, uint32_t t, uint32_t *out)
{
	if (t >= m->nthmap) { /* (a thread the part's totals did not have) */
		uint32_t *v = realloc(m->thmap, (t + 1) * sizeof *v);
		if (!v)
			return -1;
		memset(v + m->nthmap, 0xff, (t + 1 - m->nthmap) * sizeof *v);
		m->thmap = v;
		m->nthmap = t + 1;
	}
	const struct tthread *pt = &m->in.th[t];
	if (m->thmap[t] == UINT32_MAX &&
	    tlog_thread(l, pt->pid, pt->tid, pt->first != UINT64_MAX ? pt->first : pt->born,
	                &m->thmap[t]))
		return -1;
	*out = m->thmap[t];
	return 0;
}

/* A damaged stretch met in part k (its summary did not know): said once,
 * naming the part; reading goes on. */
static void damage_met(struct tparts *P, size_t k)
{
	struct tpart *p = &P->v[k];
	if (!p->damaged && !p->damage_said++)
		err_msg("%s: damaged: a stretch of it could not be read (a posix_trace_error "
		        "event); the rest of it and the other parts are read", p->path);
}

/* Member m's next event into m->pend, on the set's thread and type: 1,
 * 0 at its end, -1 after a message. */
static int fill(struct tlog *l, struct tparts *P, struct tmember *m)
{
	int r, code;

	if (m->has || m->done)
		return m->has;
	if ((r = tlog_one_next(&m->in, &m->pend)) <= 0) {
		m->done = r == 0;
		return r;
	}
	if (map_thread(l, m, m->pend.thread, &m->pend.thread)) {
		err_msg("%s: out of memory", P->v[m->part].path);
		return -1;
	}
	m->pend.id = m->idmap[m->pend.id < PT_NIDS ? m->pend.id : 0];
	if (m->pend.id == POSIX_TRACE_ERROR && m->pend.len == sizeof code &&
	    (memcpy(&code, m->pend.data, sizeof code), code == EBADMSG))
		damage_met(P, m->part);
	m->has = 1;
	return 1;
}

/* The next event of the set: the earliest of the open group's members'
 * next events (its payload valid until the next call), then the next
 * group's.  1, 0 at the end, -1 after a message. */
static int merged_next(struct tlog *l, struct tparts *P, struct tev *e)
{
	for (;;) {
		int r;
		if (!P->nm && (r = open_group(l, P)) <= 0)
			return r;
		struct tmember *best = NULL;
		for (size_t i = 0; i < P->nm; i++) {
			struct tmember *m = &P->m[i];
			if (fill(l, P, m) < 0)
				return -1;
			if (m->has && (!best || m->pend.ts < best->pend.ts))
				best = m;
		}
		if (!best) {
			leave(P);
			P->g++;
			continue;
		}
		*e = best->pend;
		best->has = 0; /* (read again at the next call, once e is used) */
		return 1;
	}
}

int parts_next(struct tlog *l, struct tev *e)
{
	int r = merged_next(l, l->parts_, e);

	if (r > 0)
		e->n = l->pass_n_++;
	return r;
}

/* A batch made of merged events (parts read together). */
static int merged_batch(struct tlog *l, struct tparts *P, struct pt_ext_batch *b,
                        uint32_t *thread_of)
{
	struct tev e;
	int r = 1;

	b->n = b->nw = 0;
	while (b->n < PT_EXT_BATCH && b->nw < PT_EXT_BATCH_W) {
		size_t g = P->g;
		if ((r = merged_next(l, P, &e)) <= 0)
			break;
		l->pass_n_++;
		size_t w = 0;
		while (w < b->nw && thread_of[w] != e.thread)
			w++;
		if (w == b->nw) {
			b->w[w] = (struct pt_ext_bwriter){ l->th[e.thread].pid, 0, l->th[e.thread].tid };
			thread_of[b->nw++] = e.thread;
		}
		struct pt_ext_bevent *v = &b->ev[b->n++];
		*v = (struct pt_ext_bevent){ .ts = e.ts, .id = e.id, .w = (uint16_t)w };
		if (e.len == sizeof v->word) {
			v->flags |= PT_EXT_BEV_WORD;
			memcpy(&v->word, e.data, sizeof v->word);
		}
		if (e.lost != UINT64_MAX)
			v->flags |= PT_EXT_BEV_LOST;
		if ((v->flags & PT_EXT_BEV_LOST) || P->g != g) /* (as a part's batch ends) */
			break;
	}
	return r < 0 ? -1 : b->n > 0;
}

int parts_next_batch(struct tlog *l, struct pt_ext_batch *b, uint32_t *thread_of)
{
	struct tparts *P = l->parts_;

	for (;;) {
		int r;
		if (!P->nm && (r = open_group(l, P)) <= 0)
			return r;
		struct tmember *m = &P->m[0];
		if (P->nm > 1 || m->has) /* parts read together, or an event already taken */
			return merged_batch(l, P, b, thread_of);
		/* one part: its own batches */
		if ((r = m->done ? 0 : tlog_one_next_batch(&m->in, b, thread_of)) < 0)
			return -1;
		if (r == 0) {
			leave(P);
			P->g++;
			continue;
		}
		for (size_t w = 0; w < b->nw; w++)
			if (map_thread(l, m, thread_of[w], &thread_of[w])) {
				err_msg("%s: out of memory", P->v[m->part].path);
				return -1;
			}
		for (size_t i = 0; i < b->n; i++) {
			struct pt_ext_bevent *v = &b->ev[i];
			v->id = m->idmap[v->id < PT_NIDS ? v->id : 0];
			if (v->id == POSIX_TRACE_ERROR && (v->flags & PT_EXT_BEV_WORD) && v->word == EBADMSG)
				damage_met(P, m->part);
		}
		l->pass_n_ += b->n;
		return 1;
	}
}

int parts_rewind(struct tlog *l)
{
	struct tparts *P = l->parts_;

	leave(P);
	P->g = 0; /* (tlog_until's bound kept, as pt_ext_seek_end() keeps it) */
	l->pass_n_ = 0;
	l->pass_at_ = 0;
	return 0;
}

int parts_seek(struct tlog *l, uint64_t ts)
{
	struct tparts *P = l->parts_;
	size_t g = 0;

	/* the last group that begins at or before ts: the ones before it end
	 * before it begins */
	for (size_t i = 0; i < P->ngroups; i++)
		if (P->gfirst[i] != UINT64_MAX && P->gfirst[i] <= ts)
			g = i;
	leave(P);
	P->g = g;
	l->pass_n_ = 0;
	l->pass_at_ = 0;
	int r = open_group(l, P);
	if (r < 0)
		return 1;
	for (size_t i = 0; r > 0 && i < P->nm; i++)
		if (tlog_one_seek(&P->m[i].in, ts))
			return 1;
	return 0;
}

int parts_until(struct tlog *l, uint64_t ts)
{
	struct tparts *P = l->parts_;

	P->until = ts;
	P->until_on = 1;
	for (size_t i = 0; i < P->nm; i++)
		if (tlog_one_until(&P->m[i].in, ts))
			return 1;
	return 0;
}

void parts_free(struct tlog *l)
{
	parts_free_(l->parts_);
	l->parts_ = NULL;
}

void parts_warn(const struct tlog *l)
{
	const struct tparts *P = l->parts_;
	char text[120];

	for (size_t k = 0; k < P->n; k++) {
		const struct tpart *p = &P->v[k];
		if (p->unfinished)
			err_msg("%s: %s", p->path, p->writing ? tlog_writing : tlog_unfinished);
		if (p->damaged) {
			struct tlog tmp = { .damaged = p->damaged };
			tlog_damage_text(&tmp, text, sizeof text);
			err_msg("%s: %llu damaged %s", p->path, (unsigned long long)p->damaged, text);
		}
	}
}

size_t tlog_nparts(const struct tlog *l)
{
	return l->parts_ ? l->parts_->n : 0;
}

const char *tlog_part(const struct tlog *l, size_t i, uint64_t *nev)
{
	if (!l->parts_ || i >= l->parts_->n)
		return NULL;
	if (nev)
		*nev = l->parts_->v[i].nev;
	return l->parts_->v[i].path;
}

const char *tlog_part_note(const struct tlog *l, size_t i)
{
	return l->parts_ && i < l->parts_->nnotes ? l->parts_->notes[i] : NULL;
}
