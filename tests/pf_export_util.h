/*
 * pf_export_util.h -- what the tests of `posixtrace export --format
 * perfetto` share (cli_perfetto*.c): the traced program they record (run
 * as `TEST workload SCALE`: 3 processes of 4 threads each; thread k of
 * process p sends plan(p, k) "alpha" events (8 bytes: p, k and the
 * event's number), one "beta" (text) and its main thread one "gamma" (16
 * bytes); it prints its pids, each thread's identity and the source lines
 * of its three calls (__LINE__); or `TEST flood N`: N 8-byte events of
 * one thread), protoc's decoding of an export read back into its tracks
 * and sequences (struct x: every interned name and source location
 * resolved, alpha's payloads in order, each user event's source location
 * the program's function, and with libdw this file and the line the
 * program printed), and a log's threads checked against it, event by
 * event.  The writer itself is included, built as the command is
 * (TEST_DEFS_cli_perfetto*: libdeflate or zlib), for PF_CAN_COMPRESS and
 * the tests of the writer alone.  Needs t.h, helpers.h, cli_util.h and
 * pf_util.h first.
 */
#ifndef PT_PF_EXPORT_UTIL_H
#define PT_PF_EXPORT_UTIL_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef PT_HAVE_ZLIB
#include <zlib.h>
#endif
/* the writer itself, for the checks of run_writer() */
#include "../cli/write/protobuf.c"
#include "../cli/write/export_perfetto.c"

#define NPROC 3
#define NTHR 3 /* threads besides main */

static inline unsigned plan(int p, int k, int scale)
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
static inline void say_who(void)
{
	char name[16] = "";
	prctl(PR_GET_NAME, name, 0, 0, 0);
	printf("thread %d 0x%llx %d %s\n", (int)getpid(), (unsigned long long)pthread_self(),
	       (int)syscall(SYS_gettid), name);
	fflush(stdout); /* a child ends with _exit */
}

static inline void *thread_main(void *arg)
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

static inline int workload(int argc, char **argv)
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

static inline const char *lookup(const struct names *t, uint64_t iid)
{
	for (int i = 0; i < t->n; i++)
		if (t->iid[i] == iid)
			return t->s[i];
	return NULL;
}

static inline void intern(struct names *t, uint64_t iid, const char *s)
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
 * and line; else none has a file): checked while lines_known (run_whole).
 * want_obj: without libdw (file+offset only), where each user event's
 * location starts, the program's file ("cli_perfetto+0x"). */
static int want_line[3], want_dwarf, lines_known;
static char want_obj[128];

static inline struct xseq *xseq(struct x *x, uint32_t id)
{
	for (int i = 0; i < x->ns; i++)
		if (x->s[i].id == id)
			return &x->s[i];
	REQUIRE(x->ns < 256);
	memset(&x->s[x->ns], 0, sizeof x->s[0]);
	x->s[x->ns].id = id;
	return &x->s[x->ns++];
}

static inline struct xtrack *xtrack(struct x *x, uint64_t uuid)
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

static inline void unquote(const char *v, char *out, size_t cap)
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

static inline void packet_end(struct x *x, struct pkt *p)
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
			t->sym_named += strstr(sym, !want_dwarf ? want_obj
			                            : user < 2 ? "thread_main+0x" : "process_main+0x") == sym;
		char want[64];
		snprintf(want, sizeof want, " @ pf_export_util.h:%d", want_line[user]);
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

static inline void free_names(struct names *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->s[i]);
	t->n = 0;
}

/* Reads protoc's text: the path of open messages, the fields we use. */
static inline void read_decoded(const char *path, struct x *x, int keep_values)
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

static inline void free_x(struct x *x)
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

/* ------------------------------------------------------------ the checks */
static inline int decode(const char *out, const char *txt, struct x *x, int keep_values)
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

static inline int export_decode(const char *log, const char *out, const char *txt, struct x *x,
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

static inline void read_witness(const char *out)
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

static inline const struct wit *witness(int pid, uint64_t thread)
{
	for (int i = 0; i < nwit; i++)
		if (wit[i].pid == pid && wit[i].thread == thread)
			return &wit[i];
	return NULL;
}

static inline struct xtrack *track_for(struct x *x, int pid, uint64_t tid)
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

static inline uint64_t ev_ns(const struct cli_ev *e)
{
	return (uint64_t)e->info.posix_timestamp.tv_sec * 1000000000u +
	       (uint64_t)e->info.posix_timestamp.tv_nsec;
}

/* The log's name of an event: a damaged log need not name the ERROR its
 * reader makes (tlog and the exports do) */
static inline const char *log_name(const struct cli_ev *e)
{
	return e->info.posix_event_id == POSIX_TRACE_ERROR && !strncmp(e->name, "event-", 6)
	       ? "posix_trace_error" : e->name;
}

/* Every thread of the log: the export's sequence for it holds its events
 * in order, same ns and name; returns the number of threads. */
static inline int check_threads(struct x *x, const struct cli_ev *ev, int n)
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

/* The traced programs, when a test runs as one (argv[1] "workload" or
 * "flood"): their exit status; -1 when it is not one. */
static inline int pf_program(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "workload"))
		return workload(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "flood"))
		return flood(argc, argv);
	return -1;
}

/* A test's start: skipped without protoc; the published schema when it
 * is beside the repository, else the repository's own few messages (a
 * clone alone runs every check); the command's set-up; self, this
 * program's path (the traced program). */
static inline void pf_begin(char *self, size_t cap)
{
	if (!(protoc = cli_which("protoc")))
		T_SKIP("protoc is not installed (Debian: protobuf-compiler)");
	REQUIRE(find_schema() == 0);
	if (!schema_published)
		printf("note: Perfetto's schema is not beside the repository: decoding with "
		       "tests/perfetto_min.proto\n");
	cli_setup();
	memset(self, 0, cap);
	REQUIRE(readlink("/proc/self/exe", self, cap - 1) > 0);
}

/* A test's main: the traced programs when it runs as one, else the
 * start (pf_begin) and run(self), under an alarm. */
static inline int pf_main(int argc, char **argv, void (*run)(const char *self))
{
	char self[4096];
	int rc = pf_program(argc, argv);

	if (rc >= 0)
		return rc;
	T_BEGIN(300);
	pf_begin(self, sizeof self);
	run(self);
	T_END();
}

/* From here on, decoded with the repository's own few messages, as a
 * clone alone decodes (after the published schema's run: the same checks
 * pass with both). */
static inline void pf_min_schema(void)
{
	REQUIRE(find_min_schema(schema_dir, sizeof schema_dir) == 0);
	schema_file = "perfetto_min.proto";
	schema_published = 0;
}
#endif
