/* A stand-in for the CUDA driver (libcuda.so.1) for the schedule
 * recorder's hook mode tests (hook_driver.c): it exports
 * cuGetProcAddress_v2 and cuGetProcAddress, which look up its own calls
 * as the driver does (the name without its version, by the version asked:
 * cuMemcpyHtoD's _v2 for CUDA 3.2 on, cuCtxSynchronize's for 13.0 on; the
 * per-thread default stream's variant with flag 2), and a few recorded calls, each of which writes its name and
 * arguments into fake_last. cuEventQuery answers NOT_READY, then
 * SUCCESS; cuFuncGetName names function 0x1000; device pointers are at
 * 0x7f0000000000 and above. fake_real(name) is the stand-in's own
 * definition of name, which the test compares with what it was given.
 * Build: cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o libcuda.so.1 fake_cuda.c */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long u64;
char fake_last[256];

#define LAST(...) snprintf(fake_last, sizeof fake_last, __VA_ARGS__)

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shm,
                        void *s, void **params, void **extra) {
	LAST("cuLaunchKernel %p %u,%u,%u %u,%u,%u %u %p %p %p", f, gx, gy, gz, bx, by, bz, shm, s, (void *)params, (void *)extra);
	return 0;
}
CUresult cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                             unsigned shm, void *s, void **params, void **extra) {
	LAST("cuLaunchKernel_ptsz %p %u,%u,%u %u,%u,%u %u %p %p %p", f, gx, gy, gz, bx, by, bz, shm, s, (void *)params,
	     (void *)extra);
	return 0;
}
CUresult cuMemcpyAsync(u64 dst, u64 src, size_t n, void *s) {
	LAST("cuMemcpyAsync %llx %llx %zu %p", dst, src, n, s);
	return 0;
}
CUresult cuMemcpyHtoD(unsigned dst, const void *src, size_t n) { /* the ABI before CUDA 3.2 */
	LAST("cuMemcpyHtoD %x %p %zu", dst, src, n);
	return 0;
}
CUresult cuMemcpyHtoD_v2(u64 dst, const void *src, size_t n) {
	LAST("cuMemcpyHtoD_v2 %llx %p %zu", dst, src, n);
	return 0;
}
CUresult cuMemsetD8Async(u64 dst, unsigned char v, size_t n, void *s) {
	LAST("cuMemsetD8Async %llx %u %zu %p", dst, v, n, s);
	return 0;
}
CUresult cuStreamSynchronize(void *s) {
	LAST("cuStreamSynchronize %p", s);
	return 0;
}
CUresult cuCtxSynchronize(void) {
	LAST("cuCtxSynchronize");
	return 0;
}
CUresult cuCtxSynchronize_v2(void *ctx) {
	LAST("cuCtxSynchronize_v2 %p", ctx);
	return 0;
}
static int queries;
CUresult cuEventQuery(void *e) {
	LAST("cuEventQuery %p", e);
	return queries++ % 2 ? 0 : 600; /* CUDA_ERROR_NOT_READY, then CUDA_SUCCESS */
}
CUresult cuFuncGetName(const char **name, void *f) {
	if ((uintptr_t)f != 0x1000) return 400;
	*name = "_Z4gemmPfS_";
	return 0;
}
CUresult cuPointerGetAttribute(void *data, int attr, u64 p) {
	if (attr != 2 || p < 0x7f0000000000ULL) return 1;
	*(unsigned *)data = 2; /* CU_MEMORYTYPE_DEVICE */
	return 0;
}

CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int version, u64 flags, int *status);
CUresult cuGetProcAddress(const char *sym, void **pfn, int version, u64 flags);

/* stream_sync_entry is what cuGetProcAddress hands out for
 * cuStreamSynchronize: another address than the exported symbol's, as a
 * driver may give. */
static CUresult stream_sync_entry(void *s) { return cuStreamSynchronize(s); }

static const struct {
	const char *name;
	void *f;
} fns[] = {
	{"cuLaunchKernel", (void *)cuLaunchKernel},
	{"cuLaunchKernel_ptsz", (void *)cuLaunchKernel_ptsz},
	{"cuMemcpyAsync", (void *)cuMemcpyAsync},
	{"cuMemcpyHtoD", (void *)cuMemcpyHtoD},
	{"cuMemcpyHtoD_v2", (void *)cuMemcpyHtoD_v2},
	{"cuMemsetD8Async", (void *)cuMemsetD8Async},
	{"cuStreamSynchronize", (void *)cuStreamSynchronize},
	{"cuCtxSynchronize", (void *)cuCtxSynchronize},
	{"cuCtxSynchronize_v2", (void *)cuCtxSynchronize_v2},
	{"cuEventQuery", (void *)cuEventQuery},
	{"cuFuncGetName", (void *)cuFuncGetName},
	{"cuPointerGetAttribute", (void *)cuPointerGetAttribute},
	{"cuGetProcAddress", (void *)cuGetProcAddress},
	{"cuGetProcAddress_v2", (void *)cuGetProcAddress_v2},
};

void *fake_real(const char *name) {
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (!strcmp(fns[i].name, name)) return fns[i].f;
	return NULL;
}

CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int version, u64 flags, int *status) {
	char name[128];
	snprintf(name, sizeof name, "%s", sym);
	if ((!strcmp(sym, "cuMemcpyHtoD") && version >= 3020) || (!strcmp(sym, "cuGetProcAddress") && version >= 12000) ||
	    (!strcmp(sym, "cuCtxSynchronize") && version >= 13000))
		snprintf(name, sizeof name, "%s_v2", sym);
	else if (flags & 2 && !strcmp(sym, "cuLaunchKernel"))
		snprintf(name, sizeof name, "%s_ptsz", sym);
	*pfn = !strcmp(sym, "cuStreamSynchronize") ? (void *)stream_sync_entry : fake_real(name);
	if (status) *status = *pfn ? 0 : 1;
	return *pfn ? 0 : 500; /* CUDA_ERROR_NOT_FOUND */
}

CUresult cuGetProcAddress(const char *sym, void **pfn, int version, u64 flags) {
	return cuGetProcAddress_v2(sym, pfn, version, flags, NULL);
}
