/*
 * objmap.c -- the map of loaded code, written by the traced process into
 * every stream it records into, so that a trace names its own addresses
 * (docs/design.md, "The map of loaded code").
 *
 * The process keeps a table of its loaded objects (path, load bias,
 * mapped range, GNU build-id) in its own memory.  A constructor notes the
 * objects loaded at start with dl_iterate_phdr(), and nothing more: their
 * program headers, build-ids and paths are read from memory (nothing from
 * files) the first time a stream reaches the process, so a process that
 * is never traced touches no page of its objects for this.  Each stream
 * gets the whole table when it reaches the process (attach, a forked
 * child's inherited stream, the first event after exec): a BEGIN entry,
 * then one entry per object.  That is memory copies only, so it is
 * async-signal-safe like the rest of attaching.
 *
 * Objects loaded later (dlopen) are found without interposing dlopen: a
 * recording thread keeps the range of the object its last event came
 * from; an event from outside it (a few instructions on the recording
 * path, after the filter) looks the address up with _dl_find_object(),
 * which is lock-free and async-signal-safe, and an object the table does
 * not have is added to it and to every stream (ADD).  An object found
 * where a table entry says another one was is that one's replacement: the
 * old entry is marked gone (DEL).  A thread forgets its cached range each
 * time it takes a new chunk, so an object that replaced another at the
 * same address is noticed by its next chunk at the latest.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#undef PT_TLS /* <elf.h>'s program header type; shm.h's TLS model from here on */
#include "producer.h"

#define OBJ_MAX 4096u /* objects one process keeps track of */

/* the table entries it used last (index + 1, or 0, in the low 16 bits),
 * looked at before the table; the next one to replace in tl_idx[0]'s high
 * bits (not a variable of its own: with the padding it brought, 16 bytes
 * of the static TLS reserve, event.c) */
#define OBJ_TL 4u
static _Thread_local uint32_t tl_idx[OBJ_TL] PT_TLS;
#define TL_ENTRY(k) (tl_idx[k] & 0xffffu)
_Static_assert(OBJ_MAX < 0xffffu && (0x10000u % OBJ_TL) == 0, "tl_idx's fields");

/* The table: entries [0, ntab), each in one of these states (state[i]):
 * OBJ_GONE (unloaded), OBJ_START (loaded at start, only start[i] known
 * yet), OBJ_FULL (tab[i] complete).  Entries are added and changed under
 * tab_lock, a try-lock (a signal handler never waits for it); an entry
 * goes OBJ_START -> OBJ_FULL -> OBJ_GONE, each with a release store after
 * the fields it makes valid. */
#define OBJ_GONE  0u
#define OBJ_START 1u
#define OBJ_FULL  2u
struct start_obj {               /* what dl_iterate_phdr() said at start */
	uintptr_t base;
	const ElfW(Phdr) *ph;
	const char *name;        /* the loader's (objects of the start stay);
	                          * NULL: the program */
	uint32_t n;
};
static struct pt_obj *tab;
static struct start_obj *start;
static _Atomic uint32_t *state;
static uint16_t *bid_off;        /* where its build-id is, from lo, if in the
                                  * first page; else 0 */
static _Atomic uint32_t ntab;
static _Atomic int tab_lock;
static uintptr_t page = 4096;    /* (sysconf is not async-signal-safe: at load) */

static void copy_path(struct pt_obj *o, const char *p)
{
	size_t n = p ? strlen(p) : 0;

	if (n >= sizeof o->path) {
		n = sizeof o->path - 1;
		o->flags |= PT_OBJ_F_TRUNC;
	}
	memcpy(o->path, p ? p : "", n);
	o->path[n] = 0;
}

/* The GNU build-id from the PT_NOTE segments, in memory. */
static void build_id(struct pt_obj *o, const ElfW(Phdr) *ph, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		uintptr_t a = (uintptr_t)o->base + ph[i].p_vaddr, sz = ph[i].p_filesz;
		size_t al = ph[i].p_align == 8 ? 8 : 4;
		if (a < o->lo || a > o->hi || sz > o->hi - a || a % 4)
			continue;
		const unsigned char *b = (const unsigned char *)a;
		for (size_t off = 0; off + 12 <= sz;) {
			ElfW(Nhdr) nh;
			memcpy(&nh, b + off, sizeof nh);
			size_t name = off + sizeof nh;
			size_t desc = name + ((nh.n_namesz + al - 1) & ~(al - 1));
			if (nh.n_namesz > sz || nh.n_descsz > sz || desc + nh.n_descsz > sz)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp(b + name, "GNU", 4) && nh.n_descsz > 0) {
				unsigned k = nh.n_descsz < PT_OBJ_BID_MAX ? nh.n_descsz : PT_OBJ_BID_MAX;
				memcpy(o->bid, b + desc, k);
				o->bid_len = (uint8_t)k;
				uintptr_t at = a + desc - o->lo;
				if (tab && o >= tab && o < tab + OBJ_MAX && at + k <= 4096)
					bid_off[o - tab] = (uint16_t)at;
				return;
			}
			off = desc + ((nh.n_descsz + al - 1) & ~(al - 1));
		}
	}
}

