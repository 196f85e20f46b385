package replay

import (
	"fmt"
	"strings"

	"github.com/kreplay/kreplay/signatures"
)

// familyRun is a signature family within a suite: its members that the
// suite measures (neither skipped nor of a tier left out), by n, and
// their signatures.
type familyRun struct {
	fam  signatures.Family
	sigs map[string]*signatures.Signature
	done bool
}

// families returns the families of the signatures of todo with enough
// members for interpolation to spare measurements (planFamily), by member
// ID; nil unless o.Families.
func (o SuiteOptions) families(set *signatures.Set, todo []*signatures.Signature) map[string]*familyRun {
	if !o.Families {
		return nil
	}
	in := map[string]*signatures.Signature{}
	for _, s := range todo {
		if _, skipped := o.Skip[s.ID]; !skipped && s.PartOf == "" {
			in[s.ID] = s
		}
	}
	out := map[string]*familyRun{}
	for _, f := range signatures.Families(set) {
		fr := &familyRun{fam: signatures.Family{Label: f.Label}, sigs: map[string]*signatures.Signature{}}
		for _, m := range f.Members {
			if s := in[m.ID]; s != nil {
				fr.fam.Members = append(fr.fam.Members, m)
				fr.sigs[m.ID] = s
			}
		}
		if _, ok := planFamily(fr.fam.Members); !ok {
			continue
		}
		for _, m := range fr.fam.Members {
			out[m.ID] = fr
		}
	}
	return out
}

// runFamily measures the planned members of f (planFamily) into
// resolved, with their energy when o.Measure.Energy, and, when the
// held-out members agree with the fit over the others (checkHeldOut),
// interpolates the rest into it; otherwise it leaves the rest to be
// measured one by one. It says which on o.Progress.
func (d *Device) runFamily(f *familyRun, o SuiteOptions, measure measureFunc, resolved map[string]Entry) {
	f.done = true
	plan, _ := planFamily(f.fam.Members)
	fit, okFit := d.measureMembers(f, plan.fit, o, measure, resolved)
	held, okHeld := d.measureMembers(f, plan.held, o, measure, resolved)
	if !okFit || !okHeld {
		f.progress(o, "a planned member has no result: every member measured")
		return
	}
	var devs []string
	for _, h := range held {
		dev, err := checkHeldOut(fit, h.n, h.r)
		if err != nil {
			f.progress(o, err.Error()+": every member measured")
			return
		}
		devs = append(devs, fmt.Sprintf("%+.1f%%", 100*dev))
	}
	ms := f.fam.Members
	from := fmt.Sprintf("interpolated from %d measured members of n %d..%d (held-out members off by %s)",
		len(fit), ms[0].N, ms[len(ms)-1].N, strings.Join(devs, ", "))
	n := 0
	for _, m := range ms {
		if _, ok := resolved[m.ID]; ok {
			continue
		}
		s := f.sigs[m.ID]
		e := newEntry(s, nil)
		e.Result, e.Interpolated = interpolate(fit, s, m.N, from), from
		resolved[m.ID] = e
		n++
	}
	f.progress(o, fmt.Sprintf("%d members measured, %d of them held out within tolerance (%s); %d interpolated",
		len(fit)+len(held), len(held), strings.Join(devs, ", "), n))
}

// measureMembers measures the members of f at indices idx into resolved
// and returns them as fit points, with false when one has no result.
func (d *Device) measureMembers(f *familyRun, idx []int, o SuiteOptions, measure measureFunc, resolved map[string]Entry) ([]fitPoint, bool) {
	var pts []fitPoint
	ok := true
	for _, i := range idx {
		m := f.fam.Members[i]
		e := d.measureEntry(f.sigs[m.ID], nil, o, measure)
		resolved[m.ID] = e
		if e.Result == nil {
			ok = false
			continue
		}
		pts = append(pts, fitPoint{n: m.N, r: e.Result})
	}
	return pts, ok
}

// progress writes a line about f to o.Progress, if set.
func (f *familyRun) progress(o SuiteOptions, what string) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "family %s, %d members: %s\n", f.fam.Label, len(f.fam.Members), what)
	}
}
