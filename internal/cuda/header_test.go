package cuda

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/kreplay/kreplay/internal/dl/dltest"
)

// headerConstants are the Go-side values this package hard-codes, by
// their cuda.h names.
var headerConstants = []struct {
	name  string
	value int
}{
	{"CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK", int(AttrMaxThreadsPerBlock)},
	{"CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X", int(AttrMaxBlockDimX)},
	{"CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y", int(AttrMaxBlockDimY)},
	{"CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z", int(AttrMaxBlockDimZ)},
	{"CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X", int(AttrMaxGridDimX)},
	{"CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y", int(AttrMaxGridDimY)},
	{"CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z", int(AttrMaxGridDimZ)},
	{"CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK", int(AttrMaxSharedMemoryPerBlock)},
	{"CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY", int(AttrTotalConstantMemory)},
	{"CU_DEVICE_ATTRIBUTE_WARP_SIZE", int(AttrWarpSize)},
	{"CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK", int(AttrMaxRegistersPerBlock)},
	{"CU_DEVICE_ATTRIBUTE_CLOCK_RATE", int(AttrClockRate)},
	{"CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT", int(AttrMultiprocessorCount)},
	{"CU_DEVICE_ATTRIBUTE_INTEGRATED", int(AttrIntegrated)},
	{"CU_DEVICE_ATTRIBUTE_COMPUTE_MODE", int(AttrComputeMode)},
	{"CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS", int(AttrConcurrentKernels)},
	{"CU_DEVICE_ATTRIBUTE_ECC_ENABLED", int(AttrECCEnabled)},
	{"CU_DEVICE_ATTRIBUTE_PCI_BUS_ID", int(AttrPCIBusID)},
	{"CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID", int(AttrPCIDeviceID)},
	{"CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE", int(AttrMemoryClockRate)},
	{"CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH", int(AttrGlobalMemoryBusWidth)},
	{"CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE", int(AttrL2CacheSize)},
	{"CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR", int(AttrMaxThreadsPerMultiprocessor)},
	{"CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT", int(AttrAsyncEngineCount)},
	{"CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING", int(AttrUnifiedAddressing)},
	{"CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID", int(AttrPCIDomainID)},
	{"CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR", int(AttrComputeCapabilityMajor)},
	{"CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR", int(AttrComputeCapabilityMinor)},
	{"CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR", int(AttrMaxSharedMemoryPerSM)},
	{"CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR", int(AttrMaxRegistersPerSM)},
	{"CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", int(AttrMaxSharedMemoryPerBlockOptin)},
	{"CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR", int(AttrMaxBlocksPerMultiprocessor)},
	{"CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE", int(AttrMaxPersistingL2CacheSize)},

	{"CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK", int(FuncAttrMaxThreadsPerBlock)},
	{"CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES", int(FuncAttrSharedSizeBytes)},
	{"CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES", int(FuncAttrConstSizeBytes)},
	{"CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES", int(FuncAttrLocalSizeBytes)},
	{"CU_FUNC_ATTRIBUTE_NUM_REGS", int(FuncAttrNumRegs)},
	{"CU_FUNC_ATTRIBUTE_PTX_VERSION", int(FuncAttrPTXVersion)},
	{"CU_FUNC_ATTRIBUTE_BINARY_VERSION", int(FuncAttrBinaryVersion)},
	{"CU_FUNC_ATTRIBUTE_CACHE_MODE_CA", int(FuncAttrCacheModeCA)},
	{"CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", int(FuncAttrMaxDynamicSharedSizeBytes)},
	{"CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT", int(FuncAttrPreferredSharedMemoryCarveout)},

	{"CU_STREAM_DEFAULT", streamDefault},
	{"CU_STREAM_NON_BLOCKING", streamNonBlocking},
	{"CU_EVENT_DEFAULT", eventDefault},
	{"CU_EVENT_BLOCKING_SYNC", eventBlockingSync},
	{"CU_EVENT_DISABLE_TIMING", eventDisableTiming},
	{"CU_STREAM_CAPTURE_MODE_GLOBAL", int(CaptureModeGlobal)},
	{"CU_STREAM_CAPTURE_MODE_THREAD_LOCAL", int(CaptureModeThreadLocal)},
	{"CU_STREAM_CAPTURE_MODE_RELAXED", int(CaptureModeRelaxed)},
	{"CU_MEMHOSTALLOC_PORTABLE", hostAllocPortable},
	{"CU_MEMHOSTALLOC_DEVICEMAP", hostAllocDeviceMap},
	{"CU_MEMHOSTALLOC_WRITECOMBINED", hostAllocWriteCombined},
	{"CU_GET_PROC_ADDRESS_SUCCESS", 0},
	{"CU_GET_PROC_ADDRESS_LEGACY_STREAM", 1},

	{"CUDA_SUCCESS", CodeSuccess},
	{"CUDA_ERROR_INVALID_VALUE", CodeInvalidValue},
	{"CUDA_ERROR_OUT_OF_MEMORY", CodeOutOfMemory},
	{"CUDA_ERROR_NOT_INITIALIZED", CodeNotInitialized},
	{"CUDA_ERROR_DEINITIALIZED", CodeDeinitialized},
	{"CUDA_ERROR_STUB_LIBRARY", CodeStubLibrary},
	{"CUDA_ERROR_NO_DEVICE", CodeNoDevice},
	{"CUDA_ERROR_INVALID_DEVICE", CodeInvalidDevice},
	{"CUDA_ERROR_INVALID_IMAGE", CodeInvalidImage},
	{"CUDA_ERROR_INVALID_CONTEXT", CodeInvalidContext},
	{"CUDA_ERROR_NO_BINARY_FOR_GPU", CodeNoBinaryForGPU},
	{"CUDA_ERROR_ECC_UNCORRECTABLE", CodeECCUncorrectable},
	{"CUDA_ERROR_INVALID_PTX", CodeInvalidPTX},
	{"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", CodeUnsupportedPTXVersion},
	{"CUDA_ERROR_CONTAINED", CodeContained},
	{"CUDA_ERROR_INVALID_HANDLE", CodeInvalidHandle},
	{"CUDA_ERROR_NOT_FOUND", CodeNotFound},
	{"CUDA_ERROR_NOT_READY", CodeNotReady},
	{"CUDA_ERROR_ILLEGAL_ADDRESS", CodeIllegalAddress},
	{"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", CodeLaunchOutOfResources},
	{"CUDA_ERROR_LAUNCH_TIMEOUT", CodeLaunchTimeout},
	{"CUDA_ERROR_ASSERT", CodeAssert},
	{"CUDA_ERROR_HARDWARE_STACK_ERROR", CodeHardwareStackError},
	{"CUDA_ERROR_ILLEGAL_INSTRUCTION", CodeIllegalInstruction},
	{"CUDA_ERROR_MISALIGNED_ADDRESS", CodeMisalignedAddress},
	{"CUDA_ERROR_INVALID_ADDRESS_SPACE", CodeInvalidAddressSpace},
	{"CUDA_ERROR_INVALID_PC", CodeInvalidPC},
	{"CUDA_ERROR_LAUNCH_FAILED", CodeLaunchFailed},
	{"CUDA_ERROR_TENSOR_MEMORY_LEAK", CodeTensorMemoryLeak},
	{"CUDA_ERROR_NOT_PERMITTED", CodeNotPermitted},
	{"CUDA_ERROR_NOT_SUPPORTED", CodeNotSupported},
	{"CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", CodeStreamCaptureUnsupported},
	{"CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", CodeStreamCaptureInvalidated},
	{"CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", CodeStreamCaptureWrongThread},
	{"CUDA_ERROR_UNKNOWN", CodeUnknown},
}

