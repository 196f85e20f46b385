#include <dlfcn.h>
#include <stdio.h>
#include "drv.h"

typedef int (*f_init)(unsigned);
typedef int (*f_dev_get)(int *, int);
typedef int (*f_retain)(void **, int);
typedef int (*f_release)(int);
typedef int (*f_set_current)(void *);
typedef int (*f_sync)(void);
typedef int (*f_alloc)(uint64_t *, size_t);
typedef int (*f_free)(uint64_t);
typedef int (*f_htod)(uint64_t, const void *, size_t);
typedef int (*f_dtoh)(void *, uint64_t, size_t);
typedef int (*f_memset8)(uint64_t, unsigned char, size_t);
typedef int (*f_err_name)(int, const char **);

static struct {
	f_init init; f_dev_get dev_get; f_retain retain; f_release release;
	f_set_current set_current; f_sync sync; f_alloc alloc; f_free free_;
	f_htod htod; f_dtoh dtoh; f_memset8 memset8; f_err_name err_name;
} d;

int kr_t_open(char *err, size_t errlen) {
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) { snprintf(err, errlen, "%s", dlerror()); return 1; }
#define SYM(f, s) do { *(void **)(&d.f) = dlsym(lib, s); if (!d.f) { snprintf(err, errlen, "missing %s", s); return 2; } } while (0)
	SYM(init, "cuInit");
	SYM(dev_get, "cuDeviceGet");
	SYM(retain, "cuDevicePrimaryCtxRetain");
	SYM(release, "cuDevicePrimaryCtxRelease_v2");
	SYM(set_current, "cuCtxSetCurrent");
	SYM(sync, "cuCtxSynchronize");
	SYM(alloc, "cuMemAlloc_v2");
	SYM(free_, "cuMemFree_v2");
	SYM(htod, "cuMemcpyHtoD_v2");
	SYM(dtoh, "cuMemcpyDtoH_v2");
	SYM(memset8, "cuMemsetD8_v2");
	SYM(err_name, "cuGetErrorName");
#undef SYM
	return 0;
}

int kr_t_init(void) { return d.init(0); }
int kr_t_ctx_retain(int ordinal, void **ctx) {
	int dev = 0, rc = d.dev_get(&dev, ordinal);
	if (rc) return rc;
	return d.retain(ctx, dev);
}
int kr_t_ctx_release(int ordinal) {
	int dev = 0, rc = d.dev_get(&dev, ordinal);
	if (rc) return rc;
	return d.release(dev);
}
int kr_t_ctx_set_current(void *ctx) { return d.set_current(ctx); }
int kr_t_ctx_sync(void) { return d.sync(); }
int kr_t_alloc(uint64_t *p, size_t n) { return d.alloc(p, n); }
int kr_t_free(uint64_t p) { return d.free_(p); }
int kr_t_htod(uint64_t dst, const void *src, size_t n) { return d.htod(dst, src, n); }
int kr_t_dtoh(void *dst, uint64_t src, size_t n) { return d.dtoh(dst, src, n); }
int kr_t_memset8(uint64_t dst, unsigned char v, size_t n) { return d.memset8(dst, v, n); }
const char *kr_t_err_name(int code) {
	const char *s = NULL;
	if (d.err_name && d.err_name(code, &s) == 0 && s) return s;
	return "CUDA_ERROR_UNKNOWN";
}
