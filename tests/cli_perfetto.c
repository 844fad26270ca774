/*
 * cli_perfetto.c -- `posixtrace export --format perfetto` decoded by an
 * independent decoder, protoc, against Perfetto's published schema
 * (../shared/formats/perfetto/perfetto_trace.proto beside the repository,
 * README there), and every count checked.
 *
 * Exports are compressed (built with zlib, as the command is): the test
 * first inflates every container as trace_processor does (each alone,
 * whole packets in it, below 512 KB), then decodes.
 *
 * The traced program is this file (run as `cli_perfetto workload ...`):
 * 3 processes of 4 threads each; thread k of process p sends plan(p, k)
 * "alpha" events (8 bytes: p, k and the event's number), one "beta" (text)
 * and its main thread one "gamma" (16 bytes).  It prints its pids and the
 * source lines of its three calls (__LINE__).
 *
 *   0. The writer on its own (cli/write/write.h): every payload form, symbols
 *      split into function, file and line or kept whole, tables that grow,
 *      compressed and plain packets in one file (run_writer).
 *   1. Recorded whole: the export holds a process descriptor per pid and a
 *      thread descriptor per thread; on each thread's sequence the events
 *      of the log for that thread, in order, at the same ns (the
 *      incremental timestamps added up), with the interned names the log
 *      has; alpha's payload is exactly the program's, in order; every
 *      interned name and source location resolves in its sequence; each
 *      user event's source location is the program's function, and (with
 *      libdw) this file and the line the program printed.  Per type and
 *      thread the counts are info's and the program's.
 *   2. The same with 20x more events into a 4 KB stream that wraps: the
 *      "events lost" counts add up to the loss info reports, and the program's
 *      own count minus what the log kept; the counter track ends at it.
 *   3. An 8-byte-payload flood (one thread, 200 000 events): in plain
 *      packets, the bytes per event exactly as the encoding says; the
 *      compressed export inflates to the same bytes and takes at most 20
 *      bytes per event (run_flood).
 *   4. A log (of 100x more events) cut short and damaged: exported with
 *      both said, decoded, the reader's events (its ERROR for the damaged
 *      stretch included) on their threads.
 *   5. examples/app's described payloads: debug annotations by field name,
 *      with the values the app sent (run_typed).
 * Decoded against the published schema when it is beside the repository
 * (and then tests/perfetto_min.proto, the repository's own copy of the
 * few messages read here, is checked against it: every field the same
 * type, name and number; the typed case decodes with both), else against
 * tests/perfetto_min.proto alone: a clone checks its exports too.
 * Skipped without protoc.
 */
#include <trace.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "t.h"
#include "helpers.h"
#include "cli_util.h"
#include "pf_util.h"
#ifdef PT_HAVE_ZLIB
#include <zlib.h>
#endif
/* the writer itself, for the checks of run_writer() */
#include "../cli/write/protobuf.c"
#include "../cli/write/export_perfetto.c"

#define NPROC 3
#define NTHR 3 /* threads besides main */

static unsigned plan(int p, int k, int scale)
{
	return (unsigned)(40 + 25 * p + 9 * k) * (unsigned)scale;
}

/* ------------------------------------------------------ the traced program */
static trace_event_id_t ev_alpha, ev_beta, ev_gamma;
static int w_scale = 1;
/* the source lines of its calls, as the program knows them (it prints them) */
static _Atomic int line_alpha, line_beta, line_gamma;
#define HERE(v) atomic_store_explicit(&(v), __LINE__, memory_order_relaxed)

struct who { int p, k; };

/* The witness of a thread's identity: "thread PID 0xPTHREAD TID NAME"
 * on stdout, its gettid() and the name it gave itself (or has). */
static void say_who(void)
{
	char name[16] = "";
	prctl(PR_GET_NAME, name, 0, 0, 0);
	printf("thread %d 0x%llx %d %s\n", (int)getpid(), (unsigned long long)pthread_self(),
	       (int)syscall(SYS_gettid), name);
	fflush(stdout); /* a child ends with _exit */
}

static void *thread_main(void *arg)
{
	const struct who *w = arg;
	char text[32];
	int n = snprintf(text, sizeof text, "p%d t%d", w->p, w->k);
	pthread_setname_np(pthread_self(), text);
	say_who();
	posix_trace_event(ev_beta, text, (size_t)n); HERE(line_beta);
	for (uint64_t i = 0; i < plan(w->p, w->k, w_scale); i++) {
		uint64_t v = (uint64_t)w->p << 40 | (uint64_t)w->k << 32 | i;
		posix_trace_event(ev_alpha, &v, sizeof v); HERE(line_alpha);
	}
	return NULL;
}

__attribute__((noinline)) static void process_main(int p)
{
	pthread_t th[NTHR];
	struct who w[NTHR];
	unsigned char g[16];

	printf("proc %d pid %d\n", p, (int)getpid());
	fflush(stdout);
	for (int k = 0; k < NTHR; k++) {
		w[k] = (struct who){ p, k };
		pthread_create(&th[k], NULL, thread_main, &w[k]);
	}
	say_who();
	for (int i = 0; i < 16; i++)
		g[i] = (unsigned char)(0xf0 + i - p);
	posix_trace_event(ev_gamma, g, sizeof g); HERE(line_gamma);
	for (int k = 0; k < NTHR; k++)
		pthread_join(th[k], NULL);
}

static int workload(int argc, char **argv)
{
	w_scale = argc > 2 ? atoi(argv[2]) : 1;
	posix_trace_eventid_open("alpha", &ev_alpha);
	posix_trace_eventid_open("beta", &ev_beta);
	posix_trace_eventid_open("gamma", &ev_gamma);
	pid_t kids[NPROC];
	for (int p = 1; p < NPROC; p++) {
		kids[p] = fork();
		if (kids[p] == 0) {
			process_main(p);
			_exit(0);
		}
	}
	process_main(0);
	for (int p = 1; p < NPROC; p++)
		waitpid(kids[p], NULL, 0);
	printf("lines alpha %d beta %d gamma %d\n", atomic_load(&line_alpha), atomic_load(&line_beta),
	       atomic_load(&line_gamma));
	return 0;
}

