package cuda

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kreplay/kreplay/internal/onstack"
)

func TestGPUDeviceAttributes(t *testing.T) {
	d := requireGPU(t)
	v, err := DriverVersion()
	if err != nil {
		t.Fatal(err)
	}
	name, err := d.Name()
	if err != nil {
		t.Fatal(err)
	}
	major, minor, err := d.ComputeCapability()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("driver CUDA %d.%d, device %q, compute capability %d.%d", v/1000, v%1000/10, name, major, minor)
	if v < 11040 {
		t.Errorf("driver version %d, this package needs CUDA 11.4 or newer", v)
	}
	if strings.TrimSpace(name) == "" {
		t.Error("empty device name")
	}
	if major < 7 {
		t.Errorf("compute capability %d.%d, want 7.0 or newer", major, minor)
	}

	positive := []struct {
		name string
		get  func() (int, error)
		min  int
	}{
		{"SMCount", d.SMCount, 1},
		{"L2CacheSize", d.L2CacheSize, 1 << 20},
		{"TotalMem", d.TotalMem, 1 << 30},
		{"MemoryBusWidth", d.MemoryBusWidth, 64},
		{"MaxSharedMemoryPerBlockOptin", d.MaxSharedMemoryPerBlockOptin, 48 << 10},
		{"WarpSize", func() (int, error) { return d.Attribute(AttrWarpSize) }, 32},
		{"MaxThreadsPerBlock", func() (int, error) { return d.Attribute(AttrMaxThreadsPerBlock) }, 1024},
	}
	for _, p := range positive {
		got, err := p.get()
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		t.Logf("%s = %d", p.name, got)
		if got < p.min {
			t.Errorf("%s = %d, want at least %d", p.name, got, p.min)
		}
	}
	if ws, _ := d.Attribute(AttrWarpSize); ws != 32 {
		t.Errorf("warp size %d", ws)
	}
	// Clock rates: the attributes still exist in CUDA 13 (only the runtime's
	// cudaDeviceProp fields went away); report them, require no error.
	for _, c := range []struct {
		name string
		get  func() (int, error)
	}{{"ClockRate", d.ClockRate}, {"MemoryClockRate", d.MemoryClockRate}} {
		khz, err := c.get()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		t.Logf("%s = %d kHz", c.name, khz)
	}

	bus, err := d.PCIBusID()
	if errors.Is(err, ErrUnsupported) {
		t.Log("cuDeviceGetPCIBusId not available")
	} else if err != nil {
		t.Error(err)
	} else if !regexp.MustCompile(`^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$`).MatchString(bus) {
		t.Errorf("PCI bus id %q has an unexpected form", bus)
	} else {
		t.Logf("PCI bus id %s", bus)
	}

	if _, err := d.Attribute(DeviceAttribute(1 << 20)); !IsCode(err, CodeInvalidValue) {
		t.Errorf("bogus attribute gave %v, want CUDA_ERROR_INVALID_VALUE", err)
	}
	if _, err := DeviceGet(1 << 20); !IsCode(err, CodeInvalidDevice) {
		t.Errorf("DeviceGet(huge) gave %v, want CUDA_ERROR_INVALID_DEVICE", err)
	}
}

