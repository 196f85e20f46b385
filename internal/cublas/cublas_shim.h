/*
 * Private declarations for the run-time loaded cuBLAS library.
 *
 * No CUDA header is needed at build time: the handful of types and the
 * function pointer signatures used by package cublas are declared here,
 * transcribed from cublas_api.h (CUDA 12.6 and 13.0). Enumerations are
 * passed as int, which is how the C ABI passes a C enum on every platform
 * CUDA supports.
 *
 * kr_cublas_fn is the function table: package dl fills it (cublas.go lists
 * the symbol of each slot), and the static inline wrappers below call
 * through it. Go code calls only the wrappers, after Load.
 */
#ifndef KREPLAY_CUBLAS_SHIM_H
#define KREPLAY_CUBLAS_SHIM_H

#include <stddef.h>
#include <stdint.h>

typedef int kr_cublasStatus_t;               /* cublasStatus_t */
typedef struct kr_cublasContext *kr_cublasHandle_t; /* cublasHandle_t */

typedef kr_cublasStatus_t (*kr_pfn_cublasCreate)(kr_cublasHandle_t *);
typedef kr_cublasStatus_t (*kr_pfn_cublasDestroy)(kr_cublasHandle_t);
typedef kr_cublasStatus_t (*kr_pfn_cublasGetVersion)(kr_cublasHandle_t, int *);
typedef kr_cublasStatus_t (*kr_pfn_cublasSetStream)(kr_cublasHandle_t, void *);
typedef kr_cublasStatus_t (*kr_pfn_cublasSetWorkspace)(kr_cublasHandle_t, void *, size_t);
typedef kr_cublasStatus_t (*kr_pfn_cublasSetMathMode)(kr_cublasHandle_t, int);
typedef kr_cublasStatus_t (*kr_pfn_cublasGetMathMode)(kr_cublasHandle_t, int *);
typedef const char *(*kr_pfn_cublasGetStatusName)(kr_cublasStatus_t);
typedef const char *(*kr_pfn_cublasGetStatusString)(kr_cublasStatus_t);
typedef kr_cublasStatus_t (*kr_pfn_cublasGemmEx)(kr_cublasHandle_t, int, int, int, int, int,
                                                 const void *, const void *, int, int,
                                                 const void *, int, int, const void *,
                                                 void *, int, int, int, int);
typedef kr_cublasStatus_t (*kr_pfn_cublasGemmStridedBatchedEx)(kr_cublasHandle_t, int, int, int, int, int,
                                                               const void *, const void *, int, int, long long,
                                                               const void *, int, int, long long, const void *,
                                                               void *, int, int, long long, int, int, int);

/* Slots of kr_cublas_fn. */
enum {
	KR_CUBLAS_cublasCreate,
	KR_CUBLAS_cublasDestroy,
	KR_CUBLAS_cublasGetVersion,
	KR_CUBLAS_cublasSetStream,
	KR_CUBLAS_cublasSetWorkspace,
	KR_CUBLAS_cublasSetMathMode,
	KR_CUBLAS_cublasGetMathMode,
	KR_CUBLAS_cublasGemmEx,
	KR_CUBLAS_cublasGemmStridedBatchedEx,
	KR_CUBLAS_cublasGetStatusName,   /* optional: cuBLAS 11.4+ */
	KR_CUBLAS_cublasGetStatusString, /* optional: cuBLAS 11.4+ */
	KR_CUBLAS_COUNT
};

extern void *kr_cublas_fn[KR_CUBLAS_COUNT];

#define KR_CUBLAS(api) ((kr_pfn_##api)kr_cublas_fn[KR_CUBLAS_##api])

/* Thin wrappers: each calls the resolved function pointer. */
static inline kr_cublasStatus_t kr_cublasCreate(kr_cublasHandle_t *handle) { return KR_CUBLAS(cublasCreate)(handle); }
static inline kr_cublasStatus_t kr_cublasDestroy(kr_cublasHandle_t handle) { return KR_CUBLAS(cublasDestroy)(handle); }
static inline kr_cublasStatus_t kr_cublasGetVersion(kr_cublasHandle_t handle, int *version) {
	return KR_CUBLAS(cublasGetVersion)(handle, version);
}
static inline kr_cublasStatus_t kr_cublasSetStream(kr_cublasHandle_t handle, void *stream) {
	return KR_CUBLAS(cublasSetStream)(handle, stream);
}
static inline kr_cublasStatus_t kr_cublasSetWorkspace(kr_cublasHandle_t handle, uintptr_t workspace, size_t bytes) {
	return KR_CUBLAS(cublasSetWorkspace)(handle, (void *)workspace, bytes);
}
static inline kr_cublasStatus_t kr_cublasSetMathMode(kr_cublasHandle_t handle, int mode) {
	return KR_CUBLAS(cublasSetMathMode)(handle, mode);
}
static inline kr_cublasStatus_t kr_cublasGetMathMode(kr_cublasHandle_t handle, int *mode) {
	return KR_CUBLAS(cublasGetMathMode)(handle, mode);
}
/* NULL where the library lacks the entry point. */
static inline const char *kr_cublasGetStatusName(kr_cublasStatus_t status) {
	return KR_CUBLAS(cublasGetStatusName) ? KR_CUBLAS(cublasGetStatusName)(status) : NULL;
}
static inline const char *kr_cublasGetStatusString(kr_cublasStatus_t status) {
	return KR_CUBLAS(cublasGetStatusString) ? KR_CUBLAS(cublasGetStatusString)(status) : NULL;
}

static inline kr_cublasStatus_t kr_cublasGemmEx(kr_cublasHandle_t handle, int transa, int transb,
                                                int m, int n, int k, const void *alpha,
                                                uintptr_t A, int Atype, int lda,
                                                uintptr_t B, int Btype, int ldb,
                                                const void *beta,
                                                uintptr_t C, int Ctype, int ldc,
                                                int computeType, int algo) {
	return KR_CUBLAS(cublasGemmEx)(handle, transa, transb, m, n, k, alpha,
	                               (const void *)A, Atype, lda, (const void *)B, Btype, ldb,
	                               beta, (void *)C, Ctype, ldc, computeType, algo);
}

static inline kr_cublasStatus_t kr_cublasGemmStridedBatchedEx(kr_cublasHandle_t handle, int transa, int transb,
                                                              int m, int n, int k, const void *alpha,
                                                              uintptr_t A, int Atype, int lda, long long strideA,
                                                              uintptr_t B, int Btype, int ldb, long long strideB,
                                                              const void *beta,
                                                              uintptr_t C, int Ctype, int ldc, long long strideC,
                                                              int batchCount, int computeType, int algo) {
	return KR_CUBLAS(cublasGemmStridedBatchedEx)(handle, transa, transb, m, n, k, alpha,
	                                             (const void *)A, Atype, lda, strideA,
	                                             (const void *)B, Btype, ldb, strideB, beta,
	                                             (void *)C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

#endif
