package roofline

import (
	"errors"
	"fmt"
	"time"

	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/internal/cublaslt"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/replay"
)

// MeasureOptions tune Measure. The zero value gives the defaults.
type MeasureOptions struct {
	// CopyBytes is the size of the copied buffer (default 1 GiB; less
	// when a quarter of the free device memory is less).
	CopyBytes int64
	// GEMMSize is m = n = k of the GEMMs (default 8192; halved until
	// three f32 matrices fit in half the free device memory).
	GEMMSize int
	// Repeats is the timed runs of each operation (default 10), Warmup
	// the untimed runs before them (default 2). The peak is the best run.
	Repeats, Warmup int
	// DTypes are the GEMM peaks to measure (default DTypes).
	DTypes []string
}

func (o *MeasureOptions) defaults() {
	if o.CopyBytes <= 0 {
		o.CopyBytes = 1 << 30
	}
	if o.GEMMSize <= 0 {
		o.GEMMSize = 8192
	}
	if o.Repeats <= 0 {
		o.Repeats = 10
	}
	if o.Warmup <= 0 {
		o.Warmup = 2
	}
	if len(o.DTypes) == 0 {
		o.DTypes = DTypes
	}
}

// versionString writes a cuBLAS version code (major*10000 + minor*100 +
// patch) as "major.minor.patch".
func versionString(code int) string {
	return fmt.Sprintf("%d.%d.%d", code/10000, code/100%100, code%100)
}

// DeviceIdentity returns the identity of d's GPU and libraries: name,
// UUID and driver from NVML where it is there, the CUDA driver API
// version, and the cuBLAS and cuBLASLt versions this process loads
// ("none: REASON" for a library that does not load).
func DeviceIdentity(d *replay.Device) (Identity, error) {
	id := Identity{GPU: d.Name, CUDADriver: fmt.Sprintf("%d.%d", d.DriverVersion/1000, d.DriverVersion%1000/10), Method: MethodVersion}
	if m := d.Meter; m != nil {
		id.UUID, id.Driver = m.UUID(), m.DriverVersion()
	}
	err := d.Do(func() error {
		if err := cublas.Load(); err != nil {
			id.CUBLAS = "none"
			return nil
		}
		h, err := cublas.Create()
		if err != nil {
			return err
		}
		defer h.Destroy()
		v, err := h.GetVersion()
		if err != nil {
			return err
		}
		id.CUBLAS = versionString(v)
		return nil
	})
	if err != nil {
		return id, fmt.Errorf("roofline: cuBLAS version on %s: %w", d.Name, err)
	}
	if v, err := cublaslt.GetVersion(); err == nil {
		id.CUBLASLt = versionString(int(v))
	} else {
		id.CUBLASLt = "none"
	}
	return id, nil
}

// Measure measures d's peaks (see the package documentation for what and
// how): the copy bandwidth, then the GEMM peak of each of o.DTypes. A
// dtype whose GEMM cannot run here (no cuBLAS, FP8 on a GPU without FP8
// tensor cores, or any failure of the FP8 matmul) is left out, with the
// reason in Peaks.Missing; any other failure is an error. It runs
// Warmup + Repeats copies and as many GEMMs of each dtype (the f32 ones, on
// the CUDA cores, take longest) and needs two copy buffers of device
// memory (2 GiB by default).
func Measure(d *replay.Device, o MeasureOptions) (*Peaks, error) {
	o.defaults()
	id, err := DeviceIdentity(d)
	if err != nil {
		return nil, err
	}
	p := &Peaks{Version: FormatVersion, Identity: id, MeasuredAt: time.Now().UTC().Truncate(time.Second),
		TFLOPs: map[string]float64{}, Missing: map[string]string{}}
	err = d.Do(func() error {
		free, _, err := cuda.MemGetInfo()
		if err != nil {
			return err
		}
		run, err := measureCopy(d, min(o.CopyBytes, int64(free)/4/(1<<20)*(1<<20)), o)
		if err != nil {
			return fmt.Errorf("copy: %w", err)
		}
		p.Runs, p.CopyGBps = append(p.Runs, run), run.Rate
		n := o.GEMMSize
		for n > 1024 && 12*int64(n)*int64(n) > int64(free)/2 {
			n /= 2
		}
		return measureGEMMs(d, p, n, o)
	})
	if err != nil {
		return nil, fmt.Errorf("roofline: measuring the peaks of %s: %w", d.Name, err)
	}
	if len(p.Missing) == 0 {
		p.Missing = nil
	}
	p.HW = HardwareOf(d)
	return p, nil
}

// measureGEMMs measures the GEMM peak of each dtype into p. Call inside
// Do.
func measureGEMMs(d *replay.Device, p *Peaks, n int, o MeasureOptions) error {
	g, err := openGEMMs(d)
	if errors.Is(err, cublas.ErrNotFound) || errors.Is(err, cublaslt.ErrNotFound) {
		for _, dt := range o.DTypes {
			p.Missing[dt] = err.Error()
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer g.close()
	for _, dt := range o.DTypes {
		if dt == "f8e4m3" && (d.CC[0] < 8 || d.CC[0] == 8 && d.CC[1] < 9) {
			p.Missing[dt] = fmt.Sprintf("compute capability %d.%d has no FP8 tensor cores", d.CC[0], d.CC[1])
			continue
		}
		run, err := g.measure(dt, n, o)
		var un unsupported
		switch {
		case errors.As(err, &un):
			p.Missing[dt] = un.Error()
		case err != nil && dt == "f8e4m3":
			// Whether cuBLASLt runs FP8 here is what is uncertain.
			p.Missing[dt] = err.Error()
		case err != nil:
			return fmt.Errorf("%s GEMM %d^3: %w", dt, n, err)
		default:
			p.Runs, p.TFLOPs[dt] = append(p.Runs, run), run.Rate
		}
	}
	return nil
}

// unsupported is an error that says a peak cannot be measured here, as
// opposed to a failure.
type unsupported struct{ err error }

func (u unsupported) Error() string { return u.err.Error() }
func (u unsupported) Unwrap() error { return u.err }

// measureCopy times cuMemcpyDtoDAsync of n bytes between two device
// buffers on d's stream (replay.Device.TimeRepeats). Its rate counts the
// bytes read and written: 2n / time. Call inside Do.
func measureCopy(d *replay.Device, n int64, o MeasureOptions) (Run, error) {
	s := d.Stream()
	if n < 64<<20 {
		return Run{}, fmt.Errorf("%d MiB for each of two buffers: want at least 64 MiB of free device memory for each", n>>20)
	}
	src, err := cuda.MemAlloc(int(n))
	if err != nil {
		return Run{}, err
	}
	defer src.Free()
	dst, err := cuda.MemAlloc(int(n))
	if err != nil {
		return Run{}, err
	}
	defer dst.Free()
	for _, p := range []cuda.DevicePtr{src, dst} {
		if err := cuda.MemsetD32Async(p, 0x3c003c00, int(n/4), s); err != nil {
			return Run{}, err
		}
	}
	best, median, err := d.TimeRepeats(o.Warmup, o.Repeats, func() error { return cuda.MemcpyDtoDAsync(dst, src, int(n), s) })
	if err != nil {
		return Run{}, err
	}
	return Run{Peak: "copy", Call: fmt.Sprintf("cuMemcpyDtoDAsync %d MiB, device to device", n>>20), Repeats: o.Repeats,
		BestNS: best, MedianNS: median, Rate: 2 * float64(n) / best}, nil
}
