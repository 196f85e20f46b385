/* A test driver of the schedule recorder (csrc/kr_sched.c) without CUDA:
 * it includes the recorder with a clock that advances 100 ns a reading,
 * stands in for CUPTI and the driver, calls the recorder's callback with
 * synthetic callback data, and flushes to argv[2]. argv[1] is the case:
 *   calls  every recorded kind in two inferences, between records outside
 *          them and an inference without its end;
 *   small  a buffer of 3 records: calls are lost, the inference too;
 *   many   3000 functions, each launched once (the names table grows);
 *   resume one inference, a pause (CUPTI let go of, a launch unrecorded),
 *          then kr_sched_arm(2), a block's mark and a second inference
 *          appended (fresh);
 *   threads one inference whose launches come from the arming thread while
 *          another thread launches and polls an event (left out, counted).
 * It prints the flush's result and kr_sched_stats. */
#include <pthread.h>
#include <stdint.h>
static uint64_t fake_t = 1000000;
static uint64_t fake_now(void) { return fake_t += 100; }
#define KR_SCHED_NOW fake_now
#include "kr_sched.c"

enum {
	CB_LAUNCH = 1, CB_LAUNCH_PTSZ, CB_LAUNCH_EX, CB_HTOD_ASYNC, CB_COPY_ASYNC, CB_DTOH, CB_COPY2D_ASYNC, CB_COPY3D,
	CB_MEMSET32_ASYNC, CB_MEMSET2D8, CB_GRAPH, CB_RECORD, CB_WAIT_EVENT, CB_STREAM_QUERY, CB_EVENT_QUERY,
	CB_STREAM_SYNC, CB_EVENT_SYNC, CB_CTX_SYNC, CB_MALLOC, CB_HTOD_V1, CB_N
};
static const char *const cbnames[CB_N] = {
	[CB_LAUNCH] = "cuLaunchKernel", [CB_LAUNCH_PTSZ] = "cuLaunchKernel_ptsz", [CB_LAUNCH_EX] = "cuLaunchKernelEx",
	[CB_HTOD_ASYNC] = "cuMemcpyHtoDAsync_v2", [CB_COPY_ASYNC] = "cuMemcpyAsync", [CB_DTOH] = "cuMemcpyDtoH_v2_ptds",
	[CB_COPY2D_ASYNC] = "cuMemcpy2DAsync_v2", [CB_COPY3D] = "cuMemcpy3D_v2", [CB_MEMSET32_ASYNC] = "cuMemsetD32Async",
	[CB_MEMSET2D8] = "cuMemsetD2D8_v2", [CB_GRAPH] = "cuGraphLaunch", [CB_RECORD] = "cuEventRecordWithFlags",
	[CB_WAIT_EVENT] = "cuStreamWaitEvent", [CB_STREAM_QUERY] = "cuStreamQuery", [CB_EVENT_QUERY] = "cuEventQuery",
	[CB_STREAM_SYNC] = "cuStreamSynchronize", [CB_EVENT_SYNC] = "cuEventSynchronize", [CB_CTX_SYNC] = "cuCtxSynchronize",
	[CB_MALLOC] = "cuMemAlloc_v2", [CB_HTOD_V1] = "cuMemcpyHtoD",
};

static int enabled[CB_N];
static int subscribed, finalized;

static kr_CUptiResult get_name(int domain, uint32_t id, const char **name) {
	if (domain != KR_CB_DOMAIN_DRIVER_API || id >= CB_N || !cbnames[id]) return 1;
	*name = cbnames[id];
	return 0;
}
static kr_CUptiResult subscribe(kr_CUpti_SubscriberHandle *h, kr_CUpti_CallbackFunc f, void *ud) {
	(void)f, (void)ud;
	subscribed++;
	*h = (kr_CUpti_SubscriberHandle)(uintptr_t)0x5;
	return 0;
}
static kr_CUptiResult unsubscribe(kr_CUpti_SubscriberHandle h) {
	(void)h;
	subscribed--;
	return 0;
}
static kr_CUptiResult finalize(void) { return finalized++, 0; }
static kr_CUresult ctx_sync(void) { return 0; }
static kr_CUptiResult enable(uint32_t on, kr_CUpti_SubscriberHandle h, int domain, uint32_t id) {
	(void)h, (void)domain;
	enabled[id] = on;
	return 0;
}

/* Functions 0x1000 and 0x1010 are CUfunctions; 0x2000 is a CUkernel whose
 * function is 0x3000; 0x4000 has no name; 0x10000 on are the many. */
