/*
 * bench.c -- micro-benchmarks of posixtrace (run by `make bench`).
 *
 * Measures the cost of posix_trace_event(id, buf, 32) with no stream, with
 * the event filtered out, into a running LOOP stream from 1 and 2 threads,
 * and with a reader thread draining the stream (trygetnext) meanwhile; and
 * the reader's throughput on a pre-filled stream.  Each figure is the
 * median of 5 timed repetitions (CLOCK_MONOTONIC) after a warm-up run.  The
 * timed loop body is only the posix_trace_event() call plus a store of one
 * byte of the payload, so the call cannot be hoisted.  Prints a Markdown
 * table for docs/performance.md, then the goals of issue 17 each read off
 * this run: filtered out, flight recorder 1 thread, `rdtsc` alone, the
 * floor (a minimal per-thread ring, bench_util.h) and the recorder's cost
 * above it, measured interleaved with the recorder (bench_vs_floor), the
 * 2-thread/1-thread rate (1 and 2 threads run alike, in pairs, beside the
 * floor's: bench_two), and the stream
 * bytes per event a LOOP stream's history holds with an 8-byte payload
 * (the LTTng-UST column: make bench-lttng).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>
#include "bench_util.h"

#define REPS 5
#define N_EVENTS 10000000ull   /* per repetition */
#define N_READ 4000000ull      /* events pre-filled for the reader test */
#define PAYLOAD 32

static trace_event_id_t id;

/* the loops' clock: CLOCK_MONOTONIC, or the thread's CPU time where
 * bench_vs_floor compares the recorder with the floor */
