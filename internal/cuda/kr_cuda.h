/*
 * Function table and call wrappers for package cuda.
 *
 * loader.c owns kr_cu_fn, a table of driver entry points that Init fills
 * at run time with cuGetProcAddress_v2 or dlsym (package dl). Go code never calls a
 * function pointer itself: it calls the static inline kr_cuX wrappers
 * below, which call through the table and return
 * CUDA_ERROR_NOT_INITIALIZED instead of jumping to NULL when a slot is
 * empty.
 */
#ifndef KR_CUDA_H
#define KR_CUDA_H

#include "kr_cuda_types.h"

/* Slots of kr_cu_fn. symbols.go has one entry per slot. */
enum {
	KR_FN_cuGetProcAddress,
	KR_FN_cuInit,
	KR_FN_cuDriverGetVersion,
	KR_FN_cuGetErrorName,
	KR_FN_cuGetErrorString,
	KR_FN_cuDeviceGetCount,
	KR_FN_cuDeviceGet,
	KR_FN_cuDeviceGetName,
	KR_FN_cuDeviceGetAttribute,
	KR_FN_cuDeviceTotalMem,
	KR_FN_cuDeviceGetPCIBusId,
	KR_FN_cuDevicePrimaryCtxRetain,
	KR_FN_cuDevicePrimaryCtxRelease,
	KR_FN_cuCtxSetCurrent,
	KR_FN_cuCtxGetCurrent,
	KR_FN_cuCtxSynchronize,
	KR_FN_cuStreamCreate,
	KR_FN_cuStreamDestroy,
	KR_FN_cuStreamSynchronize,
	KR_FN_cuStreamQuery,
	KR_FN_cuEventCreate,
	KR_FN_cuEventDestroy,
	KR_FN_cuEventRecord,
	KR_FN_cuEventSynchronize,
	KR_FN_cuEventQuery,
	KR_FN_cuEventElapsedTime,
	KR_FN_cuMemAlloc,
	KR_FN_cuMemFree,
	KR_FN_cuMemHostAlloc,
	KR_FN_cuMemFreeHost,
	KR_FN_cuMemcpyHtoDAsync,
	KR_FN_cuMemcpyDtoHAsync,
	KR_FN_cuMemcpyDtoDAsync,
	KR_FN_cuMemsetD8Async,
	KR_FN_cuMemsetD32Async,
	KR_FN_cuMemGetInfo,
	KR_FN_cuStreamBeginCapture,
	KR_FN_cuStreamEndCapture,
	KR_FN_cuGraphInstantiateWithFlags,
	KR_FN_cuGraphLaunch,
	KR_FN_cuGraphExecDestroy,
	KR_FN_cuGraphDestroy,
	KR_FN_cuGraphGetNodes,
	KR_FN_cuModuleLoadData,
	KR_FN_cuModuleUnload,
	KR_FN_cuModuleGetFunction,
	KR_FN_cuLaunchKernel,
	KR_FN_cuLaunchKernelEx,
	KR_FN_cuFuncGetName,
	KR_FN_cuFuncGetParamInfo,
	KR_FN_cuFuncGetAttribute,
	KR_FN_cuFuncSetAttribute,
	KR_FN_cuOccupancyMaxActiveBlocksPerMultiprocessor,
	KR_FN_COUNT
};

extern void *kr_cu_fn[KR_FN_COUNT];

/* loader.c */
void *kr_cu_getproc(void *getproc, const char *symbol, int cudaVersion, int *result, int *status);
void **kr_params_new(const void *blob, size_t blobLen, const size_t *offsets, int n);
void kr_params_free(void **params);

#define KR_FN(kr_api_) ((kr_pfn_##kr_api_)kr_cu_fn[KR_FN_##kr_api_])
#define KR_CALL(kr_api_, ...) \
	kr_pfn_##kr_api_ kr_fp_ = KR_FN(kr_api_); \
	if (kr_fp_ == NULL) return KR_CUDA_ERROR_NOT_INITIALIZED; \
	return kr_fp_(__VA_ARGS__)

static inline kr_CUresult kr_cuInit(unsigned int flags) { KR_CALL(cuInit, flags); }
static inline kr_CUresult kr_cuDriverGetVersion(int *v) { KR_CALL(cuDriverGetVersion, v); }
static inline kr_CUresult kr_cuGetErrorName(kr_CUresult e, const char **s) { KR_CALL(cuGetErrorName, e, s); }
static inline kr_CUresult kr_cuGetErrorString(kr_CUresult e, const char **s) { KR_CALL(cuGetErrorString, e, s); }

