package replay

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/kreplay/kreplay/captured"
	"github.com/kreplay/kreplay/energy"
	"github.com/kreplay/kreplay/gpu"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/onstack"
	"github.com/kreplay/kreplay/tier2"
	"github.com/kreplay/kreplay/tier3"
)

// Device is one GPU opened for replay.
type Device struct {
	// Index is the CUDA device ordinal.
	Index int
	// Name, SMs, L2Bytes and MemBytes describe the GPU as CUDA reports it.
	Name     string
	SMs      int
	L2Bytes  int64
	MemBytes int64
	// CC is the compute capability (major, minor).
	CC [2]int
	// DriverVersion is the CUDA driver API version (13000 is 13.0).
	DriverVersion int
	// Meter is the NVML energy meter of the GPU, nil when NVML is not
	// available; NVMLErr then says why.
	Meter   *energy.Device
	NVMLErr error
	// Tier3 chooses how tier 3 replays where a choice is a guess (the
	// zero value: the defaults; see tier3.Config). Set it before
	// preparing signatures.
	Tier3 tier3.Config

	ctx    *cuda.Context
	stream *cuda.Stream
	jobs   chan func()
	wg     sync.WaitGroup
	once   sync.Once

	libs    *tier2.Libraries // opened on first use
	libsErr error
	comp    *tier3.Compiler // created on first use
	compErr error
	flush   cuda.DevicePtr // L2 flush buffer, allocated on first use
	flushN  int
	snaps   *captured.Snapshots // captured binaries' snapshots, made by Open (one for a group's GPUs: OpenGroup)
	// fallback is why the last build (prepare, inside Do) replayed a
	// signature planned for cuDNN SDPA with tier 3's kernel; "" if it did
	// not fall back.
	fallback string
	// The clean flush (cleanL2), set up on first use.
	cleanFn  *cuda.Function
	cleanBuf cuda.DevicePtr
	cleanN   int
	// The clock probe (probeClock), set up on first use.
	probe *clockProbe
	// after is what the last signature measured here left for the next
	// one's pause (pauseFirst); nil when nothing is known. Used only on
	// the device's goroutine (inside do).
	after *powerAfter
	// lost is set when a replay hit a sticky CUDA error (Lost).
	lostMu sync.Mutex
	lost   *ContextLostError
}