static clockid_t loop_clock = CLOCK_MONOTONIC;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(loop_clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double median(double *v)
{
	qsort(v, REPS, sizeof *v, bench_cmp_double);
	return v[REPS / 2];
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench: %s: %s\n", what, strerror(rc));
	exit(1);
}

/* The measured loop: returns ns per event. */
BENCH_EVENT_LOOP(record_loop, posix_trace_event, id, PAYLOAD, now_ns)

/* The same, calling the function itself rather than through <trace.h>'s
 * inline test: what a call costs when the caller cannot inline it (a
 * function pointer, a language binding, POSIXTRACE_NO_INLINE). */
BENCH_EVENT_LOOP(call_loop, (posix_trace_event), id, PAYLOAD, now_ns)

/* ------------------------------------------------------------ baselines */

/* The same loop calling an empty function the compiler cannot inline:
 * the floor under "no stream" (a call, a return, the loop itself). */
__attribute__((noinline)) static void empty_call(trace_event_id_t e, const void *p, size_t n)
{
	__asm__ volatile("" : : "r"(e), "r"(p), "r"(n) : "memory");
}

BENCH_EVENT_LOOP(empty_loop, empty_call, id, PAYLOAD, now_ns)

/* How well this machine runs two CPU-bound threads at once: a dependent
 * multiply chain, alone and then on two threads.  Returns the ratio of
 * aggregate throughput (2.0 = two independent cores). */
static double alu_ns(uint64_t n)
{
	uint64_t x = 1;
	double t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return (now_ns() - t0) / (double)n;
}

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
/* The timestamp instruction alone, for the same comparison. */
static double tsc_ns(uint64_t n)
{
	uint64_t x = 0;
	double t0 = now_ns();
	for (uint64_t i = 0; i < n; i++)
		x += __rdtsc();
	__asm__ volatile("" : : "r"(x));
	return (now_ns() - t0) / (double)n;
}
#else
static double tsc_ns(uint64_t n)
{
	return alu_ns(n);
}
#endif

static double (*scaling_loop)(uint64_t);
static double alu_ratio_ns[2];

static void *alu_main(void *arg)
{
	alu_ratio_ns[(intptr_t)arg] = scaling_loop(N_EVENTS * 2);
	return NULL;
}

static double machine_scaling(double (*loop)(uint64_t))
{
	pthread_t th[2];
	scaling_loop = loop;
	double one = loop(N_EVENTS * 2);
	for (intptr_t i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, alu_main, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return one / alu_ratio_ns[0] + one / alu_ratio_ns[1];
}

static double bench_loop(double (*loop)(uint64_t), uint64_t n)
{
	double v[REPS];

	loop(n / 5);
	for (int r = 0; r < REPS; r++)
		v[r] = loop(n);
	return median(v);
}

static trace_id_t make_stream(int policy, size_t size)
{
	trace_attr_t attr;
	trace_id_t trid;
	int rc;

	posix_trace_attr_init(&attr);
	posix_trace_attr_setstreamfullpolicy(&attr, policy);
	posix_trace_attr_setstreamsize(&attr, size);
	if ((rc = posix_trace_create(0, &attr, &trid)) != 0)
		die("posix_trace_create", rc);
	posix_trace_attr_destroy(&attr);
	return trid;
}

/* The flight recorder (a running stream), the floor and `rdtsc` alone,
 * interleaved run by run so that the machine's drift (other programs, a
 * host's other guests) falls on all three, each timed in the thread's CPU
 * time (time other programs took the CPU is not counted): bench_vs_floor
 * (bench_util.h), the same measurement as bench/ablate's recorder row. */
static double tsc_ns(uint64_t n);
static void recorder_vs_floor(struct bench_vs *vs)
{
	loop_clock = CLOCK_THREAD_CPUTIME_ID; /* (tsc_ns's clock, as the pairs') */
	if (bench_vs_floor(id, tsc_ns, vs) != 0)
		die("the floor's ring", ENOMEM);
	loop_clock = CLOCK_MONOTONIC;
}

/* 1 thread: median ns/event. */
static double bench_one(uint64_t n)
{
	double v[REPS];

	record_loop(n / 5); /* warm-up */
	for (int r = 0; r < REPS; r++)
		v[r] = record_loop(n);
	return median(v);
}

/* ------------------------------------------------------------ 2 threads
 * One thread and two threads measured the same way, in pairs: each run
 * starts its threads, lets each warm up (its first events take a chunk
 * and register the thread), meets them at a barrier and times them from
 * there, each thread with CLOCK_MONOTONIC and with its own CPU time.  The
 * rate of a run is its events over the wall time from the first thread's
 * start to the last one's end.  (This bench once set a 1-thread rate read
 * in the thread's CPU time beside a 2-thread rate read on the wall clock:
 * whatever kept the two threads from having two CPUs throughout, another
 * program, the host, counted against the recorder alone.)  The same pairs
 * for the floor, whose threads share nothing, say what the machine allows
 * two threads of this kind of work; each thread's CPU time says what they
 * cost each other (a cache line both write would show there, whatever
 * else the machine runs). */
static pthread_barrier_t barrier;
static int two_floor;         /* the floor's loop rather than the recorder's */
static uint64_t *two_ring[2]; /* the floor's rings, one per thread, made once */
struct two_run {
	double w0, w1, cpu; /* wall start and end (ns), CPU ns/event */
};
static struct two_run two_run[2];

static double cpu_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

BENCH_EVENT_LOOP(floor_loop, bench_floor_event, id, PAYLOAD, now_ns)

static void *two_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	double (*loop)(uint64_t) = two_floor ? floor_loop : record_loop;
	if (two_floor) {
		bench_ring.buf = two_ring[i];
		bench_ring.words = (16u << 20) / 8;
		bench_ring.pos = 0;
	}
	loop(N_EVENTS / 10);
	pthread_barrier_wait(&barrier);
	double c0 = cpu_now_ns();
	two_run[i].w0 = mono_ns();
	loop(N_EVENTS);
	two_run[i].w1 = mono_ns();
	two_run[i].cpu = (cpu_now_ns() - c0) / (double)N_EVENTS;
	if (two_floor)
		bench_ring.buf = NULL;
	return NULL;
}

/* One run of n threads: events/s over the wall time, CPU ns/event per
 * thread (mean), wall ns/event per thread (mean). */
static double two_once(int n, double *cpu, double *each)
{
	pthread_t th[2];
	pthread_barrier_init(&barrier, NULL, (unsigned)n);
	for (intptr_t i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, two_main, (void *)i) != 0)
			die("pthread_create", EAGAIN);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&barrier);
	double w0 = two_run[0].w0, w1 = two_run[0].w1;
	*cpu = *each = 0;
	for (int i = 0; i < n; i++) {
		w0 = two_run[i].w0 < w0 ? two_run[i].w0 : w0;
		w1 = two_run[i].w1 > w1 ? two_run[i].w1 : w1;
		*cpu += two_run[i].cpu / n;
		*each += (two_run[i].w1 - two_run[i].w0) / (double)N_EVENTS / n;
	}
	return (double)n * N_EVENTS / (w1 - w0) * 1e9;
}