static inline kr_CUresult kr_cuDeviceGetCount(int *n) { KR_CALL(cuDeviceGetCount, n); }
static inline kr_CUresult kr_cuDeviceGet(kr_CUdevice *d, int ordinal) { KR_CALL(cuDeviceGet, d, ordinal); }
static inline kr_CUresult kr_cuDeviceGetName(char *name, int len, kr_CUdevice d) { KR_CALL(cuDeviceGetName, name, len, d); }
static inline kr_CUresult kr_cuDeviceGetAttribute(int *v, int attr, kr_CUdevice d) { KR_CALL(cuDeviceGetAttribute, v, (kr_CUdevice_attribute)attr, d); }
static inline kr_CUresult kr_cuDeviceTotalMem(size_t *bytes, kr_CUdevice d) { KR_CALL(cuDeviceTotalMem, bytes, d); }
static inline kr_CUresult kr_cuDeviceGetPCIBusId(char *id, int len, kr_CUdevice d) { KR_CALL(cuDeviceGetPCIBusId, id, len, d); }

static inline kr_CUresult kr_cuDevicePrimaryCtxRetain(kr_CUcontext *c, kr_CUdevice d) { KR_CALL(cuDevicePrimaryCtxRetain, c, d); }
static inline kr_CUresult kr_cuDevicePrimaryCtxRelease(kr_CUdevice d) { KR_CALL(cuDevicePrimaryCtxRelease, d); }
static inline kr_CUresult kr_cuCtxSetCurrent(kr_CUcontext c) { KR_CALL(cuCtxSetCurrent, c); }
static inline kr_CUresult kr_cuCtxGetCurrent(kr_CUcontext *c) { KR_CALL(cuCtxGetCurrent, c); }
static inline kr_CUresult kr_cuCtxSynchronize(void) {
	kr_pfn_cuCtxSynchronize kr_fp_ = KR_FN(cuCtxSynchronize);
	if (kr_fp_ == NULL) return KR_CUDA_ERROR_NOT_INITIALIZED;
	return kr_fp_();
}

static inline kr_CUresult kr_cuStreamCreate(kr_CUstream *s, unsigned int flags) { KR_CALL(cuStreamCreate, s, flags); }
static inline kr_CUresult kr_cuStreamDestroy(kr_CUstream s) { KR_CALL(cuStreamDestroy, s); }
static inline kr_CUresult kr_cuStreamSynchronize(kr_CUstream s) { KR_CALL(cuStreamSynchronize, s); }
static inline kr_CUresult kr_cuStreamQuery(kr_CUstream s) { KR_CALL(cuStreamQuery, s); }

static inline kr_CUresult kr_cuEventCreate(kr_CUevent *e, unsigned int flags) { KR_CALL(cuEventCreate, e, flags); }
static inline kr_CUresult kr_cuEventDestroy(kr_CUevent e) { KR_CALL(cuEventDestroy, e); }
static inline kr_CUresult kr_cuEventRecord(kr_CUevent e, kr_CUstream s) { KR_CALL(cuEventRecord, e, s); }
static inline kr_CUresult kr_cuEventSynchronize(kr_CUevent e) { KR_CALL(cuEventSynchronize, e); }
static inline kr_CUresult kr_cuEventQuery(kr_CUevent e) { KR_CALL(cuEventQuery, e); }
static inline kr_CUresult kr_cuEventElapsedTime(float *ms, kr_CUevent a, kr_CUevent b) { KR_CALL(cuEventElapsedTime, ms, a, b); }

