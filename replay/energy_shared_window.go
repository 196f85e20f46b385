package replay

import (
	"fmt"

	"github.com/kreplay/kreplay/energy"
)

// sharedDevice is d's sharedFuncs: the members timed and kept prepared
// (runKept), their windows run on d.
func (d *Device) sharedDevice() sharedFuncs {
	return sharedFuncs{time: d.timeKept, own: d.ownEnergy, window: d.sharedWindow}
}

// timeKept is sharedFuncs.time on d.
func (d *Device) timeKept(m *sharedMember, o SuiteOptions) error {
	p, err := d.runKept(m.sig, o, &m.entry)
	if p == nil {
		return err
	}
	ph := m.entry.Phases
	if err != nil {
		d.release(p, ph)
		return err
	}
	m.p, m.release = p, func() { d.release(p, ph) }
	return nil
}

// energyTimer is a timer for the energy windows of p, kept prepared after
// its timed samples: its buffer sets rotated (one for Warm), no primers,
// its graphs charged to the energy's part of tm.
func energyTimer(d *Device, p *Prepared, tm *measureTiming) *timer {
	t := &timer{d: d, k: p.Kernel, sets: p.Kernel.Sets(), tm: tm, graphPart: partEnergyGraphs}
	if p.Cache == Warm {
		t.sets = 1
	}
	return t
}

// ownEnergy is sharedFuncs.own on d: m's window of its own, as Measure
// runs it after the timed samples (measureEnergy), its batches sized by
// m's replay time.
func (d *Device) ownEnergy(m *sharedMember, o Options, tm *measureTiming) (*Energy, error) {
	var e *Energy
	err := d.Do(func() error {
		defer tm.enter(tm.enter(measureUntimed))
		t := energyTimer(d, m.p, tm)
		defer t.close()
		var err error
		e, err = d.measureEnergy(t, m.entry.Result, m.perNS(), o)
		return err
	})
	return e, err
}

// sharedWindow is sharedFuncs.window on d: each member's launches of a
// round captured in a CUDA graph of its own (direct launches where the
// kernel cannot be captured), the rounds run back to back, each the
// members' graphs in turn and one synchronize, until a window of
// o.EnergyTicks whole counter ticks after o.EnergyWarmup has closed.
func (d *Device) sharedWindow(ms []*sharedMember, o Options, tm *measureTiming) (energy.Reading, error) {
	if d.Meter == nil {
		return energy.Reading{}, fmt.Errorf("%w: %v", ErrNoMeter, d.NVMLErr)
	}
	var rd energy.Reading
	err := d.Do(func() error {
		defer tm.enter(tm.enter(measureUntimed))
		ts := make([]*timer, 0, len(ms))
		defer func() {
			for _, t := range ts {
				t.close()
			}
		}()
		for _, m := range ms {
			t := energyTimer(d, m.p, tm)
			ts = append(ts, t)
			if !t.k.Capturable() {
				continue
			}
			if err := t.capture(m.launches); err != nil {
				return fmt.Errorf("capturing %d launches of %s in a graph: %w", m.launches, m.sig.ID, err)
			}
		}
		work := func() error {
			for i, t := range ts {
				if err := t.enqueue(ms[i].launches); err != nil {
					return err
				}
			}
			return d.stream.Synchronize()
		}
		var err error
		rd, err = tm.meterWindow(o.EnergyWarmup, func() (energy.Reading, error) { return d.energyWindow(work, o) })
		return err
	})
	return rd, err
}
