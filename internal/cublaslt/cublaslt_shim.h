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

typedef size_t (*kr_pfn_ltGetVersion)(void);
typedef kr_ltStatus_t (*kr_pfn_ltCreate)(kr_ltHandle_t *);
typedef kr_ltStatus_t (*kr_pfn_ltDestroy)(kr_ltHandle_t);
typedef kr_ltStatus_t (*kr_pfn_ltMatmulDescCreate)(kr_ltMatmulDesc_t *, int, int);
typedef kr_ltStatus_t (*kr_pfn_ltMatmulDescDestroy)(kr_ltMatmulDesc_t);
typedef kr_ltStatus_t (*kr_pfn_ltMatmulDescSetAttribute)(kr_ltMatmulDesc_t, int, const void *, size_t);
typedef kr_ltStatus_t (*kr_pfn_ltMatmulDescGetAttribute)(kr_ltMatmulDesc_t, int, void *, size_t, size_t *);
typedef kr_ltStatus_t (*kr_pfn_ltMatrixLayoutCreate)(kr_ltMatrixLayout_t *, int, uint64_t, uint64_t, int64_t);
typedef kr_ltStatus_t (*kr_pfn_ltMatrixLayoutDestroy)(kr_ltMatrixLayout_t);
typedef kr_ltStatus_t (*kr_pfn_ltMatrixLayoutSetAttribute)(kr_ltMatrixLayout_t, int, const void *, size_t);
typedef kr_ltStatus_t (*kr_pfn_ltMatrixLayoutGetAttribute)(kr_ltMatrixLayout_t, int, void *, size_t, size_t *);
typedef kr_ltStatus_t (*kr_pfn_ltMatmulPreferenceCreate)(kr_ltMatmulPreference_t *);
typedef kr_ltStatus_t (*kr_pfn_ltMatmulPreferenceDestroy)(kr_ltMatmulPreference_t);
typedef kr_ltStatus_t (*kr_pfn_ltMatmulPreferenceSetAttribute)(kr_ltMatmulPreference_t, int, const void *, size_t);
typedef kr_ltStatus_t (*kr_pfn_ltMatmulPreferenceGetAttribute)(kr_ltMatmulPreference_t, int, void *, size_t, size_t *);
typedef kr_ltStatus_t (*kr_pfn_ltMatmulAlgoGetHeuristic)(kr_ltHandle_t, kr_ltMatmulDesc_t, kr_ltMatrixLayout_t,
                                                         kr_ltMatrixLayout_t, kr_ltMatrixLayout_t, kr_ltMatrixLayout_t,
                                                         kr_ltMatmulPreference_t, int, kr_ltHeuristicResult_t *, int *);
typedef kr_ltStatus_t (*kr_pfn_ltMatmul)(kr_ltHandle_t, kr_ltMatmulDesc_t, const void *,
                                         const void *, kr_ltMatrixLayout_t, const void *, kr_ltMatrixLayout_t,
                                         const void *, const void *, kr_ltMatrixLayout_t,
                                         void *, kr_ltMatrixLayout_t, const kr_ltMatmulAlgo_t *,
                                         void *, size_t, void *);

/* Slots of kr_lt_fn, the function table package dl fills (cublaslt.go
 * lists the symbol of each); the static inline wrappers below call
 * through it. Go code calls only the wrappers, after Load. */
enum {
	KR_LT_ltGetVersion,
	KR_LT_ltCreate,
	KR_LT_ltDestroy,
	KR_LT_ltMatmulDescCreate,
	KR_LT_ltMatmulDescDestroy,
	KR_LT_ltMatmulDescSetAttribute,
	KR_LT_ltMatmulDescGetAttribute,
	KR_LT_ltMatrixLayoutCreate,
	KR_LT_ltMatrixLayoutDestroy,
	KR_LT_ltMatrixLayoutSetAttribute,
	KR_LT_ltMatrixLayoutGetAttribute,
	KR_LT_ltMatmulPreferenceCreate,
	KR_LT_ltMatmulPreferenceDestroy,
	KR_LT_ltMatmulPreferenceSetAttribute,
	KR_LT_ltMatmulPreferenceGetAttribute,
	KR_LT_ltMatmulAlgoGetHeuristic,
	KR_LT_ltMatmul,
	KR_LT_COUNT
};

extern void *kr_lt_fn[KR_LT_COUNT];

#define KR_LT(api) ((kr_pfn_##api)kr_lt_fn[KR_LT_##api])

static inline size_t kr_ltGetVersion(void) { return KR_LT(ltGetVersion)(); }
static inline kr_ltStatus_t kr_ltCreate(kr_ltHandle_t *h) { return KR_LT(ltCreate)(h); }
static inline kr_ltStatus_t kr_ltDestroy(kr_ltHandle_t h) { return KR_LT(ltDestroy)(h); }

