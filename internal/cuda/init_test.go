package cuda

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/kreplay/kreplay/internal/dl"
)

// noDriver skips the test unless Init failed because libcuda.so.1 is absent.
func noDriver(t *testing.T) error {
	t.Helper()
	err := Init()
	if err == nil {
		t.Skip("libcuda.so.1 is present and Init succeeded; this test covers machines without a driver")
	}
	if !errors.Is(err, ErrNoDriver) {
		t.Skipf("driver present but unusable (%v); this test covers machines without a driver", err)
	}
	return err
}

func TestInitWithoutDriver(t *testing.T) {
	err := noDriver(t)
	if !strings.Contains(err.Error(), LibraryName) {
		t.Errorf("Init error %q does not name %s", err, LibraryName)
	}
	if errors.Is(err, ErrMissingSymbol) || errors.Is(err, ErrNoDevice) {
		t.Errorf("Init error %q wraps the wrong sentinel", err)
	}
	if loaded() {
		t.Error("function table marked loaded after a failed dlopen")
	}
	// Idempotent: same error value again.
	if err2 := Init(); err2 != err {
		t.Errorf("second Init returned %v, want the first error %v", err2, err)
	}
}

func TestInitConcurrent(t *testing.T) {
	const n = 32
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Init()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != errs[0] {
			t.Errorf("Init #%d returned %v, #0 returned %v", i, err, errs[0])
		}
	}
}

// Every entry point must fail cleanly, not crash, without a driver.
func TestCallsWithoutDriver(t *testing.T) {
	initErr := noDriver(t)
	var nilStream *Stream
	calls := map[string]func() error{
		"DriverVersion": func() error { _, err := DriverVersion(); return err },
		"DeviceCount":   func() error { _, err := DeviceCount(); return err },
		"DeviceGet":     func() error { _, err := DeviceGet(0); return err },
		"Device.Name":   func() error { _, err := Device(0).Name(); return err },
		"Device.Attribute": func() error {
			_, err := Device(0).Attribute(AttrMultiprocessorCount)
			return err
		},
		"Device.TotalMem":    func() error { _, err := Device(0).TotalMem(); return err },
		"Device.PCIBusID":    func() error { _, err := Device(0).PCIBusID(); return err },
		"RetainPrimaryCtx":   func() error { _, err := Device(0).RetainPrimaryContext(); return err },
		"MemAlloc":           func() error { _, err := MemAlloc(1 << 20); return err },
		"MemFree":            func() error { return DevicePtr(0x1000).Free() },
		"MemGetInfo":         func() error { _, _, err := MemGetInfo(); return err },
		"HostAlloc":          func() error { _, err := HostAlloc(4096); return err },
		"FreeHost":           func() error { return FreeHost(nil) },
		"MemcpyDtoDAsync":    func() error { return MemcpyDtoDAsync(0, 0, 16, nil) },
		"MemsetD8Async":      func() error { return MemsetD8Async(0, 1, 16, nil) },
		"MemsetD32Async":     func() error { return MemsetD32Async(0, 1, 16, nil) },
		"CopyHtoD":           func() error { return CopyHtoD(0, []byte{1}, nil) },
		"CopyDtoH":           func() error { return CopyDtoH(make([]byte, 1), 0, nil) },
		"NewStream":          func() error { _, err := NewStream(); return err },
		"Stream.Synchronize": func() error { return nilStream.Synchronize() },
		"NewEvent":           func() error { _, err := NewEvent(true); return err },
		"LoadData":           func() error { _, err := LoadData([]byte("//ptx")); return err },
		"ErrorNameFallback": func() error {
			if got := ErrorName(CodeOutOfMemory); got != "CUDA_ERROR_OUT_OF_MEMORY" {
				t.Errorf("ErrorName(2) = %q without a driver", got)
			}
			return initErr
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			if !errors.Is(err, ErrNoDriver) {
				t.Errorf("%s without a driver returned %v, want an error wrapping ErrNoDriver", name, err)
			}
		})
	}
}

// resolveAll against a library that is not the driver (libc) must report
// every required symbol as missing, name it, and not touch the C table.
func TestResolveAllReportsMissingSymbols(t *testing.T) {
	h, err := dl.Open("libc.so.6")
	if err != nil {
		t.Skipf("no libc.so.6 to stand in for a driver: %v", err)
	}
	before := make([]bool, numSlots)
	for i := range before {
		before[i] = hasSlot(i)
	}
	for _, useGetProc := range []bool{true, false} {
		res, missing := resolveAll(h, useGetProc)
		if len(res) != len(driverSymbols) {
			t.Fatalf("resolveAll returned %d resolutions for %d symbols", len(res), len(driverSymbols))
		}
		required := 0
		for _, s := range driverSymbols {
			if !s.optional {
				required++
			}
		}
		if len(missing) != required {
			t.Errorf("useGetProc=%v: %d missing, want all %d required symbols", useGetProc, len(missing), required)
		}
		joined := strings.Join(missing, "\n")
		for _, want := range []string{"cuInit", "cuMemAlloc_v2", "cuEventElapsedTime_v2, cuEventElapsedTime", "cuStreamBeginCapture_v2"} {
			if !strings.Contains(joined, want) {
				t.Errorf("missing-symbol report lacks %q:\n%s", want, joined)
			}
		}
		if strings.Contains(joined, "cuFuncGetName") || strings.Contains(joined, "cuDeviceGetPCIBusId") {
			t.Errorf("optional symbols reported as missing:\n%s", joined)
		}
	}
	for i := range before {
		if hasSlot(i) != before[i] {
			t.Errorf("resolveAll changed C table slot %d", i)
		}
	}
}

func TestDlsymFirst(t *testing.T) {
	h, err := dl.Open("libc.so.6")
	if err != nil {
		t.Skipf("no libc.so.6: %v", err)
	}
	tests := []struct {
		names   []symName
		wantVia string
	}{
		{[]symName{{"kreplay_no_such_symbol", 0}, {"strlen", 0}}, "dlsym(strlen)"},
		{[]symName{{"strlen", 0}, {"memcpy", 0}}, "dlsym(strlen)"},
		{[]symName{{"kreplay_no_such_symbol", 0}}, ""},
	}
	for _, tt := range tests {
		p, via := dlsymFirst(h, tt.names)
		if via != tt.wantVia || (p != nil) != (tt.wantVia != "") {
			t.Errorf("dlsymFirst(%v) = %v, %q; want via %q", tt.names, p, via, tt.wantVia)
		}
	}
}