__attribute__((noinline)) static int flood(int argc, char **argv)
{
	trace_event_id_t id;
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
	posix_trace_eventid_open("flood", &id);
	for (uint64_t i = 0; i < n; i++)
		posix_trace_event(id, &i, sizeof i);
	return 0;
}

/* ------------------------------------------------- the decoded trace */
#define MAXN 64
struct names { uint64_t iid[MAXN]; char *s[MAXN]; int n; };

static const char *lookup(const struct names *t, uint64_t iid)
{
	for (int i = 0; i < t->n; i++)
		if (t->iid[i] == iid)
			return t->s[i];
	return NULL;
}

static void intern(struct names *t, uint64_t iid, const char *s)
{
	REQUIRE(t->n < MAXN);
	t->iid[t->n] = iid;
	t->s[t->n++] = strdup(s);
}

struct xev {
	uint64_t ts, delta; /* its time; its packet's timestamp field */
	char name[32];
	char *val, *sym; /* with keep_values: the payload ("ANNOTATION=VALUE ...") and symbol */
};

/* A source location as the decoder puts it back together: "FUNCTION", or
 * "FUNCTION @ FILE:LINE" when it has a file and line. */

struct xseq {                 /* a packet sequence */
	uint32_t id;
	uint64_t uuid, clock;     /* its track; its clock 64 */
	int cleared, snapshots;
	struct names ev, ann, loc;
};

struct xtrack {
	uint64_t uuid;
	int pid;
	int64_t tid;
	char name[96];
	int counter;
	struct xev *e;            /* its instants */
	int ne, cap;
	uint64_t alpha_next;      /* alpha's next value */
	int alpha_bad, beta_bad, gamma_bad;
	int sym_bad, sym_named, line_bad;
};

struct x {                    /* what the export says */
	struct xseq s[256];
	int ns;
	struct xtrack t[512];
	int nt;
	int nproc, nthread, unresolved, cleared_late, resnapshot;
	uint64_t lost_sum, lost_counter;
	int lost_instants;
	uint64_t events;
	int keep_values;
	struct pfile f;
};

/* The lines the program printed, and whether the symbolizer gives lines
 * (a user event's source location is then the program's function, file
 * and line; else none has a file): checked while lines_known (run_whole). */
static int want_line[3], want_dwarf, lines_known;

static struct xseq *xseq(struct x *x, uint32_t id)
{
	for (int i = 0; i < x->ns; i++)
		if (x->s[i].id == id)
			return &x->s[i];
	REQUIRE(x->ns < 256);
	memset(&x->s[x->ns], 0, sizeof x->s[0]);
	x->s[x->ns].id = id;
	return &x->s[x->ns++];
}

static struct xtrack *xtrack(struct x *x, uint64_t uuid)
{
	for (int i = 0; i < x->nt; i++)
		if (x->t[i].uuid == uuid)
			return &x->t[i];
	return NULL;
}

/* A packet's fields, as protoc prints them (the ones we look at). */
struct ann { uint64_t name, uval; char str[600]; int has_u, has_s, has_b; };
struct pkt {
	int has_ts, has_seq, has_td, has_te, has_cs, proc, thread, counter, has_loc;
	uint64_t ts, seq, flags, def_uuid, cs64, td_uuid, te_uuid, type, name_iid, loc_iid;
	int64_t pid, tid, cval;
	char td_name[96];
	struct ann a[8];
	int na;
	struct names ev, ann, loc;
	char sl_fn[600], sl_file[600]; /* the SourceLocation being read */
	int sl_has_file, sl_has_line;
	uint64_t sl_line;
};

static void unquote(const char *v, char *out, size_t cap)
{
	size_t o = 0;
	if (*v == '"')
		v++;
	for (; *v && *v != '"' && o + 1 < cap; v++) {
		if (*v == '\\' && v[1]) { /* protoc's C escapes: \\ \" \n \t, octal */
			v++;
			if (*v >= '0' && *v <= '7') {
				int c = 0;
				for (int k = 0; k < 3 && *v >= '0' && *v <= '7'; k++, v++)
					c = c * 8 + (*v - '0');
				v--;
				out[o++] = (char)c;
				continue;
			}
			out[o++] = *v == 'n' ? '\n' : *v == 't' ? '\t' : *v;
			continue;
		}
		out[o++] = *v;
	}
	out[o] = 0;
}