static char many_name[64];
static kr_CUresult func_name(const char **name, kr_CUfunction f) {
	uintptr_t p = (uintptr_t)f;
	if (p == 0x1000) *name = "_Z4gemmPfS_";
	else if (p == 0x1010) *name = "triton_poi_fused_add_0";
	else if (p == 0x3000) *name = "_Z6kernelv";
	else if (p >= 0x10000) snprintf(many_name, sizeof many_name, "k%lu", (unsigned long)(p - 0x10000) / 16), *name = many_name;
	else return 400;
	return 0;
}
static kr_CUresult kernel_function(kr_CUfunction *g, kr_CUkernel k) {
	if ((uintptr_t)k != 0x2000) return 400;
	*g = (kr_CUfunction)(uintptr_t)0x3000;
	return 0;
}
/* Device pointers are at 0x7f0000000000 and above; anything else is
 * pageable host memory, which the driver does not know. */
static kr_CUresult pointer_attribute(void *data, int attr, kr_CUdeviceptr p) {
	if (attr != KR_POINTER_ATTRIBUTE_MEMORY_TYPE || p < 0x7f0000000000ULL) return 1;
	*(unsigned int *)data = KR_MEMORYTYPE_DEVICE;
	return 0;
}

static void call(uint32_t cbid, const void *params, kr_CUresult result) {
	uint64_t corr = 0xdeadbeef; /* whatever CUPTI leaves there */
	kr_CUresult ret = result;
	kr_CallbackData cd = {.callbackSite = KR_API_ENTER, .functionName = cbnames[cbid], .functionParams = params,
	                      .functionReturnValue = &ret, .correlationData = &corr};
	callback(NULL, KR_CB_DOMAIN_DRIVER_API, cbid, &cd);
	cd.callbackSite = KR_API_EXIT;
	callback(NULL, KR_CB_DOMAIN_DRIVER_API, cbid, &cd);
}

static void launch(uint32_t cbid, uintptr_t f, uintptr_t stream, unsigned gx) {
	kr_cuLaunchKernel_params p = {.f = (kr_CUfunction)f, .gridDimX = gx, .gridDimY = 2, .gridDimZ = 1, .blockDimX = 128,
	                              .blockDimY = 1, .blockDimZ = 1, .hStream = (kr_CUstream)stream};
	call(cbid, &p, 0);
}

#define DEV 0x7f0000001000ULL
#define HOST 0x560000001000ULL

static void every_kind(void) {
	launch(CB_LAUNCH, 0x1000, 0x77, 1); /* armed, but before any inference: outside */
	kr_sched_mark(1);
	launch(CB_LAUNCH, 0x1000, KR_STREAM_LEGACY, 80);
	launch(CB_LAUNCH_PTSZ, 0x1010, 0, 4);
	kr_CUlaunchConfig cfg = {.gridDimX = 132, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 256, .blockDimY = 1, .blockDimZ = 1,
	                         .hStream = (kr_CUstream)(uintptr_t)0x7a};
	kr_cuLaunchKernelEx_params ex = {.config = &cfg, .f = (kr_CUfunction)(uintptr_t)0x2000};
	call(CB_LAUNCH_EX, &ex, 0);
	uint64_t htod[4] = {DEV, HOST, 4096, 0x7a};
	call(CB_HTOD_ASYNC, htod, 0);
	uint64_t unified[4] = {HOST, DEV, 8, 0};
	call(CB_COPY_ASYNC, unified, 0);
	uint64_t dtoh[3] = {HOST, DEV, 16};
	call(CB_DTOH, dtoh, 0);
	kr_CUDA_MEMCPY2D c2 = {.srcMemoryType = KR_MEMORYTYPE_DEVICE, .srcDevice = DEV, .dstMemoryType = KR_MEMORYTYPE_UNIFIED,
	                       .dstDevice = DEV + 64, .WidthInBytes = 64, .Height = 3};
	uint64_t copy2d[2] = {(uint64_t)(uintptr_t)&c2, 0x7a};
	call(CB_COPY2D_ASYNC, copy2d, 0);
	kr_CUDA_MEMCPY3D c3 = {.srcMemoryType = KR_MEMORYTYPE_HOST, .dstMemoryType = KR_MEMORYTYPE_ARRAY, .WidthInBytes = 8,
	                       .Height = 2, .Depth = 5};
	uint64_t copy3d[1] = {(uint64_t)(uintptr_t)&c3};
	call(CB_COPY3D, copy3d, 0);
	uint64_t set32[4] = {DEV, 0, 1000, 0x7a};
	call(CB_MEMSET32_ASYNC, set32, 0);
	uint64_t set2d[5] = {DEV, 512, 0, 100, 3};
	call(CB_MEMSET2D8, set2d, 0);
	uint64_t graph[2] = {0xabc0, 0x7a};
	call(CB_GRAPH, graph, 0);
	uint64_t malloc_[2] = {0, 64}; /* not a recorded call */
	call(CB_MALLOC, malloc_, 0);
	uint64_t record[3] = {0xe1, 0x7a, 0};
	call(CB_RECORD, record, 0);
	uint64_t wait[3] = {0, 0xe1, 0};
	call(CB_WAIT_EVENT, wait, 0);
	kr_sched_mark(2);
	uint64_t q1[1] = {0x7a};
	call(CB_STREAM_QUERY, q1, KR_SUCCESS);
	uint64_t q2[1] = {0xe1};
	call(CB_EVENT_QUERY, q2, KR_ERROR_NOT_READY);
	call(CB_STREAM_SYNC, q1, 0);
	call(CB_EVENT_SYNC, q2, 0);
	call(CB_CTX_SYNC, NULL, 0);
	kr_sched_mark(3);
	uint64_t between[1] = {0x7a};
	call(CB_STREAM_QUERY, between, KR_ERROR_NOT_READY); /* outside */
	kr_sched_mark(1);
	launch(CB_LAUNCH, 0x1000, 0, 80);
	launch(CB_LAUNCH, 0x4000, 0, 1);
	kr_sched_mark(3);
	kr_sched_mark(1); /* no end: incomplete */
	launch(CB_LAUNCH, 0x1010, 0, 4);
}

