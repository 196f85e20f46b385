package whatif

// The power limit's view of a what-if.
//
// A workload whose kernels, back to back, draw more than the GPU's power
// limit does not run at the clocks its kernels were replayed at: the
// power cap lowers the SM clock until the board draws the limit, and the
// run's time is then its energy over the limit. Taking work out of such a
// run does not save that work's time: the clocks rise (or fall less) by
// as much as the saved energy allows, and what is saved is the energy
// over the limit. When the fused kernel replaces memory-bound ops drawing
// less than the limit, the rest of the run, denser in GEMMs, runs at lower
// clocks than before, and the time saved is less than the replaced
// kernels' own (see results/h100/roofline-whatif/README.md).
//
// The model: a run's time is max(T, E / P), T the predicted GPU time (the
// kernels' times summed), E the predicted energy (their energies at the
// clocks they were replayed at), P the power limit; the saving is the
// difference of that before and after. It holds the replays' energies
// to be those of the capped run: a first-order view, since a kernel
// under the cap runs at a lower voltage and spends less.

// atLimit fills the power limit's view from the baseline's totals and the
// power limit (watts; 0: unknown, and nothing is filled).
func (p *Prediction) atLimit(limitW float64, from string) {
	if limitW <= 0 || !p.Energy || p.BaseNS <= 0 || p.BaseJ <= 0 || p.NewNS <= 0 || p.NewJ <= 0 {
		return
	}
	p.PowerLimitW, p.PowerLimitFrom = limitW, from
	bound := func(ns, j float64) float64 { return max(ns, j/limitW*1e9) }
	p.BaseLimitNS, p.NewLimitNS = bound(p.BaseNS, p.BaseJ), bound(p.NewNS, p.NewJ)
	p.LimitSavingNS = p.BaseLimitNS - p.NewLimitNS
	p.AtLimit = p.BaseJ/p.BaseNS*1e9 > limitW
}

// Saving is the predicted saving of GPU time per inference: at the cap,
// from two runs there (Removed, else Again) or calibrated on one (Cap) when that could
// be done, else the power limit's first order (LimitSavingNS) when the
// baseline runs at the limit (AtLimit); under it, the kernels' own
// saving with operands from device memory (InContext) where measured,
// else the kernels' own (SavingNS).
func (p *Prediction) Saving() float64 {
	switch {
	case p.Removed != nil:
		return p.Removed.SavingNS
	case p.Again != nil:
		return p.Again.SavingNS
	case p.Cap != nil:
		return p.Cap.SavingNS
	case p.AtLimit:
		return p.LimitSavingNS
	case p.InContext != nil:
		return p.InContext.SavingNS
	}
	return p.SavingNS
}

// inContextCompared says whether Saving is the in-context one: measured,
// and no view of the power limit comes before it.
func (p *Prediction) inContextCompared() bool {
	return p.InContext != nil && p.Removed == nil && p.Again == nil && p.Cap == nil && !p.AtLimit
}
