/*
 * relay.c -- `record --relayd URL`: the traced process's events, live, to
 * LTTng's relay daemon as a CTF trace (docs/relayd.md).
 *
 * The source is a second stream on the traced process, made with
 * posix_trace_create() (no log, stream-full policy LOOP) and read here by
 * one thread with posix_trace_timedgetnext_event().  The local log, when
 * there is one (-o), is another stream with its own flusher: what the
 * relay path loses is its own, the log never waits for the network, and
 * the program never waits for either (the library drops and counts what
 * a full stream cannot take).
 *
 * The thread puts events into CTF packets (relay_ctf.c), about 64 KiB or
 * what came in 100 ms, whichever is first, and sends each on the data
 * connection, then its index on the control connection (relayd_proto.c).
 * A packet counts as delivered when the relay acknowledges its index.
 *
 * What the relay never gets is counted, exactly, and told to it as CTF
 * discarded events (events_discarded in the packet context, counted from
 * the trace's start):
 *   - events read while there is no connection (the relay is down, or
 *     stalled past the timeout and dropped);
 *   - events in packets the relay had not acknowledged when the
 *     connection broke;
 *   - events the relay stream itself lost (the thread fell behind): the
 *     library's count at each POSIX_TRACE_RESUME, and its total at the end.
 * When the connection breaks, the thread tries again every RETRY_MS (up to
 * RETRY_MAX_MS); a new connection is a new session on the relay with the
 * same name, its trace in a new directory (pid-PID-N for the N-th
 * connection), whose first packets carry the count of what was missed.
 * The relay's addresses are looked up when the command starts, before the
 * program is (a name's lookup is not the relay's to bound), and again at
 * each later connection, in the thread.
 * Every exchange with the relay has a total deadline, whatever the relay
 * sends or how slowly (a byte at a time is no more time): opening a
 * session, connections included, STALL_MS in all (the first one is made
 * before the program runs: it starts at most that late); a packet's send,
 * a reply, the acknowledgements awaited, STALL_MS each; a packet not
 * acknowledged within STALL_MS ends the connection.  A relay that stops
 * reading or drips its replies costs the thread that long at most, never
 * the program.  At the end, what is left goes within STALL_MS of the
 * program's end (an exchange under way then ends by then too, having
 * begun before; what misses it is counted as not delivered), and the
 * session's end (its streams rotated, then closed) within STALL_MS more.
 * The session stays open LINGER_MS after the last packet (a reader
 * attaching then still finds it), and ends as LTTng ends one: its streams
 * rotated out of their trace chunk, then closed, so that a live reader
 * still behind reads every packet before it is told the stream hung up
 * (relay_finish).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "write.h"

#define FLUSH_MS 100                   /* a packet at least this often */
#define PACKET_BYTES 65536
#define STALL_MS 2000                  /* a send or a reply that takes longer: broken */
#define STR_(x) #x
#define STR(x) STR_(x)
#define RETRY_MS 200
#define RETRY_MAX_MS 2000
#define INFLIGHT 64                    /* packets sent, not yet acknowledged */
#define RELAY_STREAM_SIZE (16u << 20)
#define DATA_CHANNEL "channel0_0"
#define LINGER_MS 1000                 /* the session stays open after the last packet */
#define HOLD_MS 100                    /* events wait this long to be put in time order */
#define HOLD_BYTES_MAX (32u << 20)

/* An event held for ordering; its payload at off in the arena. */
struct pev { uint64_t ts, seq, tid, addr, off; uint32_t len; int32_t pid; uint16_t id; };

struct relay {
	struct relay_opts o;
	char session[RELAYD_NAME_MAX + 1], host[RELAYD_HOSTNAME_MAX + 1];
	int name_has_time;
	uint64_t start_ns, creation_s, sess_id;
	unsigned char sess_uuid[16];
	pid_t pid;
	/* the connection; ctrl < 0: none */
	int ctrl, data;
	unsigned conns;                /* connections made */
	uint64_t meta, stream, seq;    /* relay handles, next packet number */
	struct rctf ctf;
	int ctf_ok;
	char dir[RP_PATH_MAX + 1];     /* the session's directory on the relay */
	char first_dir[RP_PATH_MAX + 1];
	unsigned char rbuf[16 + RP_PATH_MAX];
	/* packets sent and not acknowledged: their events and discarded count */
	uint64_t infl_ev[INFLIGHT], infl_disc[INFLIGHT], infl_ns[INFLIGHT];
	unsigned ihead, inum;
	/* losses (see the top) */
	uint64_t lost_down, lost_unacked, lost_stream, lost_oom;
	uint64_t base;                 /* of the lost count, what earlier traces reported */
	uint64_t acked_disc;           /* the discarded count of this trace's last acked packet */
	int sent_any;                  /* this trace has a packet */
	uint64_t last_disc;            /* the discarded count of its last packet sent */
	uint64_t events, delivered, packets;
	/* events held to be sent in time order (the stream gives them in the
	 * program's order, which a late commit makes differ by a little) */
	struct pev *pv;
	size_t npv, cpv;
	unsigned char *arena;
	size_t na, ca;
	uint64_t pseq, last_ts, late;
	uint64_t last_flush_ns, next_try_ns, retry_ms, last_packet_ns;
	uint64_t down_since_lost;      /* lost count when the connection broke */
	int said_down;
	/* the thread */
	trace_id_t trid;
	int have_trid, thread_on;
	pthread_t th;
	atomic_int stop;
	_Atomic uint64_t end_by;       /* no exchange lasts past it (0: none) */
	/* the relay's addresses found by relay_open() (before the program is
	 * started), for the first connection; later ones look them up again */
	struct addrinfo *ai[2];
	int ai_taken;
	char ai_why[300];
};

