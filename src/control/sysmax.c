/*
 * sysmax.c -- TRACE_SYS_MAX counted across the machine without a daemon,
 * and shared between users so that none can take every stream.
 *
 * Each stream holds an abstract Unix socket bound to a name that starts
 * "posixtrace/stream/", released by the kernel when the socket is closed,
 * at exit, exec or kill included.  To create a stream, a process binds a
 * name of its own (random, so nobody can take it first) and then counts
 * the names bound in its network namespace through the kernel's socket
 * diagnostics (NETLINK_SOCK_DIAG), which give each socket's owner as the
 * kernel knows it: nobody can pass names off as another user's.  Among
 * the others' names, each user counts for at most PT_USER_SHARE (root for
 * all TRACE_SYS_MAX): the stream is admitted if that total is below
 * TRACE_SYS_MAX and its own user holds fewer than its share.  Every
 * process counts after it bound its name, so of two that race for the
 * last place at least one sees the other: never more than TRACE_SYS_MAX
 * (both may give up, and the caller gets EAGAIN).
 *
 * Without socket diagnostics (a kernel without CONFIG_UNIX_DIAG), the
 * names are the fixed posixtrace/stream/0..127: the first free one is
 * taken, with no share between users.
 */
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "control.h"

#define NAME_PREFIX "posixtrace/stream/"
#define UIDS_MAX    256u        /* distinct users tallied; more count as one more each */
#define DUMP_MAX    (1u << 20)  /* sockets looked at, at most */
#define DUMP_BUF    32768u

static socklen_t abstract_addr(struct sockaddr_un *a, const char *name)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	size_t n = strlen(name);
	memcpy(a->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* The earlier scheme: the first free of TRACE_SYS_MAX fixed names. */
static int take_fixed(int *sys_fd)
{
	for (unsigned i = 0; i < TRACE_SYS_MAX; i++) {
		struct sockaddr_un a;
		char name[64];
		snprintf(name, sizeof name, NAME_PREFIX "%u", i);
		int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return EAGAIN;
		if (bind(fd, (struct sockaddr *)&a, abstract_addr(&a, name)) == 0) {
			*sys_fd = fd;
			return 0;
		}
		close(fd);
		if (errno != EADDRINUSE)
			return EAGAIN;
	}
	return EAGAIN;
}

struct tally {
	uint32_t uid[UIDS_MAX], n[UIDS_MAX];
	unsigned users;
	uint64_t unplaced; /* names of users beyond UIDS_MAX */
};

static void tally_add(struct tally *t, uint32_t uid)
{
	for (unsigned i = 0; i < t->users; i++)
		if (t->uid[i] == uid) {
			t->n[i]++;
			return;
		}
	if (t->users == UIDS_MAX) {
		t->unplaced++;
		return;
	}
	t->uid[t->users] = uid;
	t->n[t->users++] = 1;
}

/* The stream names others hold, by user: 0, or -1 if the kernel gives no
 * socket diagnostics. */
static int count_names(uint32_t self_ino, struct tally *t)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} req;
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	unsigned looked = 0;
	int rc = -1, fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	char *buf = fd < 0 ? NULL : malloc(DUMP_BUF);

	if (!buf) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memset(&req, 0, sizeof req);
	req.nh.nlmsg_len = sizeof req;
	req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.r.sdiag_family = AF_UNIX;
	req.r.udiag_states = ~0u;
	req.r.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_UID;
	if (sendto(fd, &req, sizeof req, 0, (struct sockaddr *)&nl, sizeof nl) != (ssize_t)sizeof req)
		goto out;
	for (;;) {
		ssize_t got = recv(fd, buf, DUMP_BUF, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			goto out;
		size_t left = (size_t)got, step;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf;
		     left >= sizeof *h && h->nlmsg_len >= sizeof *h && h->nlmsg_len <= left;
		     step = NLMSG_ALIGN(h->nlmsg_len) < left ? NLMSG_ALIGN(h->nlmsg_len) : left,
		     left -= step, h = (struct nlmsghdr *)((char *)h + step)) {
			if (h->nlmsg_type == NLMSG_DONE || ++looked > DUMP_MAX) {
				rc = 0; /* (past DUMP_MAX: what was counted counts) */
				goto out;
			}
			if (h->nlmsg_type == NLMSG_ERROR ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
				goto out;
			const struct unix_diag_msg *m = NLMSG_DATA(h);
			const char *name = NULL;
			size_t nlen = 0;
			int has_uid = 0;
			uint32_t uid = 0;
			size_t rem = h->nlmsg_len - NLMSG_LENGTH(sizeof *m);
			for (const struct nlattr *a = (const struct nlattr *)(m + 1);
			     rem >= sizeof *a && a->nla_len >= sizeof *a && a->nla_len <= rem;) {
				const char *d = (const char *)a + NLA_HDRLEN;
				size_t dl = a->nla_len - NLA_HDRLEN;
				if (a->nla_type == UNIX_DIAG_NAME) {
					name = d;
					nlen = dl;
				} else if (a->nla_type == UNIX_DIAG_UID && dl >= sizeof uid) {
					memcpy(&uid, d, sizeof uid);
					has_uid = 1;
				}
				size_t astep = NLA_ALIGN(a->nla_len);
				if (astep >= rem)
					break;
				rem -= astep;
				a = (const struct nlattr *)((const char *)a + astep);
			}
			if (!name || nlen < 1 + sizeof NAME_PREFIX - 1 || name[0] != 0 ||
			    memcmp(name + 1, NAME_PREFIX, sizeof NAME_PREFIX - 1) || m->udiag_ino == self_ino)
				continue;
			if (!has_uid) /* a kernel that does not tell owners */
				goto out;
			tally_add(t, uid);
		}
	}
out:
	free(buf);
	close(fd);
	return rc;
}

int pt_sysmax_take(int *sys_fd)
{
	struct sockaddr_un a;
	struct stat st;
	struct tally t;
	char name[64];
	unsigned char r[8];
	int fd = -1;

	for (int tries = 0; fd < 0 && tries < 8; tries++) {
		if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
			return take_fixed(sys_fd);
		snprintf(name, sizeof name, NAME_PREFIX "%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2],
		         r[3], r[4], r[5], r[6], r[7]);
		if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
			return EAGAIN;
		if (bind(fd, (struct sockaddr *)&a, abstract_addr(&a, name)) != 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		return EAGAIN;
	}
	memset(&t, 0, sizeof t);
	if (count_names((uint32_t)st.st_ino, &t) != 0) {
		close(fd);
		return take_fixed(sys_fd);
	}
	uint32_t me = (uint32_t)geteuid(), mine = 0;
	uint64_t total = t.unplaced;
	for (unsigned i = 0; i < t.users; i++) {
		uint32_t share = t.uid[i] == 0 ? TRACE_SYS_MAX : PT_USER_SHARE;
		total += t.n[i] < share ? t.n[i] : share;
		if (t.uid[i] == me)
			mine = t.n[i];
	}
	if (total >= TRACE_SYS_MAX || (me != 0 && mine >= PT_USER_SHARE)) {
		close(fd);
		return EAGAIN;
	}
	*sys_fd = fd;
	return 0;
}
