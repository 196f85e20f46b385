/*
 * Private declarations for the run-time loaded cuDNN library.
 *
 * No cuDNN or CUDA header is needed at build time: the entry points
 * package cudnn uses are declared here as cudnn_graph.h (cuDNN 9) declares
 * them: cudnnGetVersion as in every version, the handle, error and
 * backend (graph) API of cuDNN 9. Enumerations are passed as int (their C
 * ABI), handles and descriptors as opaque pointers; the enumerators
 * package cudnn uses are Go constants (types.go), checked against the
 * header by headers_test.go.
 *
 * kr_cudnn_fn is the function table: package dl fills it (cudnn.go lists
 * the symbol of each slot), and the static inline wrapper below calls
 * through it. Go code calls only the wrapper, after Load.
 */
#ifndef KREPLAY_CUDNN_SHIM_H
#define KREPLAY_CUDNN_SHIM_H

#include <stddef.h>
#include <stdint.h>

typedef int kr_cudnnStatus_t;                          /* cudnnStatus_t */
typedef struct kr_cudnnContext *kr_cudnnHandle_t;      /* cudnnHandle_t */
typedef void *kr_cudnnBackendDescriptor_t;             /* cudnnBackendDescriptor_t */

typedef size_t (*kr_pfn_cudnnGetVersion)(void);
typedef const char *(*kr_pfn_cudnnGetErrorString)(kr_cudnnStatus_t);
typedef void (*kr_pfn_cudnnGetLastErrorString)(char *, size_t);
typedef kr_cudnnStatus_t (*kr_pfn_cudnnCreate)(kr_cudnnHandle_t *);
typedef kr_cudnnStatus_t (*kr_pfn_cudnnDestroy)(kr_cudnnHandle_t);
typedef kr_cudnnStatus_t (*kr_pfn_cudnnSetStream)(kr_cudnnHandle_t, void *);
typedef kr_cudnnStatus_t (*kr_pfn_cudnnBackendCreateDescriptor)(int, kr_cudnnBackendDescriptor_t *);
typedef kr_cudnnStatus_t (*kr_pfn_cudnnBackendDestroyDescriptor)(kr_cudnnBackendDescriptor_t);
typedef kr_cudnnStatus_t (*kr_pfn_cudnnBackendFinalize)(kr_cudnnBackendDescriptor_t);
typedef kr_cudnnStatus_t (*kr_pfn_cudnnBackendSetAttribute)(kr_cudnnBackendDescriptor_t, int, int, int64_t, const void *);
typedef kr_cudnnStatus_t (*kr_pfn_cudnnBackendGetAttribute)(kr_cudnnBackendDescriptor_t, int, int, int64_t, int64_t *, void *);
typedef kr_cudnnStatus_t (*kr_pfn_cudnnBackendExecute)(kr_cudnnHandle_t, kr_cudnnBackendDescriptor_t, kr_cudnnBackendDescriptor_t);

/* Slots of kr_cudnn_fn. */
enum {
	KR_CUDNN_cudnnGetVersion,
	KR_CUDNN_cudnnGetErrorString,
	KR_CUDNN_cudnnGetLastErrorString,
	KR_CUDNN_cudnnCreate,
	KR_CUDNN_cudnnDestroy,
	KR_CUDNN_cudnnSetStream,
	KR_CUDNN_cudnnBackendCreateDescriptor,
	KR_CUDNN_cudnnBackendDestroyDescriptor,
	KR_CUDNN_cudnnBackendFinalize,
	KR_CUDNN_cudnnBackendSetAttribute,
	KR_CUDNN_cudnnBackendGetAttribute,
	KR_CUDNN_cudnnBackendExecute,
	KR_CUDNN_COUNT
};

extern void *kr_cudnn_fn[KR_CUDNN_COUNT];

#define KR_CUDNN(api) ((kr_pfn_##api)kr_cudnn_fn[KR_CUDNN_##api])

static inline size_t kr_cudnnGetVersion(void) { return KR_CUDNN(cudnnGetVersion)(); }
static inline const char *kr_cudnnGetErrorString(kr_cudnnStatus_t st) { return KR_CUDNN(cudnnGetErrorString)(st); }

/* cudnnGetLastErrorString is cuDNN 9's; with an older library the slot is
 * nil and the message empty. */
static inline void kr_cudnnGetLastErrorString(char *msg, size_t n) {
	if (n > 0) {
		msg[0] = 0;
	}
	if (kr_cudnn_fn[KR_CUDNN_cudnnGetLastErrorString] != NULL) {
		KR_CUDNN(cudnnGetLastErrorString)(msg, n);
	}
}
static inline kr_cudnnStatus_t kr_cudnnCreate(kr_cudnnHandle_t *h) { return KR_CUDNN(cudnnCreate)(h); }
static inline kr_cudnnStatus_t kr_cudnnDestroy(kr_cudnnHandle_t h) { return KR_CUDNN(cudnnDestroy)(h); }
static inline kr_cudnnStatus_t kr_cudnnSetStream(kr_cudnnHandle_t h, void *s) { return KR_CUDNN(cudnnSetStream)(h, s); }
static inline kr_cudnnStatus_t kr_cudnnBackendCreateDescriptor(int type, kr_cudnnBackendDescriptor_t *d) {
	return KR_CUDNN(cudnnBackendCreateDescriptor)(type, d);
}
static inline kr_cudnnStatus_t kr_cudnnBackendDestroyDescriptor(kr_cudnnBackendDescriptor_t d) {
	return KR_CUDNN(cudnnBackendDestroyDescriptor)(d);
}
static inline kr_cudnnStatus_t kr_cudnnBackendFinalize(kr_cudnnBackendDescriptor_t d) { return KR_CUDNN(cudnnBackendFinalize)(d); }
static inline kr_cudnnStatus_t kr_cudnnBackendSetAttribute(kr_cudnnBackendDescriptor_t d, int name, int type, int64_t n, const void *v) {
	return KR_CUDNN(cudnnBackendSetAttribute)(d, name, type, n, v);
}
static inline kr_cudnnStatus_t kr_cudnnBackendGetAttribute(kr_cudnnBackendDescriptor_t d, int name, int type, int64_t req,
                                                           int64_t *count, void *v) {
	return KR_CUDNN(cudnnBackendGetAttribute)(d, name, type, req, count, v);
}
static inline kr_cudnnStatus_t kr_cudnnBackendExecute(kr_cudnnHandle_t h, kr_cudnnBackendDescriptor_t plan,
                                                      kr_cudnnBackendDescriptor_t pack) {
	return KR_CUDNN(cudnnBackendExecute)(h, plan, pack);
}

/* kr_cudnnGetDescriptors reads a descriptor-array attribute (attrType is
 * CUDNN_TYPE_BACKEND_DESCRIPTOR; the engine configs of heuristics) into n
 * descriptors it creates of type descType; the caller destroys the
 * non-NULL ones whatever the status. */
static inline kr_cudnnStatus_t kr_cudnnGetDescriptors(kr_cudnnBackendDescriptor_t d, int name, int attrType, int descType,
                                                      int64_t n, int64_t *count, kr_cudnnBackendDescriptor_t *out) {
	for (int64_t i = 0; i < n; i++) {
		out[i] = NULL;
	}
	for (int64_t i = 0; i < n; i++) {
		kr_cudnnStatus_t st = kr_cudnnBackendCreateDescriptor(descType, &out[i]);
		if (st != 0) {
			return st;
		}
	}
	return kr_cudnnBackendGetAttribute(d, name, attrType, n, count, out);
}

#endif