struct two_fig {
	double ratio;     /* 2-thread rate / 1-thread rate, wall, median of pairs */
	double cpu_ratio; /* 2 x CPU ns/event alone / CPU ns/event of each of two */
	double each;      /* ns/event of each of two threads, wall, median */
	double aggregate; /* events/s of two threads, median */
};

/* REPS pairs (1 thread, 2 threads; the order alternated), medians. */
static void two_pairs(int use_floor, struct two_fig *f)
{
	double ratio[REPS], cr[REPS], each[REPS], ag[REPS], c1, c2, e1, e2;

	two_floor = use_floor;
	for (int r = 0; r < REPS; r++) {
		double r1, r2;
		if (r & 1) {
			r2 = two_once(2, &c2, &e2);
			r1 = two_once(1, &c1, &e1);
		} else {
			r1 = two_once(1, &c1, &e1);
			r2 = two_once(2, &c2, &e2);
		}
		ratio[r] = r2 / r1;
		cr[r] = 2 * c1 / c2;
		each[r] = e2;
		ag[r] = r2;
	}
	f->ratio = median(ratio);
	f->cpu_ratio = median(cr);
	f->each = median(each);
	f->aggregate = median(ag);
}

static void bench_two(struct two_fig *rec, struct two_fig *flo)
{
	for (int i = 0; i < 2; i++)
		if (!(two_ring[i] = aligned_alloc(4096, 16u << 20)) ||
		    !memset(two_ring[i], 0, 16u << 20))
			die("the floor's rings", ENOMEM);
	two_pairs(0, rec);
	two_pairs(1, flo);
	for (int i = 0; i < 2; i++)
		free(two_ring[i]);
}

/* ------------------------------------------- 1 writer + draining reader */
static atomic_int reader_stop;
static uint64_t reader_got;
static trace_id_t reader_trid;

static void *drain_main(void *arg)
{
	struct posix_trace_event_info ev;
	unsigned char data[64];
	size_t len;
	int unavail;
	uint64_t got = 0;

	(void)arg;
	while (!atomic_load_explicit(&reader_stop, memory_order_relaxed)) {
		if (posix_trace_trygetnext_event(reader_trid, &ev, data, sizeof data, &len,
		                                 &unavail) != 0)
			break;
		got += !unavail;
	}
	reader_got = got;
	return NULL;
}

static double bench_with_reader(trace_id_t trid, double *drained)
{
	double v[REPS], d[REPS];
	pthread_t rd;

	reader_trid = trid;
	record_loop(N_EVENTS / 5);
	for (int r = 0; r < REPS; r++) {
		atomic_store(&reader_stop, 0);
		pthread_create(&rd, NULL, drain_main, NULL);
		v[r] = record_loop(N_EVENTS);
		atomic_store(&reader_stop, 1);
		pthread_join(rd, NULL);
		d[r] = (double)reader_got / N_EVENTS;
	}
	*drained = median(d);
	return median(v);
}

/* ---------------- a paced writer, alone and with a blocking reader */
/* Bursts of PACED_BURST events, PACED_GAP_US of busy wait between them
 * (a program doing other work); only the bursts are timed.  With a
 * reader blocked in getnext that catches up at every burst. */
#define PACED_EVENTS 1000000u
#define PACED_BURST 10
#define PACED_GAP_US 20

static void *block_main(void *arg)
{
	struct posix_trace_event_info ev;
	unsigned char data[64];
	size_t len;
	int unavail;

	(void)arg;
	while (posix_trace_getnext_event(reader_trid, &ev, data, sizeof data, &len, &unavail) == 0)
		;
	return NULL;
}

