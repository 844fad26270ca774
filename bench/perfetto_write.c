/*
 * perfetto_write.c -- the Perfetto writer alone (cli/write/write.h), as
 * `export --format perfetto` drives it, without reading a log: 5 M events
 * with an 8-byte payload (a counter) and a symbol, from one thread and
 * then from 8 threads taking turns, 150-400 ns apart; written plain and
 * compressed (when built with zlib) into a sink that counts the bytes.
 * Prints events/s and bytes per event for each (issue 32: at most 20 B
 * per event at 5 M events/s or more): events per second of the time the
 * writer's thread had a CPU (what it costs), and of the wall clock (less
 * when others load the machine); the best of 3 runs.
 */
#include "bench_util.h"
#include "../cli/write/protobuf.c"
#include "../cli/write/export_perfetto.c"

#define N 5000000ull

static ssize_t count_write(void *cookie, const char *buf, size_t n)
{
	(void)buf;
	*(uint64_t *)cookie += n;
	return (ssize_t)n;
}

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One run: CPU seconds taken (wall seconds in *wall), bytes written in
 * *bytes; -1 if it failed. */
static double run(int compress, int threads, uint64_t *bytes, double *wall)
{
	cookie_io_functions_t io = { .write = count_write };
	uint64_t ts = 1700000000000000000ull, seed = 42;
	*bytes = 0;
	FILE *f = fopencookie(bytes, "w", io);
	struct pf *w = f ? pf_open(f) : NULL;
	if (!w || pf_compress(w, compress))
		return -1;
	for (int t = 0; t < threads; t++)
		pf_thread(w, 1000, 0x7f0000001000ull + (uint64_t)t * 0x1000, (unsigned)t + 1, NULL);
	double t0 = bench_now_us(), c0 = cpu_s();
	for (uint64_t i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		ts += 150 + (seed >> 33) % 250;
		uint64_t v = i / (uint64_t)threads;
		int t = (int)(i % (uint64_t)threads);
		pf_event(w, 1000, 0x7f0000001000ull + (uint64_t)t * 0x1000, ts, 16, "work",
		         "worker+0x2c (app.c:41)", 1, &v, sizeof v, 0);
	}
	int rc = pf_close(w);
	fflush(f);
	double dt = cpu_s() - c0;
	*wall = (bench_now_us() - t0) / 1e6;
	fclose(f);
	return rc ? -1 : dt;
}

int main(void)
{
	printf("perfetto writer: %llu events of an 8-byte counter, symbolized\n",
	       (unsigned long long)N);
	for (int threads = 1; threads <= 8; threads *= 8)
		for (int compress = 0; compress <= PF_CAN_COMPRESS; compress++) {
			double best = -1, best_wall = -1, wall;
			uint64_t bytes = 0;
			for (int r = 0; r < 3; r++) {
				double dt = run(compress, threads, &bytes, &wall);
				if (dt < 0) {
					fprintf(stderr, "perfetto writer: the run failed\n");
					return 1;
				}
				best = best < 0 || dt < best ? dt : best;
				best_wall = best_wall < 0 || wall < best_wall ? wall : best_wall;
			}
			printf("  %d thread%s %-10s %6.2f M events/s of CPU, %6.2f of wall clock, "
			       "%6.2f B/event\n", threads, threads > 1 ? "s," : ", ",
			       compress ? "compressed" : "plain", (double)N / best / 1e6,
			       (double)N / best_wall / 1e6, (double)bytes / (double)N);
			bench_json("perfetto_write", compress ? "compressed" : "plain", "threads",
			           (double)threads, "events_per_cpu_s", (double)N / best,
			           "events_per_s", (double)N / best_wall, "bytes_per_event",
			           (double)bytes / (double)N, NULL);
		}
	if (!PF_CAN_COMPRESS)
		printf("  (built without zlib: no compressed run)\n");
	return 0;
}
