/* A test driver of the schedule recorder's hook mode (csrc/kr_sched_hook.c)
 * without CUDA, run with LD_PRELOAD naming the built libkr_sched.so:
 *   hook_driver <stand-in libcuda.so.1 (fake_cuda.c)> <schedule file>
 * It dlopen()s the stand-in driver, gets entry points through
 * dlsym(handle, "cuGetProcAddress_v2") and cuGetProcAddress_v2 (for CUDA
 * 12 and, as libcudart asks, for the version that introduced the call),
 * and through dlsym(handle, name), calls them disarmed (each must reach the
 * stand-in with its arguments intact), armed in an inference (and from a
 * second thread: left out), flushes, and prints kr_sched_hooked() and
 * kr_sched_stats. A failed check prints "FAIL ..." and exits 1. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long u64;
typedef CUresult (*gpa2_t)(const char *, void **, int, u64, int *);
typedef CUresult (*gpa_t)(const char *, void **, int, u64);
typedef CUresult (*launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                             void **);
typedef CUresult (*copy_t)(u64, u64, size_t, void *);
typedef CUresult (*htod_t)(u64, const void *, size_t);
typedef CUresult (*set8_t)(u64, unsigned char, size_t, void *);
typedef CUresult (*one_t)(void *);
typedef CUresult (*none_t)(void);

static int (*arm)(int);
static void (*mark)(int);
static int (*hooked)(void);
static long long (*flush)(const char *, const char *, int, long long, long long, long long);
static int (*stats)(long long *, int);
static void *(*real_of)(const char *);
static char *last;
static int failed;

static void check(int ok, const char *what) {
	if (!ok) printf("FAIL %s\n", what), failed = 1;
}

/* want checks the stand-in's last call. */
static void want(const char *s) {
	if (strcmp(last, s)) printf("FAIL the stand-in got \"%s\", want \"%s\"\n", last, s), failed = 1;
}

static void *sym(void *h, const char *name) {
	void *p = dlsym(h, name);
	if (!p) printf("FAIL no %s\n", name), exit(1);
	return p;
}

static void *proc(gpa2_t gpa2, const char *name, int version, u64 flags) {
	void *p = NULL;
	int st = -1;
	if (gpa2(name, &p, version, flags, &st) != 0 || !p || st != 0) printf("FAIL cuGetProcAddress_v2 %s\n", name), exit(1);
	return p;
}

static launch_t launch, launch_ptsz;
static one_t query, sync;

