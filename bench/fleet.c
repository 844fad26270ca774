/*
 * fleet.c -- a fleet simulated on one machine: FLEET_PRODUCERS (32)
 * programs, each under `posixtrace record --relayd` with a host name of
 * its own, stream into one lttng-relayd on loopback (free ports, a
 * private HOME, started and stopped here).  Each program posts
 * FLEET_EVENTS (20000) events of 32 bytes, FLEET_BURST at a time with a
 * pause between bursts (a service, not a flood).
 *
 * Prints the aggregate rate the relay received (events the producers
 * report delivered over the wall time from the first start to the last
 * end) and, per producer, what it lost: the counts each `record` prints,
 * which the relay gets as CTF discarded events.  babeltrace2 (if
 * installed) counts the events in the relay's directory: the witness.
 *
 * Then, in the same run and into the same relay, LTTng-UST's side: as
 * many producers of the same events (bench/lttng/lttng_fleet, built by
 * `make bench-lttng` when lttng-tools and liblttng-ust-dev are there, run
 * through bench/lttng/run.sh for a session daemon of its own) stream
 * through lttng-sessiond and lttng-consumerd; babeltrace2 counts what the
 * relay holds of each and the events LTTng-UST discarded.  The two are
 * printed side by side, producer by producer.  Without LTTng it says why.
 * Environment: FLEET_PRODUCERS, FLEET_EVENTS, FLEET_BURST; FLEET_LTTNG=0
 * leaves LTTng's side out; PT_KEEP keeps (and names) the run's directory,
 * made under TMPDIR (default /tmp).
 *
 * Skips (exit 0, a SKIP line) without lttng-relayd.  The machine is
 * shared: rates are what this run saw, not a property of the code.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>
#include "bench_util.h"

#ifndef PT_BUILD_DIR
#define PT_BUILD_DIR "build"
#endif
#ifndef PT_SRC_DIR
#define PT_SRC_DIR "."
#endif

static int env_int(const char *name, int def)
{
	const char *s = getenv(name);
	return s && atoi(s) > 0 ? atoi(s) : def;
}

static int produce(int n, int burst)
{
	trace_event_id_t id;
	unsigned char payload[32] = { 0 };

	if (posix_trace_eventid_open("fleet_req", &id))
		return 3;
	for (int i = 0; i < n; i++) {
		memcpy(payload, &i, sizeof i);
		posix_trace_event(id, payload, sizeof payload);
		if ((i + 1) % burst == 0)
			usleep(1000);
	}
	return 0;
}

static unsigned free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || getsockname(fd, (struct sockaddr *)&a, &l))
		return 0;
	close(fd);
	return ntohs(a.sin_port);
}

static int port_open(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static pid_t spawn(char *const argv[], const char *err, const char *home)
{
	fflush(NULL);
	pid_t p = fork();
	if (p == 0) {
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644), o = open("/dev/null", O_WRONLY);
		if (e < 0 || o < 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		setenv("HOME", home, 1);
		setenv("LTTNG_HOME", home, 1);
		execv(argv[0], argv);
		_exit(126);
	}
	return p;
}

static unsigned long long after(const char *s, const char *key, int before)
{
	const char *p = s ? strstr(s, key) : NULL;
	if (!p)
		return 0;
	if (!before)
		return strtoull(p + strlen(key), NULL, 10);
	while (p > s && p[-1] == ' ')
		p--;
	while (p > s && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtoull(p, NULL, 10);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s;
	long n;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = malloc((size_t)n + 1);
	if (s)
		s[fread(s, 1, (size_t)n, f)] = 0;
	fclose(f);
	return s;
}

/* Why LTTng's side cannot run (empty if it can): run.sh --check's answer,
 * or the driver not built. */
static void lttng_reason(char *why, size_t cap, const char *drv)
{
	FILE *p = popen("sh '" PT_SRC_DIR "/bench/lttng/run.sh' --check cc 2>&1", "r");
	why[0] = 0;
	if (!p || !fgets(why, (int)cap, p))
		why[0] = 0;
	if (p)
		pclose(p);
	why[strcspn(why, "\n")] = 0;
	if (getenv("FLEET_LTTNG") && !strcmp(getenv("FLEET_LTTNG"), "0"))
		snprintf(why, cap, "FLEET_LTTNG=0");
	if (!why[0] && access(drv, X_OK) != 0)
		snprintf(why, cap, "%s not built (make bench-lttng builds it)", drv);
}

/* One LTTng-UST configuration's results, producer by producer. */
struct lt_run {
	const char *label;      /* the column's name */
	const char *args;       /* lttng_fleet's channel options */
	long long *ev, *disc;   /* per producer: delivered, discarded */
	int ok;
};

/* LTTng-UST's fleet into the same relay (ports c, d; output directory out).
 * Returns 1 if it ran and failed, 0 otherwise. */
