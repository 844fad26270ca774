/*
 * helpers.c -- the helpers many tests share (see helpers.h), compiled
 * once and linked into every test.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include "helpers.h"
#include "../src/shm/layout.h" /* PT_SYS_IDS, defined again: the same or an error */
#include "../src/log/log.h"

_Noreturn static void t_die(const char *what)
{
	fprintf(stderr, "helpers: %s: %s\n", what, strerror(errno));
	exit(1);
}

int t_read_full(int fd, void *p, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

void t_write_full(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		t_die("write to a pipe or socket");
}

double t_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}


long t_proc_kb(const char *file, const char *key)
{
	char line[256];
	long kb = -1;
	size_t kl = strlen(key);
	FILE *f = fopen(file, "r");
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':')
			kb = strtol(line + kl + 1, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

long t_lib_maps_kb(pid_t pid)
{
	char p[64], line[512];
	long kb = 0;
	snprintf(p, sizeof p, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (strstr(line, "/memfd:posixtrace") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			kb += (long)((hi - lo) / 1024);
	}
	fclose(f);
	return kb;
}

long t_settled_kb(pid_t pid, const char *key)
{
	char file[64];
	long last = -1;
	int same = 0;

	snprintf(file, sizeof file, "/proc/%d/status", (int)pid);
	for (int i = 0; i < 200 && same < 2; i++) {
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
		long v = t_proc_kb(file, key);
		same = v == last ? same + 1 : 0;
		last = v;
	}
	return last;
}

uint32_t t_check32(uint32_t src, uint64_t seq, uint64_t noise)
{
	uint64_t h = (seq + 0x9e3779b97f4a7c15ull * (src + 1)) ^ (noise * 0xbf58476d1ce4e5b9ull);
	h ^= h >> 31;
	h *= 0x94d049bb133111ebull;
	return (uint32_t)(h ^ (h >> 29));
}

uint64_t t_check64(uint32_t pid, uint32_t thr, uint64_t seq)
{
	uint64_t h = (seq + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)pid << 20 ^ thr;
	h ^= h >> 29;
	return h * 0xbf58476d1ce4e5b9ull;
}

pid_t t_fork_piped(struct t_pipes *p)
{
	int c[2], r[2];
	if (pipe(c) != 0 || pipe(r) != 0)
		t_die("pipe");
	pid_t pid = fork();
	if (pid < 0)
		t_die("fork");
	close(pid == 0 ? c[1] : c[0]);
	close(pid == 0 ? r[0] : r[1]);
	*p = pid == 0 ? (struct t_pipes){ c[0], r[1] } : (struct t_pipes){ c[1], r[0] };
	return pid;
}

int t_listen_loopback(unsigned *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &l) != 0)
		t_die("a listening socket on 127.0.0.1");
	*port = ntohs(a.sin_port);
	return fd;
}

trace_id_t t_create_ok(pid_t pid, const trace_attr_t *attr)
{
	trace_id_t trid;
	int rc = posix_trace_create(pid, attr, &trid);
	if (rc != 0) {
		fprintf(stderr, "posix_trace_create(pid %d): %s%s\n", (int)pid, strerror(rc),
		        rc == ENOSYS ? " -- tracing another process is not implemented" : "");
		exit(1);
	}
	return trid;
}

trace_id_t t_own_started(int inherit, size_t size)
{
	trace_attr_t attr;
	trace_id_t trid;
	int rc;
	if ((rc = posix_trace_attr_init(&attr)) != 0 ||
	    (rc = posix_trace_attr_setinherited(&attr, inherit)) != 0 ||
	    (rc = posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL)) != 0 ||
	    (rc = posix_trace_attr_setstreamsize(&attr, size)) != 0 ||
	    (rc = posix_trace_create(0, &attr, &trid)) != 0 || (rc = posix_trace_start(trid)) != 0) {
		errno = rc;
		t_die("a stream of this process, started");
	}
	posix_trace_attr_destroy(&attr);
	return trid;
}

