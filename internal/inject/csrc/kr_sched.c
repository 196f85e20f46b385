/*
 * kreplay's schedule recorder: a light library that records the host's
 * schedule of an inference (docs/whole-inference.md, section 1).
 *
 * It records in one of two modes. Hook mode: preloaded (LD_PRELOAD), the
 * library interposes dlsym and, through it and cuGetProcAddress, the
 * driver's entry points of the calls below (kr_sched_hook.c says how);
 * kr_sched_hooked() returns how many it interposed, and arming only sets
 * the flag its wrappers read. CUPTI mode, when nothing was interposed:
 * loaded by the CUDA driver at cuInit through CUDA_INJECTION64_PATH, it
 * only opens libcuda and libcupti, and kr_sched_arm(1) subscribes to
 * CUPTI's driver-API callbacks for the calls below alone (each callback id
 * found by name, with its _v2, _ptsz and _ptds variants).
 *
 * Armed, it appends one fixed-size record per call of the arming thread
 * (the inference's: calls of other threads, such as a distributed run's
 * watchdog polling its events, are counted and left out) to a
 * preallocated buffer of $KREPLAY_SCHED_RECORDS records (default 4M, 64
 * bytes each); a call past its end is counted as lost, never written.
 * kr_sched_mark(kind) appends a mark: the runner marks 1 at an
 * inference's start, 2 at each generated token, 3 at the inference's end,
 * 4 before the first inference of a block of recorded inferences (the host
 * synchronized with the GPU before it); a mark of another kind (0) stays
 * outside any inference. kr_sched_arm(0) disarms; kr_sched_arm(2) arms
 * again, appending. kr_sched_pause() disarms and, in CUPTI mode,
 * unsubscribes and detaches CUPTI from the process (cuptiFinalize), so
 * that the process runs as it did before arming and the profiler may
 * attach, keeping the records (the runner interleaves recorded inferences
 * with measured ones so); kr_sched_flush() writes the text file below;
 * kr_sched_detach() pauses and frees the buffer. Subscribing only at arm
 * keeps CUPTI out of the measured run that comes before: attached, even
 * without a callback, it slows every launch. In hook mode the measured
 * run is the recorded run (the runner arms it through every measured
 * block).
 *
 * Calls recorded, by kind:
 *   L cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel
 *   C cuMemcpy*Async; cuMemcpy* (synchronous), 2D, 3D and peer ones too
 *   S cuMemsetD*Async; cuMemsetD* (synchronous)
 *   G cuGraphLaunch
 *   W cuStreamSynchronize, cuEventSynchronize, cuCtxSynchronize
 *   Q cuStreamQuery, cuEventQuery
 *   R cuEventRecord, cuEventRecordWithFlags
 *   E cuStreamWaitEvent
 *   M kr_sched_mark
 * (the batched copies of CUDA 12.8, cuMemcpyBatchAsync and
 * cuMemcpy3DBatchAsync, are not among them).
 *
 * The work per call while armed, the hot path (CUPTI mode: the callback;
 * hook mode: the wrapper, then kr_enter and kr_leave, the same work
 * without the table lookup and the correlation slot): at API entry
 * one read of CLOCK_MONOTONIC (vDSO), a table lookup by callback id,
 * a comparison of the calling thread with the arming one (pthread_self,
 * a thread-local read), one
 * relaxed atomic fetch-and-add on the buffer's index, a few loads of the
 * call's parameters and one 64-byte store into the buffer (preallocated
 * and faulted in at the first arm); at API exit a clock read, a store,
 * and for a query one load of its result. No lock, no allocation, no
 * system call, no string work. Disarmed, the callback returns at once
 * (it clears the call's correlation slot); a hook mode wrapper loads the
 * flag and tail-calls the real function. Kernel names are resolved at flush, once per function
 * (cuFuncGetName, or for a CUkernel cuKernelGetFunction first), and the
 * direction of a copy between unified addresses is asked of the driver
 * there too (cuPointerGetAttribute; in hook mode found in the library
 * whose entry points were interposed); nothing is written to disk while
 * armed.
 *
 * The file (kr_sched_flush), one line per record, fields separated by one
 * space, times in integer nanoseconds relative to the first record of the
 * record's inference, handles in hex (0x0 the legacy default stream, 0x2
 * the per-thread default stream of a _ptsz/_ptds call):
 *   kreplay-schedule 1
 *   cpu <the host CPU's model: the rest of the line>
 *   clock CLOCK_MONOTONIC
 *   recorder hook|cupti   (the mode it recorded in)
 *   process <index> overhead_ns_per_inference <armed-measured>
 *           armed_wall_ns <armed wall per inference> measured_wall_ns <measured wall per inference>
 *           (hook mode: the medians of single inferences armed and
 *           disarmed; CUPTI mode: the recorded blocks' and the measured
 *           blocks' wall per inference; the runner measures them)
 *           [overhead_ns_per_call <the recorder's cost per call, from the runner's probe>]
 *   name <id> <kernel name: the rest of the line>   (before the first use of id)
 *   inference <n> start <CLOCK_MONOTONIC ns of its first record> [fresh]
 *     (fresh: a mark 4 came since the previous inference's end: it does
 *     not follow the previous inference back to back)
 *   L <enter> <exit> <stream> <name id> <gx>,<gy>,<gz> <bx>,<by>,<bz>
 *   C <enter> <exit> <stream> <bytes> <HtoD|DtoH|DtoD|HtoH> <async|sync>
 *   S <enter> <exit> <stream> <bytes> <async|sync>
 *   G <enter> <exit> <stream> <graph exec>
 *   W <enter> <exit> <s|e|c> <stream, event, or 0x0 for the context>
 *   Q <enter> <exit> <s|e> <stream or event> <ready|notready>
 *   R <enter> <exit> <event> <stream>
 *   E <enter> <exit> <stream> <event>
 *   M <enter> <exit> <mark kind>
 *   end <n> <exit of its end mark>
 * An inference is the records from a mark 1 to the next mark 3, both
 * included; records outside one, and an inference without its end (lost
 * to the buffer's end), are counted (kr_sched_stats) and left out.
 *
 * Build: cc -O2 -shared -fPIC -o libkr_sched.so kr_sched.c kr_sched_hook.c -ldl -lpthread
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "kr_sched.h"
#include "kr_open.h"

#define KR_EXPORT __attribute__((visibility("default")))

/* ---- run-time loaded entry points ---- */
static kr_CUresult (*p_cuFuncGetName)(const char **, kr_CUfunction);
static kr_CUresult (*p_cuKernelGetFunction)(kr_CUfunction *, kr_CUkernel);
static kr_CUresult (*p_cuPointerGetAttribute)(void *, int, kr_CUdeviceptr);
static kr_CUresult (*p_cuCtxSynchronize)(void);
static kr_CUptiResult (*p_cuptiSubscribe)(kr_CUpti_SubscriberHandle *, kr_CUpti_CallbackFunc, void *);
static kr_CUptiResult (*p_cuptiEnableCallback)(uint32_t, kr_CUpti_SubscriberHandle, int, uint32_t);
static kr_CUptiResult (*p_cuptiGetCallbackName)(int, uint32_t, const char **);
static kr_CUptiResult (*p_cuptiUnsubscribe)(kr_CUpti_SubscriberHandle);
static kr_CUptiResult (*p_cuptiFinalize)(void);

