/*
 * view.c -- `posixtrace view LOG`: a local web server (libmicrohttpd)
 * that shows the trace in a browser, from the overview of all of it down
 * to each event, answering the page's queries from an index of the log
 * (vindex.c, vquery.c) and the log's own block index.
 *
 * It listens on 127.0.0.1 only (or on a Unix socket of the user's, --unix),
 * takes connections only from processes of its own user (view_peer.c),
 * and answers only requests that carry the random token of the URL it
 * prints and a Host header naming that address or localhost with its port
 * (view_req.c; docs/security.md).  --open gives the browser a private
 * file that leads to that URL, never the URL itself: a command line is
 * readable by every user (/proc/PID/cmdline).
 * Requests are served one at a time by the library's one thread: the
 * log, read through one tlog, is never read by two at once.
 *
 * Built without libmicrohttpd (MHD=0, or pkg-config does not find it),
 * the command says so and exits 1.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"

static const char help[] =
"usage: posixtrace view [OPTIONS] LOG...\n"
"\n"
"LOG: a log file; or a directory, whose *.ptlog files (the parts of one\n"
"recording, as record --rotate cuts it) are read as one trace, in the\n"
"order of their first events; or several logs, read the same way.\n"
"\n"
"Show a trace in a web browser: a local server whose page draws a lane per\n"
"thread, grouped by process, from the whole trace down to single events.\n"
"It prints the page's URL (with a random token: keep it to yourself) and\n"
"serves until interrupted (Ctrl-C).  An index of the log is built in one\n"
"pass and kept in $XDG_CACHE_HOME/posixtrace (else ~/.cache/posixtrace,\n"
"a private directory) for the next start of the same file; each start\n"
"removes the entries of logs that are gone or changed, those unused for\n"
"30 days, and the least recently used beyond 256 MiB in all\n"
"(POSIXTRACE_VIEW_CACHE_MAX).\n"
"\n"
"In the page: W/S or the mouse wheel zoom, A/D or dragging pan, a click\n"
"on an event shows its details; types, processes and threads can be\n"
"hidden, and a time typed in 'jump to' is shown and its event picked.\n"
"Spans (a begin event and its end) show under their thread's events as a\n"
"flame chart, a row per nesting depth, at every zoom; a span ended on\n"
"another thread has an arrow from its begin to its end.\n"
"\n"
"options:\n"
"  -p, --port N     listen on 127.0.0.1 port N (default: a free port)\n"
"      --unix PATH  listen on a new Unix socket at PATH instead (mode 0600;\n"
"                   for a client such as curl --unix-socket, or a proxy)\n"
"      --open       open the page in a browser ($BROWSER, else xdg-open),\n"
"                   through a private file that leads to the URL\n"
"      --no-cache   build the index again, and do not keep it\n"
"  -h, --help       this text\n"
"With the filters below, the page holds only the events they keep (its\n"
"index is then built for them, and not kept).\n";

/* The whole help, the same in a build without libmicrohttpd (which says
 * so at its end): every option the command takes when it can serve. */
static void view_help(void)
{
	fputs(help, stdout);
	fputs(filter_help, stdout);
	fputs(spans_help, stdout);
	front_help(stdout, 24, 1);
#ifndef PT_HAVE_MHD
	fputs("\nThis posixtrace was built without libmicrohttpd: it cannot serve the page\n"
	      "(Debian: libmicrohttpd-dev; then rebuild).\n", stdout);
#endif
}

#ifndef PT_HAVE_MHD
int cmd_view(int argc, char **argv, const struct tlog_front *front)
{
	(void)front;
	if (want_help(argc, argv)) {
		view_help();
		return 0;
	}
	err_msg("this posixtrace was built without libmicrohttpd, which 'view' needs "
	        "(Debian: libmicrohttpd-dev; then rebuild); 'export --format html' "
	        "writes a page without a server");
	return 1;
}
#else
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/un.h>

