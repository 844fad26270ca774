/*
 * symbolize.c -- addresses to "function+0xoff (file.c:line)".
 *
 * Where code was comes from the trace itself: the map of loaded code the
 * traced processes wrote into it (each object's path, load bias, range
 * and GNU build-id; see docs/design.md).  An older log without it reads
 * FILE.maps beside it; `live` reads the stream's map, else /proc/PID/maps.
 * The file for an object is found by its build-id: the recorded path if
 * the file there has that build-id, else /usr/lib/debug/.build-id/xx/
 * yyyy.debug, else debuginfod (elfutils' libdebuginfod, when the command
 * was built with it and DEBUGINFOD_URLS is set).  A file at the recorded
 * path with another build-id was rebuilt since: that is said once on
 * stderr, and its addresses read "file+0xVADDR [file changed]", never a
 * name from the wrong file.  Symbols and lines come from elfutils'
 * libdwfl when the command was built with it (PT_HAVE_LIBDW); without
 * it, "file+0xVADDR".  An address outside any known object: raw hex.
 * Results are cached per (pid, time's map, address), at most CACHE_MAX.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "enrich.h"
#ifdef PT_HAVE_DEBUGINFOD
#include <elfutils/debuginfod.h>
#endif
#ifdef PT_HAVE_LIBDW
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#endif

struct module {
	char *path;        /* as recorded */
	char *file;        /* where its symbols are read from, or NULL */
	char *bid;         /* recorded build-id (hex), or NULL */
	uint64_t bias;
	int usable;        /* file present and build-id matches */
#ifdef PT_HAVE_LIBDW
	Dwfl *dwfl;
	Dwfl_Module *mod;
#endif
};

/* a name, good for events of pid at addr stamped in [from, to) */
struct centry { int32_t pid; int used; uint64_t addr, from, to, id; char *s; };

struct symz {
	struct mapsdb db;
	int have, live;
	struct pt_ext_obj *objs;  /* the trace's map of loaded code, by time */
	size_t nobjs;
	/* each pid's entries, in order: its first (a table by pid), then
	 * next[i] (SIZE_MAX: its last); a trace of thousands of processes
	 * is not looked through whole for each address */
	size_t *next, *pfirst;
	int32_t *ppid;
	size_t pcap;
	/* each pid's whole maps (BEGIN and FORK entries), in time order: the
	 * slot j of pid in pfirst has eps[ep_at[j]] to eps[ep_at[j + 1]] (a
	 * pid given to thousands of processes is not looked through whole
	 * for each one, nor for each address) */
	size_t *eps, *ep_at;
	trace_id_t trid;          /* live: the stream it comes from */
	int have_trid;
	int lost_said;
#ifdef PT_HAVE_DEBUGINFOD
	debuginfod_client *dc;
	int dc_tried;
#endif
	struct module *mods;
	size_t nmods;
	struct centry *cache;
	size_t ncache, ccap;
	uint64_t ids;             /* ids given to cached texts */
	pid_t *livepids;    /* live: pids whose maps were read */
	size_t nlive;
};

int symz_backend_dwarf(void)
{
#ifdef PT_HAVE_LIBDW
	return 1;
#else
	return 0;
#endif
}