static void packet_end(struct x *x, struct pkt *p)
{
	if (p->has_td) {
		REQUIRE(x->nt < 512);
		struct xtrack *t = &x->t[x->nt++];
		memset(t, 0, sizeof *t);
		t->uuid = p->td_uuid;
		t->pid = (int)p->pid;
		t->tid = p->thread ? p->tid : 0;
		t->counter = p->counter;
		snprintf(t->name, sizeof t->name, "%s", p->td_name);
		x->nproc += p->proc;
		x->nthread += p->thread;
	}
	if (!p->has_seq)
		return;
	struct xseq *s = xseq(x, (uint32_t)p->seq);
	if (p->flags & 1) {
		if (s->cleared)
			x->cleared_late++;
		s->cleared = 1;
		s->uuid = p->def_uuid;
	}
	for (int i = 0; i < p->ev.n; i++)
		intern(&s->ev, p->ev.iid[i], p->ev.s[i]);
	for (int i = 0; i < p->ann.n; i++)
		intern(&s->ann, p->ann.iid[i], p->ann.s[i]);
	for (int i = 0; i < p->loc.n; i++)
		intern(&s->loc, p->loc.iid[i], p->loc.s[i]);
	if (p->has_cs) {
		s->clock = p->cs64;
		x->resnapshot += s->snapshots++ > 0;
	}
	if (!p->has_te)
		return;
	REQUIRE(p->has_ts);
	s->clock += p->ts;
	if (p->type == 4) { /* the counter of lost events */
		x->lost_counter = (uint64_t)p->cval;
		return;
	}
	const char *name = lookup(&s->ev, p->name_iid);
	struct xtrack *t = xtrack(x, s->uuid);
	if (!name || !s->cleared || !t) {
		x->unresolved++;
		return;
	}
	const char *sym = NULL;
	char val[2048] = "";
	if (p->has_loc && !(sym = lookup(&s->loc, p->loc_iid)))
		x->unresolved++;
	for (int i = 0; i < p->na; i++) {
		const char *an = lookup(&s->ann, p->a[i].name);
		if (!an) {
			x->unresolved++;
			continue;
		}
		size_t o = strlen(val);
		if (o < sizeof val - 700) {
			if (p->a[i].has_u)
				snprintf(val + o, sizeof val - o, "%s%s=%llu", o ? " " : "", an,
				         (unsigned long long)p->a[i].uval);
			else if (p->a[i].has_b)
				snprintf(val + o, sizeof val - o, "%s%s", o ? " " : "", an);
			else
				snprintf(val + o, sizeof val - o, "%s%s=%s", o ? " " : "", an, p->a[i].str);
		}
		if (!strcmp(name, "events lost") && !strcmp(an, "count")) {
			x->lost_sum += p->a[i].uval;
			x->lost_instants++;
		}
		if (!strcmp(name, "alpha") && !strcmp(an, "u64")) {
			if ((p->a[i].uval & 0xffffffffu) != t->alpha_next)
				t->alpha_bad++;
			t->alpha_next = (p->a[i].uval & 0xffffffffu) + 1;
		}
		if (!strcmp(name, "beta") && (strcmp(an, "text") || p->a[i].str[0] != 'p'))
			t->beta_bad++;
		if (!strcmp(name, "gamma") && strcmp(an, "hex"))
			t->gamma_bad++;
	}
	if (!strcmp(name, "events lost"))
		return;
	x->events++;
	int user = !strcmp(name, "alpha") ? 0 : !strcmp(name, "beta") ? 1 : !strcmp(name, "gamma") ? 2 : -1;
	if (user >= 0) {
		if (!sym)
			t->sym_bad++;
		else
			t->sym_named += strstr(sym, user < 2 ? "thread_main+0x" : "process_main+0x") == sym;
		char want[64];
		snprintf(want, sizeof want, " @ cli_perfetto.c:%d", want_line[user]);
		const char *at = sym ? strstr(sym, " @ ") : NULL;
		if (lines_known && sym && (want_dwarf ? !at || strcmp(at, want) : at != NULL)) {
			if (t->line_bad++ < 3)
				fprintf(stderr, "%s at %s, want%s\n", name, sym, want_dwarf ? want : " no line");
		}
	}
	if (t->ne == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->e = realloc(t->e, (size_t)t->cap * sizeof *t->e);
		REQUIRE(t->e);
	}
	t->e[t->ne].ts = s->clock;
	t->e[t->ne].delta = p->ts;
	t->e[t->ne].val = x->keep_values ? strdup(val) : NULL;
	t->e[t->ne].sym = x->keep_values && sym ? strdup(sym) : NULL;
	snprintf(t->e[t->ne++].name, sizeof t->e[0].name, "%s", name);
}

static void free_names(struct names *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->s[i]);
	t->n = 0;
}

