// Run-time loading of libnccl with dlopen/dlsym. See nccl_shim.h.
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "nccl_shim.h"

typedef kr_ncclResult_t (*pfn_get_version)(int *);
typedef kr_ncclResult_t (*pfn_get_unique_id)(kr_ncclUniqueId *);
typedef kr_ncclResult_t (*pfn_init_rank)(kr_ncclComm_t *, int, kr_ncclUniqueId, int);
typedef kr_ncclResult_t (*pfn_init_all)(kr_ncclComm_t *, int, const int *);
typedef kr_ncclResult_t (*pfn_comm)(kr_ncclComm_t);
typedef kr_ncclResult_t (*pfn_comm_int)(kr_ncclComm_t, int *);
typedef kr_ncclResult_t (*pfn_void)(void);
typedef kr_ncclResult_t (*pfn_all_reduce)(const void *, void *, size_t, int, int, kr_ncclComm_t, void *);
typedef kr_ncclResult_t (*pfn_all_gather)(const void *, void *, size_t, int, kr_ncclComm_t, void *);
typedef kr_ncclResult_t (*pfn_broadcast)(const void *, void *, size_t, int, int, kr_ncclComm_t, void *);
typedef const char *(*pfn_error_string)(kr_ncclResult_t);
typedef const char *(*pfn_last_error)(kr_ncclComm_t);

struct kr_nccl_fns {
	pfn_get_version get_version;
	pfn_get_unique_id get_unique_id;
	pfn_init_rank init_rank;
	pfn_init_all init_all;
	pfn_comm destroy;
	pfn_comm abort_;
	pfn_comm_int count;
	pfn_comm_int cu_device;
	pfn_comm_int user_rank;
	pfn_void group_start;
	pfn_void group_end;
	pfn_all_reduce all_reduce;
	pfn_all_gather all_gather;
	pfn_all_reduce reduce_scatter; /* same parameter list as ncclAllReduce */
	pfn_broadcast broadcast;
	pfn_error_string error_string;
	pfn_last_error last_error; /* optional: NCCL 2.13+ */
};

static struct kr_nccl_fns fns;

static void set_err(char *err, size_t errlen, const char *a, const char *b) {
	if (err == NULL || errlen == 0) return;
	snprintf(err, errlen, "%s%s", a ? a : "", b ? b : "");
}

int kr_nccl_open(const char *path, char *err, size_t errlen) {
	struct kr_nccl_fns f;
	void *lib;

	dlerror();
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *e = dlerror();
		set_err(err, errlen, e ? e : "dlopen failed", NULL);
		return 1;
	}
	memset(&f, 0, sizeof f);
#define REQ(field, sym)                                               \
	do {                                                          \
		*(void **)(&f.field) = dlsym(lib, sym);               \
		if (f.field == NULL) {                                \
			set_err(err, errlen, "missing symbol ", sym); \
			dlclose(lib);                                 \
			return 2;                                     \
		}                                                     \
	} while (0)
	REQ(get_version, "ncclGetVersion");
	REQ(get_unique_id, "ncclGetUniqueId");
	REQ(init_rank, "ncclCommInitRank");
	REQ(init_all, "ncclCommInitAll");
	REQ(destroy, "ncclCommDestroy");
	REQ(abort_, "ncclCommAbort");
	REQ(count, "ncclCommCount");
	REQ(cu_device, "ncclCommCuDevice");
	REQ(user_rank, "ncclCommUserRank");
	REQ(group_start, "ncclGroupStart");
	REQ(group_end, "ncclGroupEnd");
	REQ(all_reduce, "ncclAllReduce");
	REQ(all_gather, "ncclAllGather");
	REQ(reduce_scatter, "ncclReduceScatter");
	REQ(broadcast, "ncclBroadcast");
	REQ(error_string, "ncclGetErrorString");
#undef REQ
	*(void **)(&f.last_error) = dlsym(lib, "ncclGetLastError");
	/* The library stays loaded for the life of the process. */
	fns = f;
	return 0;
}

int kr_nccl_has_last_error(void) { return fns.last_error != NULL; }

kr_ncclResult_t kr_ncclGetVersion(int *version) { return fns.get_version(version); }
kr_ncclResult_t kr_ncclGetUniqueId(kr_ncclUniqueId *id) { return fns.get_unique_id(id); }
kr_ncclResult_t kr_ncclCommInitRank(kr_ncclComm_t *comm, int nranks, const kr_ncclUniqueId *id, int rank) {
	return fns.init_rank(comm, nranks, *id, rank);
}
kr_ncclResult_t kr_ncclCommInitAll(kr_ncclComm_t *comms, int ndev, const int *devlist) {
	return fns.init_all(comms, ndev, devlist);
}
kr_ncclResult_t kr_ncclCommDestroy(kr_ncclComm_t comm) { return fns.destroy(comm); }
kr_ncclResult_t kr_ncclCommAbort(kr_ncclComm_t comm) { return fns.abort_(comm); }
kr_ncclResult_t kr_ncclCommCount(kr_ncclComm_t comm, int *count) { return fns.count(comm, count); }
kr_ncclResult_t kr_ncclCommCuDevice(kr_ncclComm_t comm, int *device) { return fns.cu_device(comm, device); }
kr_ncclResult_t kr_ncclCommUserRank(kr_ncclComm_t comm, int *rank) { return fns.user_rank(comm, rank); }
kr_ncclResult_t kr_ncclGroupStart(void) { return fns.group_start(); }
kr_ncclResult_t kr_ncclGroupEnd(void) { return fns.group_end(); }

kr_ncclResult_t kr_ncclAllReduce(uintptr_t sendbuff, uintptr_t recvbuff, size_t count,
                                 int datatype, int op, kr_ncclComm_t comm, void *stream) {
	return fns.all_reduce((const void *)sendbuff, (void *)recvbuff, count, datatype, op, comm, stream);
}
kr_ncclResult_t kr_ncclAllGather(uintptr_t sendbuff, uintptr_t recvbuff, size_t sendcount,
                                 int datatype, kr_ncclComm_t comm, void *stream) {
	return fns.all_gather((const void *)sendbuff, (void *)recvbuff, sendcount, datatype, comm, stream);
}
kr_ncclResult_t kr_ncclReduceScatter(uintptr_t sendbuff, uintptr_t recvbuff, size_t recvcount,
                                     int datatype, int op, kr_ncclComm_t comm, void *stream) {
	return fns.reduce_scatter((const void *)sendbuff, (void *)recvbuff, recvcount, datatype, op, comm, stream);
}
kr_ncclResult_t kr_ncclBroadcast(uintptr_t sendbuff, uintptr_t recvbuff, size_t count,
                                 int datatype, int root, kr_ncclComm_t comm, void *stream) {
	return fns.broadcast((const void *)sendbuff, (void *)recvbuff, count, datatype, root, comm, stream);
}

const char *kr_ncclGetErrorString(kr_ncclResult_t result) {
	return fns.error_string ? fns.error_string(result) : NULL;
}
const char *kr_ncclGetLastError(kr_ncclComm_t comm) {
	return fns.last_error ? fns.last_error(comm) : NULL;
}