static size_t pid_slot(int32_t pid, size_t cap)
{
	uint64_t h = (uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (cap - 1);
}

/* The slot of pid in the table by pid, SIZE_MAX if none. */
static size_t slot_of(const struct symz *z, int32_t pid)
{
	if (!z->pcap)
		return SIZE_MAX;
	for (size_t j = pid_slot(pid, z->pcap);; j = (j + 1) & (z->pcap - 1)) {
		if (z->pfirst[j] == SIZE_MAX)
			return SIZE_MAX;
		if (z->ppid[j] == pid)
			return j;
	}
}

/* The first entry of pid, SIZE_MAX if none. */
static size_t first_of(const struct symz *z, int32_t pid)
{
	size_t j = slot_of(z, pid);
	return j == SIZE_MAX ? SIZE_MAX : z->pfirst[j];
}

static int is_epoch(const struct pt_ext_obj *o);

/* Each pid's whole maps, indexed (z->eps, z->ep_at), after its chains;
 * none (the chains looked through) when memory runs out. */
static void index_epochs(struct symz *z)
{
	free(z->eps), free(z->ep_at);
	z->eps = z->ep_at = NULL;
	if (!z->pcap)
		return;
	size_t n = 0;
	for (size_t i = 0; i < z->nobjs; i++)
		n += is_epoch(&z->objs[i]);
	size_t *at = calloc(z->pcap + 1, sizeof *at), *e = malloc((n ? n : 1) * sizeof *e);
	if (!at || !e) {
		free(at), free(e);
		return;
	}
	for (size_t i = 0; i < z->nobjs; i++) /* (counted at slot + 1, then summed) */
		if (is_epoch(&z->objs[i]))
			at[slot_of(z, z->objs[i].pid) + 1]++;
	for (size_t j = 0; j < z->pcap; j++)
		at[j + 1] += at[j];
	for (size_t i = 0; i < z->nobjs; i++) /* (placed, each slot's start moving on) */
		if (is_epoch(&z->objs[i]))
			e[at[slot_of(z, z->objs[i].pid)]++] = i;
	for (size_t j = z->pcap; j > 0; j--) /* (each one's start again) */
		at[j] = at[j - 1];
	at[0] = 0;
	z->eps = e, z->ep_at = at;
}

/* pid's whole maps in time order (*n of them), or NULL when they are not
 * indexed (then the chains are looked through). */
static const size_t *epochs_of(const struct symz *z, int32_t pid, size_t *n)
{
	size_t j = z->eps ? slot_of(z, pid) : SIZE_MAX;

	*n = 0;
	if (!z->eps)
		return NULL;
	if (j == SIZE_MAX)
		return z->eps;
	*n = z->ep_at[j + 1] - z->ep_at[j];
	return z->eps + z->ep_at[j];
}

/* How many of pid's whole maps (e, n of them) are stamped at or before ts. */
static size_t epochs_upto(const struct symz *z, const size_t *e, size_t n, uint64_t ts)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (z->objs[e[mid]].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The chains of each pid's entries made again (after entries came). */
static void index_pids(struct symz *z)
{
	size_t cap = 64;
	while (cap < 2 * z->nobjs + 2)
		cap *= 2;
	size_t *next = malloc((z->nobjs + 1) * sizeof *next), *first = malloc(cap * sizeof *first);
	size_t *last = malloc(cap * sizeof *last);
	int32_t *pid = malloc(cap * sizeof *pid);
	if (!next || !first || !last || !pid) {
		free(next), free(first), free(last), free(pid);
		free(z->next), free(z->pfirst), free(z->ppid);
		z->next = z->pfirst = NULL, z->ppid = NULL, z->pcap = 0;
		index_epochs(z);
		return; /* (looked through whole: see the callers) */
	}
	for (size_t j = 0; j < cap; j++)
		first[j] = SIZE_MAX;
	for (size_t i = 0; i < z->nobjs; i++) {
		next[i] = SIZE_MAX;
		size_t j = pid_slot(z->objs[i].pid, cap);
		while (first[j] != SIZE_MAX && pid[j] != z->objs[i].pid)
			j = (j + 1) & (cap - 1);
		if (first[j] == SIZE_MAX)
			first[j] = i, pid[j] = z->objs[i].pid;
		else
			next[last[j]] = i;
		last[j] = i;
	}
	free(last);
	free(z->next), free(z->pfirst), free(z->ppid);
	z->next = next, z->pfirst = first, z->ppid = pid, z->pcap = cap;
	index_epochs(z);
}

/* Going through pid's entries from i on (i one of them, or SIZE_MAX):
 * the next; without the chains, the next entry of the trace. */
#define PID_FIRST(z, pid) ((z)->pcap ? first_of(z, pid) : (z)->nobjs ? 0 : SIZE_MAX)
static size_t pid_next(const struct symz *z, size_t i)
{
	if (z->pcap)
		return z->next[i];
	return i + 1 < z->nobjs ? i + 1 : SIZE_MAX;
}

static void add_objects(struct symz *z, const struct pt_ext_obj *o, size_t n)
{
	struct pt_ext_obj *m = realloc(z->objs, (z->nobjs + n + 1) * sizeof *m);
	if (!m)
		return;
	z->objs = m;
	memcpy(z->objs + z->nobjs, o, n * sizeof *o);
	z->nobjs += n;
	/* sorted by time; equal times keep the order they were written in */
	for (size_t i = 0; i + 1 < z->nobjs; i++)
		if (z->objs[i].ts > z->objs[i + 1].ts) {
			struct { struct pt_ext_obj o; size_t i; } *t = malloc(z->nobjs * sizeof *t);
			if (!t)
				return;
			for (size_t k = 0; k < z->nobjs; k++)
				t[k].o = z->objs[k], t[k].i = k;
			for (size_t a = 1; a < z->nobjs; a++) /* insertion sort: stable */
				for (size_t b = a; b > 0 && t[b - 1].o.ts > t[b].o.ts; b--) {
					__typeof__(*t) x = t[b];
					t[b] = t[b - 1];
					t[b - 1] = x;
				}
			for (size_t k = 0; k < z->nobjs; k++)
				z->objs[k] = t[k].o;
			free(t);
			break;
		}
	index_pids(z);
	/* (the count at the last entry that says it: as info counts) */
	uint64_t lost = 0;
	for (size_t i = 0; i < n; i++)
		if (o[i].kind == PT_EXT_OBJ_LOST && o[i].lo > lost)
			lost = o[i].lo;
	if (lost && !z->lost_said++)
		err_msg("the trace lost %llu entries of its map of loaded code (its area was "
		        "full): some addresses may show as numbers",
		        (unsigned long long)lost);
}

struct symz *symz_open(const struct tlog *l, const char *log_path, int live)
{
	struct symz *z = calloc(1, sizeof *z);

	if (!z) {
		err_msg("out of memory");
		exit(1);
	}
	z->live = live;
	if (l && l->nobjs)
		add_objects(z, l->objs, l->nobjs);
	if (log_path) {
		size_t n = strlen(log_path) + 8;
		char *mp = malloc(n);
		snprintf(mp, n, "%s.maps", log_path);
		z->have = mapsdb_load(&z->db, mp) == 0;
		free(mp);
	}
	return z;
}

int symz_have_maps(const struct symz *z)
{
	return z->have || z->live || z->nobjs;
}

void symz_live(struct symz *z, trace_id_t trid)
{
	z->trid = trid;
	z->have_trid = 1;
}

size_t symz_objects(const struct symz *z, const struct pt_ext_obj **out)
{
	*out = z->objs;
	return z->nobjs;
}

/* live: what the stream's map holds now */
static void live_objects(struct symz *z)
{
	struct pt_ext_obj buf[64];
	size_t n, from = z->nobjs;
	while (z->have_trid && pt_ext_objects(z->trid, from, buf, 64, &n) == 0 && n) {
		add_objects(z, buf, n);
		from += n;
	}
}

static void hex(char *out, const unsigned char *b, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		snprintf(out + 2 * k, 3, "%02x", b[k]);
	out[2 * n] = 0;
}

/* A whole map of its pid starts here: BEGIN, or FORK (its parent's). */
static int is_epoch(const struct pt_ext_obj *o)
{
	return o->kind == PT_EXT_OBJ_BEGIN || o->kind == PT_EXT_OBJ_FORK;
}

/* Is this the last BEGIN of pid at or before ts (or the first, if none)? */
static size_t epoch_of(const struct symz *z, int32_t pid, uint64_t ts)
{
	size_t e = SIZE_MAX, n;
	const size_t *ep = epochs_of(z, pid, &n);
	if (ep) {
		size_t k = epochs_upto(z, ep, n, ts);
		return n == 0 ? SIZE_MAX : ep[k ? k - 1 : 0];
	}
	for (size_t i = PID_FIRST(z, pid); i != SIZE_MAX; i = pid_next(z, i)) {
		const struct pt_ext_obj *o = &z->objs[i];
		if (o->pid != pid || !is_epoch(o))
			continue;
		if (o->ts <= ts || e == SIZE_MAX)
			e = i;
		if (o->ts > ts)
			break;
	}
	return e;
}

/* The object of pid holding addr at time ts: of the map that pid had
 * then (its last BEGIN before ts), the entry written last before ts and
 * not gone by then; else, for a forked child (FORK), its parent's as it
 * was at the fork (a child writes what it shares with its parent once);
 * else one found later in that map (the process wrote it when it first
 * recorded from there).  NULL if none. */
static const struct pt_ext_obj *obj_find_in(const struct symz *z, int32_t pid, uint64_t ts,
                                            uint64_t addr, unsigned depth)
{
	size_t e = epoch_of(z, pid, ts), end = SIZE_MAX;
	const struct pt_ext_obj *best = NULL, *later = NULL;

	if (e == SIZE_MAX)
		return NULL;
	for (size_t i = pid_next(z, e); i != SIZE_MAX; i = pid_next(z, i))
		if (z->objs[i].pid == pid && is_epoch(&z->objs[i])) {
			end = i; /* the next map of pid (exec) */
			break;
		}
	for (size_t i = pid_next(z, e); i != end; i = pid_next(z, i)) {
		const struct pt_ext_obj *o = &z->objs[i];
		if (o->pid != pid || addr < o->lo || addr >= o->hi)
			continue;
		if (o->kind == PT_EXT_OBJ_ADD) {
			if (o->ts <= ts)
				best = o, later = NULL;
			else if (!later)
				later = o;
		} else if (o->kind == PT_EXT_OBJ_DEL && best && o->lo == best->lo && o->ts <= ts) {
			best = NULL; /* unloaded before the event */
		}
	}
	const struct pt_ext_obj *f = &z->objs[e];
	if (!best && f->kind == PT_EXT_OBJ_FORK && depth < 16 && f->lo <= INT32_MAX) {
		const struct pt_ext_obj *p = obj_find_in(z, (int32_t)f->lo, f->ts, addr, depth + 1);
		if (p)
			return p;
	}
	return best ? best : later;
}

static const struct pt_ext_obj *obj_find(const struct symz *z, int32_t pid, uint64_t ts,
                                         uint64_t addr)
{
	return obj_find_in(z, pid, ts, addr, 0);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

#ifdef PT_HAVE_DEBUGINFOD
/* The debug file of a build-id from debuginfod (DEBUGINFOD_URLS), or NULL. */
static char *from_debuginfod(struct symz *z, const unsigned char *bid, unsigned n)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL;

	if (!urls || !*urls)
		return NULL;
	if (!z->dc_tried++)
		z->dc = debuginfod_begin();
	if (!z->dc)
		return NULL;
	int fd = debuginfod_find_debuginfo(z->dc, bid, (int)n, &path);
	if (fd < 0)
		return NULL;
	close(fd);
	return path;
}
#endif

/* A regular file this user may read (a trace names it: see elf.c) */
static int regular_readable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

/* Where the symbols of an object with build-id bid (hex; "" if none
 * recorded) recorded at path are: a file to free, or NULL.  *changed:
 * a file is at path, with another build-id. */
static char *find_file(struct symz *z, const char *path, const char *bid,
                       const unsigned char *raw, unsigned nraw, int *changed)
{
	char fb[130], dbg[4400];

	*changed = 0;
	if (!bid[0]) /* nothing to check it by */
		return path[0] && regular_readable(path) ? strdup(path) : NULL;
	if (path[0] && elf_build_id(path, fb, sizeof fb) == 0) {
		if (!strcmp(fb, bid))
			return strdup(path);
		*changed = 1;
	} else if (path[0] && access(path, F_OK) == 0) {
		*changed = 1; /* there, but not an ELF file with a build-id */
	}
	const char *root = getenv("POSIXTRACE_DEBUG_DIR");
	snprintf(dbg, sizeof dbg, "%s/.build-id/%.2s/%s.debug", root && *root ? root : "/usr/lib/debug",
	         bid, bid + 2);
	if (strlen(bid) > 2 && elf_build_id(dbg, fb, sizeof fb) == 0 && !strcmp(fb, bid))
		return strdup(dbg);
#ifdef PT_HAVE_DEBUGINFOD
	char *p = from_debuginfod(z, raw, nraw);
	if (p)
		return p;
#else
	(void)z, (void)raw, (void)nraw;
#endif
	return NULL;
}

static struct module *module_new(struct symz *z, const char *path, uint64_t bias,
                                  const char *bid, const unsigned char *raw, unsigned nraw,
                                  int check)
{
	for (size_t i = 0; i < z->nmods; i++)
		if (z->mods[i].bias == bias && !strcmp(z->mods[i].path, path) &&
		    !strcmp(z->mods[i].bid ? z->mods[i].bid : "", bid))
			return &z->mods[i];
	struct module *n = realloc(z->mods, (z->nmods + 1) * sizeof *n);
	if (!n)
		return NULL;
	z->mods = n;
	struct module *mod = &z->mods[z->nmods++];
	memset(mod, 0, sizeof *mod);
	mod->path = strdup(path);
	mod->bias = bias;
	mod->bid = bid[0] ? strdup(bid) : NULL;
	int changed = 0;
	if (check) {
		mod->file = find_file(z, path, bid, raw, nraw, &changed);
	} else if (regular_readable(path)) {
		mod->file = strdup(path);
	}
	mod->usable = mod->file != NULL;
	if (changed && !mod->usable) {
		/* once per file: several entries may name it */
		int said = 0;
		for (size_t i = 0; i + 1 < z->nmods; i++)
			said |= !strcmp(z->mods[i].path, path) && !z->mods[i].usable;
		if (!said)
			err_msg("%s: not the file that was traced (its build-id differs from the "
			        "one recorded, %s): its addresses are shown as file+offset", path, bid);
	}
#ifdef PT_HAVE_LIBDW
	if (mod->usable) {
		/* separate debugging information by build-id or by debuglink
		 * name only under /usr/lib/debug: not beside the file, in a
		 * directory the traced program's user may own (libdwfl opens
		 * what it finds there, and a FIFO would block it) */
		static char *debuginfo_path = (char *)"/usr/lib/debug";
		static const Dwfl_Callbacks cb = {
			.find_debuginfo = dwfl_standard_find_debuginfo,
			.section_address = dwfl_offline_section_address,
			.debuginfo_path = &debuginfo_path,
		};
		int fd = elf_open(mod->file);
		if (fd >= 0 && (mod->dwfl = dwfl_begin(&cb)) != NULL) {
			dwfl_report_begin(mod->dwfl);
			/* on success the module owns fd */
			mod->mod = dwfl_report_elf(mod->dwfl, base_name(path), mod->file, fd, bias,
			                           false);
			if (!mod->mod)
				close(fd);
			fd = -1;
			dwfl_report_end(mod->dwfl, NULL, NULL);
		}
		if (fd >= 0)
			close(fd);
	}
#endif
	return mod;
}

/* A mapping of FILE.maps (older logs, live without a stream map) */
static struct module *module_for(struct symz *z, const struct mapping *m)
{
	uint64_t bias = 0;
	char fb[130];

	if (elf_load_bias(m->path, m->start, m->off, &bias) != 0)
		bias = m->start - m->off;
	if (!m->build_id) /* (FILE.maps gave none: the file as it is) */
		return module_new(z, m->path, bias, "", NULL, 0, 0);
	/* FILE.maps names the file; a build-id that differs means rebuilt */
	int same = elf_build_id(m->path, fb, sizeof fb) == 0 && !strcmp(fb, m->build_id);
	return module_new(z, m->path, bias, m->build_id, (const unsigned char *)m->build_id, 0,
	                  !same); /* (debuginfod takes a hex build-id with length 0) */
}

static struct module *module_for_obj(struct symz *z, const struct pt_ext_obj *o)
{
	char bid[2 * PT_EXT_OBJ_BID_MAX + 1];

	hex(bid, o->bid, o->bid_len);
	return module_new(z, o->path, o->base, bid, o->bid, o->bid_len, 1);
}

#ifdef PT_HAVE_LIBDW
/* The source line of addr.  dwfl_module_getsrc() finds the compilation
 * unit through .debug_aranges, which clang does not emit: then look
 * through the units' address ranges. */
static const char *line_of(Dwfl_Module *mod, uint64_t addr, int *lineno)
{
	Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
	if (line)
		return dwfl_lineinfo(line, NULL, lineno, NULL, NULL, NULL);
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	while ((cu = dwfl_module_nextcu(mod, cu, &bias)) != NULL) {
		if (dwarf_haspc(cu, addr - bias) != 1)
			continue;
		Dwarf_Line *l = dwarf_getsrc_die(cu, addr - bias);
		if (l && dwarf_lineno(l, lineno) == 0)
			return dwarf_linesrc(l, NULL, NULL);
		break;
	}
	return NULL;
}
#endif


static void describe(struct symz *z, struct module *mod, uint64_t addr, char *out, size_t cap)
{
	(void)z;
	if (!mod) {
		snprintf(out, cap, "0x%llx", (unsigned long long)addr);
		return;
	}
#ifdef PT_HAVE_LIBDW
	if (mod->mod) {
		GElf_Off off = 0;
		GElf_Sym sym;
		const char *name = dwfl_module_addrinfo(mod->mod, addr, &off, &sym, NULL, NULL, NULL);
		if (name) {
			int n = (int)strcspn(name, "@"); /* no symbol version */
			n = snprintf(out, cap, "%.*s+0x%llx", n, name, (unsigned long long)off);
			/* the address is a return address: the call is just before it */
			int lineno = 0;
			const char *src = line_of(mod->mod, addr - 1, &lineno);
			if (src && lineno > 0 && n > 0 && (size_t)n < cap)
				snprintf(out + n, cap - (size_t)n, " (%s:%d)", base_name(src), lineno);
			return;
		}
	}
#endif
	snprintf(out, cap, "%s+0x%llx%s", mod->path[0] ? base_name(mod->path) : "?",
	         (unsigned long long)(addr - mod->bias), mod->usable ? "" : " [file changed]");
}

static uint64_t ckey(int32_t pid, uint64_t addr)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)pid * 0xff51afd7ed558ccdull;
	return h ^ h >> 31;
}