/* ---- what a call's parameters are ---- */
enum {
	OP_NONE,
	OP_LAUNCH,    /* kr_cuLaunchKernel_params */
	OP_LAUNCH_EX, /* kr_cuLaunchKernelEx_params */
	OP_COPY,      /* words: bytes, stream, dst and src pointers */
	OP_COPY2D,    /* word 0 a kr_CUDA_MEMCPY2D *, the stream word 1 */
	OP_COPY3D,    /* word 0 a kr_CUDA_MEMCPY3D * (or _PEER), the stream word 1 */
	OP_SET,       /* words: the count N, the stream */
	OP_SET2D,     /* words: Width (Height the next), the stream */
	OP_GRAPH,     /* exec word 0, stream word 1 */
	OP_WAIT_S,    /* stream word 0 */
	OP_WAIT_E,    /* event word 0 */
	OP_WAIT_C,
	OP_QUERY_S, /* stream word 0 */
	OP_QUERY_E, /* event word 0 */
	OP_RECORD,  /* event word 0, stream word 1 */
	OP_WAIT_EV, /* stream word 0, event word 1 */
};

/* decoder: kr_sched.h. */

#define COPY(st, by, d, s, ds, ss) {.op = OP_COPY, .stream = st, .bytes = by, .dst = d, .src = s, .dside = ds, .sside = ss}
#define SET(op_, st, by, el) {.op = op_, .stream = st, .bytes = by, .dst = -1, .src = -1, .elem = el}
#define ONLY(op_, st) {.op = op_, .stream = st, .dst = -1, .src = -1}

/* calls names the driver calls recorded, without their _ptsz or _ptds
 * suffix. */
