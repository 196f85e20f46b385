// Run-time loading of libcublas with dlopen/dlsym. See cublas_shim.h.
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cublas_shim.h"

typedef kr_cublasStatus_t (*pfn_create)(kr_cublasHandle_t *);
typedef kr_cublasStatus_t (*pfn_destroy)(kr_cublasHandle_t);
typedef kr_cublasStatus_t (*pfn_get_version)(kr_cublasHandle_t, int *);
typedef kr_cublasStatus_t (*pfn_set_stream)(kr_cublasHandle_t, void *);
typedef kr_cublasStatus_t (*pfn_set_workspace)(kr_cublasHandle_t, void *, size_t);
typedef kr_cublasStatus_t (*pfn_set_math_mode)(kr_cublasHandle_t, int);
typedef kr_cublasStatus_t (*pfn_get_math_mode)(kr_cublasHandle_t, int *);
typedef const char *(*pfn_status_text)(kr_cublasStatus_t);
typedef kr_cublasStatus_t (*pfn_gemm_ex)(kr_cublasHandle_t, int, int, int, int, int,
                                         const void *, const void *, int, int,
                                         const void *, int, int, const void *,
                                         void *, int, int, int, int);
typedef kr_cublasStatus_t (*pfn_gemm_sb_ex)(kr_cublasHandle_t, int, int, int, int, int,
                                            const void *, const void *, int, int, long long,
                                            const void *, int, int, long long, const void *,
                                            void *, int, int, long long, int, int, int);

struct kr_cublas_fns {
	pfn_create create;
	pfn_destroy destroy;
	pfn_get_version get_version;
	pfn_set_stream set_stream;
	pfn_set_workspace set_workspace;
	pfn_set_math_mode set_math_mode;
	pfn_get_math_mode get_math_mode;
	pfn_status_text status_name;   /* optional: cuBLAS 11.4+ */
	pfn_status_text status_string; /* optional: cuBLAS 11.4+ */
	pfn_gemm_ex gemm_ex;
	pfn_gemm_sb_ex gemm_sb_ex;
};

static struct kr_cublas_fns fns;

static void set_err(char *err, size_t errlen, const char *a, const char *b) {
	if (err == NULL || errlen == 0) return;
	snprintf(err, errlen, "%s%s", a ? a : "", b ? b : "");
}

int kr_cublas_open(const char *path, char *err, size_t errlen) {
	struct kr_cublas_fns f;
	void *lib;

	dlerror();
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *e = dlerror();
		set_err(err, errlen, e ? e : "dlopen failed", NULL);
		return 1;
	}
	memset(&f, 0, sizeof f);
#define REQ(field, sym)                                                   \
	do {                                                              \
		*(void **)(&f.field) = dlsym(lib, sym);                   \
		if (f.field == NULL) {                                    \
			set_err(err, errlen, "missing symbol ", sym);     \
			dlclose(lib);                                     \
			return 2;                                         \
		}                                                         \
	} while (0)
	REQ(create, "cublasCreate_v2");
	REQ(destroy, "cublasDestroy_v2");
	REQ(get_version, "cublasGetVersion_v2");
	REQ(set_stream, "cublasSetStream_v2");
	REQ(set_workspace, "cublasSetWorkspace_v2");
	REQ(set_math_mode, "cublasSetMathMode");
	REQ(get_math_mode, "cublasGetMathMode");
	REQ(gemm_ex, "cublasGemmEx");
	REQ(gemm_sb_ex, "cublasGemmStridedBatchedEx");
#undef REQ
	*(void **)(&f.status_name) = dlsym(lib, "cublasGetStatusName");
	*(void **)(&f.status_string) = dlsym(lib, "cublasGetStatusString");
	/* The library stays loaded for the life of the process. */
	fns = f;
	return 0;
}

int kr_cublas_has_status_name(void) { return fns.status_name != NULL; }

kr_cublasStatus_t kr_cublasCreate(kr_cublasHandle_t *handle) { return fns.create(handle); }
kr_cublasStatus_t kr_cublasDestroy(kr_cublasHandle_t handle) { return fns.destroy(handle); }
kr_cublasStatus_t kr_cublasGetVersion(kr_cublasHandle_t handle, int *version) {
	return fns.get_version(handle, version);
}
kr_cublasStatus_t kr_cublasSetStream(kr_cublasHandle_t handle, void *stream) {
	return fns.set_stream(handle, stream);
}
kr_cublasStatus_t kr_cublasSetWorkspace(kr_cublasHandle_t handle, uintptr_t workspace, size_t bytes) {
	return fns.set_workspace(handle, (void *)workspace, bytes);
}
kr_cublasStatus_t kr_cublasSetMathMode(kr_cublasHandle_t handle, int mode) {
	return fns.set_math_mode(handle, mode);
}
kr_cublasStatus_t kr_cublasGetMathMode(kr_cublasHandle_t handle, int *mode) {
	return fns.get_math_mode(handle, mode);
}
const char *kr_cublasGetStatusName(kr_cublasStatus_t status) {
	return fns.status_name ? fns.status_name(status) : NULL;
}
const char *kr_cublasGetStatusString(kr_cublasStatus_t status) {
	return fns.status_string ? fns.status_string(status) : NULL;
}

kr_cublasStatus_t kr_cublasGemmEx(kr_cublasHandle_t handle, int transa, int transb,
                                  int m, int n, int k, const void *alpha,
                                  uintptr_t A, int Atype, int lda,
                                  uintptr_t B, int Btype, int ldb,
                                  const void *beta,
                                  uintptr_t C, int Ctype, int ldc,
                                  int computeType, int algo) {
	return fns.gemm_ex(handle, transa, transb, m, n, k, alpha,
	                   (const void *)A, Atype, lda, (const void *)B, Btype, ldb,
	                   beta, (void *)C, Ctype, ldc, computeType, algo);
}

kr_cublasStatus_t kr_cublasGemmStridedBatchedEx(kr_cublasHandle_t handle, int transa, int transb,
                                                int m, int n, int k, const void *alpha,
                                                uintptr_t A, int Atype, int lda, long long strideA,
                                                uintptr_t B, int Btype, int ldb, long long strideB,
                                                const void *beta,
                                                uintptr_t C, int Ctype, int ldc, long long strideC,
                                                int batchCount, int computeType, int algo) {
	return fns.gemm_sb_ex(handle, transa, transb, m, n, k, alpha,
	                      (const void *)A, Atype, lda, strideA,
	                      (const void *)B, Btype, ldb, strideB, beta,
	                      (void *)C, Ctype, ldc, strideC, batchCount, computeType, algo);
}
