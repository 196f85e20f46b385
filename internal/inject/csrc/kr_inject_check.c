/* Compiled by kreplay's tests where CUDA's headers are installed: fails to
 * compile if kr_inject_types.h disagrees with cuda.h or CUPTI's headers. */
#include <cuda.h>
#include <cupti.h> /* includes generated_cuda_meta.h, which has no include guard */
#include <stddef.h>
#include "kr_inject_types.h"

#define SAME(a, b) _Static_assert(sizeof(a) == sizeof(b), "size of " #a)
#define OFF(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #a "." #f)
#define EQ(a, b) _Static_assert((long long)(a) == (long long)(b), #a " != " #b)

SAME(kr_CUlaunchAttribute, CUlaunchAttribute);
OFF(kr_CUlaunchAttribute, CUlaunchAttribute, value);
SAME(kr_CUlaunchConfig, CUlaunchConfig);
OFF(kr_CUlaunchConfig, CUlaunchConfig, sharedMemBytes);
OFF(kr_CUlaunchConfig, CUlaunchConfig, hStream);
OFF(kr_CUlaunchConfig, CUlaunchConfig, attrs);
OFF(kr_CUlaunchConfig, CUlaunchConfig, numAttrs);
SAME(kr_cuLaunchKernel_params, cuLaunchKernel_params);
OFF(kr_cuLaunchKernel_params, cuLaunchKernel_params, sharedMemBytes);
OFF(kr_cuLaunchKernel_params, cuLaunchKernel_params, hStream);
OFF(kr_cuLaunchKernel_params, cuLaunchKernel_params, kernelParams);
OFF(kr_cuLaunchKernel_params, cuLaunchKernel_params, extra);
OFF(kr_cuLaunchKernel_params, cuLaunchCooperativeKernel_params, kernelParams);
SAME(kr_cuLaunchKernelEx_params, cuLaunchKernelEx_params);
OFF(kr_cuLaunchKernelEx_params, cuLaunchKernelEx_params, f);
OFF(kr_cuLaunchKernelEx_params, cuLaunchKernelEx_params, kernelParams);
OFF(kr_cuLaunchKernelEx_params, cuLaunchKernelEx_params, extra);
SAME(kr_CallbackData, CUpti_CallbackData);
OFF(kr_CallbackData, CUpti_CallbackData, functionName);
OFF(kr_CallbackData, CUpti_CallbackData, functionParams);
OFF(kr_CallbackData, CUpti_CallbackData, correlationId);
SAME(kr_ResourceData, CUpti_ResourceData);
OFF(kr_ResourceData, CUpti_ResourceData, resourceDescriptor);
SAME(kr_ModuleResourceData, CUpti_ModuleResourceData);
OFF(kr_ModuleResourceData, CUpti_ModuleResourceData, cubinSize);
OFF(kr_ModuleResourceData, CUpti_ModuleResourceData, pCubin);

EQ(KR_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
EQ(KR_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR);
EQ(KR_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_RANGE_SIZE);
EQ(KR_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE);
EQ(KR_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
EQ(KR_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
EQ(KR_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_NUM_REGS);
EQ(KR_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
EQ(KR_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED);
EQ(KR_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_DRIVER_API);
EQ(KR_CB_DOMAIN_RESOURCE, CUPTI_CB_DOMAIN_RESOURCE);
EQ(KR_CBID_RESOURCE_MODULE_LOADED, CUPTI_CBID_RESOURCE_MODULE_LOADED);
EQ(KR_API_ENTER, CUPTI_API_ENTER);
EQ(KR_API_EXIT, CUPTI_API_EXIT);
_Static_assert(offsetof(cuModuleLoad_params, module) == offsetof(kr_load_params, handle), "cuModuleLoad");
_Static_assert(offsetof(cuModuleLoadData_params, module) == offsetof(kr_load_params, handle), "cuModuleLoadData");
_Static_assert(offsetof(cuModuleLoadDataEx_params, module) == offsetof(kr_load_params, handle), "cuModuleLoadDataEx");
_Static_assert(offsetof(cuModuleLoadFatBinary_params, module) == offsetof(kr_load_params, handle), "cuModuleLoadFatBinary");
_Static_assert(offsetof(cuLibraryLoadData_params, library) == offsetof(kr_load_params, handle), "cuLibraryLoadData");
_Static_assert(offsetof(cuLibraryLoadFromFile_params, library) == offsetof(kr_load_params, handle), "cuLibraryLoadFromFile");
SAME(kr_cuModuleGetFunction_params, cuModuleGetFunction_params);
OFF(kr_cuModuleGetFunction_params, cuModuleGetFunction_params, hmod);
_Static_assert(offsetof(cuModuleUnload_params, hmod) == offsetof(kr_unload_params, handle), "cuModuleUnload");
_Static_assert(offsetof(cuLibraryUnload_params, library) == offsetof(kr_unload_params, handle), "cuLibraryUnload");
SAME(kr_cuGraphLaunch_params, cuGraphLaunch_params);
_Static_assert(offsetof(cuGraphLaunch_params, hStream) == offsetof(kr_cuGraphLaunch_params, stream), "cuGraphLaunch");
_Static_assert(offsetof(cuMemsetD8Async_params, uc) == offsetof(kr_cuMemsetAsync_params, value), "cuMemsetD8Async");
_Static_assert(offsetof(cuMemsetD16Async_params, us) == offsetof(kr_cuMemsetAsync_params, value), "cuMemsetD16Async");
_Static_assert(offsetof(cuMemsetD32Async_params, ui) == offsetof(kr_cuMemsetAsync_params, value), "cuMemsetD32Async");
_Static_assert(offsetof(cuMemsetD8Async_params, N) == offsetof(kr_cuMemsetAsync_params, n), "cuMemsetD8Async");
_Static_assert(offsetof(cuMemsetD32Async_params, hStream) == offsetof(kr_cuMemsetAsync_params, stream), "cuMemsetD32Async");
SAME(kr_cuMemsetAsync_params, cuMemsetD8Async_params);
_Static_assert(offsetof(cuGraphInstantiateWithFlags_params, phGraphExec) == offsetof(kr_instantiate_params, exec), "cuGraphInstantiateWithFlags");
_Static_assert(offsetof(cuGraphInstantiateWithFlags_params, hGraph) == offsetof(kr_instantiate_params, graph), "cuGraphInstantiateWithFlags");
_Static_assert(offsetof(cuGraphInstantiateWithParams_params, hGraph) == offsetof(kr_instantiate_params, graph), "cuGraphInstantiateWithParams");
EQ(CU_STREAM_CAPTURE_STATUS_ACTIVE, 1);
EQ(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, 4);
EQ(CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION, 11);

int main(void) { return 0; }
