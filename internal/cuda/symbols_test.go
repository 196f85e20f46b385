package cuda

import (
	"strings"
	"testing"
)

func TestSymbolTableCoversEverySlotOnce(t *testing.T) {
	seen := make(map[int]string)
	bases := make(map[string]bool)
	for _, s := range driverSymbols {
		if s.slot < 0 || s.slot >= numSlots {
			t.Errorf("%s: slot %d out of range [0,%d)", s.base, s.slot, numSlots)
		}
		if prev, ok := seen[s.slot]; ok {
			t.Errorf("slot %d used by both %s and %s", s.slot, prev, s.base)
		}
		seen[s.slot] = s.base
		if bases[s.base] {
			t.Errorf("base name %s listed twice", s.base)
		}
		bases[s.base] = true
		if len(s.names) == 0 {
			t.Errorf("%s: no names to dlsym", s.base)
			continue
		}
		for i, n := range s.names {
			if !strings.HasPrefix(n.name, s.base) {
				t.Errorf("%s: name %s is not a version of it", s.base, n.name)
			}
			if n.since < 2000 || n.since > 13000 || n.since%10 != 0 {
				t.Errorf("%s: implausible CUDA version %d for %s", s.base, n.since, n.name)
			}
			if i > 0 && n.since >= s.names[i-1].since {
				t.Errorf("%s: names not newest first: %v", s.base, s.names)
			}
		}
	}
	if len(seen) != numSlots {
		t.Errorf("%d of %d C table slots have a symbol entry", len(seen), numSlots)
	}
}

// The exported names must be the versioned ones cuda.h maps the API to,
// since the plain names are an older ABI. header_test.go re-checks this
// against a real cuda.h where one is installed.
func TestSymbolTableUsesVersionedNames(t *testing.T) {
	want := map[string]string{
		"cuMemAlloc":                  "cuMemAlloc_v2",
		"cuMemFree":                   "cuMemFree_v2",
		"cuMemGetInfo":                "cuMemGetInfo_v2",
		"cuDeviceTotalMem":            "cuDeviceTotalMem_v2",
		"cuMemcpyHtoDAsync":           "cuMemcpyHtoDAsync_v2",
		"cuMemcpyDtoHAsync":           "cuMemcpyDtoHAsync_v2",
		"cuMemcpyDtoDAsync":           "cuMemcpyDtoDAsync_v2",
		"cuDevicePrimaryCtxRelease":   "cuDevicePrimaryCtxRelease_v2",
		"cuStreamDestroy":             "cuStreamDestroy_v2",
		"cuEventDestroy":              "cuEventDestroy_v2",
		"cuEventElapsedTime":          "cuEventElapsedTime_v2",
		"cuStreamBeginCapture":        "cuStreamBeginCapture_v2",
		"cuGetProcAddress":            "cuGetProcAddress_v2",
		"cuGraphInstantiateWithFlags": "cuGraphInstantiateWithFlags",
		"cuMemsetD8Async":             "cuMemsetD8Async",
		"cuMemsetD32Async":            "cuMemsetD32Async",
		"cuLaunchKernel":              "cuLaunchKernel",
	}
	optional := map[string]bool{
		"cuGetProcAddress": true, "cuFuncGetName": true,
		"cuFuncGetParamInfo": true, "cuDeviceGetPCIBusId": true, "cuLaunchKernelEx": true,
	}
	got := make(map[string]driverSymbol)
	for _, s := range driverSymbols {
		got[s.base] = s
	}
	for base, name := range want {
		s, ok := got[base]
		if !ok {
			t.Errorf("%s missing from the symbol table", base)
			continue
		}
		if s.names[0].name != name {
			t.Errorf("%s resolves to %s first, want %s", base, s.names[0].name, name)
		}
	}
	for _, s := range driverSymbols {
		if s.optional != optional[s.base] {
			t.Errorf("%s: optional = %v, want %v", s.base, s.optional, optional[s.base])
		}
	}
	// cuEventElapsedTime must fall back to the plain name on pre-12.8 drivers.
	if e := got["cuEventElapsedTime"]; len(e.names) != 2 || e.names[1].name != "cuEventElapsedTime" {
		t.Errorf("cuEventElapsedTime fallbacks = %v", e.names)
	}
}
