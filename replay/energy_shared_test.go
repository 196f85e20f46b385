package replay

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/energy"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// sharedSig is a signature of class c with a traced median of medNS and
// count invocations.
func sharedSig(id string, c signatures.Class, medNS int64, count int) *signatures.Signature {
	return &signatures.Signature{ID: id, Label: "label " + id, Class: c, Count: count, Tier: signatures.TierKernel,
		TracedNS: signatures.Stats{Median: medNS, Total: medNS * int64(count)}}
}

// groupIDs lists sharedGroups' groups by their members' IDs, in the order
// of their first members in todo.
func groupIDs(todo []*signatures.Signature, groups map[string]*sharedGroup) [][]string {
	var out [][]string
	seen := map[*sharedGroup]bool{}
	for _, s := range todo {
		g := groups[s.ID]
		if g == nil || seen[g] {
			continue
		}
		seen[g] = true
		var ids []string
		for _, m := range g.sigs {
			ids = append(ids, m.ID)
		}
		out = append(out, ids)
	}
	return out
}

func TestSharedGroups(t *testing.T) {
	ew, norm, gemm := signatures.ClassElementwise, signatures.ClassNorm, signatures.ClassGEMM
	todo := []*signatures.Signature{
		sharedSig("g1", gemm, 80_000, 10), // too long
		sharedSig("e1", ew, 3_000, 10),
		sharedSig("n1", norm, 4_000, 10),
		sharedSig("e2", ew, 2_000, 10),
		sharedSig("n2", norm, 5_000, 10),
		sharedSig("e3", ew, 19_999, 10),
		sharedSig("e4", ew, 20_000, 10), // at the threshold: its own
		sharedSig("z", ew, 1_000, 0),    // never invoked
	}
	tests := []struct {
		name       string
		o          SuiteOptions
		withEnergy map[string]bool
		want       string
	}{
		{"off", SuiteOptions{Measure: Options{Energy: true}}, nil, "[]"},
		{"one is off", SuiteOptions{SharedEnergy: 1, Measure: Options{Energy: true}}, nil, "[]"},
		{"no energy", SuiteOptions{SharedEnergy: 4}, nil, "[]"},
		{"class first", SuiteOptions{SharedEnergy: 2, Measure: Options{Energy: true}}, nil, "[[e1 e2] [n1 n2] [e3]]"},
		{"then order", SuiteOptions{SharedEnergy: 4, Measure: Options{Energy: true}}, nil, "[[e1 e2 e3 n1] [n2]]"},
		{"all in one", SuiteOptions{SharedEnergy: 10, Measure: Options{Energy: true}}, nil, "[[e1 e2 e3 n1 n2]]"},
		{"energy share", SuiteOptions{SharedEnergy: 4, Measure: Options{Energy: true}}, map[string]bool{"e1": true, "n2": true, "g1": true}, "[[e1 n2]]"},
		{"skipped and reused", SuiteOptions{SharedEnergy: 4, Measure: Options{Energy: true}, Skip: map[string]string{"e1": ""},
			Previous: map[string]Entry{"e2": {Result: &Result{}}, "n1": {Result: &Result{}, Interpolated: "x"}}}, nil, "[[e3 n1 n2]]"},
	}
	for _, tt := range tests {
		got := fmt.Sprint(groupIDs(todo, tt.o.sharedGroups(todo, nil, tt.withEnergy, nil)))
		if got != tt.want {
			t.Errorf("%s: groups %s, want %s", tt.name, got, tt.want)
		}
	}
	// Groups are bounded by MaxSharedEnergy however many are asked.
	var many []*signatures.Signature
	for i := range MaxSharedEnergy + 3 {
		many = append(many, sharedSig(fmt.Sprint("s", i), ew, 1_000, 1))
	}
	gs := groupIDs(many, SuiteOptions{SharedEnergy: 1000, Measure: Options{Energy: true}}.sharedGroups(many, nil, nil, nil))
	if len(gs) != 2 || len(gs[0]) != MaxSharedEnergy || len(gs[1]) != 3 {
		t.Errorf("groups of %d asked 1000: %v", MaxSharedEnergy+3, gs)
	}
}

