package replay

import (
	"errors"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/tier3"
)

// hostSpinSource is the host probes' one kernel: every thread spins on
// %globaltimer until ns have passed since it started (none for ns = 0,
// the tiny kernel). %globaltimer may tick as coarsely as 1 µs, so a
// kernel asked for ns may end up to one tick early; the probes take
// every duration from CUPTI or the energy windows, never from ns.
const hostSpinSource = `
extern "C" __global__ void kr_host_spin(unsigned long long ns) {
	unsigned long long t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	if (ns == 0) return;
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	} while (t - t0 < ns);
}
`

// hostBlockThreads is the threads per block of the probes' launches; the
// grid has one block per SM, so that every launch occupies the whole GPU
// as the kernels of an inference do.
const hostBlockThreads = 128

// hostKernel is the probes' kernel on one device, with an 8-byte device
// buffer for the copies of the .item() rounds.
type hostKernel struct {
	fn   *cuda.Function
	grid [3]uint32
	buf  cuda.DevicePtr
}

// newHostKernel compiles kr_host_spin (cached by the device's compiler)
// and allocates the copy buffer. Call inside Do.
func (d *Device) newHostKernel() (*hostKernel, error) {
	comp, err := d.compiler()
	if err != nil {
		return nil, err
	}
	fn, err := comp.Function(tier3.Source{Name: "kr_host_spin.cu", Code: hostSpinSource}, "kr_host_spin")
	if err != nil {
		return nil, err
	}
	buf, err := cuda.MemAlloc(8)
	if err != nil {
		return nil, err
	}
	if err := cuda.MemsetD8Async(buf, 0, 8, d.stream); err != nil {
		buf.Free()
		return nil, err
	}
	return &hostKernel{fn: fn, grid: [3]uint32{uint32(max(d.SMs, 1)), 1, 1}, buf: buf}, nil
}

func (k *hostKernel) close() error { return k.buf.Free() }

// launch enqueues one kernel that spins for dur on s.
func (k *hostKernel) launch(s *cuda.Stream, dur time.Duration) error {
	return k.fn.Launch(k.grid, [3]uint32{hostBlockThreads, 1, 1}, 0, s, uint64(max(dur, 0).Nanoseconds()))
}

// fixed is k with one duration, as a launch.Kernel, so that the replays'
// timer and energy window can launch it.
func (k *hostKernel) fixed(dur time.Duration) launch.Kernel { return fixedSpin{k, dur} }

type fixedSpin struct {
	k   *hostKernel
	dur time.Duration
}

func (f fixedSpin) Launch(s *cuda.Stream, set int) error {
	if set != 0 {
		return errors.New("host probe kernel: one buffer set only")
	}
	return f.k.launch(s, f.dur)
}
func (fixedSpin) Sets() int         { return 1 }
func (fixedSpin) Footprint() int64  { return 0 }
func (fixedSpin) Work() launch.Work { return launch.Work{} }
func (fixedSpin) Capturable() bool  { return true }
func (fixedSpin) Close() error      { return nil }
