package whatif

// The power the cap leaves undrawn.
//
// cap.go puts the what-if's run at the power the baseline's run drew. Runs
// under the cap do not draw the limit, though, and two mixes leave
// different shares of it undrawn. On four H100s at 700 W (fourteenth
// session, results/h100/roofline-whatif/), the Llama-7B prefill's plain
// timeline drew 690-696 W, the one with the RMSNorm chain fused 692-700 W:
// 2.5 W more on average, 0.4%, which is 0.4% of the substituted run's time
// and 3% of the saving. Holding the power equal over-predicted the
// substituted run's time in all eight runs (0.3-0.9%).
//
// The mechanism taken: the limiter lowers the clock for the whole run, on
// a time scale longer than a layer (the chain runs 140 us in each 1 ms
// layer), so the phases whose kernels demand less than the limit, even at
// full clock, draw less than it while the rest draws about the limit. The
// fused kernel takes most such phases out. A phase's demand is its
// replay's power, j/t at the replays' clock; the mix's below-cap demand is
//
//	D = sum_i t_i n_i max(0, P - j_i/t_i) / sum_i t_i n_i
//
// over its signatures (t_i, j_i a replay's time and energy, n_i its
// invocations, P the limit): 45-58 W for the plain Llama-7B prefill on
// the fourteenth session's baselines, 28-38 W with the chain fused. A limiter that responded within each phase
// would leave all of D undrawn; the plain runs left 4-10 W, so the
// limiter answers a share of it. That share, alpha = (P - W1) / D_base
// with W1 the baseline run's power, is calibrated on the baseline's run,
// and the what-if's run is placed at P - alpha D_new. This is a linear
// response in one parameter. It is not a model of the limiter's control
// loop, which kreplay cannot see.
//
// Fitted after the fourteenth session's eight runs (so not a test of
// it): predicted/sustained saving -0.2% to -5.0%, mean -2.3%, against
// -2.5% to -6.9%, mean -4.0%, at the baseline's power.

// belowCap fills p.BelowCapW and p.NewBelowCapW from the baseline's
// signatures (their invocations, times and energies), the replaced
// signatures and the fused kernels; it leaves them 0 where a term is not
// known.
func (p *Prediction) belowCap(m *Match, base *Baseline, fused []Times) {
	lim := p.PowerLimitW
	if lim <= 0 || !p.Energy {
		return
	}
	under := func(t Times) float64 { return max(0, lim-t.J/t.NS*1e9) }
	var ns, below float64
	for _, t := range base.Sigs {
		if t.N <= 0 || t.NS <= 0 || t.J <= 0 {
			return
		}
		ns += t.NS * float64(t.N)
		below += t.NS * float64(t.N) * under(t)
	}
	if ns <= 0 {
		return
	}
	newNS, newBelow := ns, below
	for _, r := range m.Replaced {
		if r.PartOf != "" {
			continue
		}
		t := base.Sigs[r.ID]
		newNS -= t.NS * float64(r.Invocations)
		newBelow -= t.NS * float64(r.Invocations) * under(t)
	}
	for v, t := range fused {
		n := float64(m.Variants[v].Runs)
		newNS += t.NS * n
		newBelow += t.NS * n * under(t)
	}
	if newNS <= 0 {
		return
	}
	p.BelowCapW, p.NewBelowCapW = below/ns, max(0, newBelow/newNS)
}

// capPower is the power (W) the what-if's run draws at the cap: the limit
// less the baseline run's deficit (limit - baseW), scaled by the two
// mixes' below-cap demand; baseW itself where that cannot be taken (no
// limit or demand known, or a baseline run at or over the limit).
func (p *Prediction) capPower(baseW float64) (w float64, scaled bool) {
	lim := p.PowerLimitW
	if lim <= 0 || p.BelowCapW <= 0 || baseW >= lim {
		return baseW, false
	}
	return lim - (lim-baseW)*p.NewBelowCapW/p.BelowCapW, true
}
