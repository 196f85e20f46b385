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

/* Loading. kr_nccl_open returns 0 on success; on failure it writes a
 * message (dlerror text or the missing symbol) into err. */
int kr_nccl_open(const char *path, char *err, size_t errlen);
int kr_nccl_has_last_error(void);

/* Thin wrappers: each calls the resolved function pointer. */
kr_ncclResult_t kr_ncclGetVersion(int *version);
kr_ncclResult_t kr_ncclGetUniqueId(kr_ncclUniqueId *id);
kr_ncclResult_t kr_ncclCommInitRank(kr_ncclComm_t *comm, int nranks, const kr_ncclUniqueId *id, int rank);
kr_ncclResult_t kr_ncclCommInitAll(kr_ncclComm_t *comms, int ndev, const int *devlist);
kr_ncclResult_t kr_ncclCommDestroy(kr_ncclComm_t comm);
kr_ncclResult_t kr_ncclCommAbort(kr_ncclComm_t comm);
kr_ncclResult_t kr_ncclCommCount(kr_ncclComm_t comm, int *count);
kr_ncclResult_t kr_ncclCommCuDevice(kr_ncclComm_t comm, int *device);
kr_ncclResult_t kr_ncclCommUserRank(kr_ncclComm_t comm, int *rank);
kr_ncclResult_t kr_ncclGroupStart(void);
kr_ncclResult_t kr_ncclGroupEnd(void);

kr_ncclResult_t kr_ncclAllReduce(uintptr_t sendbuff, uintptr_t recvbuff, size_t count,
                                 int datatype, int op, kr_ncclComm_t comm, void *stream);
kr_ncclResult_t kr_ncclAllGather(uintptr_t sendbuff, uintptr_t recvbuff, size_t sendcount,
                                 int datatype, kr_ncclComm_t comm, void *stream);
kr_ncclResult_t kr_ncclReduceScatter(uintptr_t sendbuff, uintptr_t recvbuff, size_t recvcount,
                                     int datatype, int op, kr_ncclComm_t comm, void *stream);
kr_ncclResult_t kr_ncclBroadcast(uintptr_t sendbuff, uintptr_t recvbuff, size_t count,
                                 int datatype, int root, kr_ncclComm_t comm, void *stream);

const char *kr_ncclGetErrorString(kr_ncclResult_t result);
const char *kr_ncclGetLastError(kr_ncclComm_t comm); /* NULL before NCCL 2.13 */

#endif
