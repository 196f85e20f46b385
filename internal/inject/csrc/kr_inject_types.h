/*
 * Types and constants of the CUDA driver and CUPTI that kr_inject.c uses,
 * declared here so that no CUDA header is needed to build it. They mirror
 * cuda.h, cupti_callbacks.h, cupti_result.h and generated_cuda_meta.h of
 * CUDA 13.0; kreplay's tests check them against the real headers where
 * those are installed (kr_inject_check.c).
 */
#ifndef KR_INJECT_TYPES_H
#define KR_INJECT_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* ---- CUDA driver types ---- */
typedef int kr_CUresult;
typedef unsigned long long kr_CUdeviceptr;
typedef struct CUfunc_st *kr_CUfunction;
typedef struct CUkern_st *kr_CUkernel;
typedef struct CUstream_st *kr_CUstream;
typedef struct CUctx_st *kr_CUcontext;
typedef struct CUmod_st *kr_CUmodule;
typedef struct CUlib_st *kr_CUlibrary;

typedef struct {
	int id; /* CUlaunchAttributeID */
	char pad[8 - sizeof(int)];
	unsigned char value[64]; /* CUlaunchAttributeValue */
} kr_CUlaunchAttribute;

typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	kr_CUstream hStream;
	kr_CUlaunchAttribute *attrs;
	unsigned int numAttrs;
} kr_CUlaunchConfig;

typedef struct {
	kr_CUfunction f;
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	kr_CUstream hStream;
	void **kernelParams;
	void **extra;
} kr_cuLaunchKernel_params; /* also cuLaunchCooperativeKernel's prefix */

typedef struct {
	const kr_CUlaunchConfig *config;
	kr_CUfunction f;
	void **kernelParams;
	void **extra;
} kr_cuLaunchKernelEx_params;

/* The parameters of cuModuleLoad, cuModuleLoadData, cuModuleLoadDataEx,
 * cuModuleLoadFatBinary, cuLibraryLoadData and cuLibraryLoadFromFile all
 * begin with the pointer the new handle is written to. */
typedef struct {
	void **handle;
} kr_load_params;

/* cuModuleGetFunction's parameters: a lazily loaded module loads there. */
typedef struct {
	kr_CUfunction *hfunc;
	kr_CUmodule hmod;
	const char *name;
} kr_cuModuleGetFunction_params;

/* cuModuleUnload's and cuLibraryUnload's: the handle, which a later load
 * may reuse. */
typedef struct {
	void *handle;
} kr_unload_params;

/* The parameters of cuGraphInstantiate, cuGraphInstantiateWithFlags and
 * cuGraphInstantiateWithParams begin with the executable's handle's
 * address and the graph. */
typedef struct {
	void **exec;
	void *graph;
} kr_instantiate_params;

/* cuGraphLaunch's parameters (and cuGraphLaunch_ptsz's). */
typedef struct {
	void *exec;
	kr_CUstream stream;
} kr_cuGraphLaunch_params;

/* cuMemsetD8Async's, cuMemsetD16Async's and cuMemsetD32Async's
 * parameters: the value is an unsigned char, short or int at the same
 * offset (read as wide as the call's name says). */
typedef struct {
	kr_CUdeviceptr dst;
	uint32_t value;
	size_t n;
	kr_CUstream stream;
} kr_cuMemsetAsync_params;

#define KR_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define KR_POINTER_ATTRIBUTE_RANGE_START_ADDR 11
#define KR_POINTER_ATTRIBUTE_RANGE_SIZE 12
#define KR_MEMORYTYPE_DEVICE 2
#define KR_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES 1
#define KR_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES 3
#define KR_FUNC_ATTRIBUTE_NUM_REGS 4
#define KR_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define KR_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED 14
#define KR_LAUNCH_PARAM_END ((void *)0x00)
#define KR_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define KR_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)

/* ---- CUPTI types ---- */
typedef int kr_CUptiResult;
typedef struct CUpti_Subscriber_st *kr_CUpti_SubscriberHandle;
typedef void (*kr_CUpti_CallbackFunc)(void *, int, uint32_t, const void *);
#define KR_CB_DOMAIN_DRIVER_API 1
#define KR_CB_DOMAIN_RESOURCE 3
#define KR_CBID_RESOURCE_MODULE_LOADED 6
#define KR_API_ENTER 0
#define KR_API_EXIT 1

typedef struct {
	int callbackSite;
	const char *functionName;
	const void *functionParams;
	void *functionReturnValue;
	const char *symbolName;
	kr_CUcontext context;
	uint32_t contextUid;
	uint64_t *correlationData;
	uint32_t correlationId;
} kr_CallbackData;

typedef struct {
	kr_CUcontext context;
	union {
		kr_CUstream stream;
	} resourceHandle;
	void *resourceDescriptor;
} kr_ResourceData;

typedef struct {
	uint32_t moduleId;
	size_t cubinSize;
	const char *pCubin;
} kr_ModuleResourceData;

#endif /* KR_INJECT_TYPES_H */