static void fill(struct pt_obj *o, uintptr_t base, const ElfW(Phdr) *ph, unsigned n,
                 const char *path)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	memset(o, 0, sizeof *o);
	if (tab && o >= tab && o < tab + OBJ_MAX)
		bid_off[o - tab] = 0;
	for (unsigned i = 0; i < n; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		uintptr_t a = base + (ph[i].p_vaddr & ~(page - 1)), e = base + ph[i].p_vaddr + ph[i].p_memsz;
		lo = a < lo ? a : lo;
		hi = e > hi ? e : hi;
	}
	o->base = base;
	o->lo = lo < hi ? lo : 0;
	o->hi = lo < hi ? hi : 0;
	o->kind = PT_OBJ_ADD;
	if (o->hi)
		build_id(o, ph, n);
	copy_path(o, path);
}

/* The whole entry of an object of the start, into o (the table's own
 * entry only under tab_lock). */
static void fill_start(uint32_t i, struct pt_obj *o)
{
	char exe[PT_OBJ_PATH];
	const char *name = start[i].name;
	if (!name) { /* the program: asked only now (procfs is slow here) */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[n > 0 ? n : 0] = 0;
		name = exe;
	}
	fill(o, start[i].base, start[i].ph, start[i].n, name);
}

/* Every entry of the start made whole (under tab_lock). */
static void fill_starts(void)
{
	uint32_t n = atomic_load_explicit(&ntab, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++)
		if (atomic_load_explicit(&state[i], memory_order_relaxed) == OBJ_START) {
			fill_start(i, &tab[i]);
			atomic_store_explicit(&state[i], tab[i].hi ? OBJ_FULL : OBJ_GONE,
			                      memory_order_release);
		}
}

static int first_seen;

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	const char *path = info->dlpi_name;
	uint32_t n = atomic_load_explicit(&ntab, memory_order_relaxed);
	if (!path || !*path) {
		if (first_seen)
			return 0; /* only the program itself has no name */
		path = NULL;
	}
	first_seen = 1;
	if (n >= OBJ_MAX)
		return 1;
	start[n] = (struct start_obj){ info->dlpi_addr, info->dlpi_phdr, path, info->dlpi_phnum };
	atomic_store_explicit(&state[n], OBJ_START, memory_order_relaxed);
	atomic_store_explicit(&ntab, n + 1, memory_order_release);
	return 0;
}

/* At load (and after exec, in the new image; lifecycle.c): the objects
 * loaded so far, after the control segment, before the program's own
 * constructors. */
void pt_objmap_init(void)
{
	size_t sz = (size_t)OBJ_MAX * (sizeof *tab + sizeof *start + sizeof *state + sizeof *bid_off);
	void *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	               -1, 0);
	if (p == MAP_FAILED)
		return;
	/* pages as they are used: a huge page would be zeroed whole at once */
	madvise(p, sz, MADV_NOHUGEPAGE);
	start = (struct start_obj *)((char *)p + (size_t)OBJ_MAX * sizeof *tab);
	state = (_Atomic uint32_t *)(start + OBJ_MAX);
	bid_off = (uint16_t *)(state + OBJ_MAX);
	tab = p;
	page = (uintptr_t)sysconf(_SC_PAGESIZE);
	atomic_store(&tab_lock, 1);
	dl_iterate_phdr(each_object, NULL);
	atomic_store_explicit(&tab_lock, 0, memory_order_release);
}

/* One entry into a stream's area (also the entries of thrmap.c and
 * typemap.c, which are not objects). */
