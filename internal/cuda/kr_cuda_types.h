/*
 * Private declarations of the few CUDA driver API types and entry points
 * that package cuda uses. No CUDA header is needed to build: every type
 * here is declared by hand, with a kr_ prefix so that this file can be
 * included next to the real <cuda.h> (header_test.go does exactly that to
 * check these declarations against the toolkit's).
 *
 * Rules that keep the declarations ABI compatible with cuda.h:
 *   - enums are 32-bit ints; KR_ENUM(real) expands to int unless the
 *     includer defines it (the header check maps it to the real enum);
 *   - opaque handles use the same struct tags as cuda.h, so
 *     kr_CUstream and CUstream are the same type;
 *   - CUdeviceptr is unsigned long long on LP64, as in cuda.h.
 *
 * Each kr_pfn_X typedef is the signature of the versioned symbol that
 * cuda.h maps X to (for example kr_pfn_cuMemAlloc is cuMemAlloc_v2's).
 */
#ifndef KR_CUDA_TYPES_H
#define KR_CUDA_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifndef KR_ENUM
#define KR_ENUM(real) int
#endif

typedef KR_ENUM(CUresult) kr_CUresult;
typedef KR_ENUM(CUdevice_attribute) kr_CUdevice_attribute;
typedef KR_ENUM(CUfunction_attribute) kr_CUfunction_attribute;
typedef KR_ENUM(CUstreamCaptureMode) kr_CUstreamCaptureMode;
typedef KR_ENUM(CUdriverProcAddressQueryResult) kr_CUdriverProcAddressQueryResult;

typedef int kr_CUdevice;
typedef unsigned long long kr_CUdeviceptr;

typedef struct CUctx_st *kr_CUcontext;
typedef struct CUmod_st *kr_CUmodule;
typedef struct CUfunc_st *kr_CUfunction;
typedef struct CUstream_st *kr_CUstream;
typedef struct CUevent_st *kr_CUevent;
typedef struct CUgraph_st *kr_CUgraph;
typedef struct CUgraphNode_st *kr_CUgraphNode;
typedef struct CUgraphExec_st *kr_CUgraphExec;

/* Values used by the C side (the Go side has its own constants). */
#define KR_CUDA_SUCCESS 0
#define KR_CUDA_ERROR_NOT_INITIALIZED 3
#define KR_CU_GET_PROC_ADDRESS_LEGACY_STREAM 1

/* Initialization, version, errors. */
typedef kr_CUresult (*kr_pfn_cuGetProcAddress)(const char *symbol, void **pfn, int cudaVersion, uint64_t flags, kr_CUdriverProcAddressQueryResult *symbolStatus);
typedef kr_CUresult (*kr_pfn_cuInit)(unsigned int flags);
typedef kr_CUresult (*kr_pfn_cuDriverGetVersion)(int *driverVersion);
typedef kr_CUresult (*kr_pfn_cuGetErrorName)(kr_CUresult error, const char **pStr);
typedef kr_CUresult (*kr_pfn_cuGetErrorString)(kr_CUresult error, const char **pStr);

/* Devices. */
typedef kr_CUresult (*kr_pfn_cuDeviceGetCount)(int *count);
typedef kr_CUresult (*kr_pfn_cuDeviceGet)(kr_CUdevice *device, int ordinal);
typedef kr_CUresult (*kr_pfn_cuDeviceGetName)(char *name, int len, kr_CUdevice dev);
typedef kr_CUresult (*kr_pfn_cuDeviceGetAttribute)(int *pi, kr_CUdevice_attribute attrib, kr_CUdevice dev);
typedef kr_CUresult (*kr_pfn_cuDeviceTotalMem)(size_t *bytes, kr_CUdevice dev);
typedef kr_CUresult (*kr_pfn_cuDeviceGetPCIBusId)(char *pciBusId, int len, kr_CUdevice dev);

/* Contexts. */
typedef kr_CUresult (*kr_pfn_cuDevicePrimaryCtxRetain)(kr_CUcontext *pctx, kr_CUdevice dev);
typedef kr_CUresult (*kr_pfn_cuDevicePrimaryCtxRelease)(kr_CUdevice dev);
typedef kr_CUresult (*kr_pfn_cuCtxSetCurrent)(kr_CUcontext ctx);
typedef kr_CUresult (*kr_pfn_cuCtxGetCurrent)(kr_CUcontext *pctx);
typedef kr_CUresult (*kr_pfn_cuCtxSynchronize)(void);

/* Streams. */
typedef kr_CUresult (*kr_pfn_cuStreamCreate)(kr_CUstream *phStream, unsigned int flags);
typedef kr_CUresult (*kr_pfn_cuStreamDestroy)(kr_CUstream hStream);
typedef kr_CUresult (*kr_pfn_cuStreamSynchronize)(kr_CUstream hStream);
typedef kr_CUresult (*kr_pfn_cuStreamQuery)(kr_CUstream hStream);

/* Events. */
typedef kr_CUresult (*kr_pfn_cuEventCreate)(kr_CUevent *phEvent, unsigned int flags);
typedef kr_CUresult (*kr_pfn_cuEventDestroy)(kr_CUevent hEvent);
typedef kr_CUresult (*kr_pfn_cuEventRecord)(kr_CUevent hEvent, kr_CUstream hStream);
typedef kr_CUresult (*kr_pfn_cuEventSynchronize)(kr_CUevent hEvent);
typedef kr_CUresult (*kr_pfn_cuEventQuery)(kr_CUevent hEvent);
typedef kr_CUresult (*kr_pfn_cuEventElapsedTime)(float *pMilliseconds, kr_CUevent hStart, kr_CUevent hEnd);

