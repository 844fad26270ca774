/*
 * perfetto_trace.c -- `posixtrace export --format perfetto`: a trace
 * read event by event into the Perfetto writer (export_perfetto.c, the
 * protocol buffers it writes): the processes and the threads the trace
 * does not identify first, then each event as an instant on its thread's
 * track, with its payload's fields where its program described them,
 * its spans as slices (keyed ones on their definition's lanes, with a
 * flow from begin to end) and its losses.  The export_* functions of
 * the other formats are export_chrome.c, export_html.c and export_ctf.c;
 * the command's options and output file are cli/cmd/export.c's.
 */
#include <errno.h>
#include <string.h>
#include "write.h"

/* The Perfetto thread of an event of th at ts: its kernel TID when the
 * trace says (one track per kernel thread, with its real TID and its
 * latest name; a pthread_t is reused by later threads), else its
 * pthread_t (described beforehand). */
static uint64_t pf_key(struct pf *w, const struct tlog *l, const struct tthread *th, uint64_t ts)
{
	const struct pt_ext_thread *t = thrmap_find(l->thrs, th->pid, th->tid, ts);
	if (!t || t->tid <= 0)
		return th->tid;
	const char *name = thrmap_latest(l->thrs, t)->name;
	pf_thread_ident(w, tlog_thread_pid_key(l, th), (uint64_t)t->tid, t->tid,
	                name[0] ? name : NULL);
	return (uint64_t)t->tid;
}

/* A payload its program described, as Perfetto fields (f and at:
 * PT_EXT_FIELDS_MAX, the names are at's; text: their strings' room): how
 * many, or -1 (none, or it does not fit). */
static int pf_fields(const struct tlog *l, const struct tev *e, struct pf_field *f,
                     struct typed_at *at, char *text, size_t cap)
{
	const char *desc = e->id >= POSIX_TRACE_UNNAMED_USEREVENT && l->types
	                   ? typemap_desc(l->types, l->th[e->thread].pid, e->id) : NULL;
	size_t n = 0, o = 0;

	if (!desc || e->trunc == POSIX_TRACE_TRUNCATED_RECORD ||
	    typed_layout(desc, e->data, e->len, at, &n, NULL, 0) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *d = e->data + at[i].off;
		union { uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64; int8_t i8; int16_t i16;
		        int32_t i32; int64_t i64; float f; double g; } v = { 0 };
		memcpy(&v, d, at[i].f.size && at[i].f.size <= sizeof v ? at[i].f.size : 0);
		f[i] = (struct pf_field){ .name = at[i].f.name, .kind = PF_UINT };
		switch (at[i].f.type) {
		case PT_EXT_F_U8: f[i].u = v.u8; break;
		case PT_EXT_F_U16: f[i].u = v.u16; break;
		case PT_EXT_F_U32: f[i].u = v.u32; break;
		case PT_EXT_F_U64: f[i].u = v.u64; break;
		case PT_EXT_F_I8: f[i].kind = PF_INT; f[i].i = v.i8; break;
		case PT_EXT_F_I16: f[i].kind = PF_INT; f[i].i = v.i16; break;
		case PT_EXT_F_I32: f[i].kind = PF_INT; f[i].i = v.i32; break;
		case PT_EXT_F_I64: f[i].kind = PF_INT; f[i].i = v.i64; break;
		case PT_EXT_F_F32: f[i].kind = PF_DOUBLE; f[i].d = v.f; break;
		case PT_EXT_F_F64: f[i].kind = PF_DOUBLE; f[i].d = v.g; break;
		case PT_EXT_F_STRING:
			f[i].kind = PF_STRING;
			f[i].s = (const char *)d;
			f[i].len = at[i].len;
			break;
		default: { /* hex integers and bytes: "0x..." text */
			uint64_t x = at[i].f.size == 1 ? v.u8 : at[i].f.size == 2 ? v.u16
			             : at[i].f.size == 4 ? v.u32 : v.u64;
			size_t k = 0, room = cap - o;
			if (at[i].f.type == PT_EXT_F_BYTES)
				for (size_t j = 0; j < at[i].len && 2 * j + 2 < room; j++, k += 2)
					snprintf(text + o + k, room - k, "%02x", d[j]);
			else
				k = (size_t)snprintf(text + o, room, "0x%llx", (unsigned long long)x);
			if (k >= room)
				return -1;
			f[i].kind = PF_STRING;
			f[i].s = text + o;
			f[i].len = k;
			o += k + 1;
		}
		}
	}
	return (int)n;
}