/* other_thread is a thread beside the inference's: a watchdog that
 * launches and polls an event, 3 times. */
static void *other_thread(void *arg) {
	(void)arg;
	uint64_t q[1] = {0xe9};
	for (int i = 0; i < 3; i++) {
		launch(CB_LAUNCH, 0x3000, 0, 9);
		call(CB_EVENT_QUERY, q, KR_SUCCESS);
	}
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 3) return 2;
	p_cuptiGetCallbackName = get_name;
	p_cuptiSubscribe = subscribe;
	p_cuptiEnableCallback = enable;
	p_cuFuncGetName = func_name;
	p_cuKernelGetFunction = kernel_function;
	p_cuPointerGetAttribute = pointer_attribute;
	p_cuptiUnsubscribe = unsubscribe;
	p_cuptiFinalize = finalize;
	p_cuCtxSynchronize = ctx_sync;
	if (kr_sched_arm(1) != -1) return 3; /* not initialized by CUDA */
	ready = 1;
	cap = strcmp(argv[1], "small") ? 8192 : 3;
	launch(CB_LAUNCH, 0x1000, 0, 1); /* not subscribed yet */
	if (kr_sched_arm(1) != 0) return 4;
	if (enabled[CB_MALLOC] || enabled[CB_HTOD_V1] || !enabled[CB_LAUNCH_PTSZ] || !enabled[CB_DTOH] || !enabled[CB_CTX_SYNC])
		return 5;
	if (!strcmp(argv[1], "calls")) {
		every_kind();
	} else if (!strcmp(argv[1], "small")) {
		kr_sched_mark(1);
		for (int i = 0; i < 5; i++) launch(CB_LAUNCH, 0x1000, 0, 1);
		kr_sched_mark(3);
	} else if (!strcmp(argv[1], "many")) {
		kr_sched_mark(1);
		for (int i = 0; i < 3000; i++) launch(CB_LAUNCH, 0x10000 + 16 * (uintptr_t)i, 0, 1);
		for (int i = 0; i < 3000; i += 1000) launch(CB_LAUNCH, 0x10000 + 16 * (uintptr_t)i, 0, 2);
		kr_sched_mark(3);
	} else if (!strcmp(argv[1], "resume")) {
		kr_sched_mark(1);
		launch(CB_LAUNCH, 0x1000, 0, 1);
		kr_sched_mark(3);
		if (kr_sched_pause() != 0 || subscribed != 0 || finalized != 1) return 6;
		launch(CB_LAUNCH, 0x1000, 0, 3); /* paused */
		kr_sched_mark(1);                 /* paused: no mark */
		if (kr_sched_arm(2) != 0 || subscribed != 1) return 7;
		kr_sched_mark(4); /* a block's start: the next inference is fresh */
		kr_sched_mark(1);
		launch(CB_LAUNCH, 0x1010, 0, 2);
		kr_sched_mark(3);
	} else if (!strcmp(argv[1], "threads")) {
		kr_sched_mark(1);
		launch(CB_LAUNCH, 0x1000, 0, 1);
		pthread_t th;
		if (pthread_create(&th, NULL, other_thread, NULL) != 0 || pthread_join(th, NULL) != 0) return 8;
		launch(CB_LAUNCH, 0x1010, 0, 2);
		kr_sched_mark(3);
	} else {
		return 2;
	}
	kr_sched_arm(0);
	launch(CB_LAUNCH, 0x1000, 0, 1); /* disarmed */
	long long n = kr_sched_flush(argv[2], "Fake CPU @ 2.00GHz", 2, 5000, 4000, 300);
	long long st[5];
	int k = kr_sched_stats(st, 5);
	printf("flush %lld stats %d: records %lld lost %lld outside %lld incomplete %lld other %lld\n", n, k, st[0], st[1], st[2], st[3],
	       st[4]);
	return n < 0;
}
