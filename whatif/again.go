package whatif

import (
	"fmt"
	"slices"

	"github.com/kreplay/kreplay/replay"
)

// The what-if at the power cap, from the baseline run twice at the cap:
// as it is (the plain timeline, A) and with each replaced run launched a
// second time right after itself (the again timeline, B). Neither holds
// the what-if's kernel.
//
// Why a second run: the one-run curve (cap.go) fits one clock share and
// one energy slope between the replays alone and the plain timeline, and
// so mixes two effects: the clock's, and the context's (memory-bound
// kernels run markedly longer in a timeline than primed alone, GEMMs a
// little). Between two runs at the cap the context is the same and only
// the clock moves: adding a chain raises the clock and speeds up the
// other kernels and the gaps, as substituting a cheaper kernel lowers it
// and slows them (see results/h100/roofline-whatif/README.md).
//
// The model. Let KG be the time of everything the what-if keeps (the
// other kernels in context and the gaps), R the replaced signatures' time
// in context, s the SM clock, P the power the cap holds. From A and B:
//
//	KG(s) = a + b/s                          (the two points: T - R)
//	E_KG(s) = E_A + g (s - s_A)              (E_KG = P T - E_R)
//
// where E_R is the replaced signatures' energy in context: each one's
// power replayed alone in the Rotating cache mode (operands streamed from
// device memory, as in the timeline, the closest of the cache modes to a
// kernel's time in context) times its time in that timeline. The what-if's run is KG(s) + F, F the kernel's
// time in context, taken as its time alone in the Rotating mode, and its
// energy E_KG(s) + E_F, E_F that time at the kernel's power alone
// (Rotating). It runs at the clock where the cap holds the power:
//
//	P (KG(s) + F) = E_KG(s) + E_F
//
// The replaced signatures' and the kernel's power in context is their
// power alone times the clock ratio s / s_alone, where s_alone is NVML's
// clock during those replays (1 when unknown). A guess, labelled: that a
// memory-bound kernel's power falls in proportion to the SM clock. Why:
// with their power alone at full clock the model over-predicts the
// saving, as it does when the replaced runs are removed and nothing put
// in their place; the ratio takes most of that error away, on GPUs and
// workloads it was not fitted on (see
// results/h100/roofline-whatif/README.md).
//
// A third run, the replaced runs three times (replay.TimelineOptions.
// AgainTimes), with E_KG the parabola through the three runs, was tried
// and dropped: it missed by more than the line (same record).
//
// Guesses, labelled: the memory-bound kernels' power in the timelines is
// taken as their power alone scaled as above (alone they run at full
// clock, in a capped timeline well below it), and the kept work's energy
// as linear in the clock between and around the two runs. An error in E_R cancels to first
// order when the what-if moves the clock about as far down as B moved it
// up (E_R enters E_A and g with opposite signs); an error in E_F does not.

// AgainPrediction is the what-if's prediction at the cap from the plain
// and again timelines.
type AgainPrediction struct {
	// PowerW is the power the cap held (the plain timeline's energy
	// window).
	PowerW float64 `json:"power_w"`
	// PlainNS, PlainMHz, AgainNS and AgainMHz are the two runs' sustained
	// times per launch (the rounds' means) and NVML clocks.
	PlainNS  float64 `json:"plain_ns"`
	PlainMHz float64 `json:"plain_mhz"`
	AgainNS  float64 `json:"again_ns"`
	AgainMHz float64 `json:"again_mhz"`
	// ReplacedNS and AgainReplacedNS are the replaced signatures' time in
	// context in each run; ReplacedJ and AgainReplacedJ their energies
	// (power alone, Rotating, times that time).
	ReplacedNS      float64 `json:"replaced_ns"`
	AgainReplacedNS float64 `json:"again_replaced_ns"`
	ReplacedJ       float64 `json:"replaced_j"`
	AgainReplacedJ  float64 `json:"again_replaced_j"`
	// CapFit is the kept work fitted through the two runs (KeptJ at
	// PlainMHz), the kernel's runs and the what-if's run.
	CapFit
}

// AgainInput is what PredictAgain needs: the two runs at the cap (their
// sustained times, clocks and the power held), the replaced signatures'
// times in context in each, their power alone, and the kernel's runs.
type AgainInput struct {
	PowerW                     float64
	PlainNS, PlainMHz          float64
	AgainNS, AgainMHz          float64
	ReplacedNS, ReplacedJ      float64
	AgainReplacedNS, AgainRepJ float64
	FusedNS, FusedJ            float64
	// AloneMHz is the clock of the replays alone that priced ReplacedJ,
	// AgainRepJ and FusedJ (0: unknown, and their energies stand as
	// given).
	AloneMHz float64
}

