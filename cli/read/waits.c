/*
 * waits.c -- the waits for room of a --no-loss recording
 * (posixtrace_noloss_wait events): one event's, and every wait of a log
 * per thread, from its summary (format 10), else by a pass over its
 * events in batches.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "read.h"

int tlog_wait_of(const struct tev *e, uint64_t *ns)
{
	if (e->id != PT_EXT_NOLOSS_WAIT || e->len != sizeof *ns || !e->data)
		return 0;
	memcpy(ns, e->data, sizeof *ns);
	return 1;
}

int tlog_waits(const char *path, struct tlog *l, struct twait *w)
{
	struct tlog r;
	struct tlog *from = l->open_ ? l : &r;
	struct pt_ext_batch *b = malloc(sizeof *b);
	uint32_t thread_of[PT_EXT_BATCH_W];
	int rc;

	if (l->waits_known) { /* (what the log's writer added up: no pass) */
		for (size_t i = 0; i < l->nth; i++)
			w[i] = (struct twait){ l->th[i].waits, l->th[i].wait_ns, l->th[i].wait_max };
		free(b);
		return 0;
	}
	/* (a log being written read anew would also be opened by a second
	 * checking scan, and hold waits the totals do not count) */
	if (!b || (from == &r && tlog_load_as(&r, path, &l->front))) {
		if (!b)
			err_msg("%s: reading events: %s", path, strerror(ENOMEM));
		free(b);
		return 1;
	}
	/* in batches, each wait's 8 bytes in the batch (one lock a batch, no
	 * copy of the others' payloads: a third of the time of reading them
	 * one by one) */
	while ((rc = tlog_next_batch(from, b, thread_of)) > 0)
		for (size_t i = 0; i < b->n; i++) {
			const struct pt_ext_bevent *e = &b->ev[i];
			uint32_t th = thread_of[e->w];
			if (e->id != PT_EXT_NOLOSS_WAIT || !(e->flags & PT_EXT_BEV_QWORD) || th >= l->nth)
				continue;
			uint64_t ns = (uint64_t)e->hi << 32 | (uint32_t)e->word;
			struct twait *t = &w[th];
			t->n++;
			t->ns += ns;
			t->max = ns > t->max ? ns : t->max;
		}
	free(b);
	if (from == &r)
		tlog_free(&r);
	else if (rc == 0 && tlog_rewind(l))
		rc = -1;
	return rc < 0;
}