void pt_objmap_put(struct pt_view *sl, const struct pt_obj *src, int32_t pid, unsigned kind,
                   uint64_t tick)
{
	struct pt_hdr *h = sl->hdr;

	/* a ring: slot i % PT_OBJ_SLOTS once the reader took what it held
	 * (acquire: it has read that entry before it said so).  Claimed only
	 * with room, so that every entry claimed is written. */
	uint32_t i = atomic_load_explicit(&h->obj_next, memory_order_relaxed);
	do {
		if (i - atomic_load_explicit(&h->obj_done, memory_order_acquire) >= PT_OBJ_SLOTS) {
			atomic_fetch_add_explicit(&h->obj_lost, 1, memory_order_relaxed);
			return;
		}
	} while (!atomic_compare_exchange_weak_explicit(&h->obj_next, &i, i + 1,
	                                                memory_order_relaxed, memory_order_relaxed));
	struct pt_obj *d = &sl->objs[i % PT_OBJ_SLOTS], e;
	atomic_store_explicit(&d->ready, 0, memory_order_relaxed); /* its last lap's */
	size_t plen = src ? strnlen(src->path, sizeof src->path - 1) : 0;
	memset(&e, 0, sizeof e);
	e.tick = tick;
	e.base = src ? src->base : 0;
	e.lo = src ? src->lo : 0;
	e.hi = src ? src->hi : 0;
	e.pid = pid;
	e.kind = (uint16_t)kind;
	e.bid_len = src ? src->bid_len : 0;
	e.flags = src ? src->flags : 0;
	if (src)
		memcpy(e.bid, src->bid, sizeof e.bid);
	memcpy(e.path, src ? src->path : "", plen);
	/* into shared memory, which other processes may write too (a hostile
	 * one): word by word, as records are (the reader reads it so) */
	_Static_assert(offsetof(struct pt_obj, tick) == sizeof(pt_word), "ready is the first word");
	pt_put_bytes((pt_word *)d + 1, (const unsigned char *)&e + sizeof(pt_word),
	             (uint32_t)(sizeof e - sizeof(pt_word)));
	atomic_store_explicit(&d->ready, PT_OBJ_TAG(i), memory_order_release);
}

/* Table entries [from, to) that are alive, into sl; from 0 with a BEGIN
 * first.  Returns to. */
static uint32_t dump(struct pt_view *sl, int32_t pid, uint32_t from, uint32_t to)
{
	uint64_t tick = pt_now();
	/* objects of the start not read yet: into the table if it is ours
	 * now (not if another thread, or the code a signal handler
	 * interrupted, has it: then read into a copy) */
	int mine = !atomic_exchange_explicit(&tab_lock, 1, memory_order_acquire);
	struct pt_obj tmp;

	if (mine)
		fill_starts();
	if (from == 0)
		pt_objmap_put(sl, NULL, pid, PT_OBJ_BEGIN, tick);
	for (uint32_t i = from; i < to; i++) {
		uint32_t st = atomic_load_explicit(&state[i], memory_order_acquire);
		if (st == OBJ_FULL) {
			pt_objmap_put(sl, &tab[i], pid, PT_OBJ_ADD, tick);
		} else if (st == OBJ_START) {
			fill_start(i, &tmp);
			if (tmp.hi)
				pt_objmap_put(sl, &tmp, pid, PT_OBJ_ADD, tick);
		}
	}
	if (mine)
		atomic_store_explicit(&tab_lock, 0, memory_order_release);
	return to;
}

/* In the child of a fork (one thread): a thread of the parent may have
 * held the table. */
void pt_objmap_atfork_child(void)
{
	atomic_store_explicit(&tab_lock, 0, memory_order_relaxed);
}

void pt_objmap_fork(struct pt_view *sl, int32_t pid, int32_t ppid)
{
	struct pt_obj o;

	memset(&o, 0, sizeof o);
	o.lo = (uint64_t)(uint32_t)ppid;
	pt_objmap_put(sl, &o, pid, PT_OBJ_FORK, pt_now());
}

uint32_t pt_objmap_dump(struct pt_view *sl, int32_t pid, uint32_t from)
{
	if (!tab)
		return 0;
	return dump(sl, pid, from, atomic_load_explicit(&ntab, memory_order_acquire));
}

/* Into every stream this process records into. */
void pt_objmap_put_all(const struct pt_obj *o, unsigned kind)
{
	uint64_t tick = pt_now();

	pt_objmap_order(); /* against attach() */
	uint32_t att = atomic_load_explicit(&pt_proc.att, memory_order_acquire);
	while (att) {
		unsigned s = (unsigned)__builtin_ctz(att);
		att &= att - 1;
		struct pt_view *sl = pt_view_att(s);
		if (!atomic_load_explicit(&sl->dead, memory_order_relaxed))
			pt_objmap_put(sl, o, pt_pid, kind, tick);
	}
}

/* Is the object the loader has at lo (its link map says base) still the
 * one entry i describes?  An object of the start is (it cannot be
 * unloaded) if the bases agree.  Otherwise its build-id is compared where
 * it was in memory, when that is in the first page (which any object
 * mapped at lo has readable: the ELF header): a library loaded where an
 * unloaded one was has other bytes there. */
static int still(uint32_t i, uintptr_t lo, uintptr_t base, uintptr_t addr)
{
	uint32_t st = atomic_load_explicit(&state[i], memory_order_acquire);
	if (st == OBJ_START)
		return start[i].base == base;
	const struct pt_obj *o = &tab[i];
	if (st != OBJ_FULL || o->lo != lo || addr >= o->hi)
		return 0;
	return !bid_off[i] || !memcmp((const void *)(lo + bid_off[i]), o->bid, o->bid_len);
}