// headerTypes pairs each kr_ type with its cuda.h counterpart: sizes must
// agree, and handle types must be the very same type (the generated
// program assigns one to the other, which -Werror rejects otherwise).
var headerTypes = []struct {
	kr, cu string
	handle bool
}{
	{"kr_CUresult", "CUresult", false},
	{"kr_CUdevice", "CUdevice", false},
	{"kr_CUdeviceptr", "CUdeviceptr", false},
	{"kr_CUdevice_attribute", "CUdevice_attribute", false},
	{"kr_CUfunction_attribute", "CUfunction_attribute", false},
	{"kr_CUstreamCaptureMode", "CUstreamCaptureMode", false},
	{"kr_CUdriverProcAddressQueryResult", "CUdriverProcAddressQueryResult", false},
	{"kr_CUcontext", "CUcontext", true},
	{"kr_CUmodule", "CUmodule", true},
	{"kr_CUfunction", "CUfunction", true},
	{"kr_CUstream", "CUstream", true},
	{"kr_CUevent", "CUevent", true},
	{"kr_CUgraph", "CUgraph", true},
	{"kr_CUgraphNode", "CUgraphNode", true},
	{"kr_CUgraphExec", "CUgraphExec", true},
}

// headerCheckProgram is a C program that includes the real cuda.h and this
// package's kr_cuda_types.h (with enums mapped to the real enum types) and
//   - fails to compile if a kr_pfn_ typedef is not the type of the symbol
//     we resolve (as cuda.h declares it), or a kr_ handle type is not
//     cuda.h's; nothing is linked, only types are compared;
//   - prints which versioned symbol each API name maps to, the sizes of
//     the types and the values of the constants hard-coded in Go.
func headerCheckProgram() string {
	var b strings.Builder
	b.WriteString(`#include <stdio.h>
#include <stddef.h>
#include <cuda.h>
#define KR_ENUM(real) real
#define KR_REAL_STRUCTS 1
#include "kr_cuda_types.h"
#define KR_STR_(x) #x
#define KR_STR(x) KR_STR_(x)

_Static_assert(KR_CUDA_SUCCESS == CUDA_SUCCESS, "KR_CUDA_SUCCESS");
_Static_assert(KR_CUDA_ERROR_NOT_INITIALIZED == CUDA_ERROR_NOT_INITIALIZED, "KR_CUDA_ERROR_NOT_INITIALIZED");
_Static_assert(KR_CU_GET_PROC_ADDRESS_LEGACY_STREAM == CU_GET_PROC_ADDRESS_LEGACY_STREAM, "KR_CU_GET_PROC_ADDRESS_LEGACY_STREAM");
#define KR_SAME_LAYOUT(decl, real, f) _Static_assert(sizeof(decl) == sizeof(real) && offsetof(decl, f) == offsetof(real, f), #decl "." #f)
KR_SAME_LAYOUT(kr_CUlaunchAttribute_decl, CUlaunchAttribute, value);
KR_SAME_LAYOUT(kr_CUlaunchConfig_decl, CUlaunchConfig, sharedMemBytes);
KR_SAME_LAYOUT(kr_CUlaunchConfig_decl, CUlaunchConfig, hStream);
KR_SAME_LAYOUT(kr_CUlaunchConfig_decl, CUlaunchConfig, attrs);
KR_SAME_LAYOUT(kr_CUlaunchConfig_decl, CUlaunchConfig, numAttrs);

int main(void) {
	printf("version %d\n", (int)CUDA_VERSION);
`)
	for _, ty := range headerTypes {
		fmt.Fprintf(&b, "\tprintf(\"size %s %%d %%d\\n\", (int)sizeof(%s), (int)sizeof(%s));\n", ty.cu, ty.kr, ty.cu)
		if ty.handle {
			fmt.Fprintf(&b, "\t{ %s kr_h = 0; %s cu_h = kr_h; (void)cu_h; }\n", ty.kr, ty.cu)
		}
	}
	for _, s := range driverSymbols {
		fmt.Fprintf(&b, "\tprintf(\"map %s %%s\\n\", KR_STR(%s));\n", s.base, s.base)
		for i, n := range s.names {
			kw := "#elif"
			if i == 0 {
				kw = "#if"
			}
			fmt.Fprintf(&b, "%s CUDA_VERSION >= %d\n", kw, n.since)
			fmt.Fprintf(&b, "\t_Static_assert(__builtin_types_compatible_p(kr_pfn_%s, __typeof__(&%s)), \"kr_pfn_%s does not match cuda.h's %s\");\n",
				s.base, n.name, s.base, n.name)
			fmt.Fprintf(&b, "\tprintf(\"sig %s %s\\n\");\n", s.base, n.name)
		}
		b.WriteString("#endif\n")
	}
	for _, c := range headerConstants {
		fmt.Fprintf(&b, "\tprintf(\"const %s %%lld\\n\", (long long)(%s));\n", c.name, c.name)
	}
	b.WriteString("\treturn 0;\n}\n")
	return b.String()
}