static const struct {
	const char *name;
	decoder d;
} calls[] = {
	{"cuLaunchKernel", ONLY(OP_LAUNCH, -1)},
	{"cuLaunchCooperativeKernel", ONLY(OP_LAUNCH, -1)},
	{"cuLaunchKernelEx", ONLY(OP_LAUNCH_EX, -1)},
	{"cuMemcpy", COPY(-1, 2, 0, 1, '?', '?')},
	{"cuMemcpyAsync", COPY(3, 2, 0, 1, '?', '?')},
	{"cuMemcpyPeer", COPY(-1, 4, 0, 2, 'D', 'D')},
	{"cuMemcpyPeerAsync", COPY(5, 4, 0, 2, 'D', 'D')},
	{"cuMemcpyHtoD_v2", COPY(-1, 2, 0, 1, 'D', 'H')},
	{"cuMemcpyHtoDAsync_v2", COPY(3, 2, 0, 1, 'D', 'H')},
	{"cuMemcpyDtoH_v2", COPY(-1, 2, 0, 1, 'H', 'D')},
	{"cuMemcpyDtoHAsync_v2", COPY(3, 2, 0, 1, 'H', 'D')},
	{"cuMemcpyDtoD_v2", COPY(-1, 2, 0, 1, 'D', 'D')},
	{"cuMemcpyDtoDAsync_v2", COPY(3, 2, 0, 1, 'D', 'D')},
	{"cuMemcpyDtoA_v2", COPY(-1, 3, -1, -1, 'D', 'D')},
	{"cuMemcpyAtoD_v2", COPY(-1, 3, -1, -1, 'D', 'D')},
	{"cuMemcpyAtoA_v2", COPY(-1, 4, -1, -1, 'D', 'D')},
	{"cuMemcpyHtoA_v2", COPY(-1, 3, -1, -1, 'D', 'H')},
	{"cuMemcpyHtoAAsync_v2", COPY(4, 3, -1, -1, 'D', 'H')},
	{"cuMemcpyAtoH_v2", COPY(-1, 3, -1, -1, 'H', 'D')},
	{"cuMemcpyAtoHAsync_v2", COPY(4, 3, -1, -1, 'H', 'D')},
	{"cuMemcpy2D_v2", ONLY(OP_COPY2D, -1)},
	{"cuMemcpy2DUnaligned_v2", ONLY(OP_COPY2D, -1)},
	{"cuMemcpy2DAsync_v2", ONLY(OP_COPY2D, 1)},
	{"cuMemcpy3D_v2", ONLY(OP_COPY3D, -1)},
	{"cuMemcpy3DAsync_v2", ONLY(OP_COPY3D, 1)},
	{"cuMemcpy3DPeer", ONLY(OP_COPY3D, -1)},
	{"cuMemcpy3DPeerAsync", ONLY(OP_COPY3D, 1)},
	{"cuMemsetD8_v2", SET(OP_SET, -1, 2, 1)},
	{"cuMemsetD16_v2", SET(OP_SET, -1, 2, 2)},
	{"cuMemsetD32_v2", SET(OP_SET, -1, 2, 4)},
	{"cuMemsetD8Async", SET(OP_SET, 3, 2, 1)},
	{"cuMemsetD16Async", SET(OP_SET, 3, 2, 2)},
	{"cuMemsetD32Async", SET(OP_SET, 3, 2, 4)},
	{"cuMemsetD2D8_v2", SET(OP_SET2D, -1, 3, 1)},
	{"cuMemsetD2D16_v2", SET(OP_SET2D, -1, 3, 2)},
	{"cuMemsetD2D32_v2", SET(OP_SET2D, -1, 3, 4)},
	{"cuMemsetD2D8Async", SET(OP_SET2D, 5, 3, 1)},
	{"cuMemsetD2D16Async", SET(OP_SET2D, 5, 3, 2)},
	{"cuMemsetD2D32Async", SET(OP_SET2D, 5, 3, 4)},
	{"cuGraphLaunch", ONLY(OP_GRAPH, 1)},
	{"cuStreamSynchronize", ONLY(OP_WAIT_S, 0)},
	{"cuEventSynchronize", ONLY(OP_WAIT_E, -1)},
	{"cuCtxSynchronize", ONLY(OP_WAIT_C, -1)},
	{"cuCtxSynchronize_v2", ONLY(OP_WAIT_C, -1)},
	{"cuStreamQuery", ONLY(OP_QUERY_S, 0)},
	{"cuEventQuery", ONLY(OP_QUERY_E, -1)},
	{"cuEventRecord", ONLY(OP_RECORD, 1)},
	{"cuEventRecordWithFlags", ONLY(OP_RECORD, 1)},
	{"cuStreamWaitEvent", ONLY(OP_WAIT_EV, 0)},
};

/* kr_decode_name: kr_sched.h. */
int kr_decode_name(const char *name, decoder *out) {
	if (!name) return 0;
	size_t n = strlen(name);
	int ptsz = n > 5 && (!strcmp(name + n - 5, "_ptsz") || !strcmp(name + n - 5, "_ptds"));
	if (ptsz) n -= 5;
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
		if (strlen(calls[i].name) == n && !strncmp(calls[i].name, name, n)) {
			*out = calls[i].d;
			out->ptsz = ptsz;
			return 1;
		}
	}
	return 0;
}

/* ---- the records ---- */
#define KR_SYNC 1  /* a synchronous copy or memset */
#define KR_READY 2 /* a query that returned CUDA_SUCCESS */

typedef struct {
	uint64_t t0, t1; /* CLOCK_MONOTONIC ns at API entry and exit (0: no exit seen) */
	uint64_t h1, h2; /* by kind: L stream, function; C, S stream, bytes; G stream,
	                    exec; W, Q stream or event; R event, stream; E stream,
	                    event; M the mark's kind */
	union {
		uint32_t dim[6]; /* L: grid, block */
		struct {
			uint64_t dst, src; /* C: the pointers of a copy whose side is '?' */
		} p;
	} u;
	uint8_t kind;      /* 'L', 'C', ... */
	char dside, sside; /* C: 'H', 'D' or '?'; W, Q: the target, 's', 'e' or 'c' */
	uint8_t flags;     /* KR_SYNC, KR_READY */
	uint32_t pad;
} rec;
_Static_assert(sizeof(rec) == 64, "a record is one cache line");

#define KR_MAX_CBID 4096
#define KR_DEFAULT_RECORDS (4u << 20)
/* The correlation slot holds the armed generation above bit 40 and the
 * record's index + 1 below: an exit whose entry was not recorded in this
 * generation is ignored. */
#define KR_GEN_SHIFT 40
#define KR_IDX_MASK ((1ULL << KR_GEN_SHIFT) - 1)