// Open opens CUDA device index: it loads the driver at run time, retains
// the primary context and starts the device's CUDA goroutine. It returns a
// clear error when no driver or no such device exists.
func Open(index int) (*Device, error) {
	if err := cuda.Init(); err != nil {
		return nil, err
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= n {
		return nil, fmt.Errorf("replay: no CUDA device %d (%d devices)", index, n)
	}
	dev, err := cuda.DeviceGet(index)
	if err != nil {
		return nil, err
	}
	d := &Device{Index: index, jobs: make(chan func()), snaps: captured.NewSnapshots(snapshotsKept)}
	if d.Name, err = dev.Name(); err != nil {
		return nil, err
	}
	attrs := []struct {
		dst *int
		get func() (int, error)
	}{
		{&d.SMs, dev.SMCount},
		{new(int), func() (int, error) { v, err := dev.L2CacheSize(); d.L2Bytes = int64(v); return v, err }},
		{new(int), func() (int, error) { v, err := dev.TotalMem(); d.MemBytes = int64(v); return v, err }},
		{&d.DriverVersion, cuda.DriverVersion},
	}
	for _, a := range attrs {
		if *a.dst, err = a.get(); err != nil {
			return nil, err
		}
	}
	if d.CC[0], d.CC[1], err = dev.ComputeCapability(); err != nil {
		return nil, err
	}
	if d.ctx, err = dev.RetainPrimaryContext(); err != nil {
		return nil, err
	}
	started := make(chan error, 1)
	d.wg.Add(1)
	go d.loop(started)
	if err := <-started; err != nil {
		d.wg.Wait()
		d.ctx.Release()
		return nil, err
	}
	if err := d.Do(func() error {
		var err error
		d.stream, err = cuda.NewStream()
		return err
	}); err != nil {
		d.Close()
		return nil, err
	}
	d.Meter, d.NVMLErr = openMeter(dev, index)
	onstack.Fix() // NVML's signal handlers too, on Go's signal stack
	return d, nil
}

// openMeter opens the NVML meter of the CUDA device dev (CUDA's index) by
// its PCI address: NVML numbers every GPU of the machine in its own order,
// whatever CUDA_VISIBLE_DEVICES hides or reorders, so CUDA's index can
// name another GPU. Where the address finds none, the index stands in
// only if CUDA_VISIBLE_DEVICES is unset.
func openMeter(dev cuda.Device, index int) (*energy.Device, error) {
	bus, err := dev.PCIBusID()
	if err == nil {
		var m *energy.Device
		if m, err = energy.OpenDeviceByPCIBusID(bus); err == nil {
			return m, nil
		}
	}
	if errors.Is(err, energy.ErrNoNVML) {
		return nil, err
	}
	if _, set := os.LookupEnv("CUDA_VISIBLE_DEVICES"); set {
		return nil, fmt.Errorf("replay: the GPU's NVML meter by its PCI address: %w (CUDA_VISIBLE_DEVICES is set, so CUDA's index may name another GPU)", err)
	}
	return energy.OpenDevice(index)
}

// loop is the device's CUDA goroutine: it runs jobs on one OS thread with
// the context current.
func (d *Device) loop(started chan<- error) {
	defer d.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.ctx.SetCurrent(); err != nil {
		started <- err
		return
	}
	started <- nil
	for job := range d.jobs {
		job()
	}
}

// Do runs fn on the device's CUDA goroutine, with the context current, and
// returns its error. A panic in fn is returned as a *PanicError rather
// than ending the process; RunSet then treats the device's context as
// lost (ContextLostError), since the panic may have left it capturing.
// Whatever fn runs may draw power, so the next signature measured on the
// device takes its pause (Options.PauseAbove).
func (d *Device) Do(fn func() error) error {
	return d.do(func() error {
		d.after = nil
		return fn()
	})
}

// do is Do without forgetting the last measurement's power: for
// measuring a signature, and for preparing and releasing one, which the
// pause rule does not count (allocating and writing buffers, a captured
// kernel's first launches: brief beside a measurement).
func (d *Device) do(fn func() error) error {
	errc := make(chan error, 1)
	d.jobs <- func() {
		defer func() {
			if err := recovered(recover()); err != nil {
				errc <- err
			}
		}()
		errc <- fn()
	}
	return <-errc
}

// Stream is the device's stream. Use it inside Do.
func (d *Device) Stream() *gpu.Stream { return d.stream }

// Close frees the device's resources and stops its goroutine.
func (d *Device) Close() error {
	var errs []error
	d.once.Do(func() {
		errs = append(errs, d.Do(func() error {
			var errs []error
			if d.libs != nil {
				errs = append(errs, d.libs.Close())
			}
			if d.flush != 0 {
				errs = append(errs, d.flush.Free())
			}
			if d.cleanBuf != 0 {
				errs = append(errs, d.cleanBuf.Free())
			}
			if d.probe != nil {
				errs = append(errs, d.probe.close())
			}
			if d.stream != nil {
				errs = append(errs, d.stream.Destroy())
			}
			return errors.Join(errs...)
		}))
		close(d.jobs)
		d.wg.Wait()
		errs = append(errs, d.ctx.Release())
		if d.Meter != nil {
			errs = append(errs, d.Meter.Close())
		}
	})
	return errors.Join(errs...)
}

// libraries opens cuBLAS and cuBLASLt on first use. Call inside Do.
func (d *Device) libraries() (*tier2.Libraries, error) {
	if d.libs == nil && d.libsErr == nil {
		d.libs, d.libsErr = tier2.Open(d.stream, tier2.LibOptions{})
	}
	return d.libs, d.libsErr
}

// compiler returns the device's NVRTC compiler, created on first use.
func (d *Device) compiler() (*tier3.Compiler, error) {
	if d.comp == nil && d.compErr == nil {
		d.comp, d.compErr = tier3.NewCompiler(d.CC[0], d.CC[1])
	}
	return d.comp, d.compErr
}

// flushL2 overwrites a buffer twice the L2 size so that no operand of the
// next launch is cached. Call inside Do; it is enqueued on the stream.
func (d *Device) flushL2() error {
	if d.flush == 0 {
		n := int(2 * max(d.L2Bytes, 1<<20))
		p, err := cuda.MemAlloc(n)
		if err != nil {
			return err
		}
		d.flush, d.flushN = p, n
	}
	return cuda.MemsetD32Async(d.flush, 0x3f800000, d.flushN/4, d.stream)
}