/* Reads protoc's text: the path of open messages, the fields we use. */
static void read_decoded(const char *path, struct x *x, int keep_values)
{
	FILE *f = fopen(path, "r");
	char line[4096], stack[16][48], val[4096];
	int depth = 0;
	struct pkt p;
	uint64_t iid = 0;

	REQUIRE(f);
	memset(x, 0, sizeof *x);
	x->keep_values = keep_values;
	memset(&p, 0, sizeof p);
	while (fgets(line, sizeof line, f)) {
		char *s = line + strspn(line, " ");
		s[strcspn(s, "\n")] = 0;
		if (!strcmp(s, "}")) {
			REQUIRE(depth > 0);
			depth--;
			if (depth == 0) {
				packet_end(x, &p);
				free_names(&p.ev);
				free_names(&p.ann);
				free_names(&p.loc);
				memset(&p, 0, sizeof p);
			}
			if (depth == 2 && !strcmp(stack[2], "source_locations") &&
			    !strcmp(stack[1], "interned_data")) {
				char l[1300];
				if (p.sl_has_file || p.sl_has_line)
					snprintf(l, sizeof l, "%s @ %s:%llu", p.sl_fn, p.sl_file,
					         (unsigned long long)p.sl_line);
				else
					snprintf(l, sizeof l, "%s", p.sl_fn);
				intern(&p.loc, iid, l);
				p.sl_fn[0] = p.sl_file[0] = 0;
				p.sl_has_file = p.sl_has_line = 0;
				p.sl_line = 0;
			}
			if (depth == 2 && !strcmp(stack[2], "debug_annotations") &&
			    !strcmp(stack[1], "track_event"))
				p.na++;
			continue;
		}
		size_t k = strcspn(s, " :");
		if (s[k] == ' ' && s[k + 1] == '{') {
			REQUIRE(depth < 16);
			snprintf(stack[depth++], sizeof stack[0], "%.*s", (int)k, s);
			if (depth == 3 && !strcmp(stack[2], "debug_annotations"))
				REQUIRE(p.na < 8);
			const struct { const char *name; int *flag; } seen[] = {
				{ "process", &p.proc }, { "thread", &p.thread }, { "counter", &p.counter },
				{ "track_descriptor", &p.has_td }, { "track_event", &p.has_te },
				{ "clock_snapshot", &p.has_cs },
			};
			for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++)
				if (!strcmp(stack[depth - 1], seen[i].name))
					*seen[i].flag = 1;
			continue;
		}
		if (s[k] != ':')
			continue;
		s[k] = 0;
		const char *key = s, *v = s + k + 2;
		uint64_t u = strtoull(v, NULL, 10);
		const char *in = depth ? stack[depth - 1] : "";
		const char *up = depth > 1 ? stack[depth - 2] : "";
		if (depth == 1 && !strcmp(key, "timestamp")) {
			p.has_ts = 1;
			p.ts = u;
		} else if (depth == 1 && !strcmp(key, "trusted_packet_sequence_id")) {
			p.has_seq = 1;
			p.seq = u;
		} else if (depth == 1 && !strcmp(key, "sequence_flags")) {
			p.flags = u;
		} else if (!strcmp(in, "track_event_defaults") && !strcmp(key, "track_uuid")) {
			p.def_uuid = u;
		} else if (!strcmp(in, "clocks") && !strcmp(key, "clock_id")) {
			iid = u;
		} else if (!strcmp(in, "clocks") && !strcmp(key, "timestamp") && iid == 64) {
			p.cs64 = u;
		} else if (!strcmp(in, "track_descriptor") && !strcmp(key, "uuid")) {
			p.td_uuid = u;
		} else if (!strcmp(in, "track_descriptor") && !strcmp(key, "name")) {
			unquote(v, p.td_name, sizeof p.td_name);
		} else if ((!strcmp(in, "process") || !strcmp(in, "thread")) && !strcmp(key, "pid")) {
			p.pid = strtoll(v, NULL, 10);
		} else if (!strcmp(in, "thread") && !strcmp(key, "tid")) {
			p.tid = strtoll(v, NULL, 10);
		} else if ((!strcmp(key, "process_name") || !strcmp(key, "thread_name"))) {
			unquote(v, p.td_name, sizeof p.td_name);
		} else if (!strcmp(in, "track_event") && !strcmp(key, "type")) {
			p.type = !strcmp(v, "TYPE_INSTANT") ? 3 : !strcmp(v, "TYPE_COUNTER") ? 4 : 99;
		} else if (!strcmp(in, "track_event") && !strcmp(key, "name_iid")) {
			p.name_iid = u;
		} else if (!strcmp(in, "track_event") && !strcmp(key, "track_uuid")) {
			p.te_uuid = u;
		} else if (!strcmp(in, "track_event") && !strcmp(key, "source_location_iid")) {
			p.loc_iid = u;
			p.has_loc = 1;
		} else if (!strcmp(in, "source_locations") && !strcmp(up, "interned_data") &&
		           strcmp(key, "iid")) {
			if (!strcmp(key, "function_name"))
				unquote(v, p.sl_fn, sizeof p.sl_fn);
			else if (!strcmp(key, "file_name"))
				unquote(v, p.sl_file, sizeof p.sl_file), p.sl_has_file = 1;
			else if (!strcmp(key, "line_number"))
				p.sl_line = u, p.sl_has_line = 1;
		} else if (!strcmp(in, "track_event") && !strcmp(key, "counter_value")) {
			p.cval = strtoll(v, NULL, 10);
		} else if (!strcmp(in, "debug_annotations") && !strcmp(up, "track_event")) {
			struct ann *a = &p.a[p.na];
			if (!strcmp(key, "name_iid"))
				a->name = u;
			else if (!strcmp(key, "uint_value"))
				a->uval = u, a->has_u = 1;
			else if (!strcmp(key, "string_value"))
				unquote(v, a->str, sizeof a->str), a->has_s = 1;
			else if (!strcmp(key, "bool_value"))
				a->has_b = !strcmp(v, "true");
		} else if (!strcmp(up, "interned_data") && !strcmp(key, "iid")) {
			iid = u;
		} else if (!strcmp(up, "interned_data") && (!strcmp(key, "name") || !strcmp(key, "str"))) {
			unquote(v, val, sizeof val);
			if (!strcmp(in, "event_names") || !strcmp(in, "debug_annotation_names"))
				intern(!strcmp(in, "event_names") ? &p.ev : &p.ann, iid, val);
		}
	}
	REQUIRE(depth == 0);
	fclose(f);
}

static void free_x(struct x *x)
{
	for (int i = 0; i < x->ns; i++) {
		free_names(&x->s[i].ev);
		free_names(&x->s[i].ann);
		free_names(&x->s[i].loc);
	}
	for (int i = 0; i < x->nt; i++) {
		for (int e = 0; e < x->t[i].ne; e++) {
			free(x->t[i].e[e].val);
			free(x->t[i].e[e].sym);
		}
		free(x->t[i].e);
	}
}

/* ------------------------------------------------------------ the test */
static int decode(const char *out, const char *txt, struct x *x, int keep_values)
{
	char cmd[2200], plain[600];
	struct pfile file;
	snprintf(plain, sizeof plain, "%s.plain", out);
	if (unpack(out, plain, &file))
		return -1;
	snprintf(cmd, sizeof cmd, "'%s' --decode=perfetto.protos.Trace -I '%s' '%s' "
	         "< '%s' > '%s'", protoc, schema_dir, schema_file, plain, txt);
	int rc = system(cmd);
	CHECK_EQ(rc, 0);
	if (rc)
		return rc;
	read_decoded(txt, x, keep_values);
	x->f = file;
	return 0;
}