static double paced_loop(void)
{
	unsigned char buf[PAYLOAD] = { 0 };
	double in = 0;

	for (uint32_t n = 0; n < PACED_EVENTS;) {
		double t0 = now_ns();
		for (int k = 0; k < PACED_BURST; k++, n++) {
			buf[0] = (unsigned char)n;
			posix_trace_event(id, buf, PAYLOAD);
		}
		double t1 = now_ns();
		in += t1 - t0;
		while (now_ns() < t1 + PACED_GAP_US * 1e3)
			;
	}
	return in / PACED_EVENTS;
}

/* ns per event of the paced writer into a LOOP stream: alone (reader 0)
 * or with a thread blocked in getnext (reader 1); medians. */
static double bench_paced(int with_reader)
{
	double v[REPS];

	for (int r = 0; r < REPS; r++) {
		pthread_t rd;
		trace_id_t trid = make_stream(POSIX_TRACE_LOOP, 16u << 20);
		posix_trace_start(trid);
		reader_trid = trid;
		if (with_reader)
			pthread_create(&rd, NULL, block_main, NULL);
		v[r] = paced_loop();
		posix_trace_shutdown(trid); /* wakes the reader: EINVAL */
		if (with_reader)
			pthread_join(rd, NULL);
	}
	return median(v);
}

/* ------------------------------------------------------- reader speed */
static double bench_reader(void)
{
	double v[REPS];
	struct posix_trace_event_info ev;
	unsigned char data[64];
	size_t len;
	int unavail;

	for (int r = 0; r < REPS; r++) {
		trace_id_t trid = make_stream(POSIX_TRACE_UNTIL_FULL, 256u << 20);
		posix_trace_start(trid);
		record_loop(N_READ);
		posix_trace_stop(trid);
		uint64_t got = 0;
		double t0 = now_ns();
		while (posix_trace_getnext_event(trid, &ev, data, sizeof data, &len, &unavail) == 0 &&
		       ev.posix_event_id != POSIX_TRACE_STOP)
			got++;
		double t = now_ns() - t0;
		if (got != N_READ + 1) /* + START */
			fprintf(stderr, "bench: reader got %llu events, expected %llu\n",
			        (unsigned long long)got, (unsigned long long)N_READ + 1);
		v[r] = (double)got / t * 1e9;
		posix_trace_shutdown(trid);
	}
	return median(v);
}

/* ----------------------------------------- history kept per byte (LOOP) */
/* A LOOP stream of `size` bytes, filled several times over with events of
 * an 8-byte payload, then read: the stream size over the events it kept. */
static double loop_bytes_per_event(size_t size)
{
	struct posix_trace_event_info ev;
	unsigned char data[64];
	uint64_t pl = 0, got = 0;
	size_t len;
	int unavail;
	trace_id_t trid = make_stream(POSIX_TRACE_LOOP, size);

	posix_trace_start(trid);
	for (uint64_t i = 0; i < 4 * size / 8; i++) {
		pl = i;
		posix_trace_event(id, &pl, sizeof pl);
	}
	posix_trace_stop(trid);
	while (posix_trace_trygetnext_event(trid, &ev, data, sizeof data, &len, &unavail) == 0 &&
	       !unavail)
		got += ev.posix_event_id == id;
	posix_trace_shutdown(trid);
	return got ? (double)size / (double)got : 0;
}