static inline kr_CUresult kr_cuMemAlloc(kr_CUdeviceptr *p, size_t n) { KR_CALL(cuMemAlloc, p, n); }
static inline kr_CUresult kr_cuMemFree(kr_CUdeviceptr p) { KR_CALL(cuMemFree, p); }
static inline kr_CUresult kr_cuMemHostAlloc(void **p, size_t n, unsigned int flags) { KR_CALL(cuMemHostAlloc, p, n, flags); }
static inline kr_CUresult kr_cuMemFreeHost(void *p) { KR_CALL(cuMemFreeHost, p); }
static inline kr_CUresult kr_cuMemcpyHtoDAsync(kr_CUdeviceptr dst, const void *src, size_t n, kr_CUstream s) { KR_CALL(cuMemcpyHtoDAsync, dst, src, n, s); }
static inline kr_CUresult kr_cuMemcpyDtoHAsync(void *dst, kr_CUdeviceptr src, size_t n, kr_CUstream s) { KR_CALL(cuMemcpyDtoHAsync, dst, src, n, s); }
static inline kr_CUresult kr_cuMemcpyDtoDAsync(kr_CUdeviceptr dst, kr_CUdeviceptr src, size_t n, kr_CUstream s) { KR_CALL(cuMemcpyDtoDAsync, dst, src, n, s); }
static inline kr_CUresult kr_cuMemsetD8Async(kr_CUdeviceptr dst, unsigned char v, size_t n, kr_CUstream s) { KR_CALL(cuMemsetD8Async, dst, v, n, s); }
static inline kr_CUresult kr_cuMemsetD32Async(kr_CUdeviceptr dst, unsigned int v, size_t n, kr_CUstream s) { KR_CALL(cuMemsetD32Async, dst, v, n, s); }
static inline kr_CUresult kr_cuMemGetInfo(size_t *free, size_t *total) { KR_CALL(cuMemGetInfo, free, total); }

static inline kr_CUresult kr_cuStreamBeginCapture(kr_CUstream s, int mode) { KR_CALL(cuStreamBeginCapture, s, (kr_CUstreamCaptureMode)mode); }
static inline kr_CUresult kr_cuStreamEndCapture(kr_CUstream s, kr_CUgraph *g) { KR_CALL(cuStreamEndCapture, s, g); }
static inline kr_CUresult kr_cuGraphInstantiateWithFlags(kr_CUgraphExec *e, kr_CUgraph g, unsigned long long flags) { KR_CALL(cuGraphInstantiateWithFlags, e, g, flags); }
static inline kr_CUresult kr_cuGraphLaunch(kr_CUgraphExec e, kr_CUstream s) { KR_CALL(cuGraphLaunch, e, s); }
static inline kr_CUresult kr_cuGraphExecDestroy(kr_CUgraphExec e) { KR_CALL(cuGraphExecDestroy, e); }
static inline kr_CUresult kr_cuGraphDestroy(kr_CUgraph g) { KR_CALL(cuGraphDestroy, g); }
static inline kr_CUresult kr_cuGraphGetNodes(kr_CUgraph g, kr_CUgraphNode *nodes, size_t *n) { KR_CALL(cuGraphGetNodes, g, nodes, n); }

static inline kr_CUresult kr_cuModuleLoadData(kr_CUmodule *m, const void *image) { KR_CALL(cuModuleLoadData, m, image); }
static inline kr_CUresult kr_cuModuleUnload(kr_CUmodule m) { KR_CALL(cuModuleUnload, m); }
static inline kr_CUresult kr_cuModuleGetFunction(kr_CUfunction *f, kr_CUmodule m, const char *name) { KR_CALL(cuModuleGetFunction, f, m, name); }
static inline kr_CUresult kr_cuLaunchKernel(kr_CUfunction fn,
	unsigned int gx, unsigned int gy, unsigned int gz,
	unsigned int bx, unsigned int by, unsigned int bz,
	unsigned int smem, kr_CUstream s, void **params) {
	KR_CALL(cuLaunchKernel, fn, gx, gy, gz, bx, by, bz, smem, s, params, NULL);
}
static inline kr_CUresult kr_cuLaunchKernelEx(const kr_CUlaunchConfig *c, kr_CUfunction fn, void **params) {
	KR_CALL(cuLaunchKernelEx, c, fn, params, NULL);
}
static inline kr_CUresult kr_cuFuncGetName(const char **name, kr_CUfunction fn) { KR_CALL(cuFuncGetName, name, fn); }
static inline kr_CUresult kr_cuFuncGetParamInfo(kr_CUfunction fn, size_t i, size_t *off, size_t *size) { KR_CALL(cuFuncGetParamInfo, fn, i, off, size); }
static inline kr_CUresult kr_cuFuncGetAttribute(int *v, int attr, kr_CUfunction fn) { KR_CALL(cuFuncGetAttribute, v, (kr_CUfunction_attribute)attr, fn); }
static inline kr_CUresult kr_cuFuncSetAttribute(kr_CUfunction fn, int attr, int v) { KR_CALL(cuFuncSetAttribute, fn, (kr_CUfunction_attribute)attr, v); }
static inline kr_CUresult kr_cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, kr_CUfunction fn, int block, size_t smem) { KR_CALL(cuOccupancyMaxActiveBlocksPerMultiprocessor, n, fn, block, smem); }

#endif /* KR_CUDA_H */
