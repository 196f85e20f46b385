package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kreplay/kreplay/energy"
)

// WaitWindow is one energy window of the wait kernel launched after each
// host gap: the GPU runs it, then waits for the host's next launch.
type WaitWindow struct {
	// GapNS is the host's gap after each launch call returned, as asked;
	// CycleNS the measured time per launch (window over kernels).
	GapNS   float64 `json:"gap_ns"`
	CycleNS float64 `json:"cycle_ns"`
	// Window is the energy window; its Ops are the kernels launched in it.
	Window Energy `json:"window"`
	// KernelJoules and KernelSeconds are the kernels' own share: Ops times
	// one kernel's energy and time in the back-to-back window.
	KernelJoules  float64 `json:"kernel_joules"`
	KernelSeconds float64 `json:"kernel_seconds"`
	// WaitSeconds is the window less the kernels' time; WaitPowerW the
	// window's energy less theirs, over it.
	WaitSeconds float64 `json:"wait_seconds"`
	WaitPowerW  float64 `json:"wait_power_w"`
}

// waitPower takes the kernels' back-to-back share (energy and time per
// kernel from kernel, as the replays measure a kernel's energy and as the
// host model counts it busy) out of the wait window w, whose Ops are its
// kernels, and gives the power of the rest: the GPU waiting.
func waitPower(gap time.Duration, w, kernel Energy) (WaitWindow, error) {
	if !(kernel.Ops > 0 && kernel.Seconds > 0 && kernel.JoulesPerOp > 0) {
		return WaitWindow{}, fmt.Errorf("back-to-back window of %g kernels in %g s at %g J each: nothing to subtract",
			kernel.Ops, kernel.Seconds, kernel.JoulesPerOp)
	}
	if !(w.Ops > 0 && w.Seconds > 0 && w.Watts > 0) {
		return WaitWindow{}, fmt.Errorf("wait window (gap %v) of %g kernels in %g s at %g W: nothing measured",
			gap, w.Ops, w.Seconds, w.Watts)
	}
	ww := WaitWindow{
		GapNS: float64(gap.Nanoseconds()), CycleNS: w.Seconds / w.Ops * 1e9, Window: w,
		KernelJoules: w.Ops * kernel.JoulesPerOp, KernelSeconds: w.Ops * kernel.Seconds / kernel.Ops,
	}
	ww.WaitSeconds = w.Seconds - ww.KernelSeconds
	joules := w.Watts*w.Seconds - ww.KernelJoules
	if ww.WaitSeconds <= 0 {
		return ww, fmt.Errorf("wait window (gap %v): its %g kernels' back-to-back time %.4g s fills its %.4g s",
			gap, w.Ops, ww.KernelSeconds, w.Seconds)
	}
	if joules <= 0 {
		return ww, fmt.Errorf("wait window (gap %v): its %g kernels' back-to-back energy %.4g J exceeds its %.4g J",
			gap, w.Ops, ww.KernelJoules, w.Watts*w.Seconds)
	}
	ww.WaitPowerW = joules / ww.WaitSeconds
	return ww, nil
}

// hostChunk is about how long one call of a wait window's work runs
// before it synchronizes (the meter's calls must end with the GPU idle).
const hostChunk = 2 * time.Millisecond

// hostPerLaunchBatch is the graph whose event time sizes the back-to-back
// window's batches.
const hostPerLaunchBatch = 256

// measureHostPower measures the back-to-back window of the wait kernel,
// one wait window per gap and the idle window. Call inside Do.
func (d *Device) measureHostPower(ctx context.Context, k *hostKernel, o HostProbeOptions, p *HostProbe) error {
	if lim, err := d.Meter.PowerLimit(); err == nil {
		p.PowerLimitW = lim
	}
	e, err := d.backToBack(k, o)
	if err != nil {
		return fmt.Errorf("back-to-back window: %w", err)
	}
	p.Kernel = e
	for _, gap := range o.Gaps {
		w, err := d.waitWindow(ctx, k, gap, o)
		if err != nil {
			return fmt.Errorf("wait window (gap %v): %w", gap, err)
		}
		ww, err := waitPower(gap, w, *e)
		if err != nil {
			return err
		}
		p.Wait = append(p.Wait, ww)
	}
	p.WaitPowerW = p.Wait[0].WaitPowerW
	rd, err := d.Meter.IdlePower(ctx, time.Duration(o.IdleTicks)*energy.NominalTick)
	if err != nil {
		return fmt.Errorf("idle window: %w", err)
	}
	idle := energyOf(rd, 0)
	p.Idle, p.IdleW = &idle, idle.Watts
	return nil
}

// backToBack measures the wait kernel's energy as the replays measure a
// signature's (measureEnergy: CUDA graphs of about 5 ms of launches, back
// to back), its time per launch first taken with the replays' timer.
func (d *Device) backToBack(k *hostKernel, o HostProbeOptions) (*Energy, error) {
	t := &timer{d: d, k: k.fixed(o.WaitKernel), sets: 1}
	defer t.close()
	var err error
	if t.ev, err = newEvents(); err != nil {
		return nil, err
	}
	if err := t.capture(hostPerLaunchBatch); err != nil {
		return nil, err
	}
	best := time.Duration(0)
	for i := 0; i < 5; i++ {
		el, err := t.sample(hostPerLaunchBatch, false)
		if err != nil {
			return nil, err
		}
		if best == 0 || el < best {
			best = el
		}
	}
	per := float64(best.Nanoseconds()) / hostPerLaunchBatch
	if per <= 0 {
		return nil, errors.New("the timer gave no time per launch")
	}
	return d.measureEnergy(t, &Result{}, per, Options{EnergyTicks: o.Ticks, EnergyWarmup: o.Warmup, NoEnergyDuty: true})
}

// waitWindow measures, on d's meter, launches of the wait kernel each
// followed by gap of host spinning, in calls of about hostChunk that end
// with a synchronize. Its Ops are the kernels in the window.
func (d *Device) waitWindow(ctx context.Context, k *hostKernel, gap time.Duration, o HostProbeOptions) (Energy, error) {
	m := max(1, int(hostChunk/(gap+o.WaitKernel)))
	work := func() error {
		for i := 0; i < m; i++ {
			if err := k.launch(d.stream, o.WaitKernel); err != nil {
				return err
			}
			spin(gap)
		}
		return d.stream.Synchronize()
	}
	rd, err := d.Meter.Measure(ctx, work, energy.MeasureOptions{MinTicks: o.Ticks, Warmup: o.Warmup})
	if err != nil {
		return Energy{}, err
	}
	return energyOf(rd, m), nil
}