static void cache(uintptr_t lo, uintptr_t span, uint32_t idx)
{
	unsigned k = (tl_idx[0] >> 16) % OBJ_TL;
	tl_idx[k] = (tl_idx[k] & ~0xffffu) | ((idx + 1) & 0xffffu); /* (UINT32_MAX: 0) */
	tl_idx[0] += 1u << 16;
	pt_obj.lo = lo;
	pt_obj.span = span;
}

void pt_objmap_forget(void)
{
	pt_obj.span = 0;
}

/* An event from outside the thread's cached range (event.c): which
 * object is it from?  _dl_find_object() (about 4 ns), then the entries
 * this thread used last, then the table; an object the table does not
 * have is added, and written into every stream. */
void pt_objmap_miss(uintptr_t addr)
{
#ifdef DLFO_STRUCT_HAS_EH_DBASE
	struct dl_find_object fo;
	if (!tab || _dl_find_object((void *)addr, &fo) != 0 || !fo.dlfo_link_map) {
		cache(addr, 1, UINT32_MAX); /* not in any object (generated code, say) */
		return;
	}
	uintptr_t lo = (uintptr_t)fo.dlfo_map_start, hi = (uintptr_t)fo.dlfo_map_end;
	uintptr_t base = fo.dlfo_link_map->l_addr;
	for (unsigned k = 0; k < OBJ_TL; k++)
		if (TL_ENTRY(k) && TL_ENTRY(k) <= OBJ_MAX && still(TL_ENTRY(k) - 1, lo, base, addr)) {
			pt_obj.lo = lo, pt_obj.span = hi - lo;
			return;
		}
	uint32_t n = atomic_load_explicit(&ntab, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++)
		if (still(i, lo, base, addr)) {
			cache(lo, hi - lo, i);
			return;
		}
	/* new to us: add it (if another thread is at it, or we interrupted
	 * ourselves, the next event looks again) */
	if (atomic_exchange_explicit(&tab_lock, 1, memory_order_acquire))
		return;
	fill_starts(); /* (ranges to compare with) */
	n = atomic_load_explicit(&ntab, memory_order_relaxed);
	struct pt_obj *o = n < OBJ_MAX ? &tab[n] : NULL; /* (not counted until it checks out) */
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)lo;
	struct link_map *lm = fo.dlfo_link_map;
	int ok = 0;
	if (o && hi - lo >= sizeof *eh && !memcmp(eh->e_ident, ELFMAG, SELFMAG) &&
	    eh->e_phentsize == sizeof(ElfW(Phdr)) && eh->e_phoff < hi - lo &&
	    (uintptr_t)eh->e_phnum * sizeof(ElfW(Phdr)) <= hi - lo - eh->e_phoff) {
		fill(o, lm->l_addr, (const ElfW(Phdr) *)(lo + eh->e_phoff), eh->e_phnum,
		     lm->l_name ? lm->l_name : "");
		ok = o->lo == lo && addr >= o->lo && addr < o->hi;
	}
	if (ok) {
		for (uint32_t i = 0; i < n; i++) /* what it replaced is gone */
			if (atomic_load_explicit(&state[i], memory_order_relaxed) == OBJ_FULL &&
			    tab[i].lo < o->hi && o->lo < tab[i].hi) {
				atomic_store_explicit(&state[i], OBJ_GONE, memory_order_relaxed);
				pt_objmap_put_all(&tab[i], PT_OBJ_DEL);
			}
		atomic_store_explicit(&state[n], OBJ_FULL, memory_order_release);
		atomic_store_explicit(&ntab, n + 1, memory_order_release);
		pt_objmap_put_all(o, PT_OBJ_ADD);
		cache(lo, hi - lo, n);
	} else {
		/* the loader's idea of the object does not match its headers (a
		 * static program's own map, say): the table's entry holding the
		 * address, as the constructor saw it */
		uint32_t i = 0;
		for (; i < n; i++)
			if (atomic_load_explicit(&state[i], memory_order_relaxed) == OBJ_FULL &&
			    addr >= tab[i].lo && addr < tab[i].hi)
				break;
		if (i < n)
			cache(tab[i].lo, tab[i].hi - tab[i].lo, i);
		else /* nothing to say of it: do not look again at every event */
			cache(lo, hi - lo, UINT32_MAX);
	}
	atomic_store_explicit(&tab_lock, 0, memory_order_release);
#else
	(void)addr;
	pt_obj.lo = 0; /* no lock-free lookup here: the map of the start only */
	pt_obj.span = UINTPTR_MAX;
#endif
}