/* At most this many names are cached: then the cache starts again empty
 * (a trace with more distinct call sites pays their lookups again, in
 * bounded memory). */
#define CACHE_MAX 65536

static struct centry *cache_slot(struct symz *z, int32_t pid, uint64_t addr)
{
	if (z->ncache >= CACHE_MAX) {
		for (size_t i = 0; i < z->ccap; i++) {
			free(z->cache[i].s);
			z->cache[i] = (struct centry){ 0 };
		}
		z->ncache = 0;
	}
	if ((z->ncache + 1) * 2 > z->ccap) {
		size_t ncap = z->ccap ? z->ccap * 2 : 1024;
		struct centry *n = calloc(ncap, sizeof *n);
		if (!n)
			return NULL;
		for (size_t i = 0; i < z->ccap; i++)
			if (z->cache[i].used) {
				size_t j = ckey(z->cache[i].pid, z->cache[i].addr) & (ncap - 1);
				while (n[j].used)
					j = (j + 1) & (ncap - 1);
				n[j] = z->cache[i];
			}
		free(z->cache);
		z->cache = n;
		z->ccap = ncap;
	}
	size_t j = ckey(pid, addr) & (z->ccap - 1);
	while (z->cache[j].used && (z->cache[j].pid != pid || z->cache[j].addr != addr))
		j = (j + 1) & (z->ccap - 1);
	return &z->cache[j];
}

