/*
 * relayd_fuzz.c -- libFuzzer target for what `record --relayd` takes from
 * the network and the command line (cli/write/relayd_proto.c): the relay's
 * replies and the relay URL.  The first byte picks the command the input
 * answers (or, 0xff, the URL parser); the rest is the reply, parsed as it
 * arrives -- cut at every length the parser asks for, as relay.c reads it
 * -- and checked: a reply is never longer than what it said it needs, a
 * session directory is one string, a parse of the whole is the same as
 * the parse of the bytes it used.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../cli/write/write.h"

static const uint32_t cmds[] = { RELAYD_VERSION, RELAYD_CREATE_SESSION, RELAYD_ADD_STREAM,
                                 RELAYD_CREATE_TRACE_CHUNK, RELAYD_STREAMS_SENT,
                                 RELAYD_SEND_INDEX, RELAYD_CLOSE_STREAM, RELAYD_ROTATE_STREAMS,
                                 RELAYD_SEND_METADATA,
                                 999 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rp_reply r, r2;
	char why[200];
	size_t used = 0, have = 0;

	if (size < 1)
		return 0;
	if (data[0] == 0xff) {
		char s[512];
		struct relayd_url u;
		size_t n = size - 1 < sizeof s - 1 ? size - 1 : sizeof s - 1;
		memcpy(s, data + 1, n);
		s[n] = 0;
		if (relayd_url_parse(s, &u, why, sizeof why) == 0 &&
		    (!u.host[0] || strlen(u.host) >= sizeof u.host || !u.ctrl_port ||
		     u.ctrl_port > 65535 || !u.data_port || u.data_port > 65535))
			abort();
		return 0;
	}
	uint32_t cmd = cmds[data[0] % (sizeof cmds / sizeof cmds[0])];
	const uint8_t *p = data + 1;
	size_t len = size - 1;
	/* as relay.c reads: what the parser asks for, never more */
	for (int rounds = 0;; rounds++) {
		int rc = rp_parse_reply(cmd, p, have, &r, &used, why, sizeof why);
		if (rc == RP_BAD || rc == RP_OK)
			break;
		if (rc != RP_MORE || used <= have || used > 16 + RP_PATH_MAX || rounds > 4)
			abort();
		if (used > len)
			return 0; /* the relay would still be sending */
		have = used;
	}
	int rc = rp_parse_reply(cmd, p, have, &r, &used, why, sizeof why);
	if (rc == RP_OK) {
		if (used != have)
			abort();
		if (memchr(r.path, 0, sizeof r.path) == NULL)
			abort();
		/* the whole input parses the same */
		if (rp_parse_reply(cmd, p, len, &r2, &used, why, sizeof why) != RP_OK ||
		    used != have || memcmp(&r, &r2, sizeof r))
			abort();
	}
	return 0;
}