static int lttng_side(struct lt_run *r, int np, int ne, int burst, unsigned c, unsigned d,
                      const char *out)
{
	const char *drv = PT_BUILD_DIR "/bench-lttng/lttng_fleet";
	char cmd[2048], line[512];
	int seen = 0, bad = 0;
	double run_s = 0, stop_s = 0;
	r->ev = calloc((size_t)np, sizeof *r->ev);
	r->disc = calloc((size_t)np, sizeof *r->disc);
	snprintf(cmd, sizeof cmd, "sh '" PT_SRC_DIR "/bench/lttng/run.sh' '%s' -c %u -D %u -o '%s' "
	         "-p %d -n %d -b %d %s 2>&1", drv, c, d, out, np, ne, burst, r->args);
	FILE *p = popen(cmd, "r");
	while (p && fgets(line, sizeof line, p)) {
		int i;
		long pid;
		long long a, b;
		if (sscanf(line, "P %d %ld %lld %lld", &i, &pid, &a, &b) == 4 && i >= 0 && i < np) {
			r->ev[i] = a;
			r->disc[i] = b;
			seen++;
		} else if (sscanf(line, "T %lf %lf", &run_s, &stop_s) == 2) {
			;
		} else if (line[0] == 'E' || strncmp(line, "run.sh:", 7)) {
			bad |= line[0] == 'E';
			printf("  lttng_fleet: %s", line);
		}
	}
	int st = p ? pclose(p) : -1;
	printf("LTTng-UST 2.13 via lttng-sessiond + lttng-consumerd, same relay, same run: %s\n",
	       r->label);
	if (st != 0 || bad || seen != np) {
		printf("  FAILED (status %d, %d of %d producers read)\n", st, seen, np);
		return 1;
	}
	long long lsum = 0, dsum = 0, dworst = 0, unacc = 0;
	for (int i = 0; i < np; i++) {
		lsum += r->ev[i];
		dsum += r->disc[i];
		dworst = r->disc[i] > dworst ? r->disc[i] : dworst;
		unacc += ne - r->ev[i] - r->disc[i];
	}
	printf("  wall time           %.2f s (first start to last end) + %.2f s lttng stop/destroy\n",
	       run_s, stop_s);
	printf("  delivered           %lld events (babeltrace2, each producer's trace in the relay's "
	       "directory)\n", lsum);
	printf("  aggregate rate      %.0f events/s over the run, %.0f counting stop/destroy\n",
	       (double)lsum / run_s, (double)lsum / (run_s + stop_s));
	printf("  discarded           %lld in all, %lld at most by one producer (babeltrace2's "
	       "discarded-events warnings); %lld unaccounted\n", dsum, dworst, unacc);
	bench_json("fleet", r->label, "producers", (double)np, "posted", (double)np * ne,
	           "delivered", (double)lsum, "discarded", (double)dsum, "worst_discarded",
	           (double)dworst, "unaccounted", (double)unacc, "s", run_s, NULL);
	r->ok = 1;
	return unacc != 0;
}

/* The per-producer table: posixtrace's counts beside each LTTng run's. */
static void table(int np, const unsigned long long *psent, const unsigned long long *plost,
                  const struct lt_run *r, int nr)
{
	printf("\n| producer | posixtrace sent | posixtrace lost |");
	for (int k = 0; k < nr; k++)
		printf(" LTTng %s delivered | LTTng %s discarded |", r[k].label, r[k].label);
	printf("\n|---|---|---|");
	for (int k = 0; k < nr; k++)
		printf("---|---|");
	printf("\n");
	for (int i = 0; i < np; i++) {
		printf("| %d | %llu | %llu |", i, psent[i], plost[i]);
		for (int k = 0; k < nr; k++)
			printf(" %lld | %lld |", r[k].ev[i], r[k].disc[i]);
		printf("\n");
	}
	printf("\n(posixtrace sent: `record`'s count, the program's events and its two "
	       "system events, start and stop)\n");
}

