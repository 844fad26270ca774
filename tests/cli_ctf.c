/*
 * cli_ctf.c -- `posixtrace export --format ctf` read back by the real
 * babeltrace2: one line per event of the log, and for each line an event
 * of the log (read with posix_trace_open()) with the same exact timestamp
 * (--clock-seconds), type name, pid, thread id, address and payload
 * length (the thread from the packet context: pid, vtid and tid the kernel
 * TID as LTTng says, pthread_id, procname),
 * and the call site: the event carries a number (the "site" enumeration),
 * whose label babeltrace2 prints: the event's address and the location
 * that `posixtrace show` prints for it (none when show prints none or a
 * bare address); a number of a type is always the same label, and the
 * metadata lists each call site once per type it records.  With --raw-addresses, the address only and
 * no site.  Skipped without babeltrace2.
 */
#include <trace.h>
#include "t.h"
#include "cli_util.h"

static uint64_t ns(const struct posix_trace_event_info *i)
{
	return (uint64_t)i->posix_timestamp.tv_sec * 1000000000u + (uint64_t)i->posix_timestamp.tv_nsec;
}

/* The location show prints on its line: after the last "  @ "; "" when
 * none or a bare address (the CTF export leaves those empty). */
static void show_location(const char *line, char *out, size_t cap)
{
	const char *at = NULL;
	for (const char *p = line; (p = strstr(p, "  @ ")) != NULL; p++)
		at = p;
	snprintf(out, cap, "%s", at && strncmp(at + 4, "0x", 2) ? at + 4 : "");
}

/* `site = ( "0xADDR[ LOCATION]" : container = N )` at p in a line of
 * babeltrace2: the address into *addr, the location (backslash escapes
 * undone) into out ("" when none), the number into *id; returns what
 * follows, NULL when p is not that. */
static const char *bt_site(const char *p, unsigned long long *addr, char *out, size_t cap,
                           unsigned *id)
{
	size_t o = 0;
	int at = 0;
	if (sscanf(p, "site = ( \"0x%llx%n", addr, &at) != 1 || !at)
		return NULL;
	p += at;
	if (*p == ' ')
		p++;
	for (; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1])
			p++;
		if (o + 1 < cap)
			out[o++] = *p;
	}
	out[o] = 0;
	at = 0;
	if (*p != '"' || sscanf(p, "\" : container = %u )%n", id, &at) != 1 || !at)
		return NULL;
	return p + at;
}