static void *other_thread(void *arg) {
	(void)arg;
	launch((void *)0x1000, 9, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	sync((void *)0xe9);
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 3) return 2;
	*(void **)&arm = sym(RTLD_DEFAULT, "kr_sched_arm");
	*(void **)&mark = sym(RTLD_DEFAULT, "kr_sched_mark");
	*(void **)&hooked = sym(RTLD_DEFAULT, "kr_sched_hooked");
	*(void **)&flush = sym(RTLD_DEFAULT, "kr_sched_flush");
	*(void **)&stats = sym(RTLD_DEFAULT, "kr_sched_stats");
	check(dlsym(RTLD_DEFAULT, "printf") == (void *)printf, "dlsym(RTLD_DEFAULT, \"printf\") is printf");
	check(dlsym(RTLD_DEFAULT, "cuNoSuchCall") == NULL, "a missing cu symbol is NULL");
	check(hooked() == 0 && arm(1) == -1, "nothing interposed before the driver: arm fails");

	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) return printf("FAIL dlopen: %s\n", dlerror()), 1;
	*(void **)&real_of = sym(h, "fake_real");
	last = sym(h, "fake_last");

	/* through cuGetProcAddress_v2 */
	gpa2_t gpa2 = sym(h, "cuGetProcAddress_v2");
	check((void *)gpa2 != real_of("cuGetProcAddress_v2"), "cuGetProcAddress_v2 wrapped");
	check(proc(gpa2, "cuGetProcAddress", 12080, 0) == (void *)gpa2, "cuGetProcAddress through itself: the same wrapper");
	check(proc(gpa2, "cuGetProcAddress_v2", 12000, 0) == (void *)gpa2, "cuGetProcAddress_v2 through itself: the same wrapper");
	launch = proc(gpa2, "cuLaunchKernel", 12080, 0);
	check((void *)launch != real_of("cuLaunchKernel"), "cuLaunchKernel wrapped");
	launch_ptsz = proc(gpa2, "cuLaunchKernel", 12080, 2);
	check((void *)launch_ptsz != real_of("cuLaunchKernel_ptsz") && launch_ptsz != launch, "cuLaunchKernel_ptsz wrapped");
	copy_t copy = proc(gpa2, "cuMemcpyAsync", 12000, 0);
	htod_t htod = proc(gpa2, "cuMemcpyHtoD", 12000, 0);
	check((void *)htod != real_of("cuMemcpyHtoD_v2"), "cuMemcpyHtoD (its _v2) wrapped");
	query = proc(gpa2, "cuEventQuery", 12000, 0);
	check(proc(gpa2, "cuLaunchKernel", 4000, 0) == (void *)launch, "cuLaunchKernel asked for CUDA 4.0, as libcudart asks: the same wrapper");
	check(proc(gpa2, "cuLaunchKernel", 7000, 2) == (void *)launch_ptsz, "its _ptsz asked for CUDA 7.0: the same wrapper");
	void *old = proc(gpa2, "cuMemcpyHtoD", 3010, 0);
	check(old == real_of("cuMemcpyHtoD"), "cuMemcpyHtoD asked for CUDA 3.1 (its first ABI) passed through");
	check(proc(gpa2, "cuFuncGetName", 12000, 0) == real_of("cuFuncGetName"), "an unrecorded call passed through");
	/* through dlsym */
	check(sym(h, "cuLaunchKernel") == (void *)launch, "dlsym cuLaunchKernel: the same wrapper");
	check(sym(h, "cuLaunchKernel_ptsz") == (void *)launch_ptsz, "dlsym cuLaunchKernel_ptsz: the same wrapper");
	sync = sym(h, "cuStreamSynchronize");
	check((void *)sync != old, "dlsym cuStreamSynchronize wrapped");
	check(proc(gpa2, "cuStreamSynchronize", 2000, 0) == (void *)sync,
	      "cuStreamSynchronize through cuGetProcAddress, another definition than dlsym's: the same wrapper");
	set8_t set8 = sym(h, "cuMemsetD8Async");
	gpa_t gpa = sym(h, "cuGetProcAddress");
	check((void *)gpa != real_of("cuGetProcAddress"), "cuGetProcAddress wrapped");
	check(proc(gpa2, "cuGetProcAddress", 11030, 0) == (void *)gpa, "cuGetProcAddress asked for CUDA 11.3: its first ABI's wrapper");
	none_t ctx = NULL;
	if (gpa("cuCtxSynchronize", (void **)&ctx, 12000, 0) != 0 || (void *)ctx == real_of("cuCtxSynchronize")) check(0, "cuCtxSynchronize through cuGetProcAddress wrapped");
	one_t ctx2 = NULL;
	gpa("cuCtxSynchronize", (void **)&ctx2, 13000, 0); /* its _v2: the later ABI, wrapped as cuCtxSynchronize_v2 */
	check((void *)ctx2 != real_of("cuCtxSynchronize_v2") && (void *)ctx2 != (void *)ctx,
	      "cuCtxSynchronize asked for CUDA 13.0 is cuCtxSynchronize_v2's wrapper");
	check(dlsym(RTLD_DEFAULT, "printf") == (void *)printf, "dlsym(RTLD_DEFAULT, \"printf\") is still printf");

	/* disarmed: the stand-in gets every argument */
	void *params[1], *extra[1];
	launch((void *)0x1000, 80, 2, 1, 128, 1, 1, 512, (void *)0x7a, params, extra);
	char w[256];
	snprintf(w, sizeof w, "cuLaunchKernel 0x1000 80,2,1 128,1,1 512 0x7a %p %p", (void *)params, (void *)extra);
	want(w);
	launch_ptsz((void *)0x1000, 4, 2, 1, 64, 2, 1, 0, NULL, NULL, NULL);
	want("cuLaunchKernel_ptsz 0x1000 4,2,1 64,2,1 0 (nil) (nil) (nil)");
	copy(0x560000001000ULL, 0x7f0000001000ULL, 8, (void *)0x7a);
	want("cuMemcpyAsync 560000001000 7f0000001000 8 0x7a");
	set8(0x7f0000002000ULL, 0xab, 300, (void *)0x7a);
	want("cuMemsetD8Async 7f0000002000 171 300 0x7a");
	ctx();
	want("cuCtxSynchronize");

	/* armed: one inference */
	check(arm(1) == 0, "arm");
	launch((void *)0x1000, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL); /* outside any inference */
	mark(4);
	mark(1);
	launch((void *)0x1000, 80, 2, 1, 128, 1, 1, 512, (void *)0x1, params, extra); /* CU_STREAM_LEGACY */
	snprintf(w, sizeof w, "cuLaunchKernel 0x1000 80,2,1 128,1,1 512 0x1 %p %p", (void *)params, (void *)extra);
	want(w);
	launch_ptsz((void *)0x4000, 4, 2, 1, 64, 2, 1, 0, NULL, NULL, NULL);
	copy(0x560000001000ULL, 0x7f0000001000ULL, 8, (void *)0x7a);
	want("cuMemcpyAsync 560000001000 7f0000001000 8 0x7a");
	htod(0x7f0000003000ULL, (void *)0x5600, 4096);
	want("cuMemcpyHtoD_v2 7f0000003000 0x5600 4096");
	set8(0x7f0000002000ULL, 0xab, 300, (void *)0x7a);
	want("cuMemsetD8Async 7f0000002000 171 300 0x7a");
	pthread_t th;
	if (pthread_create(&th, NULL, other_thread, NULL) != 0 || pthread_join(th, NULL) != 0) return 3;
	mark(2);
	check(query((void *)0xe1) == 600, "the first query not ready");
	check(query((void *)0xe1) == 0, "the second query ready");
	sync((void *)0x7a);
	((CUresult(*)(unsigned, const void *, size_t))old)(0x3000, (void *)0x5600, 64); /* unwrapped: not recorded */
	want("cuMemcpyHtoD 3000 0x5600 64");
	ctx();
	ctx2((void *)0xc0); /* unwrapped */
	want("cuCtxSynchronize_v2 0xc0");
	mark(3);
	mark(0); /* a cost pair's armed inference: outside any, not written */
	launch((void *)0x1000, 5, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	mark(0);
	check(arm(0) == 0, "disarm");
	launch((void *)0x1000, 7, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL); /* disarmed */
	want("cuLaunchKernel 0x1000 7,1,1 1,1,1 0 (nil) (nil) (nil)");

	long long n = flush(argv[2], "Fake CPU @ 2.00GHz", 0, 5000, 4000, 300);
	long long st[7];
	int k = stats(st, 7);
	printf("flush %lld hooked %d stats %d: records %lld lost %lld outside %lld incomplete %lld other %lld old %lld second %lld\n", n,
	       hooked(), k, st[0], st[1], st[2], st[3], st[4], st[5], st[6]);
	return failed;
}
