package replay

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kreplay/kreplay/energy"
	"github.com/kreplay/kreplay/signatures"
)

// SharedEnergyMaxNS is the replay time per invocation below which a
// signature's energy may be measured in a window shared with others
// (SuiteOptions.SharedEnergy), and the traced median below which it is
// chosen for one. A kernel this short is mostly the GPU's fixed cost of a
// launch: its own window of about a second spends 50,000 times its time to
// measure a few µJ, and what it draws is near the power of the other short
// kernels around it. Longer kernels (a prefill's GEMMs, attention) draw
// powers that differ by class and size and keep their own windows.
const SharedEnergyMaxNS = 20_000

// MaxSharedEnergy is the most members one shared window takes
// (SuiteOptions.SharedEnergy above it is clamped): a group's members stay
// prepared, their buffers and captured binaries with their producers,
// until its window ran, so that no more than this many signatures'
// preparations are held on the device at once.
const MaxSharedEnergy = 16

// SharedMethod is Energy.Method of an energy measured in a window shared
// with other signatures; Energy.Shared says with which and how it was
// split.
const SharedMethod = "shared-window"

// sharedRoundNS is the GPU time one round of a shared window (each
// member's launches once) should take, as one batch of a window of its own
// (measureEnergy).
const sharedRoundNS = 5e6

// SharedWindow is how an energy measured in a shared window was split.
type SharedWindow struct {
	// Members are the IDs of the window's signatures, in launch order;
	// Launches each one's launches per round, in proportion to its traced
	// invocations.
	Members  []string `json:"members"`
	Launches []int    `json:"launches"`
	// Joules and Watts are the window's total energy and mean power;
	// Method the window's (Energy.Method of a window of its own).
	Joules float64 `json:"joules"`
	Watts  float64 `json:"watts"`
	Method string  `json:"method"`
	// Share is this member's part of Joules: its replay time times its
	// launches times its class's power, over the members' sum.
	Share float64 `json:"share"`
}

// sharedGroup is the signatures of one shared window, in launch order.
type sharedGroup struct {
	sigs []*signatures.Signature
	done bool
}

// sharedGroups groups the signatures of todo that get a shared energy
// window under o: those with energy (withEnergy, energyFor's: nil for
// all), not part of another, not in a family of Families, not left out or
// reused, and with a traced median (with their parts) under
// SharedEnergyMaxNS. Each class's (in the order the classes first come in
// todo) are cut, in todo's order, into groups of o.SharedEnergy (at most
// MaxSharedEnergy); what is left of each class is grouped so too, in the
// classes' order. It returns each member's group
// by ID; nil when o shares no window.
func (o SuiteOptions) sharedGroups(todo []*signatures.Signature, parts map[string][]*signatures.Signature, withEnergy map[string]bool, fams map[string]*familyRun) map[string]*sharedGroup {
	n := min(o.SharedEnergy, MaxSharedEnergy)
	if n < 2 || !o.Measure.Energy {
		return nil
	}
	classRank := map[signatures.Class]int{}
	var cands []*signatures.Signature
	for _, s := range todo {
		if _, ok := classRank[s.Class]; !ok {
			classRank[s.Class] = len(classRank)
		}
		if o.sharedCandidate(s, parts[s.ID], withEnergy) && fams[s.ID] == nil {
			cands = append(cands, s)
		}
	}
	byClass := make([][]*signatures.Signature, len(classRank))
	for _, s := range cands {
		byClass[classRank[s.Class]] = append(byClass[classRank[s.Class]], s)
	}
	var chunks, rest [][]*signatures.Signature
	for _, c := range byClass {
		for g := range slices.Chunk(c, n) {
			if len(g) == n {
				chunks = append(chunks, g)
			} else {
				rest = append(rest, g)
			}
		}
	}
	// What is left of each class, in the classes' order.
	for g := range slices.Chunk(slices.Concat(rest...), n) {
		chunks = append(chunks, g)
	}
	groups := map[string]*sharedGroup{}
	for _, c := range chunks {
		g := &sharedGroup{sigs: c}
		for _, s := range c {
			groups[s.ID] = g
		}
	}
	return groups
}

// sharedCandidate reports whether s may be measured in a shared window.
func (o SuiteOptions) sharedCandidate(s *signatures.Signature, parts []*signatures.Signature, withEnergy map[string]bool) bool {
	if s.PartOf != "" || s.Count <= 0 || (withEnergy != nil && !withEnergy[s.ID]) {
		return false
	}
	if _, skip := o.Skip[s.ID]; skip {
		return false
	}
	if prev, ok := o.Previous[s.ID]; ok && prev.Result != nil && prev.Interpolated == "" {
		return false
	}
	e := newEntry(s, parts)
	return e.TracedMedianNS > 0 && e.TracedMedianNS < SharedEnergyMaxNS
}