#if MHD_VERSION < 0x00097002
typedef int MHD_RESULT;
#else
typedef enum MHD_Result MHD_RESULT;
#endif

struct server {
	struct vsrv q;
	unsigned port;                  /* 0: on a Unix socket */
	struct sockaddr_in addr;        /* where it listens (TCP) */
	char token[VIEW_TOKEN_LEN + 1];
};

/* libmicrohttpd's accept policy: a TCP connection from a process of
 * another user is closed at once, before anything is read from it, so
 * that no other user can hold the server's connections (the library's
 * timeout is one of idleness: a header line every few seconds keeps a
 * connection; and its limit per address counts every local user as
 * one, 127.0.0.1).  On a Unix socket only the user can connect. */
static MHD_RESULT accept_peer(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct server *s = cls;
	uid_t u;

	if (!s->port)
		return MHD_YES;
	return view_peer_uid(addr, len, (const struct sockaddr *)&s->addr, &u) == 0 &&
	               u == geteuid()
	           ? MHD_YES
	           : MHD_NO;
}

static const char *mhd_arg(void *ctx, const char *key)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

static MHD_RESULT reply(struct MHD_Connection *c, unsigned status, const char *type, void *body,
                        size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "Content-Security-Policy",
	                        "default-src 'none'; script-src 'unsafe-inline'; "
	                        "style-src 'unsafe-inline'; connect-src 'self'; "
	                        "frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
	MHD_RESULT ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static MHD_RESULT refuse(struct MHD_Connection *c, unsigned status)
{
	const char *what = status == 403 ? "403 forbidden (token or Host)\n"
	                 : status == 404 ? "404 not found\n"
	                 : status == 405 ? "405 method not allowed\n"
	                 : status == 413 ? "413 no request body taken\n"
	                 : status == 400 ? "400 bad request\n" : "500 the log could not be read\n";
	return reply(c, status, "text/plain; charset=utf-8", (void *)what, strlen(what),
	             MHD_RESPMEM_PERSISTENT);
}

static MHD_RESULT handle(void *cls, struct MHD_Connection *c, const char *url,
                         const char *method, const char *version, const char *upload,
                         size_t *upload_size, void **con_cls)
{
	static int first_call, had_body;
	struct server *s = cls;
	struct vreq r;
	(void)version;
	(void)upload;

	if (*con_cls == NULL) { /* headers only: wait for any body */
		*con_cls = &first_call;
		return MHD_YES;
	}
	if (*upload_size) { /* no request takes a body: read and refuse it */
		*upload_size = 0;
		*con_cls = &had_body;
		return MHD_YES;
	}
	if (*con_cls == &had_body)
		return refuse(c, 413);
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	int st = view_route(method, url, host, s->port, s->token, mhd_arg, c, &r);
	if (st)
		return refuse(c, (unsigned)st);
	if (r.route == VR_PAGE)
		return reply(c, 200, "text/html; charset=utf-8", (void *)view_page, strlen(view_page),
		             MHD_RESPMEM_PERSISTENT);
	struct vbuf b = { 0 };
	st = vq_answer(&s->q, &r, &b);
	if (st || b.oom) {
		free(b.p);
		return refuse(c, st ? (unsigned)st : 500);
	}
	return reply(c, 200, "application/json", b.p, b.n, MHD_RESPMEM_MUST_FREE);
}

/* The log opened for reading events in a thread of its own, while the
 * server already answers from the index and the summary. */
struct opener {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int state;                /* 0 opening, 1 open, -1 failed (said) */
	int started;
	struct tlog l;            /* the opener's until state is set */
	const char *path;
	const struct tlog_front *front;
};

static void *open_log(void *arg)
{
	struct opener *o = arg;
	int rc = tlog_load_as(&o->l, o->path, o->front);

	pthread_mutex_lock(&o->mu);
	o->state = rc ? -1 : 1;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

/* vsrv.reader: the log once opened (a query that needs events waits). */
static struct tlog *opened_log(struct vsrv *q)
{
	struct opener *o = q->ctx;

	pthread_mutex_lock(&o->mu);
	while (o->state == 0)
		pthread_cond_wait(&o->cv, &o->mu);
	struct tlog *l = o->state > 0 ? &o->l : NULL;
	pthread_mutex_unlock(&o->mu);
	return l;
}

/* --open: a page that sends the browser on to url, in a new directory
 * of the user's (mode 0700, in $XDG_RUNTIME_DIR when that is the user's
 * private directory, else in /tmp), itself 0600; the browser is given
 * its file:// name, which holds no secret.  dir gets the directory (for
 * removing it at the end), "" if none was made. */
static void open_browser(const char *url, char *dir, size_t cap)
{
	const char *rt = getenv("XDG_RUNTIME_DIR"), *b = getenv("BROWSER");
	struct stat sb;
	char page[1024], furl[PATH_MAX * 3 + 16];
	int n;

	dir[0] = 0;
	if (!(rt && rt[0] == '/' && stat(rt, &sb) == 0 && S_ISDIR(sb.st_mode) &&
	      sb.st_uid == geteuid() && !(sb.st_mode & 077)))
		rt = "/tmp";
	if ((n = snprintf(dir, cap, "%s/posixtrace-view-XXXXXX", rt)) < 0 || (size_t)n >= cap ||
	    !mkdtemp(dir)) {
		err_msg("--open: cannot make a private directory in %s: %s", rt, strerror(errno));
		dir[0] = 0;
		return;
	}
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int fd = d < 0 ? -1 : openat(d, "open.html", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	                                             O_CLOEXEC, 0600);
	n = snprintf(page, sizeof page,
	             "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
	             "<meta name=\"referrer\" content=\"no-referrer\">"
	             "<meta http-equiv=\"refresh\" content=\"0;url=%s\">"
	             "<title>posixtrace view</title></head>\n"
	             "<body><p><a href=\"%s\">the trace</a></p></body></html>\n", url, url);
	if (fd < 0 || write(fd, page, (size_t)n) != n || close(fd) != 0) {
		err_msg("--open: cannot write %s/open.html: %s", dir, strerror(errno));
		if (d >= 0)
			close(d);
		return;
	}
	close(d);
	/* file://DIR/open.html, the directory's bytes escaped where a URL
	 * needs it */
	size_t k = (size_t)snprintf(furl, sizeof furl, "file://");
	for (const char *p = dir; *p && k + 4 < sizeof furl; p++) {
		unsigned char c = (unsigned char)*p;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("/._-~", c))
			furl[k++] = (char)c;
		else
			k += (size_t)snprintf(furl + k, sizeof furl - k, "%%%02X", c);
	}
	snprintf(furl + k, sizeof furl - k, "/open.html");
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (b && b[0])
			execlp(b, b, furl, (char *)NULL);
		execlp("xdg-open", "xdg-open", furl, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		err_msg("--open: cannot start a browser: %s", strerror(errno));
}

/* The directory open_browser() made, and its file. */
static void open_done(const char *dir)
{
	if (!dir[0])
		return;
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d >= 0) {
		unlinkat(d, "open.html", 0);
		close(d);
	}
	rmdir(dir);
}

/* --unix: a new socket at path, 0600 from the start (bound under umask
 * 077), listening; -1 after a message. */
static int unix_listen(const char *path)
{
	struct sockaddr_un su = { .sun_family = AF_UNIX };

	if (strlen(path) >= sizeof su.sun_path) {
		err_msg("--unix: '%s' is longer than a socket's path may be (%zu bytes)", path,
		        sizeof su.sun_path - 1);
		return -1;
	}
	memcpy(su.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	mode_t old = umask(077);
	int rc = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&su, sizeof su);
	int e = errno;
	umask(old);
	if (rc == 0) /* (0700 as made: the x bit means nothing on a socket) */
		(void)chmod(path, 0600);
	if (rc != 0 || listen(fd, 64) != 0) {
		err_msg("--unix: cannot listen on %s: %s", path,
		        strerror(rc != 0 ? e : errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

enum { O_OPEN = 256, O_NOCACHE, O_SPAN, O_UNIX };
static const struct option lopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "port", required_argument, NULL, 'p' },
	{ "unix", required_argument, NULL, O_UNIX },
	{ "open", no_argument, NULL, O_OPEN },
	{ "no-cache", no_argument, NULL, O_NOCACHE },
	{ "span", required_argument, NULL, O_SPAN },
	FILTER_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

/* With filters, the trace the page shows is the events they keep: its
 * counts (per type, thread and process, which /meta gives) are counted in
 * a pass of their own, then the log is read from its start again.  0, or
 * 1 after a message. */
static int filtered_totals(struct tlog *l)
{
	uint64_t *tc = calloc(PT_NIDS, sizeof *tc), *thc = calloc(l->nth + 1, sizeof *thc), n = 0;
	struct tev e;
	int r;

	if (!tc || !thc) {
		free(tc);
		free(thc);
		err_msg("out of memory");
		return 1;
	}
	while ((r = tlog_next(l, &e)) > 0) {
		n++;
		tc[e.id]++;
		thc[e.thread < l->nth ? e.thread : l->nth]++;
	}
	if (r == 0 && tlog_rewind(l))
		r = -1;
	if (r == 0) {
		memcpy(l->count, tc, PT_NIDS * sizeof *tc);
		l->nev = n;
		for (size_t p = 0; p < l->npr; p++) /* (each thread to its process: */
			l->pr[p].count = 0;             /* processes may share a pid) */
		for (size_t i = 0; i < l->nth; i++) {
			const struct tthread *t = &l->th[i];
			size_t p = t->proc;
			if (p >= l->npr || l->pr[p].pid != t->pid || l->pr[p].born != t->born) {
				const struct tproc *q = tlog_proc(l, t->pid, t->born); /* (new since) */
				p = q ? (size_t)(q - l->pr) : l->npr;
			}
			if (p < l->npr)
				l->pr[p].count += thc[i];
		}
		for (size_t i = 0; i < l->nth; i++)
			l->th[i].count = thc[i];
	}
	free(tc);
	free(thc);
	return r != 0;
}

/* What the command line asks; the filter and the spans' arguments are
 * the server's until it ends. */
struct view_opts {
	int open_it, cache, port_given;
	uint64_t port;
	const char *unix_path, *path;
	struct evfilter *filt;
	struct span_args *spa;
	const struct tlog_front *front; /* --all, --t0 */
};

/* The options into o; -1 to go on, else the exit status. */
static int view_options(int argc, char **argv, struct view_opts *o)
{
	struct spans *sp;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hp:", lopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			view_help();
			return 0;
		case FILT_PID: case FILT_THREAD: case FILT_TID: case FILT_NAME: case FILT_TYPE:
		case FILT_EXCLUDE: case FILT_WHERE:
			if ((c = filter_option(o->filt, c, optarg)) != 0)
				return c;
			o->cache = VIX_CACHE_NONE; /* (an index of the events kept: not the file's) */
			break;
		case 'p':
			if (view_parse_u64(optarg, &o->port) || o->port > 65535)
				return usage_error("--port: '%s' is not a port number (0-65535)", optarg);
			o->port_given = 1;
			break;
		case O_UNIX: o->unix_path = optarg; break;
		case O_OPEN: o->open_it = 1; break;
		case O_NOCACHE: o->cache = VIX_CACHE_NONE; break;
		case O_SPAN:
			if (span_arg(o->spa, optarg))
				return EXIT_USAGE;
			break;
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("which log? give a FILE (or a directory of parts, or several logs)");
	o->path = tlog_operands(argc - optind, argv + optind);
	if (o->unix_path && (o->port_given || o->open_it))
		return usage_error("--unix: a Unix socket has no port, and no browser reaches it "
		                   "(not with --port or --open)");
	if (o->unix_path && !o->unix_path[0])
		return usage_error("--unix: give a PATH");
	if ((c = spans_make(o->spa, &sp)) != 0) /* (each query makes its own: checked here) */
		return c;
	spans_free(sp);
	return -1;
}

/* The page's token: random, in hex.  0, or 1 after a message. */
static int make_token(char *token)
{
	unsigned char rnd[VIEW_TOKEN_LEN / 2];

	for (size_t got = 0; got < sizeof rnd;) {
		ssize_t n = getrandom(rnd + got, sizeof rnd - got, 0);
		if (n < 0 && errno != EINTR) {
			err_msg("cannot make a token (getrandom): %s", strerror(errno));
			return 1;
		}
		got += n > 0 ? (size_t)n : 0;
	}
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(token + 2 * i, 3, "%02x", rnd[i]);
	return 0;
}

/* The log opened and read (with filters: its counts those of the events
 * kept, time 0 pinned to the whole trace's), and its index made or taken
 * from the cache.  0, or 1 after a message (nothing left open). */
static int view_read(const struct view_opts *o, struct tlog *l, struct vindex *x)
{
	struct evfilter *filt = o->filt;

	if (tlog_load_as(l, o->path, o->front))
		return 1;
	if (filt->on && filter_check(filt, l)) {
		tlog_free(l);
		return 1;
	}
	if (filt->on) /* the counts, the index, then every query: of the events kept */
		l->filter = filt;
	/* (time 0 stays the whole trace's, as show has it: pinned first) */
	uint64_t t0_all;
	if (filt->on && tlog_t0(l, &t0_all)) {
		tlog_free(l);
		return 1;
	}
	if (filt->on) {
		l->front.t0.kind = T0_TIME;
		l->front.t0.w.absolute = 1;
		l->front.t0.w.ns = t0_all;
	}
	if (filt->on && filtered_totals(l)) {
		tlog_free(l);
		return 1;
	}
	if (vindex_get(x, l, o->cache, o->spa)) {
		tlog_free(l);
		return 1;
	}
	return 0;
}

/* The log and its index, ready to serve.  With the index in the cache
 * and the totals in the log's summary, the page is served at once
 * (*fast): the log itself is opened (a pass that checks every block) in
 * the background, for the first query that needs events.  0, or 1 after
 * a message (nothing left open). */
static int view_load(const struct view_opts *o, struct tlog *l, struct vindex *x, int *fast)
{
	struct spans *sp;
	uint64_t t0;
	int c;

	*fast = 0;
	if (o->cache != VIX_CACHE_NONE && vindex_cached(x, o->path, o->spa) == 0) {
		if (tlog_totals_as(l, o->path, o->front)) {
			vindex_free(x);
			return 1;
		}
		*fast = l->summary; /* (else tlog_totals read the log: it is open) */
	} else if (view_read(o, l, x)) {
		return 1;
	}
	if ((c = spans_make(o->spa, &sp)) == 0) {
		c = spans_check(sp, l);
		spans_free(sp);
	}
	if (c) {
		vindex_free(x);
		tlog_free(l);
		return 1;
	}
	if (o->cache != VIX_CACHE_NONE)
		vindex_sweep(x); /* stale, old and least recently used entries out */
	tlog_warn(l);
	if (tlog_t0(l, &t0)) { /* (checked here: /meta asks again) */
		vindex_free(x);
		tlog_free(l);
		return 1;
	}
	return 0;
}

/* The listening socket: o->unix_path, else 127.0.0.1 at o->port, bound
 * here so that its port is known before the server's thread starts (it
 * reads s->port).  The socket, or -1 after a message (nothing left open). */
static int view_listen(const struct view_opts *o, struct server *s)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o->port) };
	socklen_t salen = sizeof sa;
	int fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (o->unix_path)
		return unix_listen(o->unix_path);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &salen) != 0) {
		err_msg("cannot listen on 127.0.0.1 port %u: %s", (unsigned)o->port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	s->port = ntohs(sa.sin_port);
	s->addr = sa;
	return fd;
}

/* The web server on fd until a signal of set: its address said (and the
 * browser opened with --open).  0, or 1 after a message (fd closed). */
static int view_serve(const struct view_opts *o, struct server *s, int fd, const sigset_t *set,
                      const struct tlog *l, const struct vindex *x)
{
	struct MHD_Daemon *d;
	char url[128], odir[PATH_MAX] = "";
	int sig;

	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, accept_peer, s, handle, s,
	                     MHD_OPTION_LISTEN_SOCKET, fd,
	                     MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
	                     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
	                     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536,
	                     MHD_OPTION_END);
	if (!d) {
		if (o->unix_path)
			err_msg("cannot start the web server on %s", o->unix_path);
		else
			err_msg("cannot start the web server on 127.0.0.1 port %u", s->port);
		close(fd); /* (MHD_stop_daemon closes the one it was given) */
		return 1;
	}
	if (o->unix_path) {
		snprintf(url, sizeof url, "http://localhost/?t=%s", s->token);
		printf("%s: %llu events%s; the page is on the Unix socket %s at\n  %s\n"
		       "(Ctrl-C ends it)\n", l->path, (unsigned long long)x->nev,
		       x->from_cache ? ", index from the cache" : "", o->unix_path, url);
	} else {
		snprintf(url, sizeof url, "http://127.0.0.1:%u/?t=%s", s->port, s->token);
		printf("%s: %llu events%s; the page is at\n  %s\n(Ctrl-C ends it)\n", l->path,
		       (unsigned long long)x->nev, x->from_cache ? ", index from the cache" : "", url);
	}
	fflush(stdout);
	if (o->open_it)
		open_browser(url, odir, sizeof odir);
	while (sigwait(set, &sig) != 0)
		;
	MHD_stop_daemon(d);
	open_done(odir);
	return 0;
}