static int export_decode(const char *log, const char *out, const char *txt, struct x *x,
                         char **err)
{
	int rc = cli_run(CLI("export", "--all", "--force", "--format", "perfetto", (char *)log, "-o", (char *)out), NULL,
	                 err);
	if (rc || (rc = decode(out, txt, x, 0)) != 0)
		return rc;
	/* built as the command is: with zlib, every packet in a compressed container */
	if (PF_CAN_COMPRESS)
		CHECK(x->f.containers > 0 && x->f.top_plain == 0);
	else
		CHECK_EQ(x->f.containers, 0);
	return 0;
}

/* The track of pid's thread with POSIX thread id tid. */
/* What the program's threads said of themselves (say_who), for the
 * export recorded last: its tracks have their TIDs and names. */
static struct wit { int pid, tid; uint64_t thread; char name[16]; } wit[64];
static int nwit;

static void read_witness(const char *out)
{
	char l[256];
	nwit = 0;
	for (int i = 0; out && cli_line(out, i, l, sizeof l) == 0 && nwit < 64; i++) {
		struct wit *w = &wit[nwit];
		unsigned long long th;
		if (sscanf(l, "thread %d 0x%llx %d %15[^\n]", &w->pid, &th, &w->tid, w->name) == 4) {
			w->thread = th;
			nwit++;
		}
	}
}

static const struct wit *witness(int pid, uint64_t thread)
{
	for (int i = 0; i < nwit; i++)
		if (wit[i].pid == pid && wit[i].thread == thread)
			return &wit[i];
	return NULL;
}

static struct xtrack *track_for(struct x *x, int pid, uint64_t tid)
{
	const struct wit *w = witness(pid, tid);
	for (int i = 0; w && i < x->nt; i++) /* its real TID */
		if (x->t[i].pid == pid && x->t[i].tid == (int64_t)w->tid)
			return &x->t[i];
	char want[40];
	snprintf(want, sizeof want, "(0x%llx)", (unsigned long long)tid);
	for (int i = 0; i < x->nt; i++)
		if (x->t[i].pid == pid && x->t[i].tid && strstr(x->t[i].name, want))
			return &x->t[i];
	return NULL;
}

/* info's count for a line "       N    ID  NAME" of its type table */
static long long info_type_count(const char *info, const char *name)
{
	char l[512], nm[128];
	long long n;
	unsigned id;
	for (int i = 0; cli_line(info, i, l, sizeof l) == 0; i++)
		if (sscanf(l, " %lld %u %127s", &n, &id, nm) == 3 && !strcmp(nm, name))
			return n;
	return -1;
}

static uint64_t ev_ns(const struct cli_ev *e)
{
	return (uint64_t)e->info.posix_timestamp.tv_sec * 1000000000u +
	       (uint64_t)e->info.posix_timestamp.tv_nsec;
}

/* The log's name of an event: a damaged log need not name the ERROR its
 * reader makes (tlog and the exports do) */
static const char *log_name(const struct cli_ev *e)
{
	return e->info.posix_event_id == POSIX_TRACE_ERROR && !strncmp(e->name, "event-", 6)
	       ? "posix_trace_error" : e->name;
}

/* Every thread of the log: the export's sequence for it holds its events
 * in order, same ns and name; returns the number of threads. */
static int check_threads(struct x *x, const struct cli_ev *ev, int n)
{
	int threads = 0;
	for (int i = 0; i < n; i++) {
		int first = 1;
		for (int j = 0; j < i && first; j++)
			first = !(ev[j].info.posix_pid == ev[i].info.posix_pid &&
			          ev[j].info.posix_thread_id == ev[i].info.posix_thread_id);
		if (!first)
			continue;
		threads++;
		int pid = ev[i].info.posix_pid;
		uint64_t tid = (uint64_t)ev[i].info.posix_thread_id;
		struct xtrack *s = pid ? track_for(x, pid, tid) : NULL;
		for (int k = 0; !pid && k < x->nt && !s; k++) /* the synthesized events' */
			if (strstr(x->t[k].name, "synthesized"))
				s = &x->t[k];
		if (!s) {
			fprintf(stderr, "no sequence for thread %d/0x%llx\n", pid, (unsigned long long)tid);
			CHECK(0);
			continue;
		}
		int k = 0, bad = 0;
		for (int j = i; j < n; j++) {
			if (ev[j].info.posix_pid != pid || (uint64_t)ev[j].info.posix_thread_id != tid)
				continue;
			if (k >= s->ne || s->e[k].ts != ev_ns(&ev[j]) ||
			    strcmp(s->e[k].name, log_name(&ev[j]))) {
				if (bad++ < 3)
					fprintf(stderr, "thread %d/0x%llx event %d: log %s at %lld, export %s at "
					        "%llu\n", pid, (unsigned long long)tid, k, log_name(&ev[j]),
					        (long long)ev_ns(&ev[j]), k < s->ne ? s->e[k].name : "-",
					        k < s->ne ? (unsigned long long)s->e[k].ts : 0ull);
			}
			k++;
		}
		CHECK_EQ(bad, 0);
		CHECK_EQ(s->ne, k);
	}
	return threads;
}

