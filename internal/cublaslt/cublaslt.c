// Run-time loading of libcublasLt with dlopen/dlsym. See cublaslt_shim.h.
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cublaslt_shim.h"

typedef size_t (*pfn_version)(void);
typedef kr_ltStatus_t (*pfn_create)(kr_ltHandle_t *);
typedef kr_ltStatus_t (*pfn_destroy)(kr_ltHandle_t);
typedef kr_ltStatus_t (*pfn_desc_create)(kr_ltMatmulDesc_t *, int, int);
typedef kr_ltStatus_t (*pfn_desc_destroy)(kr_ltMatmulDesc_t);
typedef kr_ltStatus_t (*pfn_desc_set)(kr_ltMatmulDesc_t, int, const void *, size_t);
typedef kr_ltStatus_t (*pfn_desc_get)(kr_ltMatmulDesc_t, int, void *, size_t, size_t *);
typedef kr_ltStatus_t (*pfn_layout_create)(kr_ltMatrixLayout_t *, int, uint64_t, uint64_t, int64_t);
typedef kr_ltStatus_t (*pfn_layout_destroy)(kr_ltMatrixLayout_t);
typedef kr_ltStatus_t (*pfn_layout_set)(kr_ltMatrixLayout_t, int, const void *, size_t);
typedef kr_ltStatus_t (*pfn_layout_get)(kr_ltMatrixLayout_t, int, void *, size_t, size_t *);
typedef kr_ltStatus_t (*pfn_pref_create)(kr_ltMatmulPreference_t *);
typedef kr_ltStatus_t (*pfn_pref_destroy)(kr_ltMatmulPreference_t);
typedef kr_ltStatus_t (*pfn_pref_set)(kr_ltMatmulPreference_t, int, const void *, size_t);
typedef kr_ltStatus_t (*pfn_pref_get)(kr_ltMatmulPreference_t, int, void *, size_t, size_t *);
typedef kr_ltStatus_t (*pfn_heuristic)(kr_ltHandle_t, kr_ltMatmulDesc_t, kr_ltMatrixLayout_t,
                                       kr_ltMatrixLayout_t, kr_ltMatrixLayout_t, kr_ltMatrixLayout_t,
                                       kr_ltMatmulPreference_t, int, kr_ltHeuristicResult_t *, int *);
typedef kr_ltStatus_t (*pfn_matmul)(kr_ltHandle_t, kr_ltMatmulDesc_t, const void *,
                                    const void *, kr_ltMatrixLayout_t, const void *, kr_ltMatrixLayout_t,
                                    const void *, const void *, kr_ltMatrixLayout_t,
                                    void *, kr_ltMatrixLayout_t, const kr_ltMatmulAlgo_t *,
                                    void *, size_t, void *);

struct kr_lt_fns {
	pfn_version version;
	pfn_create create;
	pfn_destroy destroy;
	pfn_desc_create desc_create;
	pfn_desc_destroy desc_destroy;
	pfn_desc_set desc_set;
	pfn_desc_get desc_get;
	pfn_layout_create layout_create;
	pfn_layout_destroy layout_destroy;
	pfn_layout_set layout_set;
	pfn_layout_get layout_get;
	pfn_pref_create pref_create;
	pfn_pref_destroy pref_destroy;
	pfn_pref_set pref_set;
	pfn_pref_get pref_get;
	pfn_heuristic heuristic;
	pfn_matmul matmul;
};

static struct kr_lt_fns fns;

int kr_lt_open(const char *path, char *err, size_t errlen) {
	struct kr_lt_fns f;
	void *lib;

	dlerror();
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen failed");
		return 1;
	}
	memset(&f, 0, sizeof f);
#define REQ(field, sym)                                                 \
	do {                                                            \
		*(void **)(&f.field) = dlsym(lib, sym);                 \
		if (f.field == NULL) {                                  \
			snprintf(err, errlen, "missing symbol %s", sym); \
			dlclose(lib);                                   \
			return 2;                                       \
		}                                                       \
	} while (0)
	REQ(version, "cublasLtGetVersion");
	REQ(create, "cublasLtCreate");
	REQ(destroy, "cublasLtDestroy");
	REQ(desc_create, "cublasLtMatmulDescCreate");
	REQ(desc_destroy, "cublasLtMatmulDescDestroy");
	REQ(desc_set, "cublasLtMatmulDescSetAttribute");
	REQ(desc_get, "cublasLtMatmulDescGetAttribute");
	REQ(layout_create, "cublasLtMatrixLayoutCreate");
	REQ(layout_destroy, "cublasLtMatrixLayoutDestroy");
	REQ(layout_set, "cublasLtMatrixLayoutSetAttribute");
	REQ(layout_get, "cublasLtMatrixLayoutGetAttribute");
	REQ(pref_create, "cublasLtMatmulPreferenceCreate");
	REQ(pref_destroy, "cublasLtMatmulPreferenceDestroy");
	REQ(pref_set, "cublasLtMatmulPreferenceSetAttribute");
	REQ(pref_get, "cublasLtMatmulPreferenceGetAttribute");
	REQ(heuristic, "cublasLtMatmulAlgoGetHeuristic");
	REQ(matmul, "cublasLtMatmul");
