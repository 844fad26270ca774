/*
 * record_parts.c -- `record`/`attach --rotate`: the directory of the parts (made,
 * checked, emptied of an earlier recording's parts with --force), the
 * parts' name, the first part, and the closing summary of the parts.  The
 * cuts themselves are the library's (pt_ext_log_rotate, src/flush/rotate.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmd.h"

/* --rotate 100M (K, M, G: bytes, as --size) or 30s, 500ms, 10m, 1h (m:
 * minutes, in lower case; M is MiB).  0, or -1 with why. */
int rotate_parse(const char *s, uint64_t *size, uint64_t *period_ns, const char **why)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	size_t sz;

	*size = *period_ns = 0;
	*why = "not a size (like 64K, 100M, 2G) or a duration (like 500ms, 30s, 10m, 1h)";
	if (end == s || errno || !isfinite(v) || v < 0 || *s == '-' || *s == '+')
		return -1;
	double mult = !strcmp(end, "ms") ? 1e6 : !strcmp(end, "s") ? 1e9
	            : !strcmp(end, "m") ? 60e9 : !strcmp(end, "h") ? 3600e9 : 0;
	if (mult) {
		if (v * mult < 10e6 || v * mult > 1e18) {
			*why = v == 0 ? "a part must last longer than 0"
			              : "a duration from 10ms to a few years";
			return -1;
		}
		*period_ns = (uint64_t)(v * mult);
		return 0;
	}
	if (parse_size(s, &sz))
		return -1;
	if (sz < 65536) {
		*why = sz == 0 ? "a part must hold more than 0 bytes"
		               : "a part holds at least 64K (a block of the log)";
		return -1;
	}
	*size = sz;
	return 0;
}

/* The parts' NAME: the program's file name, or the process's (attach), in
 * letters, digits and ._+- (others become _), not starting with '.'. */
void parts_name(char *buf, size_t cap, const char *prog, pid_t pid)
{
	char comm[64] = "";
	const char *src = prog;

	if (!src) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
		FILE *f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof comm, f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		src = comm[0] ? comm : "attached";
	}
	if (strrchr(src, '/'))
		src = strrchr(src, '/') + 1;
	size_t n = 0;
	for (const char *p = src; *p && n + 1 < cap && n < 64; p++) {
		char c = *p;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		         c == '.' || c == '_' || c == '+' || c == '-';
		buf[n] = ok && !(n == 0 && c == '.') ? c : '_';
		n++;
	}
	buf[n] = 0;
	if (!n)
		snprintf(buf, cap, "trace");
}

/* name is NAME-N.ptlog: N, else 0. */
static unsigned part_number(const char *file, const char *name)
{
	size_t k = strlen(name);
	if (strncmp(file, name, k) || file[k] != '-' || file[k + 1] < '1' || file[k + 1] > '9')
		return 0;
	char *end;
	errno = 0;
	unsigned long n = strtoul(file + k + 1, &end, 10);
	return !errno && n <= 0xffffffffu && !strcmp(end, ".ptlog") ? (unsigned)n : 0;
}

/* The directory of the parts: made if missing (0700); an existing one must
 * be a directory of this user's, and empty unless force, which removes
 * the parts NAME-N.ptlog an earlier recording left (other files stay).
 * 0 with *dirfd (and *made: it was made here), or 1 after a message. */
int parts_prepare(const char *dir, const char *name, int force, int *dirfd, int *made)
{
	struct stat st;

	*made = 0;
	if (lstat(dir, &st) != 0) {
		if (errno != ENOENT || mkdir(dir, 0700) != 0) {
			err_msg("cannot make the directory %s: %s", dir, strerror(errno));
			return 1;
		}
		*made = 1;
	} else {
		const char *why = output_refused(&st, 1);
		if (why) {
			err_msg("%s: with --rotate, -o names a directory for the parts, and %s", dir,
			        why);
			return 1;
		}
	}
	if ((*dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		err_msg("cannot open the directory %s: %s", dir, strerror(errno));
		return 1;
	}
	if (*made)
		return 0;
	DIR *d = fdopendir(dup(*dirfd));
	if (!d) {
		err_msg("cannot read the directory %s: %s", dir, strerror(errno));
		close(*dirfd);
		return 1;
	}
	struct dirent *e;
	unsigned other = 0, removed = 0;
	const char *one = NULL;
	char first[256] = "";
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!first[0])
			snprintf(first, sizeof first, "%s", e->d_name), one = first;
		if (force && part_number(e->d_name, name) &&
		    fstatat(*dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    unlinkat(*dirfd, e->d_name, 0) == 0)
			removed++;
		else
			other++;
	}
	closedir(d);
	if (!force && one) {
		err_msg("%s is not empty (it holds %s%s); choose another directory with -o, or add "
		        "--force to record there (the parts NAME-N.ptlog in it are removed first)",
		        dir, one, other > 1 ? " and more" : "");
		close(*dirfd);
		return 1;
	}
	(void)removed;
	return 0;
}

/* Part `n` of the directory, new, for writing: its descriptor, or -1
 * after a message. */
int parts_create(int dirfd, const char *dir, const char *name, unsigned n)
{
	char file[320], path[4400];

	snprintf(file, sizeof file, "%s-%u.ptlog", name, n);
	snprintf(path, sizeof path, "%s/%s", dir, file);
	return create_output_at(dirfd, file, path, 0);
}

