/*
 * What the two sources of kreplay's kernel recorder share (kr_inject.c, the
 * recorder; kr_inject_graph.c, its CUDA graphs): the launch as recorded,
 * the recorder's state and the calls between them, none of it exported
 * from the library.
 */
#ifndef KR_INJECT_H
#define KR_INJECT_H

#include <pthread.h>
#include <stdio.h>

#include "kr_inject_types.h"

#define KR_HIDDEN __attribute__((visibility("hidden")))

#define KR_MAX_PARAMS 256
#define KR_MAX_BLOB 32768
#define KR_MAX_PTRS 128

typedef struct {
	const char *api;
	kr_CUfunction f; /* as passed: a kr_CUfunction or a kr_CUkernel */
	unsigned grid[3], block[3], smem;
	kr_CUstream stream;
	void **params, **extra;
	const kr_CUlaunchAttribute *attrs;
	unsigned nattrs;
	uint64_t module; /* the image's hash, 0 if unknown (module_of) */
} launch;

typedef struct {
	size_t poff;       /* byte offset of the pointer in the parameter buffer */
	kr_CUdeviceptr value; /* the pointer */
	kr_CUdeviceptr base;  /* start of the allocation it points into */
	size_t range;      /* size of that allocation */
	int group;         /* index of the first pointer into the same allocation */
	uint64_t snap;     /* snapshot hash, 0 if none */
	size_t snaplen;
} ptrinfo;

/* innerptr is a device pointer found inside a buffer a launch points to,
 * not in its parameters: an array of pointers (a grouped GEMM's A, B and D
 * per group), a struct in device memory. The replay re-points it as it
 * does a parameter's. */
#define KR_MAX_INNER 512
/* KR_INNER_SCAN is how many bytes of each pointer's buffer are searched
 * for pointers: as many as a bundle keeps whole (package inject's
 * smallSnap). Pointer arrays sit at the pointer; the caching allocator's
 * block beyond a small tensor holds stale ones from earlier launches (a
 * MoE prefill's grouped GEMM found 296 past its arrays in 256 KiB). */
#define KR_INNER_SCAN (16 << 10)
/* A buffer whose first bytes are mostly runs (masks, zeros, masked
 * scores) is kept up to KR_RUNS_CAP bytes, not the snapshot cap (package
 * inject's runsCap): a mask larger than the cap, tiled from its first rows,
 * is not the mask. Tiled so, GPT-2-medium's causal mask made the masked
 * scores 75% mask where they are 50%, and its softmax over them replayed
 * 11% slower than traced; kept whole, 0.7% faster (H100,
 * results/h100/generality/). */
#define KR_RUNS_CAP (8 << 20)
/* KR_RUNS_BUDGET bounds the bytes a process reads for such extensions:
 * an eager decode launches thousands of unique kernels whose KV caches,
 * zero past the tokens so far, are runs that change every step; at 8 MiB
 * each they would fill the disk (its 256 KiB snapshots already made a
 * 160 MB bundle). Past the budget, buffers keep the snapshot cap. */
#define KR_RUNS_BUDGET ((size_t)512 << 20)
typedef struct {
	int in;               /* index of the parameter pointer whose buffer holds it */
	size_t at;            /* its byte offset from that pointer */
	kr_CUdeviceptr value; /* the pointer */
	kr_CUdeviceptr base;  /* start of the allocation it points into */
	size_t range;         /* size of that allocation */
	uint64_t snap;        /* snapshot hash of the bytes it points to, 0 if none */
	size_t snaplen;
} innerptr;

typedef struct {
	int regs, ssh, local, maxdyn, nonport;
} fattrs;

/* gcapture is one stream capture and what was captured into it
 * (kr_inject_graph.c). */
struct gcapture;

/* The recorder's state (kr_inject.c): its lock, the events file and its
 * sequence number, whether a write or an allocation failed. */
extern KR_HIDDEN pthread_mutex_t mu;
extern KR_HIDDEN FILE *events;
extern KR_HIDDEN uint64_t seq;
extern KR_HIDDEN int failed;

/* kr_inject.c */
KR_HIDDEN int seen_add(uint64_t h);
KR_HIDDEN int snapshot(const launch *l, ptrinfo *ptrs, int nptr, const struct gcapture *c, size_t upto, innerptr *inner,
                       int *dropped);
KR_HIDDEN void write_key(uint64_t k, const char *name, const launch *l, fattrs fa, const unsigned char *blob, size_t nb,
                         const size_t *offs, const size_t *sizes, int np, const ptrinfo *ptrs, int nptr,
                         const innerptr *inner, int ninner, int dropped);

/* kr_inject_graph.c */
/* NO_ROOM is capture_of's answer for a stream under capture whose record
 * could not be allocated. */
#define NO_ROOM ((struct gcapture *)-1)
KR_HIDDEN void graph_init(void *cu);
KR_HIDDEN struct gcapture *capture_of(kr_CUstream s);
KR_HIDDEN void keep(struct gcapture *c, uint64_t k, const char *name, const launch *l, fattrs fa, const unsigned char *blob,
                    size_t nb, const size_t *offs, const size_t *sizes, int np, const ptrinfo *ptrs, int nptr);
KR_HIDDEN void apply_memsets(const struct gcapture *c, size_t upto, kr_CUdeviceptr at, unsigned char *buf, size_t n);
KR_HIDDEN void on_memset(const char *fn, const kr_CallbackData *cd);
KR_HIDDEN void on_instantiate(const kr_CallbackData *cd);
KR_HIDDEN void graph_launch(void *exec, kr_CUstream stream);

#endif /* KR_INJECT_H */
