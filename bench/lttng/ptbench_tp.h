/*
 * ptbench_tp.h -- LTTng-UST tracepoint provider for bench/lttng/ (the
 * same-run comparison with posixtrace).
 *
 * Two events of provider "ptbench":
 *   ptbench:ev     the measured event: a 32-byte payload, the same size
 *                  as posix_trace_event(id, buf, 32) in bench/bench.c
 *                  (a fixed-length byte array: LTTng's cheapest way to
 *                  record 32 opaque bytes, no length field)
 *   ptbench:other  never hit; enabled alone when the session must be
 *                  running while ptbench:ev is not enabled
 *
 * Written against the lttng-ust 2.13 API (LTTNG_UST_* macros).  Include it
 * normally to use the tracepoints; ptbench_tp.c includes it once more with
 * LTTNG_UST_TRACEPOINT_CREATE_PROBES and LTTNG_UST_TRACEPOINT_DEFINE to
 * generate the probes and the tracepoint definitions (static linking, no
 * dlopen of a provider library).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ptbench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "ptbench_tp.h"

#if !defined(PTBENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define PTBENCH_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

#define PTBENCH_PAYLOAD 32

LTTNG_UST_TRACEPOINT_EVENT(ptbench, ev,
	LTTNG_UST_TP_ARGS(const uint8_t *, data),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_array(uint8_t, payload, data, PTBENCH_PAYLOAD)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(ptbench, other,
	LTTNG_UST_TP_ARGS(const uint8_t *, data),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_array(uint8_t, payload, data, PTBENCH_PAYLOAD)
	)
)

#endif /* PTBENCH_TP_H */

#include <lttng/tracepoint-event.h>
