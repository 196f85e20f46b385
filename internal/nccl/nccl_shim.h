/*
 * Private declarations for the run-time loaded NCCL library.
 *
 * No NCCL or CUDA header is needed at build time: the few types and the
 * function signatures package nccl uses are declared here, transcribed from
 * nccl.h (NCCL 2.2x). Enumerations (ncclResult_t, ncclDataType_t,
 * ncclRedOp_t) are passed as int, which is how the C ABI passes a C enum
 * on every platform NCCL supports. Device buffers travel as uintptr_t and
 * streams (cudaStream_t) as void *.
 */
#ifndef KREPLAY_NCCL_SHIM_H
#define KREPLAY_NCCL_SHIM_H

#include <stddef.h>
#include <stdint.h>

typedef int kr_ncclResult_t;                   /* ncclResult_t */
typedef struct kr_ncclComm *kr_ncclComm_t;      /* ncclComm_t */

/* ncclUniqueId: NCCL_UNIQUE_ID_BYTES opaque bytes, passed by value. */
#define KR_NCCL_UNIQUE_ID_BYTES 128
typedef struct {
	char internal[KR_NCCL_UNIQUE_ID_BYTES];
} kr_ncclUniqueId;

typedef kr_ncclResult_t (*kr_pfn_ncclGetVersion)(int *);
typedef kr_ncclResult_t (*kr_pfn_ncclGetUniqueId)(kr_ncclUniqueId *);
typedef kr_ncclResult_t (*kr_pfn_ncclCommInitRank)(kr_ncclComm_t *, int, kr_ncclUniqueId, int);
typedef kr_ncclResult_t (*kr_pfn_ncclCommInitAll)(kr_ncclComm_t *, int, const int *);
typedef kr_ncclResult_t (*kr_pfn_ncclComm)(kr_ncclComm_t);
typedef kr_ncclResult_t (*kr_pfn_ncclCommInt)(kr_ncclComm_t, int *);
typedef kr_ncclResult_t (*kr_pfn_ncclVoid)(void);
typedef kr_ncclResult_t (*kr_pfn_ncclAllReduce)(const void *, void *, size_t, int, int, kr_ncclComm_t, void *);
typedef kr_ncclResult_t (*kr_pfn_ncclAllGather)(const void *, void *, size_t, int, kr_ncclComm_t, void *);
typedef kr_ncclResult_t (*kr_pfn_ncclBroadcast)(const void *, void *, size_t, int, int, kr_ncclComm_t, void *);
typedef const char *(*kr_pfn_ncclGetErrorString)(kr_ncclResult_t);
typedef const char *(*kr_pfn_ncclGetLastError)(kr_ncclComm_t);

/* Slots of kr_nccl_fn, the function table package dl fills (nccl.go lists
 * the symbol of each); the static inline wrappers below call through it.
 * Go code calls only the wrappers, after Load. */
enum {
	KR_NCCL_ncclGetVersion,
	KR_NCCL_ncclGetUniqueId,
	KR_NCCL_ncclCommInitRank,
	KR_NCCL_ncclCommInitAll,
	KR_NCCL_ncclCommDestroy,
	KR_NCCL_ncclCommAbort,
	KR_NCCL_ncclCommCount,
	KR_NCCL_ncclCommCuDevice,
	KR_NCCL_ncclCommUserRank,
	KR_NCCL_ncclGroupStart,
	KR_NCCL_ncclGroupEnd,
	KR_NCCL_ncclAllReduce,
	KR_NCCL_ncclAllGather,
	KR_NCCL_ncclReduceScatter,
	KR_NCCL_ncclBroadcast,
	KR_NCCL_ncclGetErrorString,
	KR_NCCL_ncclGetLastError, /* optional: NCCL 2.13+ */
	KR_NCCL_COUNT
};

extern void *kr_nccl_fn[KR_NCCL_COUNT];

/* KR_NCCL(api, type) is the entry point of slot KR_NCCL_api as a type. */
#define KR_NCCL(api, type) ((kr_pfn_##type)kr_nccl_fn[KR_NCCL_##api])