// TestDeclarationsMatchCudaHeader compiles headerCheckProgram against an
// installed cuda.h and compares what it prints with the Go side. It only
// skips when no cuda.h is installed (not even under KREPLAY_REQUIRE_GPU).
func TestDeclarationsMatchCudaHeader(t *testing.T) {
	inc := dltest.FindHeader("cuda.h")
	if inc == "" {
		t.Skipf("no cuda.h under %v", dltest.CUDARoots())
	}
	out := dltest.CompileCheck(t, inc, "cuda.h", headerCheckProgram())

	version := 0
	sizes := map[string][2]int{}
	maps := map[string]string{}
	sigs := map[string]string{}
	consts := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "version":
			version, _ = strconv.Atoi(f[1])
		case len(f) == 4 && f[0] == "size":
			a, _ := strconv.Atoi(f[2])
			c, _ := strconv.Atoi(f[3])
			sizes[f[1]] = [2]int{a, c}
		case len(f) == 3 && f[0] == "map":
			maps[f[1]] = f[2]
		case len(f) == 3 && f[0] == "sig":
			sigs[f[1]] = f[2]
		case len(f) == 3 && f[0] == "const":
			v, _ := strconv.ParseInt(f[2], 10, 64)
			consts[f[1]] = v
		default:
			t.Errorf("unexpected check output line %q", sc.Text())
		}
	}
	t.Logf("checked against %s/cuda.h, CUDA_VERSION %d", inc, version)

	for name, s := range sizes {
		if s[0] != s[1] {
			t.Errorf("sizeof(kr_%s) = %d, sizeof(%s) = %d", name, s[0], name, s[1])
		}
	}
	if s := sizes["CUdeviceptr"]; s[1] != int(unsafe.Sizeof(DevicePtr(0))) {
		t.Errorf("sizeof(CUdeviceptr) = %d, DevicePtr has %d bytes", s[1], unsafe.Sizeof(DevicePtr(0)))
	}
	for _, name := range []string{"CUresult", "CUdevice", "CUdevice_attribute", "CUfunction_attribute", "CUstreamCaptureMode"} {
		if sizes[name][1] != 4 {
			t.Errorf("sizeof(%s) = %d; the Go side passes it as a 32-bit int", name, sizes[name][1])
		}
	}

	for _, s := range driverSymbols {
		mapped, ok := maps[s.base]
		if !ok {
			t.Errorf("%s: no mapping printed", s.base)
			continue
		}
		known := false
		for _, n := range s.names {
			known = known || n.name == mapped
		}
		if !known {
			t.Errorf("cuda.h %d maps %s to %s, which is not among the names resolved: %v", version, s.base, mapped, s.names)
		} else if mapped != s.names[0].name {
			t.Logf("cuda.h %d maps %s to %s (an older name we fall back to; %s is preferred)", version, s.base, mapped, s.names[0].name)
		}
		oldest := s.names[len(s.names)-1].since
		if version >= oldest && sigs[s.base] == "" {
			t.Errorf("%s: signature not checked although cuda.h %d should declare it", s.base, version)
		}
		for _, n := range s.names {
			if version >= n.since {
				if sigs[s.base] != n.name {
					t.Errorf("%s: checked %s, want the newest declared name %s", s.base, sigs[s.base], n.name)
				}
				break
			}
		}
	}

	for _, c := range headerConstants {
		got, ok := consts[c.name]
		if !ok {
			t.Errorf("%s: not printed", c.name)
			continue
		}
		if got != int64(c.value) {
			t.Errorf("%s = %d in cuda.h, %d in Go", c.name, got, c.value)
		}
	}
}
