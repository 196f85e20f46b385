package replay

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/kreplay/kreplay/captured"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier2"
)

// SuiteOptions tune RunSet.
type SuiteOptions struct {
	// Tiers limits the run to these tiers (all when empty).
	Tiers []signatures.Tier
	// Cache is the cache mode of every measurement (DefaultCacheMode
	// when zero).
	Cache CacheMode
	// Measure tunes each measurement.
	Measure Options
	// Progress, when set, gets one line per signature as the run goes.
	Progress io.Writer
	// Done, when set, is called with each entry as soon as it is measured,
	// so that an interrupted run keeps what it has.
	Done func(Entry)
	// Previous holds entries of an earlier, interrupted run of the same
	// set, by signature ID: a signature with a measured result there is
	// not measured again, and its entry's result is reused.
	Previous map[string]Entry
	// Skip leaves signatures unmeasured, by ID, each with the reason its
	// Entry's Err gets: one that faulted in an earlier run, losing its
	// CUDA context, say. It wins over Previous.
	Skip map[string]string
	// EnergyShare, with Measure.Energy and between 0 and 1, measures the
	// energy of the signatures that make up this share of the traced time
	// (the largest first) and estimates the rest's (EstimateEnergy): a
	// decode of hundreds of small signatures then takes minutes, not a
	// quarter of an hour. 0 measures every signature's.
	EnergyShare float64
	// Families, when set, measures only some members of each signature
	// family (signatures.Families: signatures that differ only in one
	// size n, a KV cache's length) and interpolates the others' time and
	// energy between them, when two held-out members agree with the fit
	// (see docs/families.md). Their entries say so (Entry.Interpolated).
	// A family's chosen members are measured when the run reaches its
	// first member; entries, Done calls and progress lines still come in
	// the set's order. Off by default; Group.RunSet ignores it.
	Families bool
	// SharedEnergy, when 2 or more (at most MaxSharedEnergy), measures the
	// energy of the signatures chosen for a window (EnergyShare) whose
	// traced and replay times are under SharedEnergyMaxNS in windows shared
	// by up to that many: grouped by class, then in the set's order, each
	// group's members are timed one by one and kept prepared, then one
	// window launches them all in turn, each in proportion to its traced
	// invocations, and its energy is split among them (Energy.Shared,
	// Method SharedMethod). A group is measured when the run reaches its
	// first member; entries, Done calls and progress lines still come in
	// the set's order. 0 (the default) gives every signature its own
	// window; Group.RunSet ignores it.
	SharedEnergy int
	// prepared, when set, is called by the measurement of a signature
	// alone (runKept) once it is prepared, before it is measured: RunSet
	// starts the next signature's prefetch there.
	prepared func()
	// lostScope, set by RunSet, lets a loss of the context leave out the
	// signatures that launch the kernel that failed (checkLost).
	lostScope *lostScope
}

// energyFor returns the IDs of the signatures of todo that get an
// energy window of their own under o: all of them (nil) unless
// EnergyShare limits them to the largest by traced time that make up that
// share.
func (o SuiteOptions) energyFor(todo []*signatures.Signature) map[string]bool {
	if !o.Measure.Energy || o.EnergyShare <= 0 || o.EnergyShare >= 1 {
		return nil
	}
	byTime := slices.Clone(todo)
	slices.SortStableFunc(byTime, func(a, b *signatures.Signature) int { return cmp.Compare(b.TracedNS.Total, a.TracedNS.Total) })
	var total, sum int64
	for _, s := range byTime {
		total += s.TracedNS.Total
	}
	ids := map[string]bool{}
	for _, s := range byTime {
		if float64(sum) >= o.EnergyShare*float64(total) {
			break
		}
		ids[s.ID] = true
		sum += s.TracedNS.Total
	}
	return ids
}

// skip gives e the reason Skip leaves it unmeasured with, reporting
// whether there was one.
func (o *SuiteOptions) skip(e *Entry) bool {
	reason, ok := o.Skip[e.ID]
	if !ok || e.PartOf != "" {
		return false
	}
	e.Err = cmp.Or(reason, "left out")
	return true
}

// settled gives e its outcome where s is not measured: it is a part of
// another signature, left out (skip) or reused (reuse). It reports
// whether it did.
func (o *SuiteOptions) settled(s *signatures.Signature, e *Entry) bool {
	return s.PartOf != "" || o.skip(e) || o.reuse(e)
}