/* live: read the maps of pid once, and again when an address is unknown */
static void live_maps(struct symz *z, int32_t pid, uint64_t ts, uint64_t addr)
{
	int other;
	for (size_t i = 0; i < z->nlive; i++)
		if (z->livepids[i] == pid) {
			if (mapsdb_find(&z->db, pid, ts, addr, &other) && !other)
				return;
			break;
		}
	if (mapsdb_add_live(&z->db, pid) == 0) {
		pid_t *n = realloc(z->livepids, (z->nlive + 1) * sizeof *n);
		if (n) {
			z->livepids = n;
			z->livepids[z->nlive++] = pid;
		}
	}
}

/* When the map could say something else of pid's addr: [*from, *to)
 * around ts holds no entry of pid about addr (nor a whole new map). */
static void span_of(const struct symz *z, int32_t pid, uint64_t ts, uint64_t addr,
                    uint64_t *from, uint64_t *to)
{
	size_t n, start = PID_FIRST(z, pid), stop = SIZE_MAX;
	const size_t *ep = epochs_of(z, pid, &n);

	if (ep && n) { /* (from the whole map before ts to the one after it) */
		size_t k = epochs_upto(z, ep, n, ts);
		start = k ? ep[k - 1] : start;
		stop = k < n ? ep[k] : SIZE_MAX;
	}
	*from = 0, *to = UINT64_MAX;
	for (size_t i = start; i != SIZE_MAX; i = pid_next(z, i)) {
		const struct pt_ext_obj *o = &z->objs[i];
		if (o->pid == pid && (is_epoch(o) || (addr >= o->lo && addr < o->hi))) {
			if (o->ts <= ts)
				*from = o->ts > *from ? o->ts : *from;
			else
				*to = o->ts < *to ? o->ts : *to;
		}
		if (i == stop)
			break;
	}
}