/* A recording that did not start: its first part goes, and the directory
 * if it was made for it (and is empty). */
void parts_abandon(int dirfd, const char *dir, const char *name, int made)
{
	char file[320];

	snprintf(file, sizeof file, "%s-1.ptlog", name);
	unlinkat(dirfd, file, 0);
	close(dirfd);
	if (made)
		rmdir(dir);
}

struct pnum { unsigned n; };
static int by_n(const void *a, const void *b)
{
	unsigned x = ((const struct pnum *)a)->n, y = ((const struct pnum *)b)->n;
	return x < y ? -1 : x > y;
}

/* record's closing summary of the parts in dir (rs: the cuts, from the
 * library, or NULL): their count, events, losses (those the removed parts
 * told included).  1 if events were lost that no policy asked to lose (as
 * print_summary), in a part kept or removed, else 0. */
int parts_summary(FILE *f, const char *dir, const char *name, pid_t root,
                  const struct pt_ext_rotate_stats *rs)
{
	struct pnum *p = NULL;
	size_t np = 0, cap = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	int unasked = 0;

	if (!d) {
		fprintf(f, "posixtrace: the parts in %s could not be read back: %s\n", dir,
		        strerror(errno));
		return 1;
	}
	while ((e = readdir(d))) {
		unsigned n = part_number(e->d_name, name);
		if (!n)
			continue;
		if (np == cap) {
			size_t nc = cap ? 2 * cap : 64;
			struct pnum *q = realloc(p, nc * sizeof *q);
			if (!q)
				break;
			p = q, cap = nc;
		}
		p[np++].n = n;
	}
	closedir(d);
	qsort(p, np, sizeof *p, by_n);
	uint64_t nev = 0, lost = 0, first = UINT64_MAX, last = 0, waits = 0;
	unsigned bad = 0;
	int sp = -1, lp = -1; /* the stream's policies (a part's attributes) */
	for (size_t i = 0; i < np; i++) {
		char path[4400];
		struct tlog l;
		snprintf(path, sizeof path, "%s/%s-%u.ptlog", dir, name, p[i].n);
		if (tlog_totals(&l, path) != 0) {
			fprintf(f, "posixtrace: the part %s could not be read back\n", path);
			bad++;
			continue;
		}
		nev += l.nev;
		lost += tlog_lost_total(&l);
		if (l.nev && l.first < first)
			first = l.first;
		if (l.nev && l.last > last)
			last = l.last;
		unasked |= tlog_lost_unasked(&l);
		if (sp < 0) {
			posix_trace_attr_getstreamfullpolicy(&l.attr, &sp);
			posix_trace_attr_getlogfullpolicy(&l.attr, &lp);
		}
		waits += l.count[PT_EXT_NOLOSS_WAIT];
		tlog_free(&l);
	}
	/* the losses of the parts --keep removed, as the library counted them
	 * when it finished each: in the total, and in the exit status as the
	 * parts' own are (tlog_lost_unasked) */
	uint64_t gone = rs ? rs->removed_lost + rs->removed_dropped : 0;
	lost += gone;
	if (rs && ((sp == POSIX_TRACE_FLUSH && rs->removed_lost) ||
	           (rs->removed_dropped && lp != POSIX_TRACE_UNTIL_FULL)))
		unasked = 1;
	char dur[32];
	fmt_duration(dur, sizeof dur, first <= last ? last - first : 0);
	fprintf(f, "posixtrace: %s: %llu events in %zu part%s", dir, (unsigned long long)nev, np,
	        np == 1 ? "" : "s");
	if (np)
		fprintf(f, " (%s-%u.ptlog to %s-%u.ptlog)", name, p[0].n, name, p[np - 1].n);
	if (root > 0)
		fprintf(f, ", program pid %d", (int)root);
	fprintf(f, ", over %s; %s%llu events lost", dur, lost ? "EVENTS LOST: " : "",
	        (unsigned long long)lost);
	if (gone)
		fprintf(f, " (%llu of them told in parts removed since)", (unsigned long long)gone);
	fputc('.', f);
	if (np)
		fprintf(f, " Read a part with 'posixtrace show %s/%s-%u.ptlog'.", dir, name,
		        p[np - 1].n);
	fputc('\n', f);
	if (waits)
		fprintf(f, "posixtrace: the program was held %llu time%s for room in the stream "
		        "(--no-loss): 'posixtrace info %s' says how long, per thread.\n",
		        (unsigned long long)waits, waits == 1 ? "" : "s", dir);
	if (rs && rs->cuts)
		fprintf(f, "posixtrace: %llu cut%s, each made within %.1f ms of its threshold; the "
		        "longest took %.1f ms (%.1f ms of CPU at most); %llu older part%s removed "
		        "(--keep, --keep-size)\n",
		        (unsigned long long)rs->cuts, rs->cuts == 1 ? "" : "s",
		        (double)rs->max_over_ns / 1e6, (double)rs->max_cut_ns / 1e6,
		        (double)rs->max_cut_cpu_ns / 1e6, (unsigned long long)rs->removed,
		        rs->removed == 1 ? "" : "s");
	free(p);
	return unasked || bad;
}