static uint64_t lost_total(const struct relay *r)
{
	return r->lost_down + r->lost_unacked + r->lost_stream + r->lost_oom;
}

/* ------------------------------------------------------------ sockets */

/* The deadline of an exchange starting now: STALL_MS, or the end's. */
static uint64_t deadline(struct relay *r)
{
	uint64_t d = now_mono_ns() + STALL_MS * 1000000ull, e = atomic_load(&r->end_by);
	return e && e < d ? e : d;
}

/* Milliseconds left before until (rounded up), 0 if none. */
static int left_ms(uint64_t until)
{
	uint64_t now = now_mono_ns();
	return now >= until ? 0 : (int)((until - now + 999999) / 1000000);
}

/* Wait for fd to be ready for ev before until: 1, 0 (time is up) or -1. */
static int wait_fd(int fd, short ev, uint64_t until)
{
	for (;;) {
		struct pollfd p = { fd, ev, 0 };
		int ms = left_ms(until), rc = ms ? poll(&p, 1, ms) : 0;
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc > 0 || rc < 0)
			return rc > 0 ? 1 : -1;
		if (!left_ms(until))
			return 0;
	}
}

/* The addresses of host, port; 0 or -1 with the reason in why. */
static int resolve(const char *host, unsigned port, struct addrinfo **ai, char *why, size_t cap)
{
	struct addrinfo hints;
	char ps[8];
	int rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ps, sizeof ps, "%u", port);
	*ai = NULL;
	if ((rc = getaddrinfo(host, ps, &hints, ai)) != 0) {
		snprintf(why, cap, "%s: %s", host, gai_strerror(rc));
		*ai = NULL;
		return -1;
	}
	return 0;
}

/* A TCP connection to one of ai before until; -1 with the reason in why.
 * It stays non-blocking: every wait on it is bounded by a deadline
 * (wait_fd). */
static int dial(struct addrinfo *ai, unsigned port, uint64_t until, char *why, size_t cap)
{
	int fd = -1, rc, e = 0;

	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		e = errno;
		if (e == EINPROGRESS) {
			socklen_t sl = sizeof e;
			rc = wait_fd(fd, POLLOUT, until);
			if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) == 0 && e == 0)
				break;
			if (rc == 0)
				e = ETIMEDOUT;
		}
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		snprintf(why, cap, "port %u: %s", port, strerror(e ? e : ECONNREFUSED));
		return -1;
	}
	int one = 1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one)) {
		snprintf(why, cap, "port %u: %s", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* All of n bytes in iov, before until; 0 or -1 (why). */
static int send_all(int fd, struct iovec *iov, int cnt, uint64_t until, char *why, size_t cap)
{
	while (cnt > 0) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)cnt };
		ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int rc = wait_fd(fd, POLLOUT, until);
			if (rc > 0)
				continue;
			if (rc == 0) {
				snprintf(why, cap, "it stopped reading (a send took over %d ms)", STALL_MS);
				return -1;
			}
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(why, cap, "%s", strerror(errno));
			return -1;
		}
		while (cnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

static int send_ctrl(struct relay *r, struct rp_buf *b, uint64_t until, char *why, size_t cap)
{
	if (b->oom) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	struct iovec v = { b->p, b->n };
	int rc = send_all(r->ctrl, &v, 1, until, why, cap);
	b->n = 0;
	return rc;
}

/* The reply to cmd, all of it before until however it comes: RP_OK, or
 * -1 with why.  wait 0: only if it has begun to come (else 1). */
static int get_reply(struct relay *r, uint32_t cmd, struct rp_reply *rep, int wait,
                     uint64_t until, char *why, size_t cap)
{
	size_t have = 0, need = 0;
	char pw[200];

	for (;;) {
		int rc = rp_parse_reply(cmd, r->rbuf, have, rep, &need, pw, sizeof pw);
		if (rc == RP_OK)
			break;
		if (rc == RP_BAD) {
			snprintf(why, cap, "a bad reply to %s: %s", rp_cmd_name(cmd), pw);
			return -1;
		}
		if (need > sizeof r->rbuf) { /* cannot be: the parser bounds it */
			snprintf(why, cap, "a reply too long");
			return -1;
		}
		ssize_t n = recv(r->ctrl, r->rbuf + have, need - have, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!wait && !have)
				return 1;
			int w = wait_fd(r->ctrl, POLLIN, until);
			if (w > 0)
				continue;
			if (w == 0) {
				snprintf(why, cap, "no %sreply to %s within %d ms", have ? "whole " : "",
				         rp_cmd_name(cmd), STALL_MS);
				return -1;
			}
			snprintf(why, cap, "%s", strerror(errno));
			return -1;
		}
		if (n <= 0) {
			snprintf(why, cap, "%s", n == 0 ? "it closed the connection" : strerror(errno));
			return -1;
		}
		have += (size_t)n;
	}
	if (rep->code != RELAYD_OK) {
		snprintf(why, cap, "it refused %s (lttng error code %u)", rp_cmd_name(cmd), rep->code);
		return -1;
	}
	return 0;
}