/* "" for a null address. */
const char *symz_lookup(struct symz *z, int32_t pid, uint64_t ts, uint64_t addr)
{
	uint64_t id;
	return symz_lookup_id(z, pid, ts, addr, &id);
}

const char *symz_lookup_id(struct symz *z, int32_t pid, uint64_t ts, uint64_t addr, uint64_t *id)
{
	static char tmp[512];
	int other;

	*id = 0;
	if (!addr)
		return "";
	struct centry *c = cache_slot(z, pid, addr);
	if (c && c->used && c->s && ts >= c->from && ts < c->to) {
		*id = c->id;
		return c->s;
	}
	const struct pt_ext_obj *o = obj_find(z, pid, ts, addr);
	if (!o && z->have_trid && pid > 0) { /* live: written since we last looked? */
		size_t had = z->nobjs;
		live_objects(z);
		if (z->nobjs != had) {
			o = obj_find(z, pid, ts, addr);
			c = cache_slot(z, pid, addr);
		}
	}
	if (o) {
		describe(z, module_for_obj(z, o), addr, tmp, sizeof tmp);
	} else {
		if (z->live && pid > 0)
			live_maps(z, pid, ts, addr);
		const struct mapping *m = z->have || z->live ? mapsdb_find(&z->db, pid, ts, addr, &other)
		                                             : NULL;
		if (m)
			describe(z, module_for(z, m), addr, tmp, sizeof tmp);
		else
			snprintf(tmp, sizeof tmp, "0x%llx", (unsigned long long)addr);
	}
	if (!c)
		return tmp;
	if (c->used)
		free(c->s);
	else
		z->ncache++;
	c->used = 1;
	c->pid = pid;
	c->addr = addr;
	span_of(z, pid, ts, addr, &c->from, &c->to);
	if (!(c->s = strdup(tmp)))
		return tmp; /* (found again as not cached) */
	*id = c->id = ++z->ids;
	return c->s;
}