// How each entry point was resolved (logged). On a 12.x/13.x driver nearly
// all should come from cuGetProcAddress_v2; a per-symbol fallback to dlsym
// is logged, a wholesale one is an error. On a 12.8+ driver the event
// timer must not be the v1 symbol.
func TestGPUSymbolResolution(t *testing.T) {
	requireGPU(t)
	v, _ := DriverVersion()
	viaGetProc := !strings.EqualFold(os.Getenv(ResolveEnv), "dlsym") && v >= 12000
	fromGetProc := 0
	for i, r := range resolved {
		s := driverSymbols[i]
		t.Logf("%-44s %s", r.base, r.via)
		if r.ptr == nil {
			if !s.optional {
				t.Errorf("%s unresolved after a successful Init", r.base)
			}
			continue
		}
		if strings.HasPrefix(r.via, "cuGetProcAddress_v2") {
			fromGetProc++
		} else if s.slot != slotGetProcAddress && viaGetProc {
			t.Logf("  note: %s fell back to %s", r.base, r.via)
		}
		// Informational: does the driver hand out the exported symbol?
		if p, via := dlsymFirst(driverHandle, s.names); p != nil && p != r.ptr {
			t.Logf("  note: %s differs from %s", r.via, via)
		}
	}
	if viaGetProc && fromGetProc < len(driverSymbols)/2 {
		t.Errorf("only %d of %d entry points came from cuGetProcAddress_v2 on a CUDA %d driver", fromGetProc, len(driverSymbols), v)
	}
	if v >= 12080 {
		var e resolution
		for i, s := range driverSymbols {
			if s.base == "cuEventElapsedTime" {
				e = resolved[i]
			}
		}
		if p := driverHandle.Sym("cuEventElapsedTime_v2"); p == nil {
			t.Errorf("CUDA %d driver does not export cuEventElapsedTime_v2", v)
		} else if strings.HasPrefix(e.via, "dlsym") && !strings.Contains(e.via, "_v2") {
			t.Errorf("cuEventElapsedTime resolved to the v1 symbol (%s) on a CUDA %d driver", e.via, v)
		}
	}
}

// The name table used without a driver must agree with the driver.
func TestGPUErrorNamesMatchDriver(t *testing.T) {
	requireGPU(t)
	for code, name := range errorNames {
		if got := ErrorName(code); got != name {
			t.Errorf("driver names %d %q, table says %q", code, got, name)
		}
	}
	if msg := errorString(CodeOutOfMemory); msg != "out of memory" {
		t.Logf("cuGetErrorString(2) = %q", msg)
	}
}

func TestGPUContextDo(t *testing.T) {
	d := requireGPU(t)
	ctx, err := d.RetainPrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()

	// Nested Do restores the outer context; the thread ends up as before.
	err = ctx.Do(func() error {
		cur, err := currentContext()
		if err != nil || cur != ctx.Handle() {
			t.Errorf("inside Do: current %v (%v), want %v", cur, err, ctx.Handle())
		}
		if err := ctx.Do(func() error { return nil }); err != nil {
			return err
		}
		if cur, _ := currentContext(); cur != ctx.Handle() {
			t.Errorf("after nested Do: current %v, want %v", cur, ctx.Handle())
		}
		return ctx.Synchronize()
	})
	if err != nil {
		t.Fatal(err)
	}
	// Lock/Unlock.
	if err := ctx.Lock(); err != nil {
		t.Fatal(err)
	}
	p, err := MemAlloc(4096)
	if err == nil {
		err = p.Free()
	}
	ctx.Unlock()
	if err != nil {
		t.Fatal(err)
	}

	// Many goroutines, each with its own Do and stream, at once.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- ctx.Do(func() error {
				s, err := NewStream()
				if err != nil {
					return err
				}
				defer s.Destroy()
				p, err := MemAlloc(1 << 20)
				if err != nil {
					return err
				}
				defer p.Free()
				if err := MemsetD32Async(p, uint32(i), 1<<18, s); err != nil {
					return err
				}
				got := make([]byte, 4)
				if err := CopyDtoH(got, p.Add(4*1000), s); err != nil {
					return err
				}
				if got[0] != byte(i) || got[1] != 0 {
					t.Errorf("goroutine %d read % x", i, got)
				}
				return nil
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}

	// A released context refuses work instead of crashing.
	if err := ctx.Release(); err != nil {
		t.Fatal(err)
	}
	if err := ctx.Do(func() error { return nil }); !errors.Is(err, ErrDestroyed) {
		t.Errorf("Do on a released context: %v", err)
	}
	if err := ctx.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
}

// The driver's signal handlers, installed at cuInit or with a context, run
// on Go's signal stack after Init and RetainPrimaryContext (internal/onstack):
// a kreplay run stopped by a signal is then handled by Go, not ended by it.
func TestGPUSignalHandlersOnStack(t *testing.T) {
	d := requireGPU(t)
	ctx, err := d.RetainPrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	if m := onstack.Missing(); len(m) != 0 {
		t.Errorf("signals %v have handlers without SA_ONSTACK after the driver started", m)
	}
}
