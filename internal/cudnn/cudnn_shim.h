/*
 * Private declarations for the run-time loaded cuDNN library.
 *
 * No cuDNN or CUDA header is needed at build time: the one entry point
 * package cudnn uses is declared here as cudnn.h declares it in every
 * cuDNN version: size_t cudnnGetVersion(void).
 *
 * kr_cudnn_fn is the function table: package dl fills it (cudnn.go lists
 * the symbol of each slot), and the static inline wrapper below calls
 * through it. Go code calls only the wrapper, after Load.
 */
#ifndef KREPLAY_CUDNN_SHIM_H
#define KREPLAY_CUDNN_SHIM_H

#include <stddef.h>

typedef size_t (*kr_pfn_cudnnGetVersion)(void);

/* Slots of kr_cudnn_fn. */
enum {
	KR_CUDNN_cudnnGetVersion,
	KR_CUDNN_COUNT
};

extern void *kr_cudnn_fn[KR_CUDNN_COUNT];

#define KR_CUDNN(api) ((kr_pfn_##api)kr_cudnn_fn[KR_CUDNN_##api])

static inline size_t kr_cudnnGetVersion(void) { return KR_CUDNN(cudnnGetVersion)(); }

#endif