static decoder decoders[KR_MAX_CBID];
static int ready;         /* InitializeInjection ran and found its entry points */
static int table_built;   /* decoders filled from CUPTI's names */
atomic_int kr_armed;
atomic_int kr_hooked;
atomic_llong kr_hook_old, kr_hook_second;
static uint64_t gen;      /* incremented at each arm */
static rec *buf;
static size_t cap = KR_DEFAULT_RECORDS;
static atomic_uint_fast64_t next; /* the next record's index (may pass cap) */
static atomic_uint_fast64_t lost; /* calls past the buffer's end */
static pthread_t arm_thread;      /* the thread that armed: the inference's */
static atomic_uint_fast64_t other; /* calls of other threads, left out */
static kr_CUpti_SubscriberHandle subscriber;
static long long stats[5]; /* records, lost, outside, incomplete, other threads: the last flush's */

static inline uint64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
#ifndef KR_SCHED_NOW
#define KR_SCHED_NOW now_ns
#endif

/* stream_of normalizes a stream handle: CU_STREAM_LEGACY is the legacy
 * default stream, 0; a _ptsz/_ptds call's 0 is the per-thread one. */
static inline uint64_t stream_of(uint64_t s, int ptsz) {
	if (s == KR_STREAM_LEGACY) return 0;
	if (s == 0 && ptsz) return KR_STREAM_PER_THREAD;
	return s;
}

static inline char side_of(int memtype) {
	if (memtype == KR_MEMORYTYPE_HOST) return 'H';
	if (memtype == KR_MEMORYTYPE_UNIFIED) return '?';
	return 'D';
}

/* decode fills r from a call's parameters. */
static inline void decode(const decoder *d, const void *params, rec *r) {
	const uint64_t *w = params;
	if (d->op == OP_WAIT_C) { /* no parameter read */
		r->kind = 'W';
		r->dside = 'c';
		return;
	}
	if (!w) return; /* not met: CUPTI passes every call's parameters */
	uint64_t stream = d->stream >= 0 ? w[d->stream] : 0;
	switch (d->op) {
	case OP_LAUNCH: {
		const kr_cuLaunchKernel_params *p = params;
		r->kind = 'L';
		r->h1 = stream_of((uint64_t)(uintptr_t)p->hStream, d->ptsz);
		r->h2 = (uint64_t)(uintptr_t)p->f;
		r->u.dim[0] = p->gridDimX, r->u.dim[1] = p->gridDimY, r->u.dim[2] = p->gridDimZ;
		r->u.dim[3] = p->blockDimX, r->u.dim[4] = p->blockDimY, r->u.dim[5] = p->blockDimZ;
		return;
	}
	case OP_LAUNCH_EX: {
		const kr_cuLaunchKernelEx_params *p = params;
		const kr_CUlaunchConfig *c = p->config;
		r->kind = 'L';
		r->h2 = (uint64_t)(uintptr_t)p->f;
		if (!c) return;
		r->h1 = stream_of((uint64_t)(uintptr_t)c->hStream, d->ptsz);
		r->u.dim[0] = c->gridDimX, r->u.dim[1] = c->gridDimY, r->u.dim[2] = c->gridDimZ;
		r->u.dim[3] = c->blockDimX, r->u.dim[4] = c->blockDimY, r->u.dim[5] = c->blockDimZ;
		return;
	}
	case OP_COPY:
		r->kind = 'C';
		r->h2 = w[d->bytes];
		r->dside = d->dside, r->sside = d->sside;
		if (d->dst >= 0) r->u.p.dst = w[d->dst];
		if (d->src >= 0) r->u.p.src = w[d->src];
		break;
	case OP_COPY2D: {
		const kr_CUDA_MEMCPY2D *c = (const kr_CUDA_MEMCPY2D *)(uintptr_t)w[0];
		r->kind = 'C';
		if (!c) break;
		r->h2 = (uint64_t)c->WidthInBytes * c->Height;
		r->dside = side_of(c->dstMemoryType), r->sside = side_of(c->srcMemoryType);
		r->u.p.dst = c->dstDevice, r->u.p.src = c->srcDevice;
		break;
	}
	case OP_COPY3D: {
		const kr_CUDA_MEMCPY3D *c = (const kr_CUDA_MEMCPY3D *)(uintptr_t)w[0];
		r->kind = 'C';
		if (!c) break;
		r->h2 = (uint64_t)c->WidthInBytes * c->Height * (c->Depth ? c->Depth : 1);
		r->dside = side_of(c->dstMemoryType), r->sside = side_of(c->srcMemoryType);
		r->u.p.dst = c->dstDevice, r->u.p.src = c->srcDevice;
		break;
	}
	case OP_SET:
		r->kind = 'S';
		r->h2 = w[d->bytes] * d->elem;
		break;
	case OP_SET2D:
		r->kind = 'S';
		r->h2 = w[d->bytes] * w[d->bytes + 1] * d->elem;
		break;
	case OP_GRAPH:
		r->kind = 'G';
		r->h2 = w[0];
		break;
	case OP_WAIT_S:
	case OP_QUERY_S:
		r->kind = d->op == OP_WAIT_S ? 'W' : 'Q';
		r->dside = 's';
		r->h1 = stream_of(w[0], d->ptsz);
		return;
	case OP_WAIT_E:
	case OP_QUERY_E:
		r->kind = d->op == OP_WAIT_E ? 'W' : 'Q';
		r->dside = 'e';
		r->h1 = w[0];
		return;
	case OP_RECORD:
		r->kind = 'R';
		r->h1 = w[0];
		r->h2 = stream_of(w[1], d->ptsz);
		return;
	case OP_WAIT_EV:
		r->kind = 'E';
		r->h1 = stream_of(w[0], d->ptsz);
		r->h2 = w[1];
		return;
	}
	/* copies and memsets: their stream, or the default one when synchronous */
	if (d->stream < 0) r->flags |= KR_SYNC;
	r->h1 = stream_of(stream, d->ptsz);
}