/* One command and its reply, before until. */
static int call(struct relay *r, struct rp_buf *b, uint32_t cmd, struct rp_reply *rep,
                uint64_t until, char *why, size_t cap)
{
	if (send_ctrl(r, b, until, why, cap))
		return -1;
	return get_reply(r, cmd, rep, 1, until, why, cap);
}

/* ---------------------------------------------------------- a session */

static void hangup(struct relay *r)
{
	if (r->ctrl >= 0)
		close(r->ctrl);
	if (r->data >= 0)
		close(r->data);
	r->ctrl = r->data = -1;
	/* what was not acknowledged is lost; what this trace reported stays */
	while (r->inum) {
		r->lost_unacked += r->infl_ev[r->ihead];
		r->ihead = (r->ihead + 1) % INFLIGHT;
		r->inum--;
	}
	r->base += r->acked_disc;
	r->acked_disc = 0;
	if (r->ctf_ok)
		rctf_free(&r->ctf);
	r->ctf_ok = 0;
}

static int send_metadata(struct relay *r, const char *text, size_t len, uint64_t until,
                         char *why, size_t cap)
{
	struct rp_buf b = { 0 };
	size_t pl;
	unsigned char *pk = rctf_metadata_packets(&r->ctf, text, len, &pl);
	if (!pk) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	rp_metadata(&b, r->meta, pk, pl);
	free(pk);
	int rc = send_ctrl(r, &b, until, why, cap); /* no reply */
	rp_free(&b);
	return rc;
}

/* Connect to ai (control, data), check the version, open the session, its
 * trace chunk and its two streams, send the metadata's head, all within
 * STALL_MS.  0, or -1 with why. */
static int session(struct relay *r, struct addrinfo *ai[2], char *why, size_t cap)
{
	struct rp_buf b = { 0 };
	struct rp_reply rep;
	char w[300], path[64];
	int rc = -1;
	uint64_t until = deadline(r);

	if ((r->ctrl = dial(ai[0], r->o.url.ctrl_port, until, w, sizeof w)) < 0) {
		snprintf(why, cap, "cannot connect: %s", w);
		return -1;
	}
	if ((r->data = dial(ai[1], r->o.url.data_port, until, w, sizeof w)) < 0) {
		snprintf(why, cap, "cannot connect its data port: %s", w);
		goto out;
	}
	rp_version(&b);
	if (call(r, &b, RELAYD_VERSION, &rep, until, w, sizeof w))
		goto bad;
	struct rp_session s = { r->session, r->host, FLUSH_MS * 1000, r->name_has_time, { 0 },
	                        r->sess_id, r->creation_s };
	memcpy(s.uuid, r->sess_uuid, 16);
	rp_create_session(&b, &s);
	if (call(r, &b, RELAYD_CREATE_SESSION, &rep, until, w, sizeof w))
		goto bad;
	snprintf(r->dir, sizeof r->dir, "%s", rep.path);
	rp_create_chunk(&b, 0, r->creation_s);
	if (call(r, &b, RELAYD_CREATE_TRACE_CHUNK, &rep, until, w, sizeof w))
		goto bad;
	r->conns++;
	if (r->conns == 1)
		snprintf(path, sizeof path, "pid-%d", (int)r->pid);
	else
		snprintf(path, sizeof path, "pid-%d-%u", (int)r->pid, r->conns);
	rp_add_stream(&b, "metadata", path, 0);
	if (call(r, &b, RELAYD_ADD_STREAM, &rep, until, w, sizeof w))
		goto bad;
	r->meta = rep.id;
	rp_add_stream(&b, DATA_CHANNEL, path, 0);
	if (call(r, &b, RELAYD_ADD_STREAM, &rep, until, w, sizeof w))
		goto bad;
	r->stream = rep.id;
	if (r->meta == r->stream) {
		snprintf(w, sizeof w, "the same handle for two streams");
		goto bad;
	}
	rp_streams_sent(&b);
	if (call(r, &b, RELAYD_STREAMS_SENT, &rep, until, w, sizeof w))
		goto bad;
	if (rctf_init(&r->ctf, r->start_ns, (uint64_t)r->pid)) {
		snprintf(why, cap, "out of memory");
		goto out;
	}
	r->ctf_ok = 1;
	size_t len;
	char trace_name[RELAYD_NAME_MAX + 80];
	snprintf(trace_name, sizeof trace_name, "%s/%s", r->session, path);
	char *head = rctf_metadata_head(&r->ctf, trace_name, r->host, &len);
	if (!head) {
		snprintf(why, cap, "out of memory");
		goto out;
	}
	rc = send_metadata(r, head, len, until, w, sizeof w);
	free(head);
	if (rc)
		goto bad;
	r->seq = 0;
	r->sent_any = 0;
	r->acked_disc = 0;
	if (!r->first_dir[0])
		snprintf(r->first_dir, sizeof r->first_dir, "%s", r->dir);
	rp_free(&b);
	return 0;
bad:
	snprintf(why, cap, "%s", w);
out:
	rp_free(&b);
	hangup(r);
	rc = -1;
	return rc;
}