// member is a shared window's member of class c, count invocations and a
// replay time of perNS, launched launches times a round.
func member(id string, c signatures.Class, count int, perNS float64, launches int) *sharedMember {
	s := sharedSig(id, c, int64(perNS), count)
	return &sharedMember{sig: s, entry: Entry{ID: id, Class: c, Count: count, Result: &Result{KernelMedianNS: perNS}}, launches: launches}
}

func TestSharedLaunches(t *testing.T) {
	ew := signatures.ClassElementwise
	ms := []*sharedMember{member("a", ew, 100, 2_000, 0), member("b", ew, 300, 4_000, 0), member("c", ew, 1, 1_000, 0)}
	sharedLaunches(ms)
	// A round at one launch per invocation is 100·2 + 300·4 + 1·1 = 1401 µs;
	// 5 ms of rounds launch 5000/1401 times as many.
	want := []int{357, 1071, 4}
	var roundNS float64
	for i, m := range ms {
		if m.launches != want[i] {
			t.Errorf("%s: %d launches a round, want %d", m.sig.ID, m.launches, want[i])
		}
		roundNS += float64(m.launches) * m.perNS()
	}
	if math.Abs(roundNS-sharedRoundNS)/sharedRoundNS > 0.01 {
		t.Errorf("a round lasts %.0f ns, want about %.0f", roundNS, sharedRoundNS)
	}
	// However rare, a member launches at least once.
	rare := []*sharedMember{member("a", ew, 1_000_000, 2_000, 0), member("b", ew, 1, 2_000, 0)}
	sharedLaunches(rare)
	if rare[1].launches != 1 || rare[0].launches != 2500 {
		t.Errorf("launches %d and %d, want 2500 and 1", rare[0].launches, rare[1].launches)
	}
}

func TestSplitShared(t *testing.T) {
	ew, norm := signatures.ClassElementwise, signatures.ClassNorm
	rd := energy.Reading{Method: energy.MethodEnergyCounter, Joules: 120, Seconds: 0.6, Watts: 200, Calls: 100, Ticks: 6, TickEnergyShare: 1.0 / 6}
	tests := []struct {
		name   string
		ms     []*sharedMember
		power  map[signatures.Class]float64
		shares []float64
	}{
		// Time x launches: 2·300 = 600 and 4·100 = 400 of 1000.
		{"one class", []*sharedMember{member("a", ew, 3, 2_000, 300), member("b", ew, 1, 4_000, 100)}, nil, []float64{0.6, 0.4}},
		{"class power", []*sharedMember{member("a", ew, 3, 2_000, 300), member("b", norm, 1, 4_000, 100)},
			map[signatures.Class]float64{ew: 100, norm: 300}, []float64{600 * 100 / (600*100 + 400*300.0), 400 * 300 / (600*100 + 400*300.0)}},
		{"a class unmeasured gets all classes' power", []*sharedMember{member("a", ew, 3, 2_000, 300), member("b", norm, 1, 4_000, 100)},
			map[signatures.Class]float64{ew: 100, "": 300}, []float64{600 * 100 / (600*100 + 400*300.0), 400 * 300 / (600*100 + 400*300.0)}},
	}
	for _, tt := range tests {
		es := splitShared(rd, tt.ms, tt.power)
		var sum float64
		for i, e := range es {
			m := tt.ms[i]
			sum += e.JoulesPerOp * e.Ops
			if e.Ops != rd.Calls*float64(m.launches) {
				t.Errorf("%s: %s ops %g, want %g", tt.name, m.sig.ID, e.Ops, rd.Calls*float64(m.launches))
			}
			if math.Abs(e.Shared.Share-tt.shares[i]) > 1e-12 || math.Abs(e.JoulesPerOp*e.Ops-tt.shares[i]*rd.Joules) > 1e-9 {
				t.Errorf("%s: %s share %g (%g J), want %g", tt.name, m.sig.ID, e.Shared.Share, e.JoulesPerOp*e.Ops, tt.shares[i])
			}
			if w := e.JoulesPerOp / (m.perNS() * 1e-9); math.Abs(e.Watts-w) > 1e-9 {
				t.Errorf("%s: %s %g W, want %g", tt.name, m.sig.ID, e.Watts, w)
			}
			if e.Method != SharedMethod || e.Shared.Method != "energy-counter" || e.Shared.Joules != rd.Joules || fmt.Sprint(e.Shared.Members) != "[a b]" || e.Ticks != 6 {
				t.Errorf("%s: %s labelled %+v, %+v", tt.name, m.sig.ID, e, *e.Shared)
			}
		}
		if math.Abs(sum-rd.Joules) > 1e-9 {
			t.Errorf("%s: members' energies sum to %g J, the window's is %g", tt.name, sum, rd.Joules)
		}
	}
}