int main(void)
{
	trace_attr_t attr;
	trace_event_set_t set;
	trace_id_t trid;
	size_t evsize = 0;
	double drained;
	struct two_fig two, two_fl;
	int rc;

	if ((rc = posix_trace_eventid_open("bench.event", &id)) != 0)
		die("posix_trace_eventid_open", rc);
	posix_trace_attr_init(&attr);
	posix_trace_attr_getmaxusereventsize(&attr, PAYLOAD, &evsize);
	posix_trace_attr_destroy(&attr);

	double none = bench_one(N_EVENTS);
	double none_call = bench_loop(call_loop, N_EVENTS);

	trid = make_stream(POSIX_TRACE_LOOP, 16u << 20);
	posix_trace_eventset_empty(&set);
	posix_trace_eventset_add(id, &set);
	posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET);
	posix_trace_start(trid);
	double filtered = bench_one(N_EVENTS);
	posix_trace_shutdown(trid);

	trid = make_stream(POSIX_TRACE_LOOP, 16u << 20);
	posix_trace_start(trid);
	struct bench_vs vs;
	recorder_vs_floor(&vs);
	double one = vs.rec, floor_ring = vs.floor, tsc_cost = vs.also, above_floor = vs.above;
	bench_two(&two, &two_fl);
	posix_trace_shutdown(trid);

	trid = make_stream(POSIX_TRACE_LOOP, 16u << 20);
	posix_trace_start(trid);
	double with_reader = bench_with_reader(trid, &drained);
	posix_trace_shutdown(trid);

	double paced_alone = bench_paced(0), paced_blocked = bench_paced(1);
	double reader = bench_reader();
	size_t ev8 = 0;
	posix_trace_attr_init(&attr);
	posix_trace_attr_getmaxusereventsize(&attr, 8, &ev8);
	posix_trace_attr_destroy(&attr);
	double hist8 = loop_bytes_per_event(4u << 20);
	double empty_ns = bench_loop(empty_loop, N_EVENTS);
	double scaling = machine_scaling(alu_ns);
	double tsc_scaling = machine_scaling(tsc_ns);

	printf("posixtrace micro-benchmark: %ld CPUs online, %d-byte payload, "
	       "median of %d runs of %llu events\n\n",
	       sysconf(_SC_NPROCESSORS_ONLN), PAYLOAD, REPS, (unsigned long long)N_EVENTS);
	printf("| case | ns/event | Mevents/s |\n");
	printf("|---|---:|---:|\n");
	printf("| baseline: the same loop calling an empty function | %.2f | %.1f |\n", empty_ns,
	       1e3 / empty_ns);
	printf("| no stream (the inline test in <trace.h>) | %.2f | %.1f |\n", none, 1e3 / none);
	printf("| no stream, the function called: (posix_trace_event)(...) | %.2f | %.1f |\n",
	       none_call, 1e3 / none_call);
	printf("| stream running, event filtered out | %.2f | %.1f |\n", filtered, 1e3 / filtered);
	printf("| floor: a minimal per-thread ring (`rdtsc`, a header word, the payload, a "
	       "private 16 MiB buffer) | %.2f | %.1f |\n", floor_ring, 1e3 / floor_ring);
	printf("| LOOP stream, 1 thread | %.2f | %.1f |\n", one, 1e3 / one);
	printf("| LOOP stream, 2 threads: each thread | %.2f | %.1f |\n", two.each, 1e3 / two.each);
	printf("| LOOP stream, 2 threads: aggregate (wall time / events) | %.2f | %.1f |\n",
	       1e9 / two.aggregate, two.aggregate / 1e6);
	printf("| LOOP stream, 1 thread + reader draining with trygetnext | %.2f | %.1f |\n",
	       with_reader, 1e3 / with_reader);
	printf("| LOOP stream, 1 thread paced (bursts of %d, %d us apart) | %.2f | %.1f |\n",
	       PACED_BURST, PACED_GAP_US, paced_alone, 1e3 / paced_alone);
	printf("| the same + a reader blocked in getnext | %.2f | %.1f |\n", paced_blocked,
	       1e3 / paced_blocked);
	printf("| reader: getnext on a pre-filled stream (%llu events) | %.2f | %.1f |\n",
	       (unsigned long long)N_READ, 1e9 / reader, reader / 1e6);
	printf("\n");
	printf("- 2-thread aggregate rate / 1-thread rate, both on the wall clock, median of %d "
	       "pairs: %.2f; the floor's, measured the same way: %.2f; by each thread's CPU time: "
	       "%.2f (the floor %.2f); this machine runs two threads of a dependent multiply loop "
	       "at %.2fx one thread\n", REPS, two.ratio, two_fl.ratio, two.cpu_ratio,
	       two_fl.cpu_ratio, scaling);
	printf("- the timestamp instruction alone: %.2f ns, and two threads reading it run at "
	       "%.2fx one thread\n", tsc_cost, tsc_scaling);
	printf("- no stream: the inline test costs %.2f ns; the function called costs %.2f ns "
	       "over an empty function call\n", none, none_call - empty_ns);
	printf("- the concurrent reader took %.0f%% of the events recorded meanwhile\n",
	       drained * 100);
	printf("- a reader alongside / the flight recorder alone: %.2f (trygetnext, spinning), "
	       "%.2f (paced writer, getnext)\n", with_reader / one, paced_blocked / paced_alone);
	printf("- stream space per event with a %d-byte payload: %zu bytes from the call site of "
	       "the thread's previous event (8 bytes of header), at most %zu (a wide header: a "
	       "chunk's first event, or another call site)\n", PAYLOAD, evsize - 8, evsize);

	/* the same figures as rows of build/bench/results.json (make bench) */
	{
		static const char *const names[] = {
			"empty function", "no stream", "no stream, called", "filtered out", "floor",
			"loop 1 thread", "loop 2 threads each", "loop + trygetnext reader",
			"loop paced", "loop paced + getnext reader", "rdtsc",
		};
		const double ns[] = { empty_ns, none, none_call, filtered, floor_ring, one,
		                      two.each, with_reader, paced_alone, paced_blocked, tsc_cost };
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			bench_json("bench", names[i], "ns_per_event", ns[i], NULL);
		bench_json("bench", "loop 2 threads aggregate", "ns_per_event", 1e9 / two.aggregate,
		           "ratio_to_1_thread", two.ratio, "cpu_ratio", two.cpu_ratio, "floor_ratio",
		           two_fl.ratio, "floor_cpu_ratio", two_fl.cpu_ratio, "machine_scaling", scaling,
		           NULL);
		bench_json("bench", "floor vs recorder", "above_floor_ns", above_floor, "low_ns",
		           vs.lo, "high_ns", vs.hi, NULL);
		bench_json("bench", "stream reader getnext", "events", (double)N_READ,
		           "events_per_s", reader, NULL);
		bench_json("bench", "stream bytes per event", "payload", 8.0, "bytes", hist8,
		           "largest_record", (double)ev8, NULL);
	}

	/* the rows of the goals, each read off this one run (the LTTng-UST
	 * column: make bench-lttng) */
	double ratio = two.ratio;
	printf("\n| goal | this run | target | met |\n|---|---:|---|---|\n");
	printf("| event filtered out by every running stream | %.2f ns | <= 1 ns (no stream: "
	       "%.2f ns) | %s |\n", filtered, none, filtered <= 1.0 ? "yes" : "no");
	printf("| flight recorder (LOOP), 1 thread, %d-byte payload | %.2f ns | <= 0.15 x "
	       "LTTng-UST (make bench-lttng) | see there |\n", PAYLOAD, one);
	printf("| `rdtsc` alone | %.2f ns | | |\n", tsc_cost);
	printf("| flight recorder over `rdtsc` alone | %+.2f ns | | |\n", one - tsc_cost);
	printf("| the floor (a minimal per-thread ring) | %.2f ns | | |\n", floor_ring);
	printf("| flight recorder over the floor (median of %d interleaved pairs, %+.2f..%+.2f) "
	       "| %+.2f ns | <= 4 ns | %s |\n", BENCH_VS_RUNS, vs.lo, vs.hi, above_floor,
	       above_floor <= 4.0 ? "yes" : "no");
	printf("| 2 threads: aggregate rate / 1-thread rate (the floor's: %.2f; by CPU time: %.2f) "
	       "| %.2f | >= 1.8 | %s |\n", two_fl.ratio, two.cpu_ratio, ratio,
	       ratio >= 1.8 ? "yes" : "no");
	printf("| stream bytes per event, 8-byte payload, LOOP history | %.1f (largest record: %zu) | "
	       "<= 16 | %s |\n", hist8, ev8, hist8 > 0 && hist8 <= 16.0 ? "yes" : "no");
	return 0;
}