int main(int argc, char **argv)
{
	if (argc > 3 && !strcmp(argv[1], "produce"))
		return produce(atoi(argv[2]), atoi(argv[3]));
	int np = env_int("FLEET_PRODUCERS", 32), ne = env_int("FLEET_EVENTS", 20000),
	    burst = env_int("FLEET_BURST", 100);
	const char *relayd = bench_which("lttng-relayd");
	if (!relayd) {
		printf("SKIP: bench/fleet: lttng-relayd not found (Debian: lttng-tools)\n");
		return 0;
	}
	relayd = strdup(relayd);
	const char *bt = bench_which("babeltrace2");
	bt = bt ? strdup(bt) : NULL;
	char dir[400], self[4096], home[600], out[600], path[700];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/pt-fleet-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir) || !realpath("/proc/self/exe", self))
		return 1;
	snprintf(home, sizeof home, "%s/home", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	mkdir(home, 0700);
	unsigned c = free_port(), d = free_port(), l = free_port();
	char cs[64], ds[64], ls[64], url[64];
	snprintf(cs, sizeof cs, "tcp://127.0.0.1:%u", c);
	snprintf(ds, sizeof ds, "tcp://127.0.0.1:%u", d);
	snprintf(ls, sizeof ls, "tcp://127.0.0.1:%u", l);
	snprintf(url, sizeof url, "net://127.0.0.1:%u:%u", c, d);
	snprintf(path, sizeof path, "%s/relayd.log", dir);
	pid_t rp = spawn((char *const[]){ (char *)relayd, "-C", cs, "-D", ds, "-L", ls, "-o", out,
	                                  NULL }, path, home);
	for (int i = 0; i < 2000 && !(port_open(c) && port_open(d)); i++)
		usleep(5000);
	if (!port_open(c)) {
		printf("SKIP: bench/fleet: lttng-relayd did not start (%s)\n", path);
		return 0;
	}
	pid_t *pids = calloc((size_t)np, sizeof *pids);
	char ns[16], bs[16];
	snprintf(ns, sizeof ns, "%d", ne);
	snprintf(bs, sizeof bs, "%d", burst);
	double t0 = bench_now_us();
	for (int i = 0; i < np; i++) {
		char host[32], err[700];
		snprintf(host, sizeof host, "host%02d", i);
		snprintf(err, sizeof err, "%s/%s.err", dir, host);
		pids[i] = spawn((char *const[]){ PT_BUILD_DIR "/posixtrace", "record", "--relayd", url,
		                                 "--hostname", host, "--session", "fleet", "--", self,
		                                 "produce", ns, bs, NULL }, err, home);
	}
	int failed = 0;
	for (int i = 0; i < np; i++) {
		int st;
		while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
			;
		failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	double secs = (bench_now_us() - t0) / 1e6;
	unsigned long long sent = 0, lost = 0, worst = 0, packets = 0;
	unsigned long long *psent = calloc((size_t)np, sizeof *psent),
	                   *plost = calloc((size_t)np, sizeof *plost);
	for (int i = 0; i < np; i++) {
		char err[700];
		snprintf(err, sizeof err, "%s/host%02d.err", dir, i);
		char *s = slurp(err);
		psent[i] = after(s, " events sent to ", 1);
		plost[i] = after(s, " not delivered", 1);
		sent += psent[i];
		lost += plost[i];
		packets += after(s, " packets over", 1);
		worst = plost[i] > worst ? plost[i] : worst;
		free(s);
	}
	printf("bench/fleet: %d producers x %d events (32-byte payload, bursts of %d, 1 ms apart) "
	       "into one lttng-relayd on loopback\n", np, ne, burst);
	printf("posixtrace record --relayd:\n");
	printf("  wall time           %.2f s (first start to last end, 1 s linger included)\n", secs);
	printf("  delivered           %llu events in %llu packets (%d producers failed)\n", sent,
	       packets, failed);
	printf("  aggregate rate      %.0f events/s\n", (double)sent / secs);
	printf("  lost                %llu in all, %llu at most by one producer\n", lost, worst);
	bench_json("fleet", "posixtrace", "producers", (double)np, "posted", (double)np * ne,
	           "delivered", (double)sent, "lost", (double)lost, "worst_lost", (double)worst,
	           "failed", (double)failed, "s", secs, NULL);
	if (bt) {
		char cmd[1600];
		snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null | grep -c ' fleet_req: '", bt, out);
		FILE *p = popen(cmd, "r");
		unsigned long long k = 0;
		if (p && fscanf(p, "%llu", &k) == 1) {
			long long unacc = (long long)np * ne - (long long)k - (long long)lost;
			printf("  babeltrace2 counts  %llu fleet_req events in the relay's directory "
			       "(%d posted; %lld unaccounted)\n", k, np * ne, unacc);
			failed += unacc != 0;
		}
		if (p)
			pclose(p);
	}
	char why[512];
	lttng_reason(why, sizeof why, PT_BUILD_DIR "/bench-lttng/lttng_fleet");
	if (why[0]) {
		printf("LTTng-UST via lttng-consumerd to the same relay: not run: %s\n", why);
	} else {
		/* LTTng's default per-PID sub-buffers, then as much buffer per
		 * process as posixtrace's relay stream has (16 MiB: 2 CPUs x 4
		 * sub-buffers of 2 MiB here) */
		struct lt_run r[2] = { { .label = "default buffers", .args = "-t dflt" },
		                       { .label = "16 MiB per process", .args = "-t big" } };
		char big[64];
		long ncpu = sysconf(_SC_NPROCESSORS_CONF);
		snprintf(big, sizeof big, "-t big -S %ldk -N 4", 16384 / 4 / (ncpu > 0 ? ncpu : 1));
		r[1].args = big;
		int nr = 0;
		for (int k = 0; k < 2; k++) {
			failed += lttng_side(&r[k], np, ne, burst, c, d, out);
			nr += r[k].ok && nr == k;
		}
		if (nr)
			table(np, psent, plost, r, nr);
		for (int k = 0; k < 2; k++) {
			free(r[k].ev);
			free(r[k].disc);
		}
	}
	kill(rp, SIGTERM);
	waitpid(rp, NULL, 0);
	if (getenv("PT_KEEP")) {
		printf("kept: %s\n", dir);
	} else {
		char cmd[700];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return failed ? 1 : 0;
}