int t_type_named(trace_id_t trid, const char *name, trace_event_id_t *id)
{
	char nm[TRACE_EVENT_NAME_MAX + 1];
	trace_event_id_t e;
	int end = 0;

	while (posix_trace_eventtypelist_getnext_id(trid, &e, &end) == 0 && !end)
		if (posix_trace_eventid_get_name(trid, e, nm) == 0 && !strcmp(nm, name)) {
			*id = e;
			return 1;
		}
	return 0;
}

int t_log_entry(struct pt_logw *w, unsigned kind, int32_t pid, uint64_t ts, uint64_t base,
                uint64_t lo, uint64_t hi, unsigned flags, const char *path)
{
	struct pt_ext_obj o;

	memset(&o, 0, sizeof o);
	o.kind = (uint16_t)kind, o.pid = pid, o.ts = ts, o.base = base, o.lo = lo, o.hi = hi;
	o.flags = (uint8_t)flags;
	snprintf(o.path, sizeof o.path, "%s", path);
	return pt_logw_obj(w, &o);
}

int t_log_create(const char *path, struct pt_logw *w, unsigned max_data)
{
	struct pt_attr_img attr;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	memset(&attr, 0, sizeof attr);
	attr.max_data = max_data;
	if (fd < 0 || pt_logw_init(w, fd, &attr, POSIX_TRACE_APPEND, 0) != 0) {
		fprintf(stderr, "%s: cannot make the log\n", path);
		exit(1);
	}
	return fd;
}

int t_log_close(struct pt_logw *w, int fd)
{
	int rc = pt_logw_finish(w, NULL);
	pt_logw_free(w);
	close(fd);
	return rc;
}

int t_next(trace_id_t trid, struct posix_trace_event_info *ev, void *p, size_t cap, size_t *len)
{
	int un = -1, rc = posix_trace_trygetnext_event(trid, ev, p, cap, len, &un);
	if (rc != 0) {
		errno = rc;
		t_die("posix_trace_trygetnext_event");
	}
	return !un;
}

int t_drain(trace_id_t trid, void *buf, size_t cap, int max, t_drain_fn *fn, void *arg)
{
	struct posix_trace_event_info ev;
	size_t len = 0;
	int n = 0;

	for (; t_next(trid, &ev, buf, cap, &len); n++) {
		if (n >= max) {
			fprintf(stderr, "t_drain: more than %d events\n", max);
			exit(1);
		}
		fn(arg, n, &ev, buf, len);
	}
	return n;
}

static void keep_rec(void *arg, int i, const struct posix_trace_event_info *ev, const void *data,
                     size_t len)
{
	struct t_rec *r = (struct t_rec *)arg + i;
	r->id = ev->posix_event_id;
	r->pid = ev->posix_pid;
	r->thr = ev->posix_thread_id;
	r->len = len;
	memcpy(r->data, data, len);
}

int t_drain_recs(trace_id_t trid, struct t_rec *r, int max)
{
	unsigned char buf[T_REC_DATA];
	return t_drain(trid, buf, sizeof buf, max, keep_rec, r);
}

unsigned t_wit_sum(int pid, int thr, long long seq)
{
	return (unsigned)pid * 2654435761u ^ (unsigned)thr * 97u ^ (unsigned)seq * 40503u;
}

void t_wit_rec(trace_event_id_t id, int thr, long long seq)
{
	struct t_wit p = { getpid(), thr, seq, t_wit_sum(getpid(), thr, seq) };
	posix_trace_event(id, &p, sizeof p);
}

void t_wit_drain(trace_id_t trid, pid_t pid, struct t_tally *t)
{
	for (;;) {
		struct posix_trace_event_info ev;
		struct t_wit p;
		size_t len;
		if (!t_next(trid, &ev, &p, sizeof p, &len))
			return;
		if (ev.posix_event_id < PT_SYS_IDS) {
			t->sys++;
			continue;
		}
		if (ev.posix_pid != pid) {
			t->other++;
			continue;
		}
		if (len != sizeof p || p.pid != pid || p.thr < 0 || p.thr > 3 ||
		    p.sum != t_wit_sum(p.pid, p.thr, p.seq) || p.seq != t->next[p.thr]) {
			t->bad++;
			continue;
		}
		t->next[p.thr]++;
		t->n[p.thr]++;
	}
}