// sharedMember is one signature of a shared window while its group is
// measured.
type sharedMember struct {
	sig   *signatures.Signature
	entry Entry
	// p is the member kept prepared (nil in tests); release frees it,
	// charging the time to the entry's phases.
	p       *Prepared
	release func()
	// launches is its launches per round of the window.
	launches int
}

// perNS is the member's replay time per invocation, which the window's
// rounds and split use: the kernel time where CUPTI recorded it (the
// window runs the kernel without the primers a timed invocation may
// include), else the event time.
func (m *sharedMember) perNS() float64 {
	if m.entry.Result == nil {
		return 0
	}
	return m.entry.Result.ReportedNS()
}

// sharedFuncs are what a shared window's group needs of the device
// (Device.sharedDevice; tests fake them).
type sharedFuncs struct {
	// time measures m's time into m.entry without energy and keeps it
	// prepared (m.p, m.release); on failure it sets the entry's error and
	// returns it, with nothing kept.
	time func(m *sharedMember, o SuiteOptions) error
	// own measures m's energy in a window of its own.
	own func(m *sharedMember, o Options, tm *measureTiming) (*Energy, error)
	// window meters one window whose rounds launch each member's
	// launches in turn.
	window func(ms []*sharedMember, o Options, tm *measureTiming) (energy.Reading, error)
}

// runShared measures group g's members into resolved: each one's time as
// RunSet would (skipped, reused or measured, kept prepared), then the
// energy of those whose replay time is under SharedEnergyMaxNS in one
// window when there are two or more (SharedMethod), the others' in windows
// of their own. A shared window that fails measures its members in windows
// of their own, unless the context was lost. done holds the entries
// measured so far, whose power by class weighs the split (classPower).
func (d *Device) runShared(g *sharedGroup, parts map[string][]*signatures.Signature, o SuiteOptions, sh sharedFuncs, done []Entry, resolved map[string]Entry) {
	g.done = true
	var ms []*sharedMember
	for _, s := range g.sigs {
		m := &sharedMember{sig: s, entry: newEntry(s, parts[s.ID])}
		e := &m.entry
		if o.skip(e) || o.reuse(e) || d.notMeasured(e) {
			resolved[s.ID] = *e
			continue
		}
		to := o
		to.Measure.Energy = false
		err := measureRecovered(func(*signatures.Signature, SuiteOptions, *Entry) error { return sh.time(m, to) }, s, to, e)
		d.checkLost(s, err, o)
		if err != nil {
			resolved[s.ID] = *e
			continue
		}
		ms = append(ms, m)
	}
	d.sharedEnergy(ms, o, sh, classPower(done))
	for _, m := range ms {
		if m.release != nil {
			m.release()
		}
		resolved[m.sig.ID] = m.entry
	}
}

// sharedEnergy measures the energy of ms: the short ones in one window,
// the rest (and all of them, when that window fails but for a lost
// context) in their own. Once d's context is lost, the energies not yet
// measured get its error.
func (d *Device) sharedEnergy(ms []*sharedMember, so SuiteOptions, sh sharedFuncs, power map[signatures.Class]float64) {
	defer d.lostEnergy(ms)
	if d.Lost() != nil {
		return
	}
	o := so.Measure
	o.defaults()
	var short, long []*sharedMember
	for _, m := range ms {
		if p := m.perNS(); p > 0 && p < SharedEnergyMaxNS {
			short = append(short, m)
		} else {
			long = append(long, m)
		}
	}
	if len(short) < 2 {
		long, short = ms, nil
	}
	if len(short) > 0 {
		sharedLaunches(short)
		var tm measureTiming
		start := time.Now()
		rd, err := sh.window(short, o, &tm)
		short[0].chargeEnergy(time.Since(start), &tm) // the window's host time, failed or not
		switch {
		case err == nil:
			for i, e := range splitShared(rd, short, power) {
				short[i].entry.Result.Energy = &e
			}
		case d.lostBy(short[0].sig, err, so):
			return
		default:
			if so.Progress != nil {
				fmt.Fprintf(so.Progress, "energy: the shared window of %s failed (%v); measuring each in a window of its own\n", memberIDs(short), err)
			}
			long = append(long, short...)
		}
	}
	for _, m := range long {
		if d.Lost() != nil {
			return
		}
		var tm measureTiming
		start := time.Now()
		e, err := sh.own(m, o, &tm)
		r := m.entry.Result
		r.Energy = e
		if err != nil {
			r.EnergyErr = err.Error()
			d.lostBy(m.sig, err, so)
		}
		m.chargeEnergy(time.Since(start), &tm)
	}
}

// lostEnergy gives the members without an energy or its error the lost
// context's, when d's context is lost.
func (d *Device) lostEnergy(ms []*sharedMember) {
	lost := d.Lost()
	if lost == nil {
		return
	}
	for _, m := range ms {
		if r := m.entry.Result; r.Energy == nil && r.EnergyErr == "" {
			r.EnergyErr = "not measured: " + lost.Error()
		}
	}
}