static inline kr_ncclResult_t kr_ncclGetVersion(int *version) { return KR_NCCL(ncclGetVersion, ncclGetVersion)(version); }
static inline kr_ncclResult_t kr_ncclGetUniqueId(kr_ncclUniqueId *id) { return KR_NCCL(ncclGetUniqueId, ncclGetUniqueId)(id); }
static inline kr_ncclResult_t kr_ncclCommInitRank(kr_ncclComm_t *comm, int nranks, const kr_ncclUniqueId *id, int rank) {
	return KR_NCCL(ncclCommInitRank, ncclCommInitRank)(comm, nranks, *id, rank);
}
static inline kr_ncclResult_t kr_ncclCommInitAll(kr_ncclComm_t *comms, int ndev, const int *devlist) {
	return KR_NCCL(ncclCommInitAll, ncclCommInitAll)(comms, ndev, devlist);
}
static inline kr_ncclResult_t kr_ncclCommDestroy(kr_ncclComm_t comm) { return KR_NCCL(ncclCommDestroy, ncclComm)(comm); }
static inline kr_ncclResult_t kr_ncclCommAbort(kr_ncclComm_t comm) { return KR_NCCL(ncclCommAbort, ncclComm)(comm); }
static inline kr_ncclResult_t kr_ncclCommCount(kr_ncclComm_t comm, int *count) { return KR_NCCL(ncclCommCount, ncclCommInt)(comm, count); }
static inline kr_ncclResult_t kr_ncclCommCuDevice(kr_ncclComm_t comm, int *device) {
	return KR_NCCL(ncclCommCuDevice, ncclCommInt)(comm, device);
}
static inline kr_ncclResult_t kr_ncclCommUserRank(kr_ncclComm_t comm, int *rank) {
	return KR_NCCL(ncclCommUserRank, ncclCommInt)(comm, rank);
}
static inline kr_ncclResult_t kr_ncclGroupStart(void) { return KR_NCCL(ncclGroupStart, ncclVoid)(); }
static inline kr_ncclResult_t kr_ncclGroupEnd(void) { return KR_NCCL(ncclGroupEnd, ncclVoid)(); }

static inline kr_ncclResult_t kr_ncclAllReduce(uintptr_t sendbuff, uintptr_t recvbuff, size_t count,
                                               int datatype, int op, kr_ncclComm_t comm, void *stream) {
	return KR_NCCL(ncclAllReduce, ncclAllReduce)((const void *)sendbuff, (void *)recvbuff, count, datatype, op, comm, stream);
}
static inline kr_ncclResult_t kr_ncclAllGather(uintptr_t sendbuff, uintptr_t recvbuff, size_t sendcount,
                                               int datatype, kr_ncclComm_t comm, void *stream) {
	return KR_NCCL(ncclAllGather, ncclAllGather)((const void *)sendbuff, (void *)recvbuff, sendcount, datatype, comm, stream);
}
/* ncclReduceScatter has ncclAllReduce's parameter list. */
static inline kr_ncclResult_t kr_ncclReduceScatter(uintptr_t sendbuff, uintptr_t recvbuff, size_t recvcount,
                                                   int datatype, int op, kr_ncclComm_t comm, void *stream) {
	return KR_NCCL(ncclReduceScatter, ncclAllReduce)((const void *)sendbuff, (void *)recvbuff, recvcount, datatype, op, comm, stream);
}
static inline kr_ncclResult_t kr_ncclBroadcast(uintptr_t sendbuff, uintptr_t recvbuff, size_t count,
                                               int datatype, int root, kr_ncclComm_t comm, void *stream) {
	return KR_NCCL(ncclBroadcast, ncclBroadcast)((const void *)sendbuff, (void *)recvbuff, count, datatype, root, comm, stream);
}

/* NULL where the entry point is absent (ncclGetLastError before NCCL 2.13). */
static inline const char *kr_ncclGetErrorString(kr_ncclResult_t result) {
	kr_pfn_ncclGetErrorString f = KR_NCCL(ncclGetErrorString, ncclGetErrorString);
	return f ? f(result) : NULL;
}
static inline const char *kr_ncclGetLastError(kr_ncclComm_t comm) {
	kr_pfn_ncclGetLastError f = KR_NCCL(ncclGetLastError, ncclGetLastError);
	return f ? f(comm) : NULL;
}

#endif
