/*
 * Private declarations for the run-time loaded cuBLASLt library.
 *
 * Transcribed from cublasLt.h of CUDA 12.6 and 13.0 (identical for what
 * is declared here); no CUDA header is needed at build time. Enumerations
 * are passed as int (their C ABI).
 */
#ifndef KREPLAY_CUBLASLT_SHIM_H
#define KREPLAY_CUBLASLT_SHIM_H

#include <stddef.h>
#include <stdint.h>

typedef int kr_ltStatus_t;                          /* cublasStatus_t */
typedef struct kr_cublasLtContext *kr_ltHandle_t;   /* cublasLtHandle_t */
typedef struct kr_ltMatmulDescOpaque *kr_ltMatmulDesc_t;     /* cublasLtMatmulDesc_t */
typedef struct kr_ltMatrixLayoutOpaque *kr_ltMatrixLayout_t; /* cublasLtMatrixLayout_t */
typedef struct kr_ltPreferenceOpaque *kr_ltMatmulPreference_t; /* cublasLtMatmulPreference_t */

/* cublasLtMatmulAlgo_t: "typedef struct { uint64_t data[8]; }" (64 bytes). */
typedef struct {
	uint64_t data[8];
} kr_ltMatmulAlgo_t;

/* cublasLtMatmulHeuristicResult_t, field for field:
 *   offset  0: cublasLtMatmulAlgo_t algo (64 bytes)
 *   offset 64: size_t workspaceSize
 *   offset 72: cublasStatus_t state
 *   offset 76: float wavesCount
 *   offset 80: int reserved[4]
 *   sizeof 96 */
typedef struct {
	kr_ltMatmulAlgo_t algo;
	size_t workspaceSize;
	kr_ltStatus_t state;
	float wavesCount;
	int reserved[4];
} kr_ltHeuristicResult_t;

int kr_lt_open(const char *path, char *err, size_t errlen);

size_t kr_ltGetVersion(void);
kr_ltStatus_t kr_ltCreate(kr_ltHandle_t *h);
kr_ltStatus_t kr_ltDestroy(kr_ltHandle_t h);

kr_ltStatus_t kr_ltMatmulDescCreate(kr_ltMatmulDesc_t *d, int computeType, int scaleType);
kr_ltStatus_t kr_ltMatmulDescDestroy(kr_ltMatmulDesc_t d);
kr_ltStatus_t kr_ltMatmulDescSetAttribute(kr_ltMatmulDesc_t d, int attr, const void *buf, size_t n);
kr_ltStatus_t kr_ltMatmulDescGetAttribute(kr_ltMatmulDesc_t d, int attr, void *buf, size_t n, size_t *written);

kr_ltStatus_t kr_ltMatrixLayoutCreate(kr_ltMatrixLayout_t *l, int type, uint64_t rows, uint64_t cols, int64_t ld);
kr_ltStatus_t kr_ltMatrixLayoutDestroy(kr_ltMatrixLayout_t l);
kr_ltStatus_t kr_ltMatrixLayoutSetAttribute(kr_ltMatrixLayout_t l, int attr, const void *buf, size_t n);
kr_ltStatus_t kr_ltMatrixLayoutGetAttribute(kr_ltMatrixLayout_t l, int attr, void *buf, size_t n, size_t *written);

kr_ltStatus_t kr_ltMatmulPreferenceCreate(kr_ltMatmulPreference_t *p);
kr_ltStatus_t kr_ltMatmulPreferenceDestroy(kr_ltMatmulPreference_t p);
kr_ltStatus_t kr_ltMatmulPreferenceSetAttribute(kr_ltMatmulPreference_t p, int attr, const void *buf, size_t n);
kr_ltStatus_t kr_ltMatmulPreferenceGetAttribute(kr_ltMatmulPreference_t p, int attr, void *buf, size_t n, size_t *written);

kr_ltStatus_t kr_ltMatmulAlgoGetHeuristic(kr_ltHandle_t h, kr_ltMatmulDesc_t op,
                                          kr_ltMatrixLayout_t a, kr_ltMatrixLayout_t b,
                                          kr_ltMatrixLayout_t c, kr_ltMatrixLayout_t d,
                                          kr_ltMatmulPreference_t pref, int requested,
                                          kr_ltHeuristicResult_t *results, int *returned);

kr_ltStatus_t kr_ltMatmul(kr_ltHandle_t h, kr_ltMatmulDesc_t op, const void *alpha,
                          uintptr_t A, kr_ltMatrixLayout_t Adesc,
                          uintptr_t B, kr_ltMatrixLayout_t Bdesc,
                          const void *beta,
                          uintptr_t C, kr_ltMatrixLayout_t Cdesc,
                          uintptr_t D, kr_ltMatrixLayout_t Ddesc,
                          const kr_ltMatmulAlgo_t *algo,
                          uintptr_t workspace, size_t workspaceBytes, void *stream);

/* Layout facts of the declarations above, for the header probe test. */
static inline size_t kr_lt_sizeof_algo(void) { return sizeof(kr_ltMatmulAlgo_t); }
static inline size_t kr_lt_sizeof_result(void) { return sizeof(kr_ltHeuristicResult_t); }
static inline size_t kr_lt_off_workspace(void) { return offsetof(kr_ltHeuristicResult_t, workspaceSize); }
static inline size_t kr_lt_off_state(void) { return offsetof(kr_ltHeuristicResult_t, state); }
static inline size_t kr_lt_off_waves(void) { return offsetof(kr_ltHeuristicResult_t, wavesCount); }
static inline size_t kr_lt_off_reserved(void) { return offsetof(kr_ltHeuristicResult_t, reserved); }

#endif