/* The same as parts (the query tables' columns): found by the same
 * object lookup; not cached (a caller keeps what it asks again). */
int symz_site(struct symz *z, int32_t pid, uint64_t ts, uint64_t addr, struct symz_site *out)
{
	struct module *mod = NULL;
	int other;

	memset(out, 0, sizeof *out);
	if (!addr)
		return -1;
	const struct pt_ext_obj *o = obj_find(z, pid, ts, addr);
	if (o) {
		mod = module_for_obj(z, o);
	} else {
		const struct mapping *m = z->have || z->live ? mapsdb_find(&z->db, pid, ts, addr, &other)
		                                             : NULL;
		mod = m ? module_for(z, m) : NULL;
	}
	if (!mod)
		return -1;
	snprintf(out->object, sizeof out->object, "%s", mod->path);
	out->offset = addr - mod->bias;
#ifdef PT_HAVE_LIBDW
	if (mod->mod && mod->usable) {
		GElf_Off off = 0;
		GElf_Sym sym;
		const char *name = dwfl_module_addrinfo(mod->mod, addr, &off, &sym, NULL, NULL, NULL);
		if (name) {
			snprintf(out->function, sizeof out->function, "%.*s", (int)strcspn(name, "@"), name);
			int lineno = 0;
			const char *src = line_of(mod->mod, addr - 1, &lineno);
			if (src && lineno > 0) {
				snprintf(out->file, sizeof out->file, "%s", src);
				out->line = lineno;
			}
		}
	}
#endif
	return 0;
}