func TestClassPower(t *testing.T) {
	ew, norm, gemm := signatures.ClassElementwise, signatures.ClassNorm, signatures.ClassGEMM
	en := func(j float64, method string, shared bool) *Energy {
		e := &Energy{JoulesPerOp: j, Method: method}
		if shared {
			e.Shared = &SharedWindow{}
		}
		return e
	}
	entry := func(c signatures.Class, count int, ns float64, e *Energy) Entry {
		return Entry{Class: c, Count: count, Result: &Result{KernelMedianNS: ns, Energy: e}}
	}
	if p := classPower([]Entry{entry(ew, 1, 1000, nil)}); p != nil {
		t.Errorf("no energy: %v, want nil", p)
	}
	p := classPower([]Entry{
		entry(ew, 2, 1000, en(200e-6, "energy-counter", false)),   // 200 W
		entry(ew, 2, 3000, en(600e-6, "energy-counter", false)),   // 200 W
		entry(gemm, 1, 1000, en(400e-6, "energy-counter", false)), // 400 W
		entry(norm, 1, 1000, en(1, SharedMethod, true)),           // not a window of its own
		entry(norm, 1, 1000, en(1, EstimatedMethod, false)),
	})
	// All classes: 2000 µJ over 9 µs.
	want := map[signatures.Class]float64{ew: 200, gemm: 400, "": (2*200e-6 + 2*600e-6 + 400e-6) / ((2*1000 + 2*3000 + 1000) * 1e-9)}
	if len(p) != len(want) {
		t.Fatalf("power %v, want %v", p, want)
	}
	for c, w := range want {
		if math.Abs(p[c]-w) > 1e-9 {
			t.Errorf("class %q: %g W, want %g", c, p[c], w)
		}
	}
}

// sharedFake is a device for shared windows without a GPU: signatures
// replay in perNS (by ID), windows read joules, and it records what ran.
type sharedFake struct {
	perNS     map[string]float64
	fail      map[string]error // timing errors
	windowErr error
	ownErr    error
	joules    float64
	log       []string
}