/* A session, on the addresses relay_open() found the first time (so that
 * no name lookup holds back the program), else on those found now. */
static int open_session(struct relay *r, char *why, size_t cap)
{
	struct addrinfo *ai[2] = { NULL, NULL };
	char w[300];
	int rc = -1;

	if (!r->ai_taken) {
		r->ai_taken = 1;
		ai[0] = r->ai[0], ai[1] = r->ai[1];
		r->ai[0] = r->ai[1] = NULL;
		if (r->ai_why[0]) {
			snprintf(why, cap, "cannot connect: %s", r->ai_why);
			goto out;
		}
	} else if (resolve(r->o.url.host, r->o.url.ctrl_port, &ai[0], w, sizeof w) ||
	           resolve(r->o.url.host, r->o.url.data_port, &ai[1], w, sizeof w)) {
		snprintf(why, cap, "cannot connect: %s", w);
		goto out;
	}
	rc = session(r, ai, why, cap);
out:
	for (int k = 0; k < 2; k++)
		if (ai[k])
			freeaddrinfo(ai[k]);
	return rc;
}

/* ------------------------------------------------------------ packets */

/* Take the acknowledgements that have come (wait: all of them), within
 * STALL_MS in all. */
static int take_acks(struct relay *r, int wait, char *why, size_t cap)
{
	struct rp_reply rep;
	uint64_t until = deadline(r);

	while (r->inum) {
		int rc = get_reply(r, RELAYD_SEND_INDEX, &rep, wait, until, why, cap);
		if (rc > 0)
			return 0;
		if (rc < 0)
			return -1;
		r->delivered += r->infl_ev[r->ihead];
		r->acked_disc = r->infl_disc[r->ihead];
		r->ihead = (r->ihead + 1) % INFLIGHT;
		r->inum--;
	}
	return 0;
}

/* Send bytes p[n] as the next packet, with its index ix. */
static int send_packet(struct relay *r, const unsigned char *p, size_t n, struct rp_index *ix,
                       uint64_t nevents, char *why, size_t cap)
{
	unsigned char dh[RELAYD_DATA_HDR];
	struct rp_buf b = { 0 };

	if (r->inum == INFLIGHT && take_acks(r, 1, why, cap)) {
		r->lost_unacked += nevents;
		return -1;
	}
	ix->relay_stream = r->stream;
	ix->net_seq = r->seq;
	rp_data_hdr(dh, r->stream, r->seq, (uint32_t)n);
	struct iovec v[2] = { { dh, sizeof dh }, { (void *)p, n } };
	/* counted in flight first: a failure below loses it */
	unsigned slot = (r->ihead + r->inum) % INFLIGHT;
	r->infl_ev[slot] = nevents;
	r->infl_disc[slot] = ix->discarded;
	r->infl_ns[slot] = now_mono_ns();
	r->inum++;
	uint64_t until = deadline(r);
	if (send_all(r->data, v, 2, until, why, cap))
		return -1;
	rp_index(&b, ix);
	int rc = send_ctrl(r, &b, until, why, cap);
	rp_free(&b);
	if (rc)
		return -1;
	r->seq++;
	r->packets++;
	r->last_packet_ns = now_mono_ns();
	r->sent_any = 1;
	return take_acks(r, 0, why, cap);
}

