/*
 * symbolize.c -- addresses to "function+0xoff (file.c:line)".
 *
 * The mapping comes from FILE.maps (or, for `live`, from /proc/PID/maps
 * read on demand); the symbols and lines from the mapped ELF file with
 * elfutils' libdwfl when the command was built with it (PT_HAVE_LIBDW).
 * Without libdwfl, or when the file has no symbols, an address inside a
 * known mapping reads "file+0xVADDR"; an address outside any, raw hex.
 * A file whose build-id no longer matches the recorded one is not used
 * for symbols (it was rebuilt since).  Results are cached per (pid,
 * address): a call site is looked up once.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#ifdef PT_HAVE_LIBDW
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#endif

struct module {
	char *path;
	uint64_t bias;
	int usable;        /* file present and build-id matches */
#ifdef PT_HAVE_LIBDW
	Dwfl *dwfl;
	Dwfl_Module *mod;
#endif
};

struct centry { int32_t pid; int used; uint64_t addr; char *s; };

struct symz {
	struct mapsdb db;
	int have, live;
	struct module *mods;
	size_t nmods;
	struct centry *cache;
	size_t ncache, ccap;
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

struct symz *symz_open(const char *log_path, int live)
{
	struct symz *z = calloc(1, sizeof *z);

	if (!z) {
		err_msg("out of memory");
		exit(1);
	}
	z->live = live;
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
	return z->have || z->live;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static struct module *module_for(struct symz *z, const struct mapping *m)
{
	uint64_t bias = 0;

	if (elf_load_bias(m->path, m->start, m->off, &bias) != 0)
		bias = m->start - m->off;
	for (size_t i = 0; i < z->nmods; i++)
		if (z->mods[i].bias == bias && !strcmp(z->mods[i].path, m->path))
			return &z->mods[i];
	struct module *n = realloc(z->mods, (z->nmods + 1) * sizeof *n);
	if (!n)
		return NULL;
	z->mods = n;
	struct module *mod = &z->mods[z->nmods++];
	memset(mod, 0, sizeof *mod);
	mod->path = strdup(m->path);
	mod->bias = bias;
	char bid[130];
	int has = elf_build_id(m->path, bid, sizeof bid) == 0;
	mod->usable = m->build_id ? has && !strcmp(bid, m->build_id) : access(m->path, R_OK) == 0;
#ifdef PT_HAVE_LIBDW
	if (mod->usable) {
		static char *debuginfo_path;
		static const Dwfl_Callbacks cb = {
			.find_debuginfo = dwfl_standard_find_debuginfo,
			.section_address = dwfl_offline_section_address,
			.debuginfo_path = &debuginfo_path,
		};
		if ((mod->dwfl = dwfl_begin(&cb)) != NULL) {
			dwfl_report_begin(mod->dwfl);
			mod->mod = dwfl_report_elf(mod->dwfl, base_name(m->path), m->path, -1, bias,
			                           false);
			dwfl_report_end(mod->dwfl, NULL, NULL);
		}
	}
#endif
	return mod;
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

static void describe(struct symz *z, const struct mapping *m, uint64_t addr, char *out,
                     size_t cap)
{
	struct module *mod = module_for(z, m);

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
	snprintf(out, cap, "%s+0x%llx%s", base_name(m->path), (unsigned long long)(addr - mod->bias),
	         mod->usable ? "" : " [file changed]");
}

static uint64_t ckey(int32_t pid, uint64_t addr)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)pid * 0xff51afd7ed558ccdull;
	return h ^ h >> 31;
}

static struct centry *cache_slot(struct symz *z, int32_t pid, uint64_t addr)
{
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

/* "" for a null address. */
const char *symz_lookup(struct symz *z, int32_t pid, uint64_t ts, uint64_t addr)
{
	static char tmp[512];
	int other;

	if (!addr)
		return "";
	struct centry *c = cache_slot(z, pid, addr);
	if (c && c->used)
		return c->s;
	if (z->live && pid > 0)
		live_maps(z, pid, ts, addr);
	const struct mapping *m = symz_have_maps(z) ? mapsdb_find(&z->db, pid, ts, addr, &other)
	                                            : NULL;
	if (m)
		describe(z, m, addr, tmp, sizeof tmp);
	else
		snprintf(tmp, sizeof tmp, "0x%llx", (unsigned long long)addr);
	if (!c)
		return tmp;
	c->used = 1;
	c->pid = pid;
	c->addr = addr;
	c->s = strdup(tmp);
	z->ncache++;
	return c->s ? c->s : tmp;
}

const char *symz_exe(struct symz *z, int32_t pid)
{
	return mapsdb_exe(&z->db, pid);
}

void symz_close(struct symz *z)
{
	for (size_t i = 0; i < z->nmods; i++) {
#ifdef PT_HAVE_LIBDW
		if (z->mods[i].dwfl)
			dwfl_end(z->mods[i].dwfl);
#endif
		free(z->mods[i].path);
	}
	for (size_t i = 0; i < z->ccap; i++)
		free(z->cache[i].s);
	free(z->cache);
	free(z->mods);
	free(z->livepids);
	mapsdb_free(&z->db);
	free(z);
}