func (f *sharedFake) funcs() sharedFuncs {
	return sharedFuncs{
		time: func(m *sharedMember, o SuiteOptions) error {
			f.log = append(f.log, "time "+m.sig.ID)
			if o.Measure.Energy {
				return errors.New("timed with energy")
			}
			if err := f.fail[m.sig.ID]; err != nil {
				m.entry.Err = errText(err)
				return err
			}
			m.entry.Result = &Result{KernelMedianNS: f.perNS[m.sig.ID], Stats: Stats{MedianNS: f.perNS[m.sig.ID] + 500}}
			m.entry.Phases = &Phases{MeasureNS: 1}
			m.release = func() { f.log = append(f.log, "release "+m.sig.ID) }
			return nil
		},
		own: func(m *sharedMember, o Options, tm *measureTiming) (*Energy, error) {
			f.log = append(f.log, "own "+m.sig.ID)
			if f.ownErr != nil {
				return nil, f.ownErr
			}
			return &Energy{JoulesPerOp: 1e-3, Method: "energy-counter"}, nil
		},
		window: func(ms []*sharedMember, o Options, tm *measureTiming) (energy.Reading, error) {
			f.log = append(f.log, "window "+memberIDs(ms))
			if o.EnergyWarmup <= 0 {
				return energy.Reading{}, errors.New("options without defaults")
			}
			if f.windowErr != nil {
				return energy.Reading{}, f.windowErr
			}
			return energy.Reading{Method: energy.MethodEnergyCounter, Joules: f.joules, Seconds: 0.6, Watts: f.joules / 0.6, Calls: 50, Ticks: 6}, nil
		},
	}
}