static void broke(struct relay *r, const char *why)
{
	err_msg("relay %s: connection lost: %s; recording goes on%s, retrying", r->o.url_text,
	        why, r->o.local_log ? " into the local log" : "");
	r->down_since_lost = lost_total(r); /* before the packets not acknowledged */
	hangup(r);
	r->said_down = 1;
	r->retry_ms = RETRY_MS;
	r->next_try_ns = now_mono_ns() + RETRY_MS * 1000000ull;
}

/* Send the packet being filled (and, first in a trace that has lost
 * events, an empty one that counts 0: a reader learns a count from the
 * packet before).  An empty packet goes only to tell a new count. */
static void flush(struct relay *r)
{
	char why[300];
	struct rp_index ix;

	if (r->ctrl < 0)
		return;
	uint64_t disc = lost_total(r) - r->base, n = r->ctf.nevents;
	uint64_t at = rctf_clock(&r->ctf, r->last_ts); /* an empty packet: no time goes back */
	if (!r->sent_any && disc) {
		unsigned char empty[RCTF_HDR];
		struct rctf z = r->ctf;  /* its header, without the events */
		z.p = empty;
		z.n = RCTF_HDR;
		z.nevents = 0;
		rctf_seal(&z, r->seq, 0, n ? r->ctf.tb : at, &ix);
		if (send_packet(r, empty, RCTF_HDR, &ix, 0, why, sizeof why)) {
			r->lost_unacked += n; /* what was waiting goes too */
			broke(r, why);
			return;
		}
		r->last_disc = 0;
	}
	if (!n && (!r->sent_any || disc == r->last_disc))
		return;
	rctf_seal(&r->ctf, r->seq, disc, n ? r->ctf.te : at, &ix);
	int rc = send_packet(r, r->ctf.p, r->ctf.n, &ix, n, why, sizeof why);
	r->last_disc = disc;
	if (rc)
		broke(r, why);
	else
		rctf_reset(&r->ctf);
}

static void event_name(struct relay *r, unsigned id, char *name, size_t cap)
{
	const char *s = posixtrace_eventid_system_name(id);
	if (s)
		snprintf(name, cap, "%s", s);
	else if (posix_trace_eventid_get_name(r->trid, id, name) != 0 || !name[0])
		snprintf(name, cap, "event_%u", id);
}

/* One event, in time order, into the packet being filled. */
static void emit_one(struct relay *r, const struct pev *e, const unsigned char *data)
{
	unsigned id = e->id;
	uint64_t ts = e->ts;

	if (r->ctrl < 0) {
		r->lost_down++;
		return;
	}
	if (id >= PT_NIDS) { /* cannot be declared (the library keeps ids below) */
		r->lost_oom++;
		return;
	}
	if (!r->ctf.declared[id]) {
		char name[TRACE_EVENT_NAME_MAX + 32], why[300];
		size_t ml;
		event_name(r, id, name, sizeof name);
		char *m = rctf_metadata_event(&r->ctf, id, name, &ml);
		if (!m) {
			r->lost_oom++;
			return;
		}
		int rc = send_metadata(r, m, ml, deadline(r), why, sizeof why);
		free(m);
		if (rc) {
			broke(r, why);
			r->lost_down++;
			return;
		}
	}
	/* a loss starts a packet of its own, ended by the RESUME after it, so
	 * that a reader places it between the events around it */
	if (id == POSIX_TRACE_OVERFLOW && r->ctf.nevents) {
		flush(r);
		if (r->ctrl < 0) {
			r->lost_down++;
			return;
		}
	}
	if (ts < r->last_ts) { /* later than the hold: keep the trace's time order */
		ts = r->last_ts;
		r->late++;
	}
	if (rctf_add(&r->ctf, id, ts, e->pid, e->tid, e->addr, data, e->len)) {
		r->lost_oom++;
		return;
	}
	r->last_ts = ts;
	if (r->ctf.n >= PACKET_BYTES || id == POSIX_TRACE_RESUME)
		flush(r);
}