// reuse copies a previous run's result into e, reporting whether there
// was one to reuse. A result without an energy is not one where o
// measures e's energy (Measure.Energy, as withEnergyOf gives it): the
// earlier run measured its time only (-energy=false, or predict's
// -signature-energy off), and this one measures it again with its energy.
func (o *SuiteOptions) reuse(e *Entry) bool {
	prev, ok := o.Previous[e.ID]
	if !ok || prev.Result == nil || prev.Interpolated != "" || e.PartOf != "" {
		return false
	}
	if o.Measure.Energy && prev.Result.Energy == nil {
		return false
	}
	e.Result, e.SameKernel, e.SameAs, e.Err = prev.Result, prev.SameKernel, prev.SameAs, ""
	return true
}

// Entry is the outcome of one signature in a suite: its result, or the
// error that kept it from replaying.
type Entry struct {
	ID     string           `json:"id"`
	Label  string           `json:"label"`
	Tier   signatures.Tier  `json:"tier"`
	Class  signatures.Class `json:"class"`
	Count  int              `json:"count"`
	Kernel string           `json:"kernel"`
	// TracedMedianNS is the signature's traced median plus, per call, the
	// traced medians of the signatures that are part of it (a split-K
	// reduce), which its replay also runs.
	TracedMedianNS int64   `json:"traced_median_ns"`
	TracedTotalNS  int64   `json:"traced_total_ns"`
	Result         *Result `json:"result,omitempty"`
	// SameKernel tells whether the replay ran the traced activity (from
	// the CUPTI pass of Measure; nil when it did not run).
	SameKernel *bool `json:"same_kernel,omitempty"`
	// PartOf is set for signatures measured with another one.
	PartOf string `json:"part_of,omitempty"`
	Err    string `json:"error,omitempty"`
	// Interpolated, set when the result was not measured but interpolated
	// between measured members of the signature's family
	// (SuiteOptions.Families), says from what; its SameKernel is nil.
	Interpolated string `json:"interpolated,omitempty"`
	// SameAs, set when the result was measured for an identical signature
	// (the same ID: kernel, launch, op and tensors) of another set, names
	// that set: a tensor-parallel group's ranks run the same signatures,
	// each measured once (SuiteOptions.Previous carries it).
	SameAs string `json:"same_as,omitempty"`
	// Phases is the host time the entry's measurement took, by phase; nil
	// for an entry not measured here (skipped, reused, interpolated, part
	// of another, failed before it was prepared).
	Phases *Phases `json:"phases,omitempty"`
	// Device is the CUDA device index of the GPU that measured the
	// signature alone (of a Group, the one it was given to); nil where no
	// one GPU did (a collective, across the group's GPUs; an entry not
	// measured here).
	Device *int `json:"device,omitempty"`
}

// ReplayNS is the replay's time per invocation to compare with the trace:
// the CUPTI kernel time, measured as the trace's durations are, when
// there is one, else the event time.
func (e *Entry) ReplayNS() float64 {
	if e.Result == nil {
		return 0
	}
	return e.Result.ReportedNS()
}

// Ratio is the replay time over the traced median (0 when not measured).
func (e *Entry) Ratio() float64 {
	if e.Result == nil || e.TracedMedianNS <= 0 {
		return 0
	}
	return e.ReplayNS() / float64(e.TracedMedianNS)
}

// split returns the set's signatures that are parts of another, by the
// signature they belong to, and the signatures to run: those of the
// chosen tiers, in the set's order.
func (o SuiteOptions) split(set *signatures.Set) (parts map[string][]*signatures.Signature, todo []*signatures.Signature) {
	parts = map[string][]*signatures.Signature{}
	for _, s := range set.Signatures {
		if s.PartOf != "" {
			parts[s.PartOf] = append(parts[s.PartOf], s)
		}
		if len(o.Tiers) == 0 || slices.Contains(o.Tiers, s.Tier) {
			todo = append(todo, s)
		}
	}
	return parts, todo
}