/* kr_enter and kr_leave: kr_sched.h; the hot path of both modes (the
 * callback below and the wrappers of kr_sched_hook.c, which checked
 * armed). Another thread's call (a watchdog polling events) is not the
 * inference's, and its entry would break the records' order: counted. */
uint64_t kr_enter(const decoder *d, const void *params) {
	if (!pthread_equal(pthread_self(), arm_thread)) {
		atomic_fetch_add_explicit(&other, 1, memory_order_relaxed);
		return 0;
	}
	rec r = {.t0 = KR_SCHED_NOW()};
	uint64_t i = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
	if (i >= cap) {
		atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
		return 0;
	}
	decode(d, params, &r);
	buf[i] = r;
	return i + 1;
}

void kr_leave(uint64_t i, kr_CUresult result) {
	if (i == 0) return;
	rec *r = &buf[i - 1];
	r->t1 = KR_SCHED_NOW();
	if (r->kind == 'Q' && result == KR_SUCCESS) r->flags |= KR_READY;
}

/* callback is CUPTI's: the hot path (see the top of the file); the
 * correlation slot carries kr_enter's index to the call's exit. */
static void callback(void *ud, int domain, uint32_t cbid, const void *data) {
	(void)ud;
	if (domain != KR_CB_DOMAIN_DRIVER_API || cbid >= KR_MAX_CBID) return;
	const kr_CallbackData *cd = data;
	if (cd->callbackSite == KR_API_EXIT) {
		uint64_t c = *cd->correlationData;
		uint64_t i = c & KR_IDX_MASK;
		if (i == 0 || c >> KR_GEN_SHIFT != gen || i > cap) return;
		kr_leave(i, cd->functionReturnValue ? *(const kr_CUresult *)cd->functionReturnValue : KR_ERROR_NOT_READY);
		return;
	}
	*cd->correlationData = 0;
	if (!atomic_load_explicit(&kr_armed, memory_order_relaxed)) return;
	const decoder *d = &decoders[cbid];
	if (d->op == OP_NONE) return;
	uint64_t i = kr_enter(d, cd->functionParams);
	if (i) *cd->correlationData = gen << KR_GEN_SHIFT | i;
}

/* kr_sched_mark appends a mark of kind (1 an inference's start, 2 a
 * generated token, 3 an inference's end, 4 a block's start) while armed. */
KR_EXPORT void kr_sched_mark(int kind) {
	if (!atomic_load_explicit(&kr_armed, memory_order_relaxed)) return;
	rec r = {.t0 = KR_SCHED_NOW(), .kind = 'M', .h1 = (uint64_t)kind};
	uint64_t i = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
	if (i >= cap) {
		atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
		return;
	}
	r.t1 = KR_SCHED_NOW();
	buf[i] = r;
}

static int fail(const char *msg) {
	fprintf(stderr, "kreplay schedule recorder: %s\n", msg);
	return 0;
}

/* build_table enables the callbacks of the recorded calls, found by name. */
static int build_table(kr_CUpti_SubscriberHandle sub) {
	int enabled = 0;
	for (uint32_t id = 1; id < KR_MAX_CBID; id++) {
		const char *name = NULL;
		decoder d;
		if (p_cuptiGetCallbackName(KR_CB_DOMAIN_DRIVER_API, id, &name) != 0 || !kr_decode_name(name, &d)) continue;
		if (p_cuptiEnableCallback(1, sub, KR_CB_DOMAIN_DRIVER_API, id) != 0) continue;
		decoders[id] = d;
		enabled++;
	}
	return enabled;
}

/* read_records sets cap from $KREPLAY_SCHED_RECORDS; 0 when it is not a
 * count of records from 1 to 2^32. */
static int read_records(void) {
	const char *n = getenv("KREPLAY_SCHED_RECORDS");
	if (!n || !*n) return 1;
	char *end;
	unsigned long long v = strtoull(n, &end, 10);
	if (*end || v == 0 || v > (1ULL << 32)) return fail("KREPLAY_SCHED_RECORDS is not a count of records from 1 to 2^32");
	cap = (size_t)v;
	return 1;
}

/* cupti_subscribe subscribes to CUPTI and enables the recorded calls'
 * callbacks, once: 0, or -3 when CUPTI refused. */