static int by_time(const void *a, const void *b)
{
	const struct pev *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The held events stamped at or before cutoff, in time order. */
static void emit(struct relay *r, uint64_t cutoff)
{
	size_t k = 0;

	if (!r->npv)
		return;
	qsort(r->pv, r->npv, sizeof *r->pv, by_time);
	while (k < r->npv && r->pv[k].ts <= cutoff)
		k++;
	for (size_t i = 0; i < k; i++)
		emit_one(r, &r->pv[i], r->arena + r->pv[i].off);
	/* keep the rest, their payloads packed at the start of the arena */
	size_t na = 0;
	unsigned char *fresh = NULL;
	for (size_t i = k; i < r->npv; i++)
		na += r->pv[i].len;
	if (na && !(fresh = malloc(na))) {
		r->lost_oom += r->npv - k;
		r->npv = r->na = 0;
		return;
	}
	na = 0;
	for (size_t i = k; i < r->npv; i++) {
		struct pev e = r->pv[i];
		if (e.len)
			memcpy(fresh + na, r->arena + e.off, e.len);
		e.off = na;
		na += e.len;
		r->pv[i - k] = e;
	}
	if (na)
		memcpy(r->arena, fresh, na);
	free(fresh);
	r->npv -= k;
	r->na = na;
}

/* An event read from the stream: held (HOLD_MS) to be put in time order. */
static void take_event(struct relay *r, const struct posix_trace_event_info *ev, const void *data,
                       size_t len)
{
	struct pt_ext_losses x;

	r->events++;
	if (ev->posix_event_id == POSIX_TRACE_RESUME && pt_ext_losses(r->trid, &x) == 0 &&
	    x.resume_ok && x.at_resume > r->lost_stream)
		r->lost_stream = x.at_resume;
	if (r->ctrl < 0) {
		r->lost_down++;
		return;
	}
	if (r->npv == r->cpv) {
		size_t n = r->cpv ? 2 * r->cpv : 4096;
		struct pev *p = realloc(r->pv, n * sizeof *p);
		if (!p) {
			r->lost_oom++;
			return;
		}
		r->pv = p;
		r->cpv = n;
	}
	if (r->na + len > r->ca) {
		size_t n = r->ca ? 2 * r->ca : 1u << 20;
		while (n < r->na + len)
			n *= 2;
		unsigned char *p = realloc(r->arena, n);
		if (!p) {
			r->lost_oom++;
			return;
		}
		r->arena = p;
		r->ca = n;
	}
	struct pev *e = &r->pv[r->npv++];
	e->ts = (uint64_t)ev->posix_timestamp.tv_sec * 1000000000u +
	        (uint64_t)ev->posix_timestamp.tv_nsec;
	e->seq = r->pseq++;
	e->tid = (uint64_t)ev->posix_thread_id;
	e->addr = (uint64_t)(uintptr_t)ev->posix_prog_address;
	e->off = r->na;
	e->len = (uint32_t)len;
	e->pid = (int32_t)ev->posix_pid;
	e->id = (uint16_t)(ev->posix_event_id < 0xffff ? ev->posix_event_id : 0xffff);
	if (len)
		memcpy(r->arena + r->na, data, len);
	r->na += len;
	if (r->na > HOLD_BYTES_MAX) /* too much to hold: out now */
		emit(r, UINT64_MAX);
}

static void try_again(struct relay *r)
{
	char why[400];
	uint64_t now = now_mono_ns();

	if (now < r->next_try_ns)
		return;
	if (open_session(r, why, sizeof why)) {
		r->retry_ms = r->retry_ms * 2 < RETRY_MAX_MS ? r->retry_ms * 2 : RETRY_MAX_MS;
		r->next_try_ns = now_mono_ns() + r->retry_ms * 1000000ull;
		return;
	}
	uint64_t missed = lost_total(r) - r->down_since_lost;
	err_msg("relay %s: connected again (%s); %llu events missed while it was away, "
	        "%llu in all so far, counted as discarded events in the trace",
	        r->o.url_text, r->dir, (unsigned long long)missed,
	        (unsigned long long)lost_total(r));
	r->said_down = 0;
	r->last_flush_ns = now_mono_ns();
}

static void *run(void *arg)
{
	static unsigned char buf[TRACE_DATA_MAX + 1];
	struct relay *r = arg;
	int draining = 0;

	r->last_flush_ns = now_mono_ns();
	for (;;) {
		struct posix_trace_event_info ev;
		size_t len = 0;
		int none = 0, rc;

		if (!draining && atomic_load(&r->stop)) {
			draining = 1;
			posix_trace_stop(r->trid); /* a STOP event ends it, as in the log */
		}
		if (draining) {
			rc = posix_trace_trygetnext_event(r->trid, &ev, buf, sizeof buf, &len, &none);
		} else {
			uint64_t d = now_realtime_ns() + FLUSH_MS * 1000000ull / 2;
			struct timespec ts = { (time_t)(d / 1000000000u), (long)(d % 1000000000u) };
			rc = posix_trace_timedgetnext_event(r->trid, &ev, buf, sizeof buf, &len, &none,
			                                    &ts);
			if (rc == ETIMEDOUT) {
				rc = 0;
				none = 1;
			}
		}
		if (rc == EINTR)
			continue;
		if (rc) {
			err_msg("relay %s: reading the stream: %s", r->o.url_text, strerror(rc));
			break;
		}
		if (!none)
			take_event(r, &ev, buf, len);
		if (draining && none)
			break;
		uint64_t now = now_mono_ns();
		if (none || now - r->last_flush_ns >= FLUSH_MS * 1000000ull) {
			emit(r, now_realtime_ns() - HOLD_MS * 1000000ull);
			flush(r);
			r->last_flush_ns = now;
			char why[300];
			if (r->ctrl >= 0 && take_acks(r, 0, why, sizeof why))
				broke(r, why);
			else if (r->ctrl >= 0 && r->inum &&
			         now_mono_ns() > r->infl_ns[r->ihead] + STALL_MS * 1000000ull)
				broke(r, "no acknowledgement of a packet within " STR(STALL_MS) " ms "
				         "(it stalled)");
		}
		if (r->ctrl < 0 && !draining)
			try_again(r);
	}
	emit(r, UINT64_MAX); /* the program has ended: all of it */
	return NULL;
}

/* ---------------------------------------------------------------- api */

static int path_safe(const char *s);

/* A name the relay takes as a directory: not empty, no '/', no leading
 * '.', printable. */
int relay_name_ok(const char *s, size_t max)
{
	return path_safe(s) && strlen(s) <= max;
}

static int path_safe(const char *s)
{
	if (!*s || *s == '.')
		return 0;
	for (; *s; s++)
		if (*s == '/' || (unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

struct relay *relay_open(const struct relay_opts *o)
{
	struct relay *r = calloc(1, sizeof *r);

	if (!r) {
		err_msg("out of memory");
		return NULL;
	}
	r->o = *o;
	r->ctrl = r->data = -1;
	r->retry_ms = RETRY_MS;
	if (o->hostname)
		snprintf(r->host, sizeof r->host, "%s", o->hostname);
	else if (gethostname(r->host, sizeof r->host) != 0 || !path_safe(r->host))
		snprintf(r->host, sizeof r->host, "localhost");
	r->host[RELAYD_HOSTNAME_MAX] = 0;
	if (ctf_uuid_new(r->sess_uuid)) { /* never the nil uuid, which the relay refuses */
		err_msg("getrandom: %s", strerror(errno));
		free(r);
		return NULL;
	}
	r->sess_id = 1;
	if (resolve(o->url.host, o->url.ctrl_port, &r->ai[0], r->ai_why, sizeof r->ai_why) == 0)
		resolve(o->url.host, o->url.data_port, &r->ai[1], r->ai_why, sizeof r->ai_why);
	return r;
}

/* --session, else PROGRAM-PID-YYYYmmdd-HHMMSS (then the relay need not
 * add its own time to the directory's name). */
static void name_session(struct relay *r, pid_t pid, const char *name)
{
	if (r->o.session) {
		snprintf(r->session, sizeof r->session, "%s", r->o.session);
		return;
	}
	char t[32];
	time_t now = (time_t)r->creation_s;
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(t, sizeof t, "%Y%m%d-%H%M%S", &tm);
	snprintf(r->session, sizeof r->session, "%.100s-%d-%s", path_safe(name) ? name : "trace",
	         (int)pid, t);
	r->name_has_time = 1;
}

int relay_attach(struct relay *r, pid_t pid, const char *name)
{
	trace_attr_t attr;
	char why[400];
	int rc;

	r->pid = pid;
	r->start_ns = now_realtime_ns();
	r->creation_s = r->start_ns / 1000000000u;
	name_session(r, pid, name);
	posix_trace_attr_init(&attr);
	posix_trace_attr_setname(&attr, name);
	posix_trace_attr_setinherited(&attr, r->o.inherit ? POSIX_TRACE_INHERITED
	                                                  : POSIX_TRACE_CLOSE_FOR_CHILD);
	posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_LOOP);
	rc = posix_trace_attr_setstreamsize(&attr, r->o.size ? r->o.size : RELAY_STREAM_SIZE);
	if (!rc)
		rc = posix_trace_create(pid, &attr, &r->trid);
	posix_trace_attr_destroy(&attr);
	if (rc) {
		err_msg("cannot trace process %d for the relay: %s", (int)pid, strerror(rc));
		return 1;
	}
	r->have_trid = 1;
	if (r->o.exclude && exclude_events(r->trid, r->o.exclude))
		return 1;
	if (open_session(r, why, sizeof why)) {
		err_msg("relay %s: %s", r->o.url_text, why);
		if (!r->o.local_log)
			return 1;
		err_msg("relay %s: recording goes on into the local log only; the relay will be "
		        "tried again while the program runs", r->o.url_text);
		r->down_since_lost = 0;
		r->said_down = 1;
		r->next_try_ns = now_mono_ns() + RETRY_MS * 1000000ull;
	}
	if ((rc = posix_trace_start(r->trid)) != 0) {
		err_msg("posix_trace_start: %s", strerror(rc));
		return 1;
	}
	if ((rc = pthread_create(&r->th, NULL, run, r)) != 0) {
		err_msg("pthread_create: %s", strerror(rc));
		return 1;
	}
	r->thread_on = 1;
	return 0;
}

int relay_join(struct relay *r, char *buf, size_t cap)
{
	return r->have_trid ? pt_ext_join(r->trid, buf, cap) : EINVAL;
}

int relay_finish(struct relay *r)
{
	char why[300];
	struct pt_ext_losses x;
	int rc = 0;

	if (!r)
		return 0;
	/* what is left goes within STALL_MS (an exchange under way began
	 * before: its own deadline is no later) */
	atomic_store(&r->end_by, now_mono_ns() + STALL_MS * 1000000ull);
	if (r->thread_on) {
		atomic_store(&r->stop, 1);
		pthread_join(r->th, NULL);
	}
	if (r->have_trid && pt_ext_losses(r->trid, &x) == 0 && x.total_ok && x.total > r->lost_stream)
		r->lost_stream = x.total;
	if (r->ctrl >= 0) {
		flush(r); /* the rest, and the final count */
		if (r->ctrl >= 0 && take_acks(r, 1, why, sizeof why))
			broke(r, why);
	}
	/* the session open a second after the last packet: a live reader
	 * that attaches as the program ends still finds it listed */
	uint64_t until = r->last_packet_ns + LINGER_MS * 1000000ull, now = now_mono_ns();
	if (r->ctrl >= 0 && r->packets && until > now)
		usleep((useconds_t)((until - now) / 1000));
	/* the rotation and both closes within STALL_MS in all */
	uint64_t by = now_mono_ns() + STALL_MS * 1000000ull;
	atomic_store(&r->end_by, by);
	if (r->ctrl >= 0 && r->sent_any) {
		/* the end of the session as LTTng ends one: its streams rotated
		 * out of their trace chunk, into none, after their last packet.
		 * A stream closed without it is taken out of the chunk at once,
		 * and a live reader still behind is told it hung up, its last
		 * packets unread (lttng-relayd 2.13, babeltrace2 2.0); with it,
		 * the reader reads the chunk to its end, then hangs up.  (Only
		 * a stream of this connection that has a packet: the relay
		 * rotates one after the packet before its position.) */
		struct rp_buf b = { 0 };
		struct rp_reply rep;
		const uint64_t st[2] = { r->stream, r->meta }, at[2] = { r->seq, 0 };
		rp_rotate_streams(&b, st, at, 2);
		if (call(r, &b, RELAYD_ROTATE_STREAMS, &rep, by, why, sizeof why))
			err_msg("relay %s: ending the session: %s", r->o.url_text, why);
		rp_free(&b);
	}
	if (r->ctrl >= 0) {
		struct rp_buf b = { 0 };
		struct rp_reply rep;
		rp_close_stream(&b, r->stream, r->seq ? r->seq - 1 : UINT64_MAX);
		if (call(r, &b, RELAYD_CLOSE_STREAM, &rep, by, why, sizeof why) == 0) {
			rp_close_stream(&b, r->meta, UINT64_MAX);
			if (call(r, &b, RELAYD_CLOSE_STREAM, &rep, by, why, sizeof why))
				err_msg("relay %s: closing: %s", r->o.url_text, why);
		} else {
			err_msg("relay %s: closing: %s", r->o.url_text, why);
		}
		rp_free(&b);
	}
	int connected = r->ctrl >= 0;
	hangup(r);
	if (r->have_trid)
		posix_trace_shutdown(r->trid);
	uint64_t lost = lost_total(r);
	if (!r->thread_on) {
		/* never started: relay_attach said why */
	} else if (r->conns == 0) {
		err_msg("relay %s: never reached: none of the %llu events was sent", r->o.url_text,
		        (unsigned long long)r->events);
		rc = 1;
	} else {
		char more[400] = "";
		if (lost)
			snprintf(more, sizeof more, " (%llu while it was unreachable, %llu in packets it "
			         "did not acknowledge, %llu the relay stream could not hold%s)",
			         (unsigned long long)r->lost_down, (unsigned long long)r->lost_unacked,
			         (unsigned long long)r->lost_stream,
			         r->lost_oom ? ", some for want of memory" : "");
		err_msg("relay %s: %llu events sent to %s in %llu packets over %u connection%s; "
		        "%llu not delivered%s%s", r->o.url_text, (unsigned long long)r->delivered,
		        r->first_dir, (unsigned long long)r->packets, r->conns, r->conns > 1 ? "s" : "",
		        (unsigned long long)lost, more,
		        connected ? "" : "; the relay was not connected at the end: the last of "
		                         "these were never counted on it");
	}
	if (r->late)
		err_msg("relay %s: %llu events came more than %d ms out of time order and were sent "
		        "with the time of the event before them", r->o.url_text,
		        (unsigned long long)r->late, HOLD_MS);
	for (int k = 0; k < 2; k++)
		if (r->ai[k])
			freeaddrinfo(r->ai[k]);
	free(r->pv);
	free(r->arena);
	free(r);
	return rc;
}