static void run_whole(const char *self)
{
	char *out = NULL, *err = NULL, *info = NULL;
	struct cli_ev *ev;
	struct x x;
	int pids[NPROC] = { 0 };

	const char *log = cli_path("whole.ptlog");
	CHECK_EQ(cli_run(CLI("record", "--force", "-o", (char *)log, "--", (char *)self, "workload",
	                     "1"), &out, &err), 0);
	for (int i = 0; out && i < 64; i++) {
		char l[128];
		int p, pid;
		if (cli_line(out, i, l, sizeof l) != 0)
			break;
		if (sscanf(l, "proc %d pid %d", &p, &pid) == 2 && p >= 0 && p < NPROC)
			pids[p] = pid;
		if (sscanf(l, "lines alpha %d beta %d gamma %d", &want_line[0], &want_line[1],
		           &want_line[2]) == 3)
			lines_known = 1;
	}
	read_witness(out);
	CHECK_EQ(nwit, NPROC * (NTHR + 1));
	free(out);
	free(err);
	for (int p = 0; p < NPROC; p++)
		CHECK(pids[p] > 0);
	CHECK(lines_known && want_line[0] > 0 && want_line[1] > 0 && want_line[2] > 0);
	CHECK_EQ(cli_run(CLI("--version"), &out, NULL), 0);
	want_dwarf = cli_contains(out, "elfutils libdw");
	free(out);
	int n = cli_read_log(log, &ev);
	REQUIRE(export_decode(log, cli_path("whole.pftrace"), cli_path("whole.txt"), &x, &err) == 0);
	free(err);
	CHECK_EQ(x.unresolved, 0);
	CHECK_EQ(x.cleared_late, 0);
	CHECK_EQ(x.resnapshot, 0);
	CHECK_EQ((long long)x.events, n);
	int threads = check_threads(&x, ev, n);
	CHECK_EQ(x.nthread, threads);
	CHECK_EQ(x.lost_instants, 0);

	/* per process: its descriptor, named after the program; 4 threads;
	 * per thread (the program's plan): alpha, beta, gamma */
	int procs = 0;
	for (int i = 0; i < n; i++) {
		int seen = 0;
		for (int j = 0; j < i && !seen; j++)
			seen = ev[j].info.posix_pid == ev[i].info.posix_pid;
		procs += !seen && ev[i].info.posix_pid != 0;
	}
	CHECK_EQ(x.nproc, procs);
	unsigned want_alpha = 0;
	for (int p = 0; p < NPROC; p++) {
		int found = 0, nthreads = 0;
		for (int t = 0; t < x.nt; t++) {
			found += x.t[t].pid == pids[p] && x.t[t].tid == 0 && !strcmp(x.t[t].name, "cli_perfetto");
			if (x.t[t].pid == pids[p] && x.t[t].tid) {
				nthreads++;
				/* the TID and name the thread said it had */
				int ok = 0;
				for (int i = 0; i < nwit; i++)
					ok |= wit[i].pid == pids[p] && (int64_t)wit[i].tid == x.t[t].tid &&
					      !strcmp(wit[i].name, x.t[t].name);
				if (!ok)
					fprintf(stderr, "track %d/%llu \"%s\": no thread said so\n", pids[p],
					        (unsigned long long)x.t[t].tid, x.t[t].name);
				CHECK(ok);
			}
		}
		CHECK_EQ(found, 1);
		CHECK_EQ(nthreads, NTHR + 1);
		int matched = 0, gamma = 0;
		for (int i = 0; i < x.nt; i++) {
			struct xtrack *t = &x.t[i];
			if (t->pid != pids[p] || !t->tid)
				continue;
			int a = 0, b = 0, g = 0;
			for (int e = 0; e < t->ne; e++) {
				a += !strcmp(t->e[e].name, "alpha");
				b += !strcmp(t->e[e].name, "beta");
				g += !strcmp(t->e[e].name, "gamma");
			}
			CHECK_EQ(t->alpha_bad, 0);
			CHECK_EQ(t->beta_bad, 0);
			CHECK_EQ(t->gamma_bad, 0);
			CHECK_EQ(t->sym_bad, 0);
			CHECK_EQ(t->sym_named, a + b + g);
			CHECK_EQ(t->line_bad, 0);
			gamma += g;
			for (int k = 0; k < NTHR; k++)
				if (a == (int)plan(p, k, 1) && b == 1 && g == 0)
					matched |= 1 << k;
		}
		CHECK_EQ(matched, (1 << NTHR) - 1);
		CHECK_EQ(gamma, 1);
		for (int k = 0; k < NTHR; k++)
			want_alpha += plan(p, k, 1);
	}
	/* per type, all sequences: the program's counts and info's */
	CHECK_EQ(cli_run(CLI("info", (char *)log), &info, NULL), 0);
	static const char *const types[] = { "alpha", "beta", "gamma", "posix_trace_start",
	                                     "posix_trace_stop" };
	long long want[] = { want_alpha, NPROC * NTHR, NPROC, 1, 1 };
	for (int i = 0; i < 5; i++) {
		long long c = 0;
		for (int t = 0; t < x.nt; t++)
			for (int e = 0; e < x.t[t].ne; e++)
				c += !strcmp(x.t[t].e[e].name, types[i]);
		CHECK_EQ(c, want[i]);
		CHECK_EQ(info_type_count(info, types[i]), c);
	}
	lines_known = 0; /* (a stream that wraps can lose the map of loaded code) */
	free(info);
	free_x(&x);
	free(ev);
}

/* The program's own: plan total, and the controller's events, of which
 * one overwritten is one more lost (as in cli_loss). */