int cmd_view(int argc, char **argv, const struct tlog_front *front)
{
	static struct evfilter filt; /* (the server's, until it ends) */
	static struct span_args spa; /* (the server's, until it ends) */
	static struct server s;
	static struct opener op = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	struct view_opts o = { .cache = VIX_CACHE_WRITE, .filt = &filt, .spa = &spa, .front = front };
	struct tlog l;
	struct vindex x;
	int c, fast, rc = 1;

	if ((c = view_options(argc, argv, &o)) >= 0)
		return c;
	if (make_token(s.token) || view_load(&o, &l, &x, &fast))
		return 1;
	struct symz *z = symz_open(&l, o.path, 0);
	vq_init(&s.q, &l, &x, z);
	s.q.span_args = &spa;

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* (the server's thread inherits it) */
	signal(SIGPIPE, SIG_IGN);
	if (fast) {
		op.path = o.path;
		op.front = front;
		if (pthread_create(&op.th, NULL, open_log, &op) != 0)
			op.state = -1, err_msg("%s: cannot start a thread to open it", op.path);
		else
			op.started = 1;
		s.q.reader = opened_log;
		s.q.ctx = &op;
	}
	int fd = view_listen(&o, &s);
	if (fd >= 0) {
		rc = view_serve(&o, &s, fd, &set, &l, &x);
		if (o.unix_path)
			unlink(o.unix_path);
	}
	if (op.started) {
		pthread_join(op.th, NULL);
		if (op.state > 0)
			tlog_free(&op.l);
	}
	vq_free(&s.q);
	if (z)
		symz_close(z);
	vindex_free(&x);
	tlog_free(&l);
	return rc;
}
#endif