// RunSet prepares, measures and (optionally) identifies every signature of
// a set on the device, in the set's order (by traced time). A signature
// that fails gets its error in its Entry and the run goes on, unless the
// error is sticky (cuda.IsSticky: a kernel faulted on the GPU and the CUDA
// context is lost): then nothing more is measured on d, in this call or a
// later one, and Lost says so. Every signature still gets its Entry, in
// order, with its Done call and progress line: one that would have been
// measured gets an error that names the signature that faulted and how to
// go on (a new run with the results so far and that signature left out).
func (d *Device) RunSet(set *signatures.Set, o SuiteOptions) []Entry {
	return d.runSetShared(set, o, d.runOne, d.sharedDevice())
}

// measureFunc measures signature s into its entry, or sets the entry's
// error and returns it (Device.runOne; tests fake it).
type measureFunc func(s *signatures.Signature, o SuiteOptions, e *Entry) error

// runSet is RunSet with its measurement given, and no shared energy
// windows.
func (d *Device) runSet(set *signatures.Set, o SuiteOptions, measure measureFunc) []Entry {
	o.SharedEnergy = 0
	return d.runSetShared(set, o, measure, sharedFuncs{})
}

// runSetShared is RunSet with its measurements given: measure for a
// signature alone, sh for a shared energy window's group. While a
// signature measured alone is measured (after SuiteOptions.prepared), the
// files of the next one's captured binary are read into d's snapshots
// (prefetcher); its preparing's files phase (Phases.PrepareFilesNS) is
// what that left to read.
func (d *Device) runSetShared(set *signatures.Set, o SuiteOptions, measure measureFunc, sh sharedFuncs) []Entry {
	parts, todo := o.split(set)
	withEnergy := o.energyFor(todo)
	fams, resolved := o.families(set, todo), map[string]Entry{}
	o.lostScope = newLostScope(todo, resolved)
	shared := o.sharedGroups(todo, parts, withEnergy, fams)
	var out []Entry
	start := time.Now()
	pf := &prefetcher{snaps: d.snaps}
	defer pf.wait()
	for i, s := range todo {
		pf.wait() // done before anything is prepared
		if f := fams[s.ID]; f != nil && !f.done {
			d.runFamily(f, o, measure, resolved)
		}
		if g := shared[s.ID]; g != nil && !g.done {
			d.runShared(g, parts, o, sh, out, resolved)
		}
		e, ok := resolved[s.ID]
		if !ok {
			so := o.withEnergyOf(withEnergy, s.ID)
			if next := o.nextPrepared(todo[i+1:], resolved, fams, shared); next != nil && d.Lost() == nil {
				so.prepared = func() { pf.start(next, o.Cache) }
			}
			e = d.measureEntry(s, parts[s.ID], so, measure)
		}
		out = append(out, e)
		if o.Done != nil {
			o.Done(e)
		}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "[%d/%d %s%s] %s\n", i+1, len(todo), time.Since(start).Round(time.Second), eta(start, i+1, len(todo)), e.line())
		}
	}
	o.estimateRest(out, withEnergy)
	o.reportPhases(out)
	return out
}

// withEnergyOf is o for the signature id: energy measured where o measures
// it and withEnergy (energyFor's) is nil or holds id.
func (o SuiteOptions) withEnergyOf(withEnergy map[string]bool, id string) SuiteOptions {
	o.Measure.Energy = o.Measure.Energy && (withEnergy == nil || withEnergy[id])
	return o
}

// estimateRest estimates the energy of the entries EnergyShare left
// without a window of their own (EstimateEnergy), when it left any out
// (withEnergy, energyFor's, not nil), and says how many.
func (o SuiteOptions) estimateRest(out []Entry, withEnergy map[string]bool) {
	if withEnergy == nil {
		return
	}
	n := EstimateEnergy(out)
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "energy: %d signatures beyond %.0f%% of the traced time estimated from their class's measured power\n", n, 100*o.EnergyShare)
	}
}

// measureEntry is the entry of s, with its parts: skipped, reused or
// measured with o.
func (d *Device) measureEntry(s *signatures.Signature, parts []*signatures.Signature, o SuiteOptions, measure measureFunc) Entry {
	e := newEntry(s, parts)
	if !o.settled(s, &e) && !d.notMeasured(&e) {
		d.checkLost(s, measureRecovered(measure, s, o, &e), o)
	}
	return e
}

// measureRecovered runs measure, turning a panic outside Device.Do (in the
// replay's host code) into a *PanicError set as e's error, as Do does for
// one inside it.
func measureRecovered(measure measureFunc, s *signatures.Signature, o SuiteOptions, e *Entry) (err error) {
	defer func() {
		if perr := recovered(recover()); perr != nil {
			e.Result, e.SameKernel, e.Err = nil, nil, errText(perr)
			err = perr
		}
	}()
	return measure(s, o, e)
}

