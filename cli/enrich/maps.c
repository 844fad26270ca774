/*
 * maps.c -- memory maps of traced processes, for symbolizing addresses
 * when the trace has no map of loaded code of its own: logs written by
 * older versions (FILE.maps beside them), and `live` on a process whose
 * stream carries none (read from /proc/PID/maps while it lives).
 *
 * Older versions of `record` and `attach` wrote FILE.maps next to the
 * log: a snapshot of /proc/PID/maps (file-backed mappings only) each time
 * it changed, with the time it was seen, the executable and each file's
 * build-id:
 *
 *   # posixtrace maps 1
 *   S <pid> <realtime-ns> <exe path or ->
 *   M <start>-<end> <file offset> <build-id or -> <path>        (hex numbers)
 *
 * The reader picks, for an event of pid P at time T, the snapshot of P
 * taken last before T, then the later ones, then the earlier ones, and the
 * first of those with a mapping holding the address; a pid with none (a
 * child that lived less than one polling period) falls back to the other
 * processes' snapshots (a forked child has its parent's maps).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "enrich.h"

void snapshot_free(struct snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->m[i].path);
		free(s->m[i].build_id);
	}
	free(s->m);
	free(s->exe);
	memset(s, 0, sizeof *s);
}

static int push_mapping(struct snapshot *s, uint64_t a, uint64_t b, uint64_t off,
                        const char *path, const char *bid)
{
	if (s->n % 32 == 0) {
		struct mapping *n = realloc(s->m, (s->n + 32) * sizeof *n);
		if (!n)
			return -1;
		s->m = n;
	}
	s->m[s->n++] = (struct mapping){ a, b, off, strdup(path),
	                                 bid && strcmp(bid, "-") ? strdup(bid) : NULL };
	return 0;
}

/* Build-ids by path, so a library is read once per run. */
static struct { char *path; char *bid; } *bid_cache;
static size_t bid_n;

static const char *build_id_of(const char *path)
{
	for (size_t i = 0; i < bid_n; i++)
		if (!strcmp(bid_cache[i].path, path))
			return bid_cache[i].bid;
	char hex[130];
	void *n = realloc(bid_cache, (bid_n + 1) * sizeof *bid_cache);
	if (!n)
		return NULL;
	bid_cache = n;
	bid_cache[bid_n].path = strdup(path);
	bid_cache[bid_n].bid = elf_build_id(path, hex, sizeof hex) == 0 ? strdup(hex) : NULL;
	return bid_cache[bid_n++].bid;
}

/* A snapshot of the live process (file-backed mappings). */
int maps_read_proc(pid_t pid, struct snapshot *s)
{
	char fn[64], line[4352], exe[4096];
	FILE *f;

	memset(s, 0, sizeof *s);
	snprintf(fn, sizeof fn, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(fn, "re")))
		return -1;
	s->pid = pid;
	s->ts = now_realtime_ns();
	while (fgets(line, sizeof line, f)) {
		uint64_t a, b, off;
		int pos = 0;
		char perm[8];
		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &a, &b, perm,
		           &off, &pos) < 4 || !pos || line[pos] != '/')
			continue;
		if (push_mapping(s, a, b, off, line + pos, build_id_of(line + pos))) {
			fclose(f);
			snapshot_free(s);
			return -1;
		}
	}
	fclose(f);
	snprintf(fn, sizeof fn, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(fn, exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		s->exe = strdup(exe);
	}
	if (s->n == 0) { /* a zombie, or a kernel thread: nothing to keep */
		snapshot_free(s);
		return -1;
	}
	return 0;
}

static struct snapshot *db_push(struct mapsdb *db)
{
	if (db->n == db->cap) {
		size_t ncap = db->cap ? db->cap * 2 : 16;
		struct snapshot *n = realloc(db->s, ncap * sizeof *n);
		if (!n)
			return NULL;
		db->s = n;
		db->cap = ncap;
	}
	memset(&db->s[db->n], 0, sizeof db->s[0]);
	return &db->s[db->n++];
}

int mapsdb_load(struct mapsdb *db, const char *path)
{
	char line[4352];
	struct snapshot *cur = NULL;
	int fd = elf_open(path); /* a regular file only: never block on it */
	FILE *f = fd < 0 ? NULL : fdopen(fd, "re");

	memset(db, 0, sizeof *db);
	if (!f) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		int pid, pos = 0;
		uint64_t ts, a, b, off;
		char bid[130];
		if (line[0] == 'S' && sscanf(line, "S %d %" SCNu64 " %n", &pid, &ts, &pos) == 2 && pos) {
			if (!(cur = db_push(db)))
				break;
			cur->pid = pid;
			cur->ts = ts;
			cur->exe = strcmp(line + pos, "-") ? strdup(line + pos) : NULL;
		} else if (line[0] == 'M' && cur &&
		           sscanf(line, "M %" SCNx64 "-%" SCNx64 " %" SCNx64 " %129s %n", &a, &b, &off,
		                  bid, &pos) == 4 && pos && a < b) {
			push_mapping(cur, a, b, off, line + pos, bid);
		}
	}
	fclose(f);
	return 0;
}

int mapsdb_add_live(struct mapsdb *db, pid_t pid)
{
	struct snapshot s;
	if (maps_read_proc(pid, &s))
		return -1;
	struct snapshot *d = db_push(db);
	if (!d) {
		snapshot_free(&s);
		return -1;
	}
	*d = s;
	return 0;
}

static const struct mapping *in_snap(const struct snapshot *s, uint64_t addr)
{
	for (size_t i = 0; i < s->n; i++)
		if (addr >= s->m[i].start && addr < s->m[i].end)
			return &s->m[i];
	return NULL;
}

const struct mapping *mapsdb_find(const struct mapsdb *db, int32_t pid, uint64_t ts,
                                  uint64_t addr, int *other_pid)
{
	const struct mapping *m;
	size_t best = SIZE_MAX;

	*other_pid = 0;
	for (size_t i = 0; i < db->n; i++) /* the last snapshot of pid before ts */
		if (db->s[i].pid == pid && db->s[i].ts <= ts)
			best = i;
	if (best != SIZE_MAX && (m = in_snap(&db->s[best], addr)))
		return m;
	for (size_t i = best == SIZE_MAX ? 0 : best + 1; i < db->n; i++)
		if (db->s[i].pid == pid && (m = in_snap(&db->s[i], addr)))
			return m;
	for (size_t i = best == SIZE_MAX ? 0 : best; i-- > 0;)
		if (db->s[i].pid == pid && (m = in_snap(&db->s[i], addr)))
			return m;
	*other_pid = 1;
	for (size_t i = 0; i < db->n; i++)
		if (db->s[i].pid != pid && (m = in_snap(&db->s[i], addr)))
			return m;
	return NULL;
}

const char *mapsdb_exe(const struct mapsdb *db, int32_t pid)
{
	for (size_t i = db->n; i-- > 0;)
		if (db->s[i].pid == pid && db->s[i].exe)
			return db->s[i].exe;
	return NULL;
}

void mapsdb_free(struct mapsdb *db)
{
	for (size_t i = 0; i < db->n; i++)
		snapshot_free(&db->s[i]);
	free(db->s);
	memset(db, 0, sizeof *db);
}
