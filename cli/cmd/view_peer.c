/*
 * view_peer.c -- which user a connection to `posixtrace view` comes from
 * (view.c refuses those of other users before reading a byte of them;
 * docs/security.md).
 *
 * Every user of the machine reaches 127.0.0.1 from the same address, so
 * the address says nothing; but the kernel knows the owner of the
 * client's socket, and both ends of a loopback connection are on this
 * machine.  Asked with a socket diagnostics request for that one socket
 * (NETLINK_SOCK_DIAG, inet_diag: the socket whose local end is the
 * client's address and port and whose remote end is the server's), it
 * answers with its uid; where that is not available (no tcp_diag), the
 * same line of /proc/net/tcp says it.  Not found (the client already
 * gone): unknown, and refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "cmd.h"

/* 1 found (uid in *uid), 0 not there, -1 cannot ask. */
static int by_diag(const struct sockaddr_in *client, const struct sockaddr_in *server, uid_t *uid)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} q;
	union {
		struct nlmsghdr nh;
		unsigned char b[8192];
	} a;
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), rc = -1;

	if (fd < 0)
		return -1;
	memset(&q, 0, sizeof q);
	q.nh.nlmsg_len = sizeof q;
	q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nh.nlmsg_flags = NLM_F_REQUEST;
	q.nh.nlmsg_seq = 1;
	q.r.sdiag_family = AF_INET;
	q.r.sdiag_protocol = IPPROTO_TCP;
	q.r.idiag_states = ~0u;
	q.r.id.idiag_sport = client->sin_port;
	q.r.id.idiag_dport = server->sin_port;
	q.r.id.idiag_src[0] = client->sin_addr.s_addr;
	q.r.id.idiag_dst[0] = server->sin_addr.s_addr;
	q.r.id.idiag_cookie[0] = q.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (sendto(fd, &q, sizeof q, 0, (struct sockaddr *)&nl, sizeof nl) != (ssize_t)sizeof q)
		goto out;
	struct pollfd p = { fd, POLLIN, 0 };
	if (poll(&p, 1, 1000) != 1)
		goto out;
	ssize_t n = recv(fd, &a, sizeof a, 0);
	if (n < (ssize_t)sizeof(struct nlmsghdr) || a.nh.nlmsg_len > (size_t)n)
		goto out;
	if (a.nh.nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(&a.nh);
		if (a.nh.nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error == -ENOENT)
			rc = 0; /* no such socket */
		goto out;
	}
	if (a.nh.nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    a.nh.nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
		goto out;
	const struct inet_diag_msg *m = NLMSG_DATA(&a.nh);
	if (m->id.idiag_sport != client->sin_port || m->id.idiag_dport != server->sin_port ||
	    m->id.idiag_src[0] != client->sin_addr.s_addr ||
	    m->id.idiag_dst[0] != server->sin_addr.s_addr)
		goto out;
	*uid = (uid_t)m->idiag_uid;
	rc = 1;
out:
	close(fd);
	return rc;
}

/* The same from /proc/net/tcp: 1 found, 0 not. */
static int by_proc(const struct sockaddr_in *client, const struct sockaddr_in *server, uid_t *uid)
{
	FILE *f = fopen("/proc/net/tcp", "re");
	char line[512];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof line, f)) {
		unsigned la, lp, ra, rp, st;
		unsigned long u;
		/* sl local rem st tx:rx tr:when retrnsmt uid */
		if (sscanf(line, " %*u: %8X:%4X %8X:%4X %2X %*x:%*x %*x:%*x %*x %lu", &la, &lp, &ra, &rp,
		           &st, &u) != 6)
			continue;
		/* (the addresses as the kernel holds them, printed as a host u32) */
		if (la == client->sin_addr.s_addr && lp == ntohs(client->sin_port) &&
		    ra == server->sin_addr.s_addr && rp == ntohs(server->sin_port)) {
			*uid = (uid_t)u;
			found = 1;
		}
	}
	fclose(f);
	return found;
}

int view_peer_uid(const struct sockaddr *client, socklen_t len, const struct sockaddr *server,
                  uid_t *uid)
{
	if (!client || !server || len < (socklen_t)sizeof(struct sockaddr_in) ||
	    client->sa_family != AF_INET || server->sa_family != AF_INET)
		return -1;
	const struct sockaddr_in *c = (const void *)client, *s = (const void *)server;
	int rc = by_diag(c, s, uid);
	if (rc < 0)
		rc = by_proc(c, s, uid);
	return rc > 0 ? 0 : -1;
}