// PredictAgain solves the model above. It errs, naming what is missing or
// out of order, where the two runs do not give a curve: no power or
// clocks, an again run not at a higher clock than the plain one (adding
// the chain gave the cap no room), or kept work that does not speed up
// with the clock.
func PredictAgain(in AgainInput) (*AgainPrediction, error) {
	switch {
	case in.PowerW <= 0 || in.PlainNS <= 0 || in.AgainNS <= 0 || in.PlainMHz <= 0 || in.AgainMHz <= 0:
		return nil, fmt.Errorf("the plain and again runs need times, clocks and the power held (%.0f W)", in.PowerW)
	case in.ReplacedNS <= 0 || in.AgainReplacedNS <= in.ReplacedNS || in.ReplacedJ <= 0 || in.AgainRepJ <= 0:
		return nil, fmt.Errorf("the replaced signatures' times in context (%.4g ms plain, %.4g ms again) or their energies are missing",
			in.ReplacedNS/1e6, in.AgainReplacedNS/1e6)
	case in.FusedNS <= 0 || in.FusedJ <= 0:
		return nil, fmt.Errorf("the kernel's time and energy alone (Rotating) are missing")
	case in.AgainMHz <= in.PlainMHz:
		return nil, fmt.Errorf("the again run's clock, %.0f MHz, is not above the plain run's, %.0f: no curve to fit", in.AgainMHz, in.PlainMHz)
	}
	p := &AgainPrediction{PowerW: in.PowerW, PlainNS: in.PlainNS, PlainMHz: in.PlainMHz, AgainNS: in.AgainNS, AgainMHz: in.AgainMHz,
		ReplacedNS: in.ReplacedNS, AgainReplacedNS: in.AgainReplacedNS, ReplacedJ: in.ReplacedJ, AgainReplacedJ: in.AgainRepJ,
		CapFit: CapFit{FusedNS: in.FusedNS, FusedJ: in.FusedJ, AloneMHz: in.AloneMHz}}
	if err := p.fitTime(in.PlainNS-in.ReplacedNS, in.PlainMHz, in.AgainNS-in.AgainReplacedNS, in.AgainMHz); err != nil {
		return nil, err
	}
	w := in.PowerW / 1e9 // J per ns
	eA, eB := w*in.PlainNS-in.ReplacedJ*clockScale(in.PlainMHz, in.AloneMHz), w*in.AgainNS-in.AgainRepJ*clockScale(in.AgainMHz, in.AloneMHz)
	p.KeptJ, p.EnergySlope = eA, (eB-eA)/(in.AgainMHz-in.PlainMHz)
	if err := p.solve(in.PowerW, in.PlainNS, in.PlainMHz, in.PlainMHz/4, 2*in.AgainMHz); err != nil {
		return nil, err
	}
	return p, nil
}

// againInput gathers PredictAgain's input from the timeline check, the
// Rotating replays alone (times and energies by signature ID) and the
// kernel's runs (by its signature for each variant), or says why it
// cannot.
func againInput(tc *TimelineCheck, replaced []string, kernels map[string]int, rot map[string]Times) (AgainInput, error) {
	var in AgainInput
	if err := atCapPair(tc.Plain, tc.Again, "again"); err != nil {
		return in, err
	}
	in.PowerW, in.PlainNS, in.PlainMHz, in.AgainNS, in.AgainMHz = tc.Plain.Energy.Watts, tc.PlainMeanNS, tc.PlainMHz, tc.AgainMeanNS, tc.AgainMHz
	var err error
	if in.ReplacedNS, in.ReplacedJ, err = inContext(tc.Plain, replaced, rot); err != nil {
		return in, fmt.Errorf("the plain timeline: %w", err)
	}
	if in.AgainReplacedNS, in.AgainRepJ, err = inContext(tc.Again, replaced, rot); err != nil {
		return in, fmt.Errorf("the again timeline: %w", err)
	}
	if in.FusedNS, in.FusedJ, err = kernelRuns(kernels, rot); err != nil {
		return in, err
	}
	in.AloneMHz = aloneMHz(rot, replaced, kernels)
	return in, nil
}

// kernelRuns sums the kernel's runs (by its signature for each variant):
// its time and energy alone in the Rotating mode, times the runs.
func kernelRuns(kernels map[string]int, rot map[string]Times) (ns, j float64, err error) {
	for id, runs := range kernels {
		k := rot[id]
		if k.NS <= 0 || k.J <= 0 {
			return 0, 0, fmt.Errorf("the kernel's signature %s has no time and energy alone (Rotating)", id)
		}
		ns, j = ns+float64(runs)*k.NS, j+float64(runs)*k.J
	}
	return ns, j, nil
}

// aloneMHz is the mean of NVML's clocks during the replays alone of the
// replaced signatures and the kernel; 0 when any lacks one.
func aloneMHz(rot map[string]Times, replaced []string, kernels map[string]int) float64 {
	ids := slices.Clone(replaced)
	for id := range kernels {
		ids = append(ids, id)
	}
	var sum float64
	for _, id := range ids {
		m := rot[id].MHz
		if m <= 0 {
			return 0
		}
		sum += m
	}
	if len(ids) == 0 {
		return 0
	}
	return sum / float64(len(ids))
}

// inContext sums the replaced signatures' time in context in r, and their
// energy there: each one's power alone (rot) times that time.
func inContext(r *replay.TimelineResult, replaced []string, rot map[string]Times) (ns, j float64, err error) {
	ctx := map[string]replay.SigContext{}
	for _, c := range r.Context {
		ctx[c.ID] = c
	}
	for _, id := range replaced {
		c, ok := ctx[id]
		t := rot[id]
		switch {
		case !ok:
			return 0, 0, fmt.Errorf("no time in context for %s (%s)", id, r.ContextErr)
		case t.NS <= 0 || t.J <= 0:
			return 0, 0, fmt.Errorf("%s has no time and energy alone (Rotating)", id)
		}
		d := c.MeanNS * float64(c.Invocations)
		ns, j = ns+d, j+d*t.J/t.NS
	}
	return ns, j, nil
}
