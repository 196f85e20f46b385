package replay

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/kreplay/kreplay/signatures"
)

// Family replays (SuiteOptions.Families) measure FamilyFit members of a
// signature family (signatures.Families) spread over its sizes, and
// FamilyHeldOut more that the fit does not use, to check it.
const (
	FamilyFit     = 5
	FamilyHeldOut = 2
)

// FamilyTolerance is how far, relative to its measured value, a held-out
// member's measured time (and energy, where measured) may lie from the
// fit's for the fit to stand, unless the member's own sampling spread
// (its RelCI; for energy its TickShare) is larger. 3% is a guess, set
// before any data; results/cpu/families/ shows it on GPU runs that
// measured every member (TestFamiliesOnRecordedRuns).
const FamilyTolerance = 0.03

// InterpolatedMethod is Energy.Method of an energy interpolated between
// measured members of a signature family; Energy.Estimated says from what.
const InterpolatedMethod = "interpolated"

// familyPlan is which members of a family to measure: fit, spread over
// the family's sizes with both ends, and held, the held-out members, each
// the nearest to the middle of one of the widest gaps between fit
// members. Indices are into the members, sorted by n.
type familyPlan struct {
	fit, held []int
}

// planFamily plans a family of members sorted by n; false when it has too
// few members for interpolation to spare a measurement.
func planFamily(ms []signatures.FamilyMember) (familyPlan, bool) {
	if len(ms) <= FamilyFit+FamilyHeldOut {
		return familyPlan{}, false
	}
	var p familyPlan
	for i := range FamilyFit {
		p.fit = append(p.fit, int(math.Round(float64(i*(len(ms)-1))/float64(FamilyFit-1))))
	}
	p.fit = slices.Compact(p.fit)
	gaps := make([]int, len(p.fit)-1) // by index of the gap's lower fit member
	for g := range gaps {
		gaps[g] = g
	}
	width := func(g int) int64 { return ms[p.fit[g+1]].N - ms[p.fit[g]].N }
	slices.SortStableFunc(gaps, func(a, b int) int { return cmp.Compare(width(b), width(a)) })
	for len(p.held) < FamilyHeldOut {
		before := len(p.held)
		for _, g := range gaps {
			if i, ok := p.middle(ms, g); ok && len(p.held) < FamilyHeldOut {
				p.held = append(p.held, i)
			}
		}
		if len(p.held) == before {
			return familyPlan{}, false
		}
	}
	return p, true
}

// middle returns the member of gap g (between fit members g and g+1) not
// yet planned that is nearest the gap's middle.
func (p familyPlan) middle(ms []signatures.FamilyMember, g int) (int, bool) {
	lo, hi := p.fit[g], p.fit[g+1]
	mid := float64(ms[lo].N+ms[hi].N) / 2
	best := -1
	for i := lo + 1; i < hi; i++ {
		if slices.Contains(p.held, i) {
			continue
		}
		if best < 0 || math.Abs(float64(ms[i].N)-mid) < math.Abs(float64(ms[best].N)-mid) {
			best = i
		}
	}
	return best, best >= 0
}

// fitPoint is a measured member of a family.
type fitPoint struct {
	n int64
	r *Result
}

// bracket returns the fit points around n (sorted by n, n within their
// range) and n's position between them, 0 at lo and 1 at hi.
func bracket(pts []fitPoint, n int64) (lo, hi fitPoint, t float64) {
	i, _ := slices.BinarySearchFunc(pts, n, func(p fitPoint, n int64) int { return cmp.Compare(p.n, n) })
	i = min(max(i, 1), len(pts)-1)
	lo, hi = pts[i-1], pts[i]
	return lo, hi, float64(n-lo.n) / float64(hi.n-lo.n)
}

// lerp is a+(b-a)t.
func lerp(a, b, t float64) float64 { return a + (b-a)*t }

// fitNS is the fit's time per invocation at n (Result.ReportedNS).
func fitNS(pts []fitPoint, n int64) float64 {
	lo, hi, t := bracket(pts, n)
	return lerp(lo.r.ReportedNS(), hi.r.ReportedNS(), t)
}

// fitJ is the fit's energy per invocation at n, and false unless every
// fit point measured its energy.
func fitJ(pts []fitPoint, n int64) (float64, bool) {
	for _, p := range pts {
		if !measuredEnergy(p.r) {
			return 0, false
		}
	}
	lo, hi, t := bracket(pts, n)
	return lerp(lo.r.Energy.JoulesPerOp, hi.r.Energy.JoulesPerOp, t), true
}