static int cupti_subscribe(void) {
	if (subscriber) return 0;
	kr_CUpti_SubscriberHandle sub;
	if (p_cuptiSubscribe(&sub, callback, NULL) != 0) {
		fail("cuptiSubscribe failed (another CUPTI client?)");
		return -3;
	}
	subscriber = sub;
	memset(decoders, 0, sizeof decoders);
	table_built = build_table(sub);
	if (!table_built) {
		fail("no driver call to record (cuptiGetCallbackName or cuptiEnableCallback failed)");
		return -3;
	}
	return 0;
}

/* kr_sched_arm(1) starts recording into an emptied buffer, allocated the
 * first time; kr_sched_arm(2) does the same but keeps what the buffer
 * holds, appending to it (recording resumed after kr_sched_pause);
 * kr_sched_arm(0) stops. In hook mode (kr_sched_hooked() > 0: the
 * library was preloaded and interposed driver entry points) arming only
 * sets the flag the wrappers read; in CUPTI mode, when not subscribed, it
 * subscribes to CUPTI and enables the recorded calls' callbacks. It
 * returns 0, or -1 when neither mode can record (no driver entry point
 * interposed, and CUDA did not initialize the library through
 * CUDA_INJECTION64_PATH, or its libraries were not found), -2 when the
 * buffer could not be allocated (or KREPLAY_SCHED_RECORDS is not a
 * count), -3 when CUPTI refused (another CUPTI client holds the
 * process). */
KR_EXPORT int kr_sched_arm(int on) {
	if (!on) {
		atomic_store(&kr_armed, 0);
		return 0;
	}
	int hooked = atomic_load(&kr_hooked) > 0;
	if (!ready && !hooked) return -1;
	if (!buf) {
		if (!ready && !read_records()) return -2;
		void *p = mmap(NULL, cap * sizeof(rec), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p == MAP_FAILED) {
			fail("cannot allocate the record buffer (lower KREPLAY_SCHED_RECORDS)");
			return -2;
		}
		buf = p;
	}
	if (!hooked) {
		int rc = cupti_subscribe();
		if (rc) return rc;
	}
	if (on != 2) {
		atomic_store(&next, 0);
		atomic_store(&lost, 0);
		atomic_store(&other, 0);
	}
	arm_thread = pthread_self();
	gen = (gen + 1) & ((1ULL << (64 - KR_GEN_SHIFT)) - 1);
	if (gen == 0) gen = 1;
	atomic_store(&kr_armed, 1);
	return 0;
}

/* kr_sched_hooked returns how many driver entry points the library
 * interposed (kr_sched_hook.c): 0 when it records through CUPTI's
 * callbacks (loaded through CUDA_INJECTION64_PATH alone). */
KR_EXPORT int kr_sched_hooked(void) { return atomic_load(&kr_hooked); }

/* ---- the flush ---- */

/* names maps a launched function to its name's id: an open-addressing
 * table keyed by the handle as launched (a CUfunction or a CUkernel). */
typedef struct {
	uint64_t f;
	int id;
} nameslot;
static nameslot *names;
static size_t names_cap, names_n;

static const char *resolve(uint64_t h) {
	const char *name = NULL;
	kr_CUfunction f = (kr_CUfunction)(uintptr_t)h;
	if (p_cuFuncGetName && p_cuFuncGetName(&name, f) == 0 && name) return name;
	kr_CUfunction g = NULL;
	if (p_cuKernelGetFunction && p_cuKernelGetFunction(&g, (kr_CUkernel)f) == 0 && g && p_cuFuncGetName(&name, g) == 0 && name)
		return name;
	return "?";
}

/* name_id returns f's id, writing its name line to out the first time; -1
 * when out of memory. */
static int name_id(uint64_t f, FILE *out) {
	if (names_n * 2 >= names_cap) {
		size_t ncap = names_cap ? names_cap * 2 : 1024;
		nameslot *n = calloc(ncap, sizeof *n);
		if (!n) return -1;
		for (size_t i = 0; i < names_cap; i++) {
			if (names[i].id == 0) continue;
			size_t j = (names[i].f >> 4) & (ncap - 1);
			while (n[j].id) j = (j + 1) & (ncap - 1);
			n[j] = names[i];
		}
		free(names);
		names = n;
		names_cap = ncap;
	}
	size_t j = (f >> 4) & (names_cap - 1);
	while (names[j].id && names[j].f != f) j = (j + 1) & (names_cap - 1);
	if (!names[j].id) {
		names[j].f = f;
		names[j].id = (int)++names_n; /* stored + 1: 0 is an empty slot */
		fprintf(out, "name %d %s\n", names[j].id - 1, resolve(f));
	}
	return names[j].id - 1;
}

/* side resolves a copy's side '?' by asking the driver what p is. */
static char side(char s, uint64_t p) {
	if (s != '?') return s;
	unsigned int mt = 0;
	if (p_cuPointerGetAttribute && p_cuPointerGetAttribute(&mt, KR_POINTER_ATTRIBUTE_MEMORY_TYPE, p) == 0 &&
	    mt != KR_MEMORYTYPE_HOST)
		return 'D';
	return 'H';
}