/* The program of pid: the first object of its last map (a forked
 * child's: its parent's), else FILE.maps'. */
const char *symz_exe(struct symz *z, int32_t pid, uint64_t ts)
{
	const char *exe = NULL;
	for (unsigned depth = 0; depth < 16 && !exe; depth++) {
		int32_t parent = 0;
		/* (pid's whole map at ts, found among its own: a look through
		 * the whole map for each process took seconds with 30 000
		 * forked children, and through every map of a pid for each of
		 * 20 000 processes given it as long) */
		size_t i = epoch_of(z, pid, ts);
		if (i != SIZE_MAX) {
			const struct pt_ext_obj *o = &z->objs[i];
			if (o->kind == PT_EXT_OBJ_FORK && o->lo <= INT32_MAX)
				parent = (int32_t)o->lo, ts = o->ts;
			else if (i + 1 < z->nobjs && z->objs[i + 1].pid == pid &&
			         z->objs[i + 1].kind == PT_EXT_OBJ_ADD && z->objs[i + 1].path[0])
				exe = z->objs[i + 1].path;
		}
		if (!parent)
			break;
		pid = parent;
	}
	return exe ? exe : mapsdb_exe(&z->db, pid);
}

void symz_close(struct symz *z)
{
	for (size_t i = 0; i < z->nmods; i++) {
#ifdef PT_HAVE_LIBDW
		if (z->mods[i].dwfl)
			dwfl_end(z->mods[i].dwfl);
#endif
		free(z->mods[i].path);
		free(z->mods[i].file);
		free(z->mods[i].bid);
	}
#ifdef PT_HAVE_DEBUGINFOD
	if (z->dc)
		debuginfod_end(z->dc);
#endif
	for (size_t i = 0; i < z->ccap; i++)
		free(z->cache[i].s);
	free(z->cache);
	free(z->mods);
	free(z->livepids);
	free(z->objs);
	free(z->next);
	free(z->pfirst);
	free(z->ppid);
	free(z->eps);
	free(z->ep_at);
	mapsdb_free(&z->db);
	free(z);
}