// measuredEnergy reports whether r has an energy that was measured.
func measuredEnergy(r *Result) bool {
	return r.Energy != nil && r.Energy.Method != EstimatedMethod && r.Energy.Method != InterpolatedMethod && r.Energy.JoulesPerOp > 0
}

// checkHeldOut compares a held-out member's measured result r with the
// fit at its n: its relative deviation in time, and an error when it or
// the energy's lies beyond the tolerance (FamilyTolerance or its spread).
func checkHeldOut(pts []fitPoint, n int64, r *Result) (float64, error) {
	got := r.ReportedNS()
	if got <= 0 || math.IsNaN(r.RelCI) || math.IsInf(r.RelCI, 0) {
		return 0, fmt.Errorf("held-out member n=%d: no time with a bounded spread to check the fit against", n)
	}
	dev := fitNS(pts, n)/got - 1
	if tol := max(FamilyTolerance, r.RelCI); math.Abs(dev) > tol {
		return dev, fmt.Errorf("held-out member n=%d: fit %.2fµs, measured %.2fµs (%+.1f%%, beyond ±%.1f%%)", n, fitNS(pts, n)/1e3, got/1e3, 100*dev, 100*tol)
	}
	j, ok := fitJ(pts, n)
	if !ok || !measuredEnergy(r) {
		return dev, nil
	}
	if devJ, tol := j/r.Energy.JoulesPerOp-1, max(FamilyTolerance, r.Energy.TickShare); math.Abs(devJ) > tol {
		return dev, fmt.Errorf("held-out member n=%d: fit %.4g J, measured %.4g J (%+.1f%%, beyond ±%.1f%%)", n, j, r.Energy.JoulesPerOp, 100*devJ, 100*tol)
	}
	return dev, nil
}

// interpolate is the result of signature s, of size n, interpolated
// between the fit points around it; from says from what.
func interpolate(pts []fitPoint, s *signatures.Signature, n int64, from string) *Result {
	lo, hi, t := bracket(pts, n)
	a, b := lo.r, hi.r
	base := a
	if t > 0.5 {
		base = b
	}
	f := func(x, y float64) float64 { return lerp(x, y, t) }
	r := &Result{ID: s.ID, Label: s.Label, Path: base.Path, Approximate: base.Approximate, Fallback: base.Fallback,
		Note: base.Note, Fidelity: base.Fidelity, Cache: base.Cache, Batch: base.Batch, Graph: base.Graph, Sets: base.Sets,
		Confidence: base.Confidence, Converged: a.Converged && b.Converged, ReportsSingles: base.ReportsSingles,
		Throttled: a.Throttled || b.Throttled, Reasons: base.Reasons}
	r.Stats = Stats{MedianNS: f(a.MedianNS, b.MedianNS), MeanNS: f(a.MeanNS, b.MeanNS), MinNS: f(a.MinNS, b.MinNS),
		MaxNS: f(a.MaxNS, b.MaxNS), LoNS: f(a.LoNS, b.LoNS), HiNS: f(a.HiNS, b.HiNS), RelCI: max(a.RelCI, b.RelCI)}
	if a.KernelMedianNS > 0 && b.KernelMedianNS > 0 {
		r.KernelMedianNS, r.KernelLoNS, r.KernelHiNS = f(a.KernelMedianNS, b.KernelMedianNS), f(a.KernelLoNS, b.KernelLoNS), f(a.KernelHiNS, b.KernelHiNS)
	} else {
		r.KernelErr = "interpolated from event times: a fit member has no kernel time"
	}
	if a.SingleMedianNS > 0 && b.SingleMedianNS > 0 {
		r.SingleMedianNS = f(a.SingleMedianNS, b.SingleMedianNS)
	}
	r.Work.Bytes = int64(math.Round(f(float64(a.Work.Bytes), float64(b.Work.Bytes))))
	r.Work.FLOPs = int64(math.Round(f(float64(a.Work.FLOPs), float64(b.Work.FLOPs))))
	if j, ok := fitJ(pts, n); ok && r.ReportedNS() > 0 {
		r.Energy = &Energy{JoulesPerOp: j, Watts: j / (r.ReportedNS() * 1e-9), Method: InterpolatedMethod, Estimated: from,
			Throttled: a.Energy.Throttled || b.Energy.Throttled}
	} else if a.Energy != nil || b.Energy != nil {
		r.EnergyErr = "not interpolated: a fit member's energy was not measured"
	}
	return r
}