void t_nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static unsigned char *held_page;
static size_t held_page_sz;
static void (*held_hold)(void);

static void held_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	unsigned char *a = si->si_addr;
	if (!held_page || a < held_page || a >= held_page + held_page_sz) { /* a real crash */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	held_hold();
	mprotect(held_page, held_page_sz, PROT_READ | PROT_WRITE);
}

int t_held_init(void (*hold)(void))
{
	struct sigaction sa = { 0 };
	size_t sz = (size_t)sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	held_page = p;
	held_page_sz = sz;
	held_hold = hold;
	sa.sa_sigaction = held_fault;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGSEGV, &sa, NULL);
}

void *t_held_page(const void *v, size_t n)
{
	memcpy(held_page, v, n);
	return mprotect(held_page, held_page_sz, PROT_NONE) == 0 ? held_page : NULL;
}

void t_cost_setup(char *self, size_t cap)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(__clang__) || \
	!defined(__OPTIMIZE__) || !defined(__x86_64__)
	printf("SKIP: %s\n", "the budget is for the plain gcc -O2 build on x86-64");
	exit(77);
#endif
	if (system("valgrind --version >/dev/null 2>&1") != 0) {
		printf("SKIP: %s\n", "valgrind is not installed (apt-get install valgrind)");
		exit(77);
	}
	memset(self, 0, cap);
	if (readlink("/proc/self/exe", self, cap - 1) <= 0)
		t_die("readlink /proc/self/exe");
}

pid_t t_callgrind_spawn(const char *out, const char *const *args)
{
	char of[256];
	const char *argv[32];
	int n = 0;

	snprintf(of, sizeof of, "--callgrind-out-file=%s", out);
	argv[n++] = "valgrind";
	argv[n++] = "--tool=callgrind";
	argv[n++] = of;
	for (; *args; args++) {
		if (n == 31)
			t_die("t_callgrind_spawn: too many arguments");
		argv[n++] = *args;
	}
	argv[n] = NULL;
	fflush(NULL);
	pid_t p = fork();
	if (p < 0)
		t_die("fork");
	if (p == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execvp("valgrind", (char *const *)argv);
		_exit(127);
	}
	return p;
}

int t_callgrind_totals(const char *label, const char *out, int n, const char *const *names,
                       double *v)
{
	FILE *f = fopen(out, "r");
	if (!f) {
		fprintf(stderr, "%s: no callgrind output %s\n", label, out);
		return -1;
	}
	char line[4096], events[4096] = "";
	double tot[16] = { 0 };
	int nt = 0;
	while (fgets(line, sizeof line, f)) {
		if (!strncmp(line, "events:", 7)) {
			snprintf(events, sizeof events, "%s", line + 7);
		} else if (!strncmp(line, "totals:", 7) || !strncmp(line, "summary:", 8)) {
			char *s = strchr(line, ':') + 1;
			nt = 0;
			for (char *e; nt < 16; s = e) {
				double x = strtod(s, &e);
				if (e == s)
					break;
				tot[nt++] = x;
			}
		}
	}
	fclose(f);
	if (!getenv("PT_KEEP"))
		unlink(out);
	for (int i = 0; i < n; i++)
		v[i] = -1;
	char *save = NULL;
	int k = 0;
	for (char *tok = strtok_r(events, " \t\n", &save); tok && k < nt;
	     tok = strtok_r(NULL, " \t\n", &save), k++)
		for (int i = 0; i < n; i++)
			if (!strcmp(tok, names[i]))
				v[i] = tot[k];
	for (int i = 0; i < n; i++) {
		if (v[i] < 0) {
			fprintf(stderr, "%s: no %s total in the callgrind output\n", label, names[i]);
			return -1;
		}
	}
	return 0;
}