static void write_rec(FILE *out, const rec *r, uint64_t start, const int *ids, size_t k) {
	unsigned long long t0 = r->t0 - start, t1 = (r->t1 ? r->t1 : r->t0) - start;
	unsigned long long h1 = r->h1, h2 = r->h2;
	switch (r->kind) {
	case 'L':
		fprintf(out, "L %llu %llu 0x%llx %d %u,%u,%u %u,%u,%u\n", t0, t1, h1, ids[k], r->u.dim[0], r->u.dim[1], r->u.dim[2],
		        r->u.dim[3], r->u.dim[4], r->u.dim[5]);
		break;
	case 'C':
		fprintf(out, "C %llu %llu 0x%llx %llu %cto%c %s\n", t0, t1, h1, h2, side(r->sside, r->u.p.src), side(r->dside, r->u.p.dst),
		        r->flags & KR_SYNC ? "sync" : "async");
		break;
	case 'S':
		fprintf(out, "S %llu %llu 0x%llx %llu %s\n", t0, t1, h1, h2, r->flags & KR_SYNC ? "sync" : "async");
		break;
	case 'G':
		fprintf(out, "G %llu %llu 0x%llx 0x%llx\n", t0, t1, h1, h2);
		break;
	case 'W':
		fprintf(out, "W %llu %llu %c 0x%llx\n", t0, t1, r->dside ? r->dside : 'c', h1);
		break;
	case 'Q':
		fprintf(out, "Q %llu %llu %c 0x%llx %s\n", t0, t1, r->dside, h1, r->flags & KR_READY ? "ready" : "notready");
		break;
	case 'R':
	case 'E':
		fprintf(out, "%c %llu %llu 0x%llx 0x%llx\n", r->kind, t0, t1, h1, h2);
		break;
	case 'M':
		fprintf(out, "M %llu %llu %llu\n", t0, t1, h1);
		break;
	}
}

/* write_blocks writes the complete inferences among the n records: their
 * names first, then each inference. It returns how many it wrote, -1 out
 * of memory. */
static long long write_blocks(FILE *out, size_t n) {
	int *ids = calloc(n ? n : 1, sizeof *ids);
	size_t *from = calloc(n / 2 + 1, sizeof *from), *to = calloc(n / 2 + 1, sizeof *to);
	char *fresh = calloc(n / 2 + 1, 1);
	long long nb = 0, outside = 0, incomplete = 0;
	if (!ids || !from || !to || !fresh) {
		free(ids), free(from), free(to), free(fresh);
		return -1;
	}
	size_t open = 0;
	int in = 0, block = 0;
	for (size_t i = 0; i < n; i++) {
		const rec *r = &buf[i];
		int mark = r->kind == 'M' ? (int)r->h1 : 0;
		if (mark == 4) {
			block = 1; /* a block's start, outside any inference, not written */
		} else if (mark == 1) {
			if (in) incomplete++, outside += (long long)(i - open);
			in = 1, open = i;
		} else if (!in) {
			outside++;
		} else if (mark == 3) {
			fresh[nb] = (char)block, block = 0;
			from[nb] = open, to[nb] = i, nb++;
			in = 0;
		}
	}
	if (in) incomplete++, outside += (long long)(n - open);
	int bad = 0;
	for (long long b = 0; b < nb && !bad; b++)
		for (size_t i = from[b]; i <= to[b] && !bad; i++)
			if (buf[i].kind == 'L' && (ids[i] = name_id(buf[i].h2, out)) < 0) bad = 1;
	for (long long b = 0; b < nb && !bad; b++) {
		uint64_t start = buf[from[b]].t0;
		for (size_t i = from[b]; i <= to[b]; i++)
			if (buf[i].t0 < start) start = buf[i].t0;
		fprintf(out, "inference %lld start %llu%s\n", b, (unsigned long long)start, fresh[b] ? " fresh" : "");
		for (size_t i = from[b]; i <= to[b]; i++) write_rec(out, &buf[i], start, ids, i);
		const rec *e = &buf[to[b]];
		fprintf(out, "end %lld %llu\n", b, (unsigned long long)((e->t1 ? e->t1 : e->t0) - start));
	}
	free(ids), free(from), free(to), free(fresh);
	free(names);
	names = NULL, names_cap = names_n = 0;
	stats[2] = outside, stats[3] = incomplete;
	return bad ? -1 : nb;
}

/* driver_syms finds, in hook mode, the driver's calls the flush asks of
 * it, in the driver library whose entry points were interposed. */
static void driver_syms(void) {
	if (!kr_hook_driver_sym) return;
	*(void **)(&p_cuFuncGetName) = kr_hook_driver_sym("cuFuncGetName");
	*(void **)(&p_cuKernelGetFunction) = kr_hook_driver_sym("cuKernelGetFunction");
	*(void **)(&p_cuPointerGetAttribute) = kr_hook_driver_sym("cuPointerGetAttribute");
}

/* kr_sched_flush disarms and writes the recorded schedule to path (through
 * a temporary file beside it): cpu is the host's CPU model, process the
 * process's index in the capture, armed_wall_ns and measured_wall_ns the
 * wall per inference armed and disarmed the runner measured (see the
 * file's process line above), call_ns the recorder's cost per recorded call
 * as the runner's probe measured it (written when positive). It returns the number of inferences written, or
 * -1 with errno set (nothing recorded: ENODATA). kr_sched_stats then tells
 * what was left out. */