#undef REQ
	fns = f; /* the library stays loaded for the life of the process */
	return 0;
}

size_t kr_ltGetVersion(void) { return fns.version(); }
kr_ltStatus_t kr_ltCreate(kr_ltHandle_t *h) { return fns.create(h); }
kr_ltStatus_t kr_ltDestroy(kr_ltHandle_t h) { return fns.destroy(h); }

kr_ltStatus_t kr_ltMatmulDescCreate(kr_ltMatmulDesc_t *d, int computeType, int scaleType) {
	return fns.desc_create(d, computeType, scaleType);
}
kr_ltStatus_t kr_ltMatmulDescDestroy(kr_ltMatmulDesc_t d) { return fns.desc_destroy(d); }
kr_ltStatus_t kr_ltMatmulDescSetAttribute(kr_ltMatmulDesc_t d, int attr, const void *buf, size_t n) {
	return fns.desc_set(d, attr, buf, n);
}
kr_ltStatus_t kr_ltMatmulDescGetAttribute(kr_ltMatmulDesc_t d, int attr, void *buf, size_t n, size_t *written) {
	return fns.desc_get(d, attr, buf, n, written);
}

kr_ltStatus_t kr_ltMatrixLayoutCreate(kr_ltMatrixLayout_t *l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
	return fns.layout_create(l, type, rows, cols, ld);
}
kr_ltStatus_t kr_ltMatrixLayoutDestroy(kr_ltMatrixLayout_t l) { return fns.layout_destroy(l); }
kr_ltStatus_t kr_ltMatrixLayoutSetAttribute(kr_ltMatrixLayout_t l, int attr, const void *buf, size_t n) {
	return fns.layout_set(l, attr, buf, n);
}
kr_ltStatus_t kr_ltMatrixLayoutGetAttribute(kr_ltMatrixLayout_t l, int attr, void *buf, size_t n, size_t *written) {
	return fns.layout_get(l, attr, buf, n, written);
}

kr_ltStatus_t kr_ltMatmulPreferenceCreate(kr_ltMatmulPreference_t *p) { return fns.pref_create(p); }
kr_ltStatus_t kr_ltMatmulPreferenceDestroy(kr_ltMatmulPreference_t p) { return fns.pref_destroy(p); }
kr_ltStatus_t kr_ltMatmulPreferenceSetAttribute(kr_ltMatmulPreference_t p, int attr, const void *buf, size_t n) {
	return fns.pref_set(p, attr, buf, n);
}
kr_ltStatus_t kr_ltMatmulPreferenceGetAttribute(kr_ltMatmulPreference_t p, int attr, void *buf, size_t n, size_t *written) {
	return fns.pref_get(p, attr, buf, n, written);
}

kr_ltStatus_t kr_ltMatmulAlgoGetHeuristic(kr_ltHandle_t h, kr_ltMatmulDesc_t op,
                                          kr_ltMatrixLayout_t a, kr_ltMatrixLayout_t b,
                                          kr_ltMatrixLayout_t c, kr_ltMatrixLayout_t d,
                                          kr_ltMatmulPreference_t pref, int requested,
                                          kr_ltHeuristicResult_t *results, int *returned) {
	return fns.heuristic(h, op, a, b, c, d, pref, requested, results, returned);
}

kr_ltStatus_t kr_ltMatmul(kr_ltHandle_t h, kr_ltMatmulDesc_t op, const void *alpha,
                          uintptr_t A, kr_ltMatrixLayout_t Adesc,
                          uintptr_t B, kr_ltMatrixLayout_t Bdesc,
                          const void *beta,
                          uintptr_t C, kr_ltMatrixLayout_t Cdesc,
                          uintptr_t D, kr_ltMatrixLayout_t Ddesc,
                          const kr_ltMatmulAlgo_t *algo,
                          uintptr_t workspace, size_t workspaceBytes, void *stream) {
	return fns.matmul(h, op, alpha, (const void *)A, Adesc, (const void *)B, Bdesc, beta,
	                  (const void *)C, Cdesc, (void *)D, Ddesc, algo,
	                  (void *)workspace, workspaceBytes, stream);
}