// Signatures chosen for a shared window are timed one by one, kept
// prepared, measured in one window and released after it; a member whose
// replay time turns out long gets a window of its own, as does every
// other signature; entries, Done calls and progress lines come in the
// set's order, the shared ones labelled, and the members' energies sum to
// the window's.
func TestRunSetShared(t *testing.T) {
	ew, norm, gemm := signatures.ClassElementwise, signatures.ClassNorm, signatures.ClassGEMM
	set := &signatures.Set{Signatures: []*signatures.Signature{
		sharedSig("g", gemm, 90_000, 10),
		sharedSig("e1", ew, 3_000, 40),
		sharedSig("n1", norm, 4_000, 20),
		sharedSig("e2", ew, 2_000, 20),
		sharedSig("e3", ew, 5_000, 10),
		sharedSig("n2", norm, 3_000, 10),
	}}
	per := map[string]float64{"g": 88_000, "e1": 3_000, "n1": 4_000, "e2": 2_000, "e3": 30_000, "n2": 3_000}
	var measured, done []string
	measure := func(s *signatures.Signature, o SuiteOptions, e *Entry) error {
		measured = append(measured, s.ID)
		e.Result = &Result{KernelMedianNS: per[s.ID]}
		if o.Measure.Energy {
			e.Result.Energy = &Energy{JoulesPerOp: 1e-3, Method: "energy-counter"}
		}
		return nil
	}
	tests := []struct {
		name      string
		fake      sharedFake
		slow      string // a member that replays long
		log       string
		shared    string // IDs measured in the shared window
		lost      bool
		fallbacks string // progress of a failed window
	}{
		{name: "shared", fake: sharedFake{joules: 30},
			log:    "[time e1 time e2 time e3 window e1,e2 own e3 release e1 release e2 release e3 time n1 time n2 window n1,n2 release n1 release n2]",
			shared: "[e1 e2 n1 n2]"},
		{name: "one short member left: no window shared", fake: sharedFake{joules: 30}, slow: "e2",
			log:    "[time e1 time e2 time e3 own e1 own e2 own e3 release e1 release e2 release e3 time n1 time n2 window n1,n2 release n1 release n2]",
			shared: "[n1 n2]"},
		{name: "window fails", fake: sharedFake{joules: 30, windowErr: errors.New("no meter")},
			log:       "[time e1 time e2 time e3 window e1,e2 own e3 own e1 own e2 release e1 release e2 release e3 time n1 time n2 window n1,n2 own n1 own n2 release n1 release n2]",
			shared:    "[]",
			fallbacks: "energy: the shared window of e1,e2 failed (no meter); measuring each in a window of its own"},
		{name: "a member faults", fake: sharedFake{joules: 30, fail: map[string]error{"e2": &cuda.Error{Call: "cuLaunchKernel", Code: cuda.CodeLaunchFailed, Name: "CUDA_ERROR_LAUNCH_FAILED"}}},
			log:    "[time e1 time e2 release e1]",
			shared: "[]", lost: true},
	}
	for _, tt := range tests {
		measured, done = nil, nil
		var progress strings.Builder
		o := SuiteOptions{SharedEnergy: 3, Measure: Options{Energy: true}, Progress: &progress, Done: func(e Entry) { done = append(done, e.ID) }}
		d := &Device{}
		tt.fake.perNS = maps.Clone(per)
		if tt.slow != "" {
			tt.fake.perNS[tt.slow] = SharedEnergyMaxNS
		}
		entries := d.runSetShared(set, o, measure, tt.fake.funcs())
		if got := fmt.Sprint(tt.fake.log); got != tt.log {
			t.Errorf("%s: ran %s, want %s", tt.name, got, tt.log)
		}
		if fmt.Sprint(done) != "[g e1 n1 e2 e3 n2]" || len(entries) != 6 {
			t.Errorf("%s: done %v, %d entries", tt.name, done, len(entries))
		}
		if (d.Lost() != nil) != tt.lost {
			t.Errorf("%s: lost %v", tt.name, d.Lost())
		}
		if tt.lost {
			// e1, timed before e2 faulted, gets the lost context as its
			// energy's error; e3, after it, is not measured.
			if e1 := entries[1]; e1.Result == nil || !strings.HasPrefix(e1.Result.EnergyErr, "not measured: the CUDA context was lost when signature e2") {
				t.Errorf("%s: e1 %+v", tt.name, e1.Result)
			}
			if e3 := entries[4]; e3.Result != nil || !strings.Contains(e3.Err, "not measured") {
				t.Errorf("%s: e3 %+v, %q", tt.name, e3.Result, e3.Err)
			}
			continue
		}
		if fmt.Sprint(measured) != "[g]" {
			t.Errorf("%s: measured alone %v, want [g]", tt.name, measured)
		}
		var shared []string
		sums := map[string]float64{}
		var lines []string
		for _, l := range strings.Split(progress.String(), "\n") {
			if strings.HasPrefix(l, "[") {
				lines = append(lines, l)
			}
		}
		for i, e := range entries {
			en := e.Result.Energy
			if en == nil {
				t.Errorf("%s: %s has no energy (%s)", tt.name, e.ID, e.Result.EnergyErr)
				continue
			}
			if en.Shared == nil {
				if en.Method != "energy-counter" || strings.Contains(lines[i], "shared window") {
					t.Errorf("%s: %s: method %q, line %q", tt.name, e.ID, en.Method, lines[i])
				}
				continue
			}
			shared = append(shared, e.ID)
			sums[memberIDsOf(en.Shared)] += en.JoulesPerOp * en.Ops
			if en.Method != SharedMethod || !strings.Contains(lines[i], fmt.Sprintf("shared window of %d", len(en.Shared.Members))) {
				t.Errorf("%s: %s: method %q, line %q", tt.name, e.ID, en.Method, lines[i])
			}
			if e.Result.EnergyHostNS <= 0 && en.Shared.Members[0] == e.ID {
				t.Errorf("%s: %s: the window's host time is charged to no one", tt.name, e.ID)
			}
		}
		slices.Sort(shared)
		if fmt.Sprint(shared) != tt.shared {
			t.Errorf("%s: shared %v, want %s", tt.name, shared, tt.shared)
		}
		for g, j := range sums {
			if math.Abs(j-tt.fake.joules) > 1e-9 {
				t.Errorf("%s: window %s split into %g J, measured %g", tt.name, g, j, tt.fake.joules)
			}
		}
		if !strings.Contains(progress.String(), tt.fallbacks) {
			t.Errorf("%s: progress lacks %q:\n%s", tt.name, tt.fallbacks, progress.String())
		}
	}
}

func memberIDsOf(w *SharedWindow) string { return strings.Join(w.Members, ",") }
