/*
 * cli_perfetto_writer.c -- the Perfetto writer on its own
 * (cli/write/write.h, included built as the command is): every payload
 * form, symbols split into function, file and line or kept whole, tables
 * that grow, compressed and plain packets in one file, decoded by protoc
 * and compared event by event with what was written.
 * Decoded against the published schema when it is beside the repository,
 * else against tests/perfetto_min.proto alone: a clone checks its exports
 * too (pf_util.h).  Skipped without protoc.  Its shared parts, the traced
 * program and the decoder: pf_export_util.h.
 */
#include <trace.h>
#include "t.h"
#include "helpers.h"
#include "cli_util.h"
#include "pf_util.h"
#include "pf_export_util.h"

/* The writer on its own (cli/write/write.h): every payload form, a thread whose
 * clock goes back (a new sequence, on the same track), a thread and a
 * process never described, pid 0 and a loss, 150 more processes of a
 * thread each and 300 symbols (the tables grow), messages of 128 bytes and more (lengths of two
 * bytes), a long delta. */
struct wev { int pid; uint64_t tid, ts; char name[32], val[600], sym[64]; };

/* Symbols with a file and line the writer splits off (as the decoder
 * puts them back together), and ones it must keep whole. */
static const char *const split_syms[][2] = {
	{ "f+0x1 (a.c:12)", "f+0x1 @ a.c:12" },
	{ "m+0x4 (d (1).c:7)", "m+0x4 @ d (1).c:7" },
	{ "lib.so+0x10 (x:y.c:4294967295)", "lib.so+0x10 @ x:y.c:4294967295" },
	{ "h+0x3 (c.c:x)", NULL }, { "k+0x5 (e.c:0)", NULL }, { "n+0x6 (f.c:4294967296)", NULL },
	{ "p+0x7 (:5)", NULL }, { "q+0x8 (g.c:5) tail", NULL }, { "r+0x9 (g.c:05)", NULL },
	{ "lib.so+0x10 [file changed]", NULL }, { "0x1234", NULL }, { "t+0xa (h.c:)", NULL },
};

static void push(struct pf *w, struct wev *want, int *n, int pid, uint64_t tid, uint64_t ts,
                 unsigned id, const char *name, const char *sym, uint64_t sym_id, const void *d,
                 size_t len, unsigned flags, const char *val)
{
	CHECK_EQ(pf_event(w, pid, tid, ts, id, name, sym, sym_id, d, len, flags), 0);
	struct wev *e = &want[(*n)++];
	e->pid = pid;
	e->tid = tid;
	e->ts = ts;
	snprintf(e->name, sizeof e->name, "%s", name ? name : "");
	if (!name)
		snprintf(e->name, sizeof e->name, "event-%u", id);
	snprintf(e->val, sizeof e->val, "%s", val);
	snprintf(e->sym, sizeof e->sym, "%s", sym ? sym : "");
	for (size_t i = 0; sym && i < sizeof split_syms / sizeof split_syms[0]; i++)
		if (!strcmp(sym, split_syms[i][0]) && split_syms[i][1])
			snprintf(e->sym, sizeof e->sym, "%s", split_syms[i][1]);
}

