/*
 * ptbench_tp.c -- the tracepoint provider object: probes and tracepoint
 * definitions for ptbench_tp.h, linked statically into the benchmark.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "ptbench_tp.h"