static void run_lossy(const char *self)
{
	char *out = NULL, *err = NULL, want[200];
	struct cli_ev *ev;
	struct x x;
	const int scale = 20;

	const char *log = cli_path("lossy.ptlog");
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--policy", "loop", "--size", "4K", "--",
	                     (char *)self, "workload", "20"), &out, &err), 0);
	read_witness(out);
	free(out);
	out = NULL;
	free(err);
	int n = cli_read_log(log, &ev);
	int gaps = cli_count(ev, n, "posix_trace_overflow");
	CHECK(gaps > 0);
	long long program = 0;
	for (int p = 0; p < NPROC; p++)
		for (int k = 0; k < NTHR; k++)
			program += plan(p, k, scale) + 1; /* alpha, beta */
	program += NPROC;                          /* gamma */
	long long kept = cli_count(ev, n, "alpha") + cli_count(ev, n, "beta") +
	                 cli_count(ev, n, "gamma");
	static const char *const sys[] = { "posix_trace_start", "posix_trace_stop",
	                                   "posix_trace_flush_start", "posix_trace_flush_stop" };
	int sys_lost = 0;
	for (int i = 0; i < 4; i++)
		sys_lost += cli_count(ev, n, sys[i]) == 0;
	long long lost = program - kept + sys_lost;
	CHECK(kept < program);
	CHECK_EQ(cli_run(CLI("info", (char *)log), &out, NULL), 0);
	snprintf(want, sizeof want, "lost events   %lld events lost in %d gap", lost, gaps);
	CHECK(cli_contains(out, want));
	if (!cli_contains(out, want))
		fprintf(stderr, "want \"%s\" in:\n%s\n", want, out);
	free(out);

	REQUIRE(export_decode(log, cli_path("lossy.pftrace"), cli_path("lossy.txt"), &x, &err) == 0);
	free(err);
	CHECK_EQ(x.unresolved, 0);
	CHECK_EQ((long long)x.events, n);
	CHECK_EQ(check_threads(&x, ev, n), x.nthread + 1); /* + the synthesized events' track */
	CHECK_EQ((long long)x.lost_sum, lost);
	CHECK_EQ((long long)x.lost_counter, lost);
	CHECK(x.lost_instants >= 1 && x.lost_instants <= gaps + 1);
	int counters = 0;
	for (int t = 0; t < x.nt; t++)
		counters += x.t[t].counter && !strcmp(x.t[t].name, "lost events");
	CHECK_EQ(counters, 1);
	free_x(&x);
	free(ev);
}

/* The bytes of a varint. */
static int vsize(uint64_t v)
{
	int n = 1;
	for (; v >= 128; v >>= 7)
		n++;
	return n;
}

/* An 8-byte-payload flood, symbolized, exported in plain packets: each
 * event's packet is 19 bytes plus the varints of its timestamp delta and
 * of its value (0 to 199999, 1 to 3 bytes); nothing else in the file is
 * more than a few kB.  The deltas depend on the machine: the size without
 * them does not.  Then compressed (the default, with zlib): its
 * containers inflate to the very same packets, at most 20 bytes per event
 * in the file (issue 32's bound; about 2 to 4).  The times are printed
 * only (a loaded machine's). */
#define FLOOD_N 200000

static void run_flood(const char *self)
{
	char *err = NULL, num[32];
	struct x x;

	snprintf(num, sizeof num, "%d", FLOOD_N);
	const char *log = cli_path("flood.ptlog"), *pf = cli_path("flood.pftrace");
	const char *plain = cli_path("flood-plain.pftrace");
	CHECK_EQ(cli_run(CLI("record", "--no-loss", "-o", (char *)log, "--", (char *)self, "flood",
	                     num), NULL, &err), 0);
	free(err);
	double t0 = t_now_s();
	REQUIRE(cli_run(CLI("export", "--format", "perfetto", "--no-compress", (char *)log, "-o",
	                    (char *)plain), NULL, NULL) == 0);
	double t1 = t_now_s();
	REQUIRE(cli_run(CLI("export", "--format", "perfetto", (char *)log, "-o", (char *)pf), NULL,
	                &err) == 0);
	double t2 = t_now_s();
	/* a build without zlib says it writes plain packets */
	CHECK_EQ(cli_contains(err, "built without zlib: plain packets"), !PF_CAN_COMPRESS);
	free(err);
	REQUIRE(decode(plain, cli_path("flood.txt"), &x, 1) == 0);
	CHECK_EQ(x.unresolved, 0);
	CHECK_EQ(x.f.containers, 0);
	long long flood = 0, bytes = 0, delta_bytes = 0, values_bad = 0;
	for (int t = 0; t < x.nt; t++)
		for (int e = 0; e < x.t[t].ne; e++) {
			const struct xev *v = &x.t[t].e[e];
			unsigned long long u;
			if (strcmp(v->name, "flood"))
				continue;
			values_bad += sscanf(v->val, "u64=%llu", &u) != 1 || u != (unsigned long long)flood;
			values_bad += !v->sym || strncmp(v->sym, "flood+0x", 8);
			flood++;
			bytes += 19 + vsize(v->delta) + vsize(u);
			delta_bytes += vsize(v->delta);
		}
	CHECK_EQ(flood, FLOOD_N);
	CHECK_EQ(values_bad, 0);
	long long size = x.f.file_bytes;
	CHECK(size >= bytes && size - bytes < 8192);
	printf("perfetto, plain packets: %lld bytes for %llu events, %.2f bytes per event (8-byte "
	       "payloads, symbolized), %.2f of them the time deltas\n", size,
	       (unsigned long long)x.events, (double)size / (double)x.events,
	       (double)delta_bytes / FLOOD_N);
	CHECK_EQ(bytes - delta_bytes, 19ll * FLOOD_N + 128 + 2 * (16384 - 128) + 3 * (FLOOD_N - 16384));

	struct pfile zf;
	const char *inflated = cli_path("flood.pftrace.plain");
	if (!PF_CAN_COMPRESS) {
		printf("perfetto: built without zlib, compressed packets not tried\n");
	} else if (unpack(pf, inflated, &zf) == 0) {
		CHECK(zf.containers >= size / (256 << 10) && zf.top_plain == 0);
		CHECK_EQ(zf.packet_bytes, size);
		char *a = NULL, *b = NULL;
		size_t na = 0, nb = 0;
		FILE *fa = fopen(plain, "rb"), *fb = fopen(inflated, "rb");
		REQUIRE(fa && fb);
		na = fread(a = malloc((size_t)size + 1), 1, (size_t)size + 1, fa);
		nb = fread(b = malloc((size_t)size + 1), 1, (size_t)size + 1, fb);
		CHECK(na == (size_t)size && nb == (size_t)size && memcmp(a, b, na) == 0);
		fclose(fa);
		fclose(fb);
		free(a);
		free(b);
		printf("perfetto, compressed: %lld bytes in %ld containers, %.2f bytes per event\n",
		       zf.file_bytes, zf.containers, (double)zf.file_bytes / (double)x.events);
		CHECK(zf.file_bytes <= 20 * (long long)x.events);
	}
	printf("perfetto: export of %d events (the log read and the trace written) took %.2f s plain, "
	       "%.2f s %s, on a machine others load\n", FLOOD_N, t1 - t0, t2 - t1,
	       PF_CAN_COMPRESS ? "compressed" : "again (no zlib)");
	free_x(&x);
}