/* A span's slice on an async track: its definition's lane (lanes are
 * described when first used: described[def] of them so far). */
static uint64_t pf_lane(struct pf *w, const struct span_stat *x, unsigned def, uint32_t lane,
                        uint32_t *described)
{
	uint64_t track = (uint64_t)(def + 1) << 32 | lane;
	for (; described[def] <= lane; described[def]++) {
		char name[TRACE_EVENT_NAME_MAX + 24];
		snprintf(name, sizeof name, "%s #%u", x->name, described[def] + 1);
		pf_async_track(w, (uint64_t)(def + 1) << 32 | described[def], name);
	}
	return track;
}

/* What event e did to spans (m) as slices (write.h, pf_slice), on the
 * track of its thread (pid, key): a begin before e's instant (end 0), an
 * end after it (end 1).  Same-thread spans are slices of the thread's
 * track, where an end closes the last begun slice: the spans begun after
 * the one that ends and still open (spans of other names overlapping it)
 * are ended with it and begun again ("split").  Keyed spans are slices
 * of their definition's lanes.  A span still open at the end of the
 * trace has no end (trace_processor: a slice that did not end). */
static void pf_span(struct pf *w, struct spans *sp, const struct tev *e, const struct span_mark *m,
                    int32_t pid, uint64_t key, uint32_t *described, int end)
{
	const struct span_stat *x = spans_stat(sp, m->def);
	if (!end && m->kind == SPAN_BEGIN) {
		if (!x->keyed) {
			pf_slice(w, pid, key, e->ts, 1, m->def, x->name, 0, 0);
			return;
		}
		uint64_t track = pf_lane(w, x, m->def, m->lane, described);
		if (m->replaced)
			pf_slice(w, pid, key, e->ts, 0, m->def, x->name, track, PF_INCOMPLETE);
		pf_slice(w, pid, key, e->ts, 1, m->def, x->name, track, 0);
		return;
	}
	if (!end || (m->kind != SPAN_END && m->kind != SPAN_CUT) || !m->paired)
		return;
	unsigned flags = m->kind == SPAN_CUT ? PF_INCOMPLETE : 0;
	/* (an end stamped before its begin, incomplete: at its begin's time) */
	uint64_t ts = e->ts > m->start ? e->ts : m->start;
	if (x->keyed) {
		pf_slice(w, pid, key, ts, 0, m->def, x->name,
		         pf_lane(w, x, m->def, m->lane, described), flags);
		return;
	}
	unsigned n = spans_open(sp, e->thread);
	for (unsigned i = n; i-- > m->depth;)
		pf_slice(w, pid, key, ts, 0, spans_open_def(sp, e->thread, i), NULL, 0, PF_SPLIT);
	pf_slice(w, pid, key, ts, 0, m->def, x->name, 0, flags);
	for (unsigned i = m->depth; i < n; i++) {
		unsigned d = spans_open_def(sp, e->thread, i);
		pf_slice(w, pid, key, ts, 1, d, spans_stat(sp, d)->name, 0, PF_SPLIT);
	}
}

/* The log through the Perfetto writer (write.h), event by event as
 * it is read (plain: no compressed packets), with the spans of sp as
 * slices.  -1 with errno: writing failed; 1: reading did (said). */
