package whatif

import (
	"fmt"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// Replays beyond the one-run prediction's. The again timeline is the
// plain one with each replaced run launched a second time right after
// itself (replay.TimelineOptions.Again): the workload's response, at the
// cap, to one more chain per run, from which again.go predicts. The
// Rotating replays alone give that prediction the kernel's and the
// replaced signatures' power with their operands streamed from device
// memory. The cache-mode probe (Options.Modes) replays them alone in
// each mode asked, to set beside their times in context; it feeds no
// prediction.

// ModeTime is a replay alone in one cache mode: its kernel time (CUPTI's
// median, or the replay's reported time without CUPTI).
type ModeTime struct {
	ID       string  `json:"id"`
	Label    string  `json:"label"`
	Mode     string  `json:"mode"`
	KernelNS float64 `json:"kernel_ns"`
	// Err says why it did not replay.
	Err string `json:"error,omitempty"`
}

// probeModes replays each variant's kernel and each replaced signature
// (parts aside) alone in each of modes.
func probeModes(d *replay.Device, p *Plan, modes []replay.CacheMode, o Options) []ModeTime {
	var out []ModeTime
	one := func(id, label string, mode replay.CacheMode, prep func() (*replay.Prepared, error)) {
		mt := ModeTime{ID: id, Label: label, Mode: mode.String()}
		pr, err := prep()
		if err == nil {
			var r *replay.Result
			r, err = d.Measure(pr, replay.Options{Budget: o.Measure.Budget})
			pr.Close()
			if err == nil {
				mt.KernelNS = r.ReportedNS()
			}
		}
		if err != nil {
			mt.Err = err.Error()
		}
		fmt.Fprintf(o.Progress, "mode %s: %s %s: %.2f µs %s\n", mt.Mode, id, label, mt.KernelNS/1e3, mt.Err)
		out = append(out, mt)
	}
	for _, mode := range modes {
		for _, b := range p.Variants {
			one(b.Sig.ID, b.Sig.Label, mode, func() (*replay.Prepared, error) {
				return d.PrepareWith(b.Sig, mode, p.Kernel.Builder(b.RowNorm))
			})
		}
		for _, sig := range p.replaced() {
			one(sig.ID, sig.Label, mode, func() (*replay.Prepared, error) { return d.PrepareFor(sig, mode) })
		}
	}
	return out
}

// measureRotating replays each variant's kernel and each replaced
// signature (parts aside) alone in the Rotating cache mode, with o.Measure
// (energy too where it asks), for the prediction in context and those at
// the cap (again.go, removed.go); by signature ID.
func measureRotating(d *replay.Device, p *Plan, o Options) (map[string]Times, error) {
	out := map[string]Times{}
	one := func(prep *replay.Prepared, err error) error {
		if err != nil {
			return err
		}
		defer prep.Close()
		r, err := d.Measure(prep, o.Measure)
		if err != nil {
			return err
		}
		out[prep.Sig.ID] = timesOf(r)
		fmt.Fprintf(o.Progress, "alone, rotating: %s %s: %s\n", prep.Sig.ID, prep.Sig.Label, r)
		return nil
	}
	for _, b := range p.Variants {
		if err := one(d.PrepareWith(b.Sig, replay.Rotating, p.Kernel.Builder(b.RowNorm))); err != nil {
			return nil, err
		}
	}
	for _, sig := range p.replaced() {
		if err := one(d.PrepareFor(sig, replay.Rotating)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// replaced are the replaced signatures that are not part of another, as
// they replay alone.
func (p *Plan) replaced() []*signatures.Signature {
	var sigs []*signatures.Signature
	for _, r := range p.Match.Replaced {
		if r.PartOf == "" {
			sigs = append(sigs, p.Set.Signatures[r.Sig])
		}
	}
	return sigs
}

// replacedIDs are the IDs of the replaced signatures that are not part of
// another.
func replacedIDs(m *Match) []string {
	var ids []string
	for _, r := range m.Replaced {
		if r.PartOf == "" {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// againRuns are the substituted runs, to launch again in the again
// timeline.
func againRuns(subs []replay.Substitution) [][]int {
	runs := make([][]int, 0, len(subs))
	for _, s := range subs {
		runs = append(runs, s.Invocations)
	}
	return runs
}

// predictInContext predicts the kernels' own saving from the Rotating
// replays alone (rot, by signature ID) of the replaced signatures and of
// each variant's kernel.
func predictInContext(p *Plan, rot map[string]Times) (*Prediction, error) {
	base := &Baseline{From: "the replays alone in the Rotating cache mode", Sigs: rot}
	fused := make([]Times, len(p.Match.Variants))
	for _, b := range p.Variants {
		t, ok := rot[b.Sig.ID]
		if !ok {
			return nil, fmt.Errorf("the kernel of variant %d has no replay in the Rotating mode", b.Index)
		}
		fused[b.Index] = t
	}
	return Predict(p.Match, base, fused)
}