/* A log cut short, and with bytes overwritten in the middle: the export
 * says so and holds what the reader returns. */
static void run_damaged(const char *self)
{
	char *err = NULL, *out = NULL;
	struct cli_ev *ev;
	struct x x;
	struct stat sb;

	const char *log = cli_path("cut.ptlog");
	CHECK_EQ(cli_run(CLI("record", "-o", (char *)log, "--", (char *)self, "workload", "100"), &out,
	                 &err), 0);
	read_witness(out);
	free(out);
	out = NULL;
	free(err);
	REQUIRE(stat(log, &sb) == 0);
	REQUIRE(truncate(log, sb.st_size * 2 / 3) == 0);
	int fd = open(log, O_WRONLY);
	REQUIRE(fd >= 0);
	static const unsigned char junk[64] = { 0xde, 0xad, 0xbe, 0xef, 0x55, 0xaa };
	REQUIRE(pwrite(fd, junk, sizeof junk, sb.st_size / 3) == (ssize_t)sizeof junk);
	close(fd);
	int n = cli_read_log(log, &ev);
	REQUIRE(export_decode(log, cli_path("cut.pftrace"), cli_path("cut.txt"), &x, &err) == 0);
	CHECK(cli_contains(err, "cut short"));
	CHECK(cli_contains(err, "1 damaged stretch"));
	int errors = 0;
	for (int i = 0; i < n; i++)
		errors += !strcmp(log_name(&ev[i]), "posix_trace_error");
	CHECK_EQ(errors, 1);
	free(err);
	CHECK_EQ(x.unresolved, 0);
	CHECK_EQ((long long)x.events, n);
	CHECK(n > 0);
	check_threads(&x, ev, n);
	free_x(&x);
	free(ev);
}

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

/* 5. examples/app's described "reply" payloads: each event's debug
 * annotations are its fields by name, with the values the app sent. */
static void run_typed(void)
{
	const char *log = cli_path("typed.ptlog"), *pf = cli_path("typed.pftrace");
	const char *txt = cli_path("typed.txt");
	struct cli_ev *ev;
	char cmd[2200], line[512];

	REQUIRE(cli_record_app(log, "0") == 0);
	int n = cli_read_log(log, &ev);
	CHECK_EQ(cli_run(CLI("export", "-f", "perfetto", "--no-compress", "--force", (char *)log, "-o", (char *)pf),
	                 NULL, NULL), 0);
	snprintf(cmd, sizeof cmd, "'%s' --decode=perfetto.protos.Trace -I '%s' '%s' "
	         "< '%s' > '%s'", protoc, schema_dir, schema_file, pf, txt);
	CHECK_EQ(system(cmd), 0);
	char *t = cli_slurp(txt), *want = cli_app_replies(ev, n), *got = calloc((size_t)n + 1, 64);
	REQUIRE(t && got);
	/* protoc prints an annotation's value, then its name */
	static const char *const names[] = { "\"worker\"", "\"round\"", "\"status\"", "\"bytes\"" };
	long long v = 0, f[4] = { 0 };
	int k = 0;
	for (int i = 0, o = 0; cli_line(t, i, line, sizeof line) == 0; i++) {
		const char *p = line + strspn(line, " ");
		if (sscanf(p, "int_value: %lld", &v) == 1 || sscanf(p, "uint_value: %lld", &v) == 1)
			continue;
		if (strncmp(p, "name: ", 6))
			continue;
		if (k < 4 && !strcmp(p + 6, names[k]))
			f[k++] = v;
		else
			k = 0;
		if (k == 4) {
			o += sprintf(got + o, "%lld %lld %lld %lld\n", f[0], f[1], f[2], f[3]);
			k = 0;
		}
	}
	cli_sort_lines(got);
	CHECK(want[0] && !strcmp(got, want));
	if (strcmp(got, want))
		fprintf(stderr, "Perfetto reply annotations:\n%s\nthe app sent:\n%s", got, want);
	free(t);
	free(want);
	free(got);
	free(ev);
}

int main(int argc, char **argv)
{
	char self[4096] = { 0 };

	if (argc > 1 && !strcmp(argv[1], "workload"))
		return workload(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "flood"))
		return flood(argc, argv);
	T_BEGIN(300);
	if (!(protoc = cli_which("protoc")))
		T_SKIP("protoc is not installed (Debian: protobuf-compiler)");
	/* the published schema when it is beside the repository, else the
	 * repository's own few messages: a clone alone runs every check */
	REQUIRE(find_schema() == 0);
	if (schema_published)
		CHECK_EQ(min_schema_agrees(), 0);
	else
		printf("note: Perfetto's schema is not beside the repository: decoding with "
		       "tests/perfetto_min.proto\n");
	cli_setup();
	REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
	run_writer(1);
	run_writer(0);
	run_whole(self);
	run_lossy(self);
	run_flood(self);
	run_damaged(self);
	run_typed();
	if (schema_published) { /* what a clone alone decodes with: the same checks pass */
		REQUIRE(find_min_schema(schema_dir, sizeof schema_dir) == 0);
		schema_file = "perfetto_min.proto";
		schema_published = 0;
		run_whole(self);
		run_typed();
	}
	T_END();
}