int export_perfetto(struct tlog *l, struct symz *z, struct spans *sp, FILE *f, int plain)
{
	uint32_t described[SPAN_MAX] = { 0 };
	struct span_mark m;
	char tmp[32], raw[32], text[512];
	static char ftext[2 * 65536 + 64 * PT_EXT_FIELDS_MAX];
	struct pf_field fields[PT_EXT_FIELDS_MAX];
	struct typed_at fat[PT_EXT_FIELDS_MAX];
	uint64_t lost = 0, last = 0;
	struct pf *w = pf_open(f);
	struct progress p;
	struct tev ev;
	const struct tev *e = &ev;
	int r = 0;

	if (w && pf_compress(w, !plain) == ENOTSUP)
		err_msg("built without zlib: plain packets, not compressed ones");

	for (size_t i = 0; w && i < l->npr; i++) {
		const char *exe = z && l->pr[i].pid ? symz_exe(z, l->pr[i].pid, l->pr[i].last) : NULL;
		const struct pt_ext_proc *id = tlog_identity(l, &l->pr[i]);
		/* (a process given a pid another had before: a pid of its own
		 * for the viewer, births.c, its name the real one; its parent
		 * the process the parent's pid named then) */
		int32_t key = tlog_pid_key(l, i);
		const struct tproc *pp = id && id->ppid > 0 ? tlog_proc(l, id->ppid, id->ts) : NULL;
		char name[300], note[64];
		const char *nm = exe && strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
		tlog_pid_key_note(l, i, note, sizeof note);
		if (note[0]) {
			snprintf(name, sizeof name, "%s%s", nm ? nm : "process", note);
			nm = name;
		}
		pf_process(w, key, nm, pp ? tlog_pid_key(l, (size_t)(pp - l->pr)) : id ? id->ppid : 0,
		           id ? id->cmdline : NULL);
	}
	for (size_t i = 0; w && i < l->nth; i++) /* threads the trace does not identify */
		if (!thrmap_find(l->thrs, l->th[i].pid, l->th[i].tid, 0))
			pf_thread(w, tlog_thread_pid_key(l, &l->th[i]), l->th[i].tid, l->th[i].idx, NULL);
	progress_begin(&p, "export perfetto", l->nev);
	while (w && (r = tlog_next(l, &ev)) > 0) {
		const struct tthread *th = &l->th[e->thread];
		const void *d = e->data;
		size_t len = e->len;
		raw[0] = 0;
		if (e->addr && !z)
			snprintf(raw, sizeof raw, "0x%llx", (unsigned long long)e->addr);
		if (e->id < PT_SYS_IDS && e->id != POSIX_TRACE_UNNAMED_USEREVENT) { /* decoded, as show does */
			fmt_event_data(text, sizeof text, l, e);
			d = text;
			len = strlen(text);
		}
		uint64_t key = pf_key(w, l, th, e->ts);
		int32_t pid = tlog_thread_pid_key(l, th); /* (the viewer's: births.c) */
		if (spans_event(sp, l, e, &m)) {
			err_msg("out of memory");
			r = -1;
			break;
		}
		pf_span(w, sp, e, &m, pid, key, described, 0);
		/* a keyed span: an arrow from its begin event to its end event,
		 * whatever threads they are on */
		if (m.flow && (m.kind == SPAN_BEGIN || m.paired))
			pf_flow(w, m.flow, m.kind != SPAN_BEGIN);
		uint64_t sym_id = 0;
		const char *sym = z && e->addr ? symz_lookup_id(z, th->pid, e->ts, e->addr, &sym_id) : raw;
		unsigned flags = e->trunc == POSIX_TRACE_TRUNCATED_RECORD ? PF_TRUNCATED : 0;
		int nf = pf_fields(l, e, fields, fat, ftext, sizeof ftext);
		if (nf >= 0)
			pf_event_fields(w, pid, key, e->ts, e->id, tlog_name(l, e->id, tmp, sizeof tmp),
			                sym, sym_id, fields, (size_t)nf, flags);
		else
			pf_event(w, pid, key, e->ts, e->id, tlog_name(l, e->id, tmp, sizeof tmp), sym,
			         sym_id, d, len, flags);
		pf_span(w, sp, e, &m, pid, key, described, 1);
		if (e->id == POSIX_TRACE_RESUME && e->lost && e->lost != UINT64_MAX) {
			pf_loss(w, pid, key, e->ts, e->lost);
			lost += e->lost;
		}
		last = e->ts > last ? e->ts : last;
		if ((e->n & 1023) == 0)
			progress_update(&p, e->n);
	}
	progress_end(&p);
	if (w && r == 0 && tlog_lost_total(l) > lost) /* not counted by a gap: at the end */
		pf_loss(w, 0, 0, last, tlog_lost_total(l) - lost);
	int rc = w ? pf_close(w) : ENOMEM;
	if (r < 0)
		return 1;
	if (rc)
		errno = rc;
	return rc ? -1 : 0;
}