static inline kr_ltStatus_t kr_ltMatmulDescCreate(kr_ltMatmulDesc_t *d, int computeType, int scaleType) {
	return KR_LT(ltMatmulDescCreate)(d, computeType, scaleType);
}
static inline kr_ltStatus_t kr_ltMatmulDescDestroy(kr_ltMatmulDesc_t d) { return KR_LT(ltMatmulDescDestroy)(d); }
static inline kr_ltStatus_t kr_ltMatmulDescSetAttribute(kr_ltMatmulDesc_t d, int attr, const void *buf, size_t n) {
	return KR_LT(ltMatmulDescSetAttribute)(d, attr, buf, n);
}
static inline kr_ltStatus_t kr_ltMatmulDescGetAttribute(kr_ltMatmulDesc_t d, int attr, void *buf, size_t n, size_t *written) {
	return KR_LT(ltMatmulDescGetAttribute)(d, attr, buf, n, written);
}

static inline kr_ltStatus_t kr_ltMatrixLayoutCreate(kr_ltMatrixLayout_t *l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
	return KR_LT(ltMatrixLayoutCreate)(l, type, rows, cols, ld);
}
static inline kr_ltStatus_t kr_ltMatrixLayoutDestroy(kr_ltMatrixLayout_t l) { return KR_LT(ltMatrixLayoutDestroy)(l); }
static inline kr_ltStatus_t kr_ltMatrixLayoutSetAttribute(kr_ltMatrixLayout_t l, int attr, const void *buf, size_t n) {
	return KR_LT(ltMatrixLayoutSetAttribute)(l, attr, buf, n);
}
static inline kr_ltStatus_t kr_ltMatrixLayoutGetAttribute(kr_ltMatrixLayout_t l, int attr, void *buf, size_t n, size_t *written) {
	return KR_LT(ltMatrixLayoutGetAttribute)(l, attr, buf, n, written);
}

static inline kr_ltStatus_t kr_ltMatmulPreferenceCreate(kr_ltMatmulPreference_t *p) { return KR_LT(ltMatmulPreferenceCreate)(p); }
static inline kr_ltStatus_t kr_ltMatmulPreferenceDestroy(kr_ltMatmulPreference_t p) { return KR_LT(ltMatmulPreferenceDestroy)(p); }
static inline kr_ltStatus_t kr_ltMatmulPreferenceSetAttribute(kr_ltMatmulPreference_t p, int attr, const void *buf, size_t n) {
	return KR_LT(ltMatmulPreferenceSetAttribute)(p, attr, buf, n);
}
static inline kr_ltStatus_t kr_ltMatmulPreferenceGetAttribute(kr_ltMatmulPreference_t p, int attr, void *buf, size_t n, size_t *written) {
	return KR_LT(ltMatmulPreferenceGetAttribute)(p, attr, buf, n, written);
}

static inline kr_ltStatus_t kr_ltMatmulAlgoGetHeuristic(kr_ltHandle_t h, kr_ltMatmulDesc_t op,
                                                        kr_ltMatrixLayout_t a, kr_ltMatrixLayout_t b,
                                                        kr_ltMatrixLayout_t c, kr_ltMatrixLayout_t d,
                                                        kr_ltMatmulPreference_t pref, int requested,
                                                        kr_ltHeuristicResult_t *results, int *returned) {
	return KR_LT(ltMatmulAlgoGetHeuristic)(h, op, a, b, c, d, pref, requested, results, returned);
}

static inline kr_ltStatus_t kr_ltMatmul(kr_ltHandle_t h, kr_ltMatmulDesc_t op, const void *alpha,
                                        uintptr_t A, kr_ltMatrixLayout_t Adesc,
                                        uintptr_t B, kr_ltMatrixLayout_t Bdesc,
                                        const void *beta,
                                        uintptr_t C, kr_ltMatrixLayout_t Cdesc,
                                        uintptr_t D, kr_ltMatrixLayout_t Ddesc,
                                        const kr_ltMatmulAlgo_t *algo,
                                        uintptr_t workspace, size_t workspaceBytes, void *stream) {
	return KR_LT(ltMatmul)(h, op, alpha, (const void *)A, Adesc, (const void *)B, Bdesc, beta,
	                       (const void *)C, Cdesc, (void *)D, Ddesc, algo,
	                       (void *)workspace, workspaceBytes, stream);
}

/* Layout facts of the declarations above, for the header probe test. */
static inline size_t kr_lt_sizeof_algo(void) { return sizeof(kr_ltMatmulAlgo_t); }
static inline size_t kr_lt_sizeof_result(void) { return sizeof(kr_ltHeuristicResult_t); }
static inline size_t kr_lt_off_workspace(void) { return offsetof(kr_ltHeuristicResult_t, workspaceSize); }
static inline size_t kr_lt_off_state(void) { return offsetof(kr_ltHeuristicResult_t, state); }
static inline size_t kr_lt_off_waves(void) { return offsetof(kr_ltHeuristicResult_t, wavesCount); }
static inline size_t kr_lt_off_reserved(void) { return offsetof(kr_ltHeuristicResult_t, reserved); }

#endif