/* Memory. */
typedef kr_CUresult (*kr_pfn_cuMemAlloc)(kr_CUdeviceptr *dptr, size_t bytesize);
typedef kr_CUresult (*kr_pfn_cuMemFree)(kr_CUdeviceptr dptr);
typedef kr_CUresult (*kr_pfn_cuMemHostAlloc)(void **pp, size_t bytesize, unsigned int flags);
typedef kr_CUresult (*kr_pfn_cuMemFreeHost)(void *p);
typedef kr_CUresult (*kr_pfn_cuMemcpyHtoDAsync)(kr_CUdeviceptr dstDevice, const void *srcHost, size_t byteCount, kr_CUstream hStream);
typedef kr_CUresult (*kr_pfn_cuMemcpyDtoHAsync)(void *dstHost, kr_CUdeviceptr srcDevice, size_t byteCount, kr_CUstream hStream);
typedef kr_CUresult (*kr_pfn_cuMemcpyDtoDAsync)(kr_CUdeviceptr dstDevice, kr_CUdeviceptr srcDevice, size_t byteCount, kr_CUstream hStream);
typedef kr_CUresult (*kr_pfn_cuMemsetD8Async)(kr_CUdeviceptr dstDevice, unsigned char uc, size_t n, kr_CUstream hStream);
typedef kr_CUresult (*kr_pfn_cuMemsetD32Async)(kr_CUdeviceptr dstDevice, unsigned int ui, size_t n, kr_CUstream hStream);
typedef kr_CUresult (*kr_pfn_cuMemGetInfo)(size_t *free, size_t *total);

/* Graphs. */
typedef kr_CUresult (*kr_pfn_cuStreamBeginCapture)(kr_CUstream hStream, kr_CUstreamCaptureMode mode);
typedef kr_CUresult (*kr_pfn_cuStreamEndCapture)(kr_CUstream hStream, kr_CUgraph *phGraph);
typedef kr_CUresult (*kr_pfn_cuGraphInstantiateWithFlags)(kr_CUgraphExec *phGraphExec, kr_CUgraph hGraph, unsigned long long flags);
typedef kr_CUresult (*kr_pfn_cuGraphLaunch)(kr_CUgraphExec hGraphExec, kr_CUstream hStream);
typedef kr_CUresult (*kr_pfn_cuGraphExecDestroy)(kr_CUgraphExec hGraphExec);
typedef kr_CUresult (*kr_pfn_cuGraphDestroy)(kr_CUgraph hGraph);
typedef kr_CUresult (*kr_pfn_cuGraphGetNodes)(kr_CUgraph hGraph, kr_CUgraphNode *nodes, size_t *numNodes);

/* Modules, functions, launches. */
typedef kr_CUresult (*kr_pfn_cuModuleLoadData)(kr_CUmodule *module, const void *image);
typedef kr_CUresult (*kr_pfn_cuModuleUnload)(kr_CUmodule hmod);
typedef kr_CUresult (*kr_pfn_cuModuleGetFunction)(kr_CUfunction *hfunc, kr_CUmodule hmod, const char *name);
typedef kr_CUresult (*kr_pfn_cuLaunchKernel)(kr_CUfunction f,
	unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
	unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
	unsigned int sharedMemBytes, kr_CUstream hStream, void **kernelParams, void **extra);
/* CUlaunchAttribute and CUlaunchConfig (cuda.h, CUDA 11.8+): an attribute
 * is an id padded to 8 bytes and a 64-byte value union. The header check
 * (header_test.go) defines KR_REAL_STRUCTS after including cuda.h, so that
 * kr_pfn_cuLaunchKernelEx is compared with cuda.h's own type, and checks
 * the _decl layouts against cuda.h's. */
typedef struct {
	int id;
	char pad[8 - sizeof(int)];
	unsigned char value[64];
} kr_CUlaunchAttribute_decl;
typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	kr_CUstream hStream;
	kr_CUlaunchAttribute_decl *attrs;
	unsigned int numAttrs;
} kr_CUlaunchConfig_decl;
#ifdef KR_REAL_STRUCTS
typedef CUlaunchAttribute kr_CUlaunchAttribute;
typedef CUlaunchConfig kr_CUlaunchConfig;
#else
typedef kr_CUlaunchAttribute_decl kr_CUlaunchAttribute;
typedef kr_CUlaunchConfig_decl kr_CUlaunchConfig;
#endif
typedef kr_CUresult (*kr_pfn_cuLaunchKernelEx)(const kr_CUlaunchConfig *config, kr_CUfunction f, void **kernelParams, void **extra);
typedef kr_CUresult (*kr_pfn_cuFuncGetName)(const char **name, kr_CUfunction hfunc);
typedef kr_CUresult (*kr_pfn_cuFuncGetParamInfo)(kr_CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize);
typedef kr_CUresult (*kr_pfn_cuFuncGetAttribute)(int *pi, kr_CUfunction_attribute attrib, kr_CUfunction hfunc);
typedef kr_CUresult (*kr_pfn_cuFuncSetAttribute)(kr_CUfunction hfunc, kr_CUfunction_attribute attrib, int value);
typedef kr_CUresult (*kr_pfn_cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *numBlocks, kr_CUfunction func, int blockSize, size_t dynamicSMemSize);

#endif /* KR_CUDA_TYPES_H */