// memberIDs lists the members' IDs, comma-separated.
func memberIDs(ms []*sharedMember) string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.sig.ID
	}
	return strings.Join(ids, ",")
}

// lostBy records err, measuring s's energy, as the loss of d's context
// when it is one (checkLost) and reports whether d's context is lost.
func (d *Device) lostBy(s *signatures.Signature, err error, o SuiteOptions) bool {
	d.checkLost(s, err, o)
	return d.Lost() != nil
}

// chargeEnergy adds an energy measurement of host time, by part in tm, to
// m's phases and Result.EnergyHostNS.
func (m *sharedMember) chargeEnergy(host time.Duration, tm *measureTiming) {
	m.entry.Result.EnergyHostNS += host.Nanoseconds()
	if m.entry.Phases == nil {
		return
	}
	var ph Phases
	ph.setMeasure(host, tm)
	m.entry.Phases.add(&ph)
}

// sharedLaunches sets each member's launches per round: in proportion to
// its traced invocations (Entry.Count), at least one, so that a round of
// all of them lasts about sharedRoundNS.
func sharedLaunches(ms []*sharedMember) {
	var perRound float64 // ns of one round at one launch per invocation
	for _, m := range ms {
		perRound += float64(m.entry.Count) * m.perNS()
	}
	for _, m := range ms {
		n := 1.0
		if perRound > 0 {
			n = math.Round(sharedRoundNS * float64(m.entry.Count) / perRound)
		}
		m.launches = int(min(max(n, 1), 100000))
	}
}

// splitShared splits a shared window's reading among its members, in
// order: each gets the part of the window's energy that its replay time
// times its launches times its class's power (power, classPower's; every
// class weighs alike when it is nil) is of the members' sum, so that their energies sum to the
// window's, and its energy per invocation is that part over its launches
// in the window. Its Watts is the power that implies over its replay time.
func splitShared(rd energy.Reading, ms []*sharedMember, power map[signatures.Class]float64) []Energy {
	ids := make([]string, len(ms))
	launches := make([]int, len(ms))
	weights := make([]float64, len(ms))
	var sum float64
	for i, m := range ms {
		ids[i], launches[i] = m.sig.ID, m.launches
		w := cmp.Or(power[m.entry.Class], power[""], 1)
		weights[i] = m.perNS() * float64(m.launches) * w
		sum += weights[i]
	}
	out := make([]Energy, len(ms))
	for i, m := range ms {
		share := 1 / float64(len(ms))
		if sum > 0 {
			share = weights[i] / sum
		}
		e := energyOf(rd, m.launches)
		e.Method = SharedMethod
		e.Shared = &SharedWindow{Members: ids, Launches: launches, Joules: rd.Joules, Watts: rd.Watts, Method: rd.Method.String(), Share: share}
		e.JoulesPerOp, e.Watts = 0, 0
		if e.Ops > 0 {
			e.JoulesPerOp = share * rd.Joules / e.Ops
		}
		if p := m.perNS(); p > 0 {
			e.Watts = e.JoulesPerOp / (p * 1e-9)
		}
		out[i] = e
	}
	return out
}

// classPower is the power of the entries with an energy measured in a
// window of their own, by class: Σ J/op·count over Σ time·count, as
// EstimateEnergy weighs them; a class without one gets the power of all
// of them, which it holds under the class "". Nil when none was measured.
func classPower(entries []Entry) map[signatures.Class]float64 {
	type acc struct{ joules, seconds float64 }
	byClass := map[signatures.Class]*acc{}
	var all acc
	for _, e := range entries {
		r := e.Result
		if r == nil || r.Energy == nil || r.Energy.Shared != nil || r.Energy.Method == EstimatedMethod || r.Energy.Method == InterpolatedMethod || r.ReportedNS() <= 0 || e.Count <= 0 {
			continue
		}
		a := byClass[e.Class]
		if a == nil {
			a = &acc{}
			byClass[e.Class] = a
		}
		j, s := r.Energy.JoulesPerOp*float64(e.Count), r.ReportedNS()*1e-9*float64(e.Count)
		a.joules, a.seconds = a.joules+j, a.seconds+s
		all.joules, all.seconds = all.joules+j, all.seconds+s
	}
	if all.seconds <= 0 {
		return nil
	}
	power := map[signatures.Class]float64{"": all.joules / all.seconds}
	for c, a := range byClass {
		power[c] = a.joules / a.seconds
	}
	return power
}

// sharedLabel is what a progress line says of an energy measured in a
// shared window: "shared window of 4, 31% of 0.8123 J"; "" otherwise.
func (e *Energy) sharedLabel() string {
	if e == nil || e.Shared == nil {
		return ""
	}
	return fmt.Sprintf("shared window of %d, %.0f%% of %.4g J", len(e.Shared.Members), 100*e.Shared.Share, e.Shared.Joules)
}