KR_EXPORT long long kr_sched_flush(const char *path, const char *cpu, int process, long long armed_wall_ns,
                                   long long measured_wall_ns, long long call_ns) {
	atomic_store(&kr_armed, 0);
	if (!buf) {
		errno = ENODATA;
		return -1;
	}
	uint64_t total = atomic_load(&next), nlost = atomic_load(&lost);
	size_t n = total < cap ? (size_t)total : cap;
	stats[0] = (long long)n, stats[1] = (long long)nlost, stats[4] = (long long)atomic_load(&other);
	char tmp[4200];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	FILE *out = fopen(tmp, "w");
	if (!out) return -1;
	static char obuf[1 << 20];
	setvbuf(out, obuf, _IOFBF, sizeof obuf);
	fprintf(out, "kreplay-schedule 1\ncpu %s\nclock CLOCK_MONOTONIC\nrecorder %s\n", cpu && *cpu ? cpu : "unknown",
	        atomic_load(&kr_hooked) > 0 ? "hook" : "cupti");
	fprintf(out, "process %d overhead_ns_per_inference %lld armed_wall_ns %lld measured_wall_ns %lld", process,
	        armed_wall_ns - measured_wall_ns, armed_wall_ns, measured_wall_ns);
	if (call_ns > 0) fprintf(out, " overhead_ns_per_call %lld", call_ns);
	fputc('\n', out);
	if (!ready) driver_syms();
	long long nb = write_blocks(out, n);
	int err = nb < 0 ? ENOMEM : 0;
	if (fclose(out) != 0 && !err) err = errno ? errno : EIO;
	if (!err && rename(tmp, path) != 0) err = errno;
	if (err) {
		remove(tmp);
		errno = err;
		return -1;
	}
	return nb;
}

/* kr_sched_stats copies up to n of these counts into out: the last
 * flush's records in the buffer, calls lost past its end, records outside
 * an inference, inferences left out without their end, calls of threads
 * other than the arming one (left out); then, in hook mode, the driver
 * entry points looked up for a CUDA version before 12.0 that got a
 * function of an older ABI than the wrappers take, passed through
 * unwrapped, and those passed through unwrapped because another
 * definition of the same call was wrapped already (kr_sched_hook.c). It
 * returns how many it copied. */
KR_EXPORT int kr_sched_stats(long long *out, int n) {
	long long all[7] = {stats[0], stats[1], stats[2], stats[3], stats[4], atomic_load(&kr_hook_old), atomic_load(&kr_hook_second)};
	int k = n < 7 ? n : 7;
	for (int i = 0; i < k; i++) out[i] = all[i];
	return k < 0 ? 0 : k;
}

/* kr_sched_pause disarms and, in CUPTI mode, unsubscribes from CUPTI and detaches CUPTI from
 * the process (cuptiFinalize, after a synchronize, unless
 * KREPLAY_SCHED_FINALIZE=0), so that the process runs as it did before
 * arming; it keeps the buffer, for kr_sched_arm(2) to append to and
 * kr_sched_flush to write. It returns non-zero when CUPTI refused. */
KR_EXPORT int kr_sched_pause(void) {
	/* in hook mode, not subscribed: a disarm */
	atomic_store(&kr_armed, 0);
	if (!subscriber) return 0;
	int bad = p_cuptiUnsubscribe(subscriber) != 0;
	subscriber = NULL;
	const char *fin = getenv("KREPLAY_SCHED_FINALIZE");
	if (!bad && !(fin && !strcmp(fin, "0")) && p_cuptiFinalize)
		if (p_cuCtxSynchronize() != 0 || p_cuptiFinalize() != 0) bad = 1;
	return bad;
}

/* kr_sched_detach is kr_sched_pause, then frees the buffer. */
KR_EXPORT int kr_sched_detach(void) {
	int bad = kr_sched_pause();
	if (buf) {
		munmap(buf, cap * sizeof(rec));
		buf = NULL;
	}
	return bad;
}

/* InitializeInjection is called by the CUDA driver during cuInit: it opens
 * libcuda and libcupti ($KREPLAY_INJECT_CUDA and $KREPLAY_INJECT_CUPTI, as
 * the kernel recorder, or their usual names) and reads
 * $KREPLAY_SCHED_RECORDS. It subscribes to nothing. */
KR_EXPORT int InitializeInjection(void) {
	if (!read_records()) return 0;
	void *cu, *cupti;
	const char *err = kr_open_cuda(&cu, &cupti);
	if (err) return fail(err);
	KR_SYM(cu, p_cuFuncGetName, "cuFuncGetName");
	KR_SYM(cu, p_cuPointerGetAttribute, "cuPointerGetAttribute");
	KR_SYM(cu, p_cuCtxSynchronize, "cuCtxSynchronize");
	KR_SYM(cupti, p_cuptiSubscribe, "cuptiSubscribe");
	KR_SYM(cupti, p_cuptiEnableCallback, "cuptiEnableCallback");
	KR_SYM(cupti, p_cuptiGetCallbackName, "cuptiGetCallbackName");
	KR_SYM(cupti, p_cuptiUnsubscribe, "cuptiUnsubscribe");
	*(void **)(&p_cuKernelGetFunction) = dlsym(cu, "cuKernelGetFunction");
	*(void **)(&p_cuptiFinalize) = dlsym(cupti, "cuptiFinalize");
	ready = 1;
	return 1;
}