int main(void)
{
	char *out = NULL, *err = NULL, *shown = NULL, line[8192], sline[1024], sym[1024], loc[1024];
	struct cli_ev *ev;

	T_BEGIN(120);
	const char *bt = cli_which("babeltrace2");
	if (!bt)
		T_SKIP("babeltrace2 is not installed (Debian: babeltrace2)");
	cli_setup();
	const char *log = cli_path("app.ptlog"), *dir = cli_path("app.ctf");
	REQUIRE(cli_record_app(log, "0") == 0);
	int n = cli_read_log(log, &ev);
	CHECK_EQ(cli_run(CLI("export", "--all", "--format", "ctf", (char *)log, "-o", (char *)dir), NULL, NULL), 0);
	int dwarf = cli_has_libdw();
	/* show prints the events in the log's order, one line each */
	CHECK_EQ(cli_run(CLI("show", "--all", (char *)log), &shown, NULL), 0);
	CHECK_EQ(cli_nlines(shown), n);

	int rc = cli_run((char *const[]){ (char *)bt, "--clock-seconds", (char *)dir, NULL }, &out, &err);
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "babeltrace2: %s\n", err ? err : "");
	CHECK_EQ(cli_nlines(out), n);
	/* babeltrace2 gives them in time order; so does the log, but for
	 * events published late: match each line to an event by time + name */
	int matched = 0, syms = 0, sym_ok = 0, with_line = 0, typed = 0, typed_ok = 0;
	/* the sites met: per type (at most 64) the label of each number */
	static unsigned long long site_addr[64][64];
	static char site_sym[64][64][1024], site_seen[64][64], types[64][80];
	int nsites = 0, site_same = 0, ntypes = 0;
	for (int i = 0; cli_line(out, i, line, sizeof line) == 0; i++) {
		unsigned long long s = 0, f = 0, tid = 0, addr = 0;
		int pid = -1, vtid = -1, ktid = -1, plen = -1, k, at = 0;
		char name[80];
		/* the packet context names the thread (pid; vtid and tid, both
		 * the kernel TID, as LTTng's; pthread_id; procname), then the
		 * event's fields */
		const char *pn = NULL;
		if (sscanf(line, "[%llu.%llu] %*s %79[^:]: { pid = %d, vtid = %d, tid = %d, "
		                 "pthread_id = %llx, procname = %n",
		           &s, &f, name, &pid, &vtid, &ktid, &tid, &at) == 7 && at && line[at] == '"' &&
		    ktid == vtid)
			pn = strchr(line + at + 1, '"');
		unsigned id = 0;
		int ppid = -1;
		/* then the parent (ppid), then the call site: its number,
		 * labelled with the address and the location show prints for
		 * it; then the payload */
		at = 0;
		const char *after = pn && sscanf(pn, "\", ppid = %d }, { %n", &ppid, &at) == 1 && at
		                    ? bt_site(pn + at, &addr, sym, sizeof sym, &id) : NULL;
		if (!after) {
			if (i < 3)
				fprintf(stderr, "unexpected babeltrace2 line: %s\n", line);
			continue;
		}
		/* one number of a type, one label */
		int ty;
		for (ty = 0; ty < ntypes && strcmp(types[ty], name); ty++)
			;
		if (ty == ntypes && ntypes < 64)
			snprintf(types[ntypes++], sizeof types[0], "%s", name);
		if (ty < 64 && id < 64) {
			if (!site_seen[ty][id]) {
				site_seen[ty][id] = 1, site_addr[ty][id] = addr, nsites++;
				memcpy(site_sym[ty][id], sym, sizeof sym);
			}
			site_same += site_addr[ty][id] == addr && !strcmp(site_sym[ty][id], sym);
		}
		/* a payload its program described (examples/app: 32-bit integers
		 * only) comes field by field: "payload = { worker = 1, round = 0 }" */
		long long vals[16];
		int nv = -1;
		if (after && !strncmp(after, ", payload = { ", 14)) {
			const char *q = after + 14;
			int used = 0;
			for (nv = 0; nv < 16 && sscanf(q, "%*[a-z_] = %lld%n", &vals[nv], &used) == 1; nv++) {
				q += used;
				if (strncmp(q, ", ", 2))
					break;
				q += 2;
			}
			nv += nv < 16;
			plen = 4 * nv;
			typed++;
		}
		if (!after || (nv < 0 && sscanf(after, ", payload_len = %d", &plen) != 1)) {
			if (i - syms < 3)
				fprintf(stderr, "no payload right after the site: %.200s\n", line);
			continue;
		}
		syms++;
		for (k = 0; k < n; k++)
			if (ns(&ev[k].info) == s * 1000000000u + f && !strcmp(ev[k].name, name))
				break;
		if (k < n && ev[k].info.posix_pid == pid &&
		    (unsigned long long)ev[k].info.posix_thread_id == tid &&
		    (unsigned long long)(uintptr_t)ev[k].info.posix_prog_address == addr &&
		    (int)ev[k].len == plen) {
			int same = 1;
			for (int v = 0; v < nv; v++) {
				int32_t x;
				memcpy(&x, ev[k].data + 4 * v, 4);
				same &= x == vals[v] || (uint32_t)x == vals[v];
			}
			matched += same;
			typed_ok += same && nv > 0;
			if (!same)
				fprintf(stderr, "CTF fields differ from the payload: %.300s\n", line);
		} else if (i - matched < 3)
			fprintf(stderr, "no event in the log for: %.200s\n", line);
		if (k < n && cli_line(shown, k, sline, sizeof sline) == 0) {
			show_location(sline, loc, sizeof loc);
			if (!strcmp(sym, loc))
				sym_ok++;
			else if (syms - sym_ok < 4)
				fprintf(stderr, "CTF symbol \"%s\", show prints \"%s\" for: %s\n", sym, loc,
				        sline);
			with_line += strstr(sym, "(app.c:") != NULL;
		}
	}
	CHECK_EQ(matched, n);
	/* every reply and tick described by field, each value the payload's */
	CHECK_EQ(typed, cli_count(ev, n, "reply") + cli_count(ev, n, "tick"));
	CHECK_EQ(typed_ok, typed);
	CHECK_EQ(syms, n);
	CHECK_EQ(sym_ok, n);
	CHECK_EQ(site_same, n); /* a type's number is always the same call site */
	/* the app's events are symbolized: function+offset, and file:line with libdw */
	CHECK(cli_contains(out, dwarf ? " worker+0x" : " app+0x"));
	CHECK(dwarf ? with_line > 0 : with_line == 0);
	char meta[300];
	snprintf(meta, sizeof meta, "%s/metadata", dir);
	char *m = cli_slurp(meta);
	/* each call site once per type that it records: as many labels as
	 * the events use (type, number) pairs, 16-bit numbers */
	CHECK(cli_contains(m, "\t\tsite17_t site;\n"));
	CHECK(!cli_contains(m, "uint64_hex_t addr;"));
	int labels = 0, enums = 0;
	for (const char *q = m; q && (q = strstr(q, "typealias enum : uint16_t {")) != NULL; enums++)
		for (; *q && *q != '}'; q++)
			labels += q[0] == '\n' && q[1] == '\t' && q[2] == '"';
	CHECK_EQ(labels, nsites);
	CHECK_EQ(enums, ntypes);
	CHECK(nsites >= ntypes && nsites < n / 4);
	/* compact event headers, as LTTng's: 5-bit class id, 27-bit time */
	CHECK(cli_contains(m, "enum : uint5_t { compact = 0 ... 30, extended = 31 } id;"));
	free(m);
	free(shown);
	/* the payload bytes of a text event: "constructor" */
	CHECK(cli_contains(out, "app_start: { pid = "));
	CHECK(cli_contains(out, "payload_len = 11, payload = [ [0] = 99, [1] = 111, [2] = 110,"));
	free(out);
	free(err);

	/* --raw-addresses: the address, no site at all, as babeltrace2 reads it
	 * (cli_export checks the metadata) */
	const char *raw = cli_path("raw.ctf");
	CHECK_EQ(cli_run(CLI("export", "--format", "ctf", "--raw-addresses", (char *)log, "-o",
	                     (char *)raw), NULL, NULL), 0);
	rc = cli_run((char *const[]){ (char *)bt, (char *)raw, NULL }, &out, &err);
	CHECK_EQ(rc, 0);
	CHECK_EQ(cli_nlines(out), n);
	CHECK(!cli_contains(out, "site = ") && cli_contains(out, "{ addr = 0x"));
	CHECK(cli_contains(out, "app_start: { pid = "));
	free(out);
	free(err);
	free(ev);
	T_END();
}