static void run_writer(int compress)
{
	static struct wev want[400];
	static unsigned char big[200];
	char hex[420] = "text=", sym[32];
	int n = 0;
	struct x x;

	const char *path = cli_path(compress ? "writer.pftrace" : "writer-plain.pftrace");
	FILE *f = fopen(path, "w");
	REQUIRE(f);
	struct pf *w = pf_open(f);
	REQUIRE(w);
	CHECK_EQ(pf_compress(w, compress), compress && !PF_CAN_COMPRESS ? ENOTSUP : 0);
	CHECK_EQ(pf_process(w, 100, "proc", 1, "proc --flag"), 0);
	CHECK_EQ(pf_thread(w, 100, 0xaaa, 1, NULL), 0);
	push(w, want, &n, 100, 0xaaa, 5000, 20, "e20", "f+0x1", 0, "\x80", 1, 0, "u8=128");
	push(w, want, &n, 100, 0xaaa, 6000, 21, "e21", "f+0x1", 0, "\x01\x02", 2, 0, "u16=513");
	push(w, want, &n, 100, 0xaaa, 4000, 20, "e20", "g+0x2", 0, "\x01\0\0\x80", 4, 0,
	     "u32=2147483649");
	push(w, want, &n, 100, 0xaaa, 4000, 22, "e22", "g+0x2", 0, "\1\2\3\4\5\6\7\x08", 8, 0,
	     "u64=578437695752307201");
	push(w, want, &n, 100, 0xaaa, 4000, 22, "e22", NULL, 0, "\2\1", 2, 0, "u16=258");
	push(w, want, &n, 100, 0xaaa, 4001, 23, "e23", "f+0x1", 0, "hello\0\0\0", 9, 0,
	     "text=hello len=9");
	for (int i = 0; i < 200; i++)
		big[i] = (unsigned char)(i * 7);
	for (int i = 0; i < 200; i++)
		snprintf(hex + 4 + 2 * i, 3, "%02x", big[i]);
	memcpy(hex, "hex=", 4);
	strcat(hex, " truncated");
	push(w, want, &n, 100, 0xaaa, 4002, 24, "e24", "f+0x1", 0, big, sizeof big, PF_TRUNCATED, hex);
	push(w, want, &n, 100, 0xaaa, 4003, 25, "e25", "", 0, "GET ", 4, 0, "text=GET ");
	push(w, want, &n, 100, 0xaaa, 4004, 25, "e25", NULL, 0, "abc", 4, 0, "text=abc len=4");
	push(w, want, &n, 100, 0xaaa, 4005 + (1ull << 40), 25, "e25", "f+0x1", 0, "", 0, 0, "");
	push(w, want, &n, 100, 0xaaa, 4006 + (1ull << 40), 0xfffffff0u, "huge", NULL, 0, NULL, 0, 0, "");
	push(w, want, &n, 100, 0xaaa, 4007 + (1ull << 40), 0xfffffff0u, "huge", NULL, 0, NULL, 0, 0, "");
	push(w, want, &n, 200, 0xbbb, 7000, 999, NULL, NULL, 0, NULL, 0, 0, "");
	push(w, want, &n, 0, 0, 6500, 4, "posix_trace_overflow", NULL, 0, NULL, 0, 0, "");
	CHECK_EQ(pf_loss(w, 0, 0, 6600, 17), 0);
	/* each twice: the second time, interned already, and found by its id */
	for (int r = 0; r < 2; r++)
		for (size_t i = 0; i < sizeof split_syms / sizeof split_syms[0]; i++)
			push(w, want, &n, 100, 0xccc, 8000 + 100 * (uint64_t)r + i, 26, "e26",
			     split_syms[i][0], i + 1, "", 0, 0, "");
	/* the rest the other way (a file of both) */
	CHECK_EQ(pf_compress(w, !compress), !compress && !PF_CAN_COMPRESS ? ENOTSUP : 0);
	for (int t = 0; t < 150; t++)
		for (int k = 0; k < 2; k++) {
			unsigned char b = (unsigned char)t;
			char v[16];
			snprintf(sym, sizeof sym, "s%d", 2 * t + k);
			snprintf(v, sizeof v, "u8=%d", t);
			/* (ids that all want the same slot of the writer's) */
			push(w, want, &n, 300 + t, 0x1000 + (uint64_t)t, 10000 + (uint64_t)t + (uint64_t)k,
			     30 + (unsigned)(t % 5), "many", sym, 1000 + (uint64_t)(2 * t + k) * SYM_IDS, &b,
			     1, 0, v);
		}
	CHECK_EQ(pf_close(w), 0);
	CHECK_EQ(fclose(f), 0);

	REQUIRE(decode(path, cli_path(compress ? "writer.txt" : "writer-plain.txt"), &x, 1) == 0);
	if (PF_CAN_COMPRESS)
		CHECK(x.f.containers > 0 && x.f.top_plain > 0);
	else
		CHECK(x.f.containers == 0 && x.f.top_plain > 0);
	CHECK_EQ(x.unresolved, 0);
	CHECK_EQ(x.resnapshot, 0);
	CHECK_EQ(x.cleared_late, 0);
	CHECK_EQ(x.nproc, 152);
	CHECK_EQ(x.nthread, 153);
	CHECK_EQ(x.ns, 155); /* + pid 0's, + the one after the clock went back */
	CHECK_EQ((long long)x.events, n);
	CHECK_EQ(x.lost_sum, 17);
	CHECK_EQ(x.lost_counter, 17);
	CHECK_EQ(x.lost_instants, 1);
	int named = 0;
	for (int t = 0; t < x.nt; t++)
		named += (x.t[t].pid == 100 && !x.t[t].tid && !strcmp(x.t[t].name, "proc")) +
		         (x.t[t].pid == 200 && !x.t[t].tid && !strcmp(x.t[t].name, "pid 200")) +
		         (x.t[t].pid == 0 && !strcmp(x.t[t].name, "trace (synthesized events)")) +
		         (x.t[t].counter && !strcmp(x.t[t].name, "lost events"));
	CHECK_EQ(named, 4);
	int bad = 0;
	for (int t = 0; t < x.nt; t++) {
		int k = 0;
		for (int i = 0; i < n; i++) {
			struct xtrack *tr = want[i].pid ? track_for(&x, want[i].pid, want[i].tid) : NULL;
			for (int j = 0; !want[i].pid && j < x.nt && !tr; j++)
				if (x.t[j].pid == 0 && strstr(x.t[j].name, "synthesized"))
					tr = &x.t[j];
			if (tr != &x.t[t])
				continue;
			struct xev *e = k < tr->ne ? &tr->e[k] : NULL;
			k++;
			if (!e || e->ts != want[i].ts || strcmp(e->name, want[i].name) ||
			    strcmp(e->val, want[i].val) || strcmp(e->sym ? e->sym : "", want[i].sym)) {
				if (bad++ < 5)
					fprintf(stderr, "event %d: want %llu %s [%s] @%s, got %llu %s [%.80s] @%s\n",
					        i, (unsigned long long)want[i].ts, want[i].name, want[i].val,
					        want[i].sym, e ? (unsigned long long)e->ts : 0ull,
					        e ? e->name : "-", e ? e->val : "-", e && e->sym ? e->sym : "");
			}
		}
		CHECK_EQ(x.t[t].ne, k);
	}
	CHECK_EQ(bad, 0);
	free_x(&x);
}

static void run(const char *self)
{
	(void)self;
	run_writer(1);
	run_writer(0);
}

int main(int argc, char **argv)
{
	return pf_main(argc, argv, run);
}