// runOne measures s into e; on failure it sets e's error and returns it.
func (d *Device) runOne(s *signatures.Signature, o SuiteOptions, e *Entry) error {
	p, err := d.runKept(s, o, e)
	if p != nil {
		d.release(p, e.Phases)
	}
	return err
}

// runKept is runOne but for releasing what it prepared: it returns it
// (nil when preparing failed) for the caller to release.
func (d *Device) runKept(s *signatures.Signature, o SuiteOptions, e *Entry) (*Prepared, error) {
	start := time.Now()
	var t captured.Timing
	p, err := d.prepareFor(s, o.Cache, &t, nil)
	if err != nil {
		e.Err = errText(err)
		return nil, err
	}
	ph := &Phases{}
	ph.setPrepare(time.Since(start), &t)
	e.Phases = ph
	if o.prepared != nil {
		o.prepared()
	}
	defer func() {
		if v := recover(); v != nil {
			d.release(p, ph) // a panic returns nothing to release
			panic(v)
		}
	}()
	start = time.Now()
	var mt measureTiming
	r, err := d.measureTimed(p, o.Measure, &mt)
	ph.setMeasure(time.Since(start), &mt)
	if err != nil {
		e.Err = errText(err)
		return p, err
	}
	e.Result = r
	idx := d.Index
	e.Device = &idx
	// Tier 3 runs kreplay's own kernels in place of PyTorch's: the traced
	// kernel is never the one that runs, unless it is the captured binary
	// or cuDNN's SDPA chose it.
	if len(r.Ran) > 0 && (s.Tier != signatures.TierKernel || r.Path == PathCaptured || r.Path == string(tier2.APICuDNNSDPA)) {
		same := sameActivity(s, r.Ran)
		e.SameKernel = &same
	}
	return p, nil
}

// release closes p, charging the time to ph.
func (d *Device) release(p *Prepared, ph *Phases) {
	start := time.Now()
	p.Close()
	ph.CloseNS = time.Since(start).Nanoseconds()
}

// errText drops the SignatureError wrapper, whose ID the entry already has.
func errText(err error) string {
	var se *SignatureError
	if errors.As(err, &se) {
		return se.Stage + ": " + se.Err.Error()
	}
	return err.Error()
}

func (e *Entry) line() string {
	switch {
	case e.PartOf != "":
		return fmt.Sprintf("%s %s: part of %s", e.ID, e.Label, e.PartOf)
	case e.Err != "":
		return fmt.Sprintf("%s %s: %s", e.ID, e.Label, e.Err)
	}
	s := fmt.Sprintf("%s %s: traced %.2fµs replay %.2fµs (x%.3f), events %.2fµs", e.ID, e.Label,
		float64(e.TracedMedianNS)/1e3, e.ReplayNS()/1e3, e.Ratio(), e.Result.MedianNS/1e3)
	if e.SameKernel != nil && !*e.SameKernel {
		s += " OTHER KERNEL"
	}
	if e.Interpolated != "" {
		s += " INTERPOLATED"
	}
	if e.SameAs != "" {
		s += " (measured for " + e.SameAs + ")"
	}
	if e.Result.Fallback != "" {
		s += " (kreplay's kernel; " + e.Result.Fallback + ")"
	}
	if e.Result.Note != "" {
		s += " (" + e.Result.Note + ")"
	}
	if n := e.Result.singleNote(); n != "" {
		s += " (" + n + ")"
	}
	if n := e.Result.ThrottleNote(); n != "" {
		s += " " + n
	} else if e.Result.Throttled {
		s += " throttled"
	}
	if en := e.Result.Energy; en != nil {
		s += fmt.Sprintf(", %.4g J (%.0f W)", en.JoulesPerOp, en.Watts)
		if l := en.sharedLabel(); l != "" {
			s += " (" + l + ")"
		}
		for i, r := range e.Result.RankEnergy {
			s += fmt.Sprintf(" rank %d %.4g J (%.0f W)", i, r.JoulesPerOp, r.Watts)
		}
	} else if e.Result.EnergyErr != "" {
		s += ", energy: " + e.Result.EnergyErr
	}
	return s
}
