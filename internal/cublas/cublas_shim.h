/*
 * Private declarations for the run-time loaded cuBLAS library.
 *
 * No CUDA header is needed at build time: the handful of types and the
 * function pointer signatures used by package cublas are declared here,
 * transcribed from cublas_api.h (CUDA 12.6 and 13.0). Enumerations are
 * passed as int, which is how the C ABI passes a C enum on every platform
 * CUDA supports.
 */
#ifndef KREPLAY_CUBLAS_SHIM_H
#define KREPLAY_CUBLAS_SHIM_H

#include <stddef.h>
#include <stdint.h>

typedef int kr_cublasStatus_t;               /* cublasStatus_t */
typedef struct kr_cublasContext *kr_cublasHandle_t; /* cublasHandle_t */

/* Loading. kr_cublas_open returns 0 on success; on failure it writes a
 * message (dlerror text or the missing symbol) into err. */
int kr_cublas_open(const char *path, char *err, size_t errlen);
int kr_cublas_has_status_name(void);

/* Thin wrappers: each calls the resolved function pointer. */
kr_cublasStatus_t kr_cublasCreate(kr_cublasHandle_t *handle);
kr_cublasStatus_t kr_cublasDestroy(kr_cublasHandle_t handle);
kr_cublasStatus_t kr_cublasGetVersion(kr_cublasHandle_t handle, int *version);
kr_cublasStatus_t kr_cublasSetStream(kr_cublasHandle_t handle, void *stream);
kr_cublasStatus_t kr_cublasSetWorkspace(kr_cublasHandle_t handle, uintptr_t workspace, size_t bytes);
kr_cublasStatus_t kr_cublasSetMathMode(kr_cublasHandle_t handle, int mode);
kr_cublasStatus_t kr_cublasGetMathMode(kr_cublasHandle_t handle, int *mode);
const char *kr_cublasGetStatusName(kr_cublasStatus_t status);
const char *kr_cublasGetStatusString(kr_cublasStatus_t status);

kr_cublasStatus_t kr_cublasGemmEx(kr_cublasHandle_t handle, int transa, int transb,
                                  int m, int n, int k, const void *alpha,
                                  uintptr_t A, int Atype, int lda,
                                  uintptr_t B, int Btype, int ldb,
                                  const void *beta,
                                  uintptr_t C, int Ctype, int ldc,
                                  int computeType, int algo);

kr_cublasStatus_t kr_cublasGemmStridedBatchedEx(kr_cublasHandle_t handle, int transa, int transb,
                                                int m, int n, int k, const void *alpha,
                                                uintptr_t A, int Atype, int lda, long long strideA,
                                                uintptr_t B, int Btype, int ldb, long long strideB,
                                                const void *beta,
                                                uintptr_t C, int Ctype, int ldc, long long strideC,
                                                int batchCount, int computeType, int algo);

#endif
