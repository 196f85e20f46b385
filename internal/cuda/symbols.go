package cuda

// #include "kr_cuda.h"
import "C"

// symName is one exported name of a driver entry point and the CUDA
// version from which cuda.h declares it (and maps the plain API name to it).
type symName struct {
	name  string
	since int
}

// driverSymbol describes how to resolve one slot of the C function table.
//
// base is the name given to cuGetProcAddress_v2 (the plain API name, e.g.
// "cuMemAlloc"); the version requested is names[0].since, the ABI whose
// signature kr_cuda_types.h declares as kr_pfn_<base>. names lists the
// exported symbols to try with dlsym, newest first; every one of them must
// have that same signature.
type driverSymbol struct {
	slot     int
	base     string
	names    []symName
	optional bool
}

// abi is the CUDA version whose ABI is requested from cuGetProcAddress_v2.
func (s driverSymbol) abi() int { return s.names[0].since }

// numSlots is the size of the C function table.
const numSlots = int(C.KR_FN_COUNT)

// slotGetProcAddress is resolved first, with dlsym only.
const slotGetProcAddress = int(C.KR_FN_cuGetProcAddress)

func one(name string, since int) []symName { return []symName{{name, since}} }

// driverSymbols has exactly one entry per slot (symbols_test.go checks it).
// ABI versions follow cudaTypedefs.h (PFN_<name>_v<version>); the names are
// those cuda.h's macros map the API names to in CUDA 12.x and 13.x.
var driverSymbols = []driverSymbol{
	{slot: C.KR_FN_cuGetProcAddress, base: "cuGetProcAddress", names: one("cuGetProcAddress_v2", 12000), optional: true},
	{slot: C.KR_FN_cuInit, base: "cuInit", names: one("cuInit", 2000)},
	{slot: C.KR_FN_cuDriverGetVersion, base: "cuDriverGetVersion", names: one("cuDriverGetVersion", 2020)},
	{slot: C.KR_FN_cuGetErrorName, base: "cuGetErrorName", names: one("cuGetErrorName", 6000)},
	{slot: C.KR_FN_cuGetErrorString, base: "cuGetErrorString", names: one("cuGetErrorString", 6000)},

	{slot: C.KR_FN_cuDeviceGetCount, base: "cuDeviceGetCount", names: one("cuDeviceGetCount", 2000)},
	{slot: C.KR_FN_cuDeviceGet, base: "cuDeviceGet", names: one("cuDeviceGet", 2000)},
	{slot: C.KR_FN_cuDeviceGetName, base: "cuDeviceGetName", names: one("cuDeviceGetName", 2000)},
	{slot: C.KR_FN_cuDeviceGetAttribute, base: "cuDeviceGetAttribute", names: one("cuDeviceGetAttribute", 2000)},
	{slot: C.KR_FN_cuDeviceTotalMem, base: "cuDeviceTotalMem", names: one("cuDeviceTotalMem_v2", 3020)},
	{slot: C.KR_FN_cuDeviceGetPCIBusId, base: "cuDeviceGetPCIBusId", names: one("cuDeviceGetPCIBusId", 4010), optional: true},

	{slot: C.KR_FN_cuDevicePrimaryCtxRetain, base: "cuDevicePrimaryCtxRetain", names: one("cuDevicePrimaryCtxRetain", 7000)},
	{slot: C.KR_FN_cuDevicePrimaryCtxRelease, base: "cuDevicePrimaryCtxRelease", names: one("cuDevicePrimaryCtxRelease_v2", 11000)},
	{slot: C.KR_FN_cuCtxSetCurrent, base: "cuCtxSetCurrent", names: one("cuCtxSetCurrent", 4000)},
	{slot: C.KR_FN_cuCtxGetCurrent, base: "cuCtxGetCurrent", names: one("cuCtxGetCurrent", 4000)},
	{slot: C.KR_FN_cuCtxSynchronize, base: "cuCtxSynchronize", names: one("cuCtxSynchronize", 2000)},

	{slot: C.KR_FN_cuStreamCreate, base: "cuStreamCreate", names: one("cuStreamCreate", 2000)},
	{slot: C.KR_FN_cuStreamDestroy, base: "cuStreamDestroy", names: one("cuStreamDestroy_v2", 4000)},
	{slot: C.KR_FN_cuStreamSynchronize, base: "cuStreamSynchronize", names: one("cuStreamSynchronize", 2000)},
	{slot: C.KR_FN_cuStreamQuery, base: "cuStreamQuery", names: one("cuStreamQuery", 2000)},

	{slot: C.KR_FN_cuEventCreate, base: "cuEventCreate", names: one("cuEventCreate", 2000)},
	{slot: C.KR_FN_cuEventDestroy, base: "cuEventDestroy", names: one("cuEventDestroy_v2", 4000)},
	{slot: C.KR_FN_cuEventRecord, base: "cuEventRecord", names: one("cuEventRecord", 2000)},
	{slot: C.KR_FN_cuEventSynchronize, base: "cuEventSynchronize", names: one("cuEventSynchronize", 2000)},
	{slot: C.KR_FN_cuEventQuery, base: "cuEventQuery", names: one("cuEventQuery", 2000)},
	// CUDA 12.8 added cuEventElapsedTime_v2 (same signature); CUDA 13's
	// cuda.h only declares _v2. Older drivers only export the plain name.
	{slot: C.KR_FN_cuEventElapsedTime, base: "cuEventElapsedTime", names: []symName{
		{"cuEventElapsedTime_v2", 12080}, {"cuEventElapsedTime", 2000}}},

	{slot: C.KR_FN_cuMemAlloc, base: "cuMemAlloc", names: one("cuMemAlloc_v2", 3020)},
	{slot: C.KR_FN_cuMemFree, base: "cuMemFree", names: one("cuMemFree_v2", 3020)},
	{slot: C.KR_FN_cuMemHostAlloc, base: "cuMemHostAlloc", names: one("cuMemHostAlloc", 2020)},
	{slot: C.KR_FN_cuMemFreeHost, base: "cuMemFreeHost", names: one("cuMemFreeHost", 2000)},
	{slot: C.KR_FN_cuMemcpyHtoDAsync, base: "cuMemcpyHtoDAsync", names: one("cuMemcpyHtoDAsync_v2", 3020)},
	{slot: C.KR_FN_cuMemcpyDtoHAsync, base: "cuMemcpyDtoHAsync", names: one("cuMemcpyDtoHAsync_v2", 3020)},
	{slot: C.KR_FN_cuMemcpyDtoDAsync, base: "cuMemcpyDtoDAsync", names: one("cuMemcpyDtoDAsync_v2", 3020)},
	{slot: C.KR_FN_cuMemsetD8Async, base: "cuMemsetD8Async", names: one("cuMemsetD8Async", 3020)},
	{slot: C.KR_FN_cuMemsetD32Async, base: "cuMemsetD32Async", names: one("cuMemsetD32Async", 3020)},
	{slot: C.KR_FN_cuMemGetInfo, base: "cuMemGetInfo", names: one("cuMemGetInfo_v2", 3020)},

	{slot: C.KR_FN_cuStreamBeginCapture, base: "cuStreamBeginCapture", names: one("cuStreamBeginCapture_v2", 10010)},
	{slot: C.KR_FN_cuStreamEndCapture, base: "cuStreamEndCapture", names: one("cuStreamEndCapture", 10000)},
	{slot: C.KR_FN_cuGraphInstantiateWithFlags, base: "cuGraphInstantiateWithFlags", names: one("cuGraphInstantiateWithFlags", 11040)},
	{slot: C.KR_FN_cuGraphLaunch, base: "cuGraphLaunch", names: one("cuGraphLaunch", 10000)},
	{slot: C.KR_FN_cuGraphExecDestroy, base: "cuGraphExecDestroy", names: one("cuGraphExecDestroy", 10000)},
	{slot: C.KR_FN_cuGraphDestroy, base: "cuGraphDestroy", names: one("cuGraphDestroy", 10000)},
	{slot: C.KR_FN_cuGraphGetNodes, base: "cuGraphGetNodes", names: one("cuGraphGetNodes", 10000)},

	{slot: C.KR_FN_cuModuleLoadData, base: "cuModuleLoadData", names: one("cuModuleLoadData", 2000)},
	{slot: C.KR_FN_cuModuleUnload, base: "cuModuleUnload", names: one("cuModuleUnload", 2000)},
	{slot: C.KR_FN_cuModuleGetFunction, base: "cuModuleGetFunction", names: one("cuModuleGetFunction", 2000)},
	{slot: C.KR_FN_cuLaunchKernel, base: "cuLaunchKernel", names: one("cuLaunchKernel", 4000)},
	{slot: C.KR_FN_cuLaunchKernelEx, base: "cuLaunchKernelEx", names: one("cuLaunchKernelEx", 11060), optional: true},
	{slot: C.KR_FN_cuFuncGetName, base: "cuFuncGetName", names: one("cuFuncGetName", 12030), optional: true},
	{slot: C.KR_FN_cuFuncGetParamInfo, base: "cuFuncGetParamInfo", names: one("cuFuncGetParamInfo", 12040), optional: true},
	{slot: C.KR_FN_cuFuncGetAttribute, base: "cuFuncGetAttribute", names: one("cuFuncGetAttribute", 2020)},
	{slot: C.KR_FN_cuFuncSetAttribute, base: "cuFuncSetAttribute", names: one("cuFuncSetAttribute", 9000)},
	{slot: C.KR_FN_cuOccupancyMaxActiveBlocksPerMultiprocessor, base: "cuOccupancyMaxActiveBlocksPerMultiprocessor",
		names: one("cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050)},
}

// fnTable is kr_cu_fn, the C function table the kr_cuX wrappers call
// through; Init fills it.
var fnTable = C.kr_cu_fn[:]

// hasSlot reports whether the entry point in slot was resolved.
func hasSlot(slot int) bool { return slot >= 0 && slot < len(fnTable) && fnTable[slot] != nil }
