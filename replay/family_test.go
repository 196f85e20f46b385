package replay

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// members are family members of sizes ns.
func members(ns ...int64) []signatures.FamilyMember {
	var ms []signatures.FamilyMember
	for i, n := range ns {
		ms = append(ms, signatures.FamilyMember{ID: fmt.Sprint("m", i), N: n})
	}
	return ms
}

// sizesFrom is lo, lo+1, ..., hi.
func sizesFrom(lo, hi int64) []int64 {
	var ns []int64
	for n := lo; n <= hi; n++ {
		ns = append(ns, n)
	}
	return ns
}

func TestPlanFamily(t *testing.T) {
	tests := []struct {
		name      string
		ns        []int64
		fit, held string // "" when the family is measured whole
	}{
		{"seven: nothing to spare", sizesFrom(1, 7), "", ""},
		{"eight", sizesFrom(1, 8), "[0 2 4 5 7]", "[1 3]"},
		{"fifteen", sizesFrom(32, 46), "[0 4 7 11 14]", "[2 9]"},
		{"sixteen", sizesFrom(32, 47), "[0 4 8 11 15]", "[2 6]"},
		// The gap between fit members 2 (n 30) and 4 (n 100) is the widest:
		// its middle member is held out first.
		{"uneven", []int64{1, 2, 3, 4, 30, 31, 100, 101, 102}, "[0 2 4 6 8]", "[5 3]"},
	}
	for _, tt := range tests {
		p, ok := planFamily(members(tt.ns...))
		if !ok {
			if tt.fit != "" {
				t.Errorf("%s: no plan, want fit %s held %s", tt.name, tt.fit, tt.held)
			}
			continue
		}
		if fmt.Sprint(p.fit) != tt.fit || fmt.Sprint(p.held) != tt.held {
			t.Errorf("%s: fit %v held %v, want %s %s", tt.name, p.fit, p.held, tt.fit, tt.held)
		}
		for _, h := range p.held {
			if slices.Contains(p.fit, h) {
				t.Errorf("%s: held-out member %d is in the fit", tt.name, h)
			}
		}
	}
}

// linear is a result of time a+b*n ns with a relative spread rel, and
// energy j*n J.
func linear(n int64, a, b, rel, j float64) *Result {
	ns := a + b*float64(n)
	r := &Result{Stats: Stats{MedianNS: ns + 100, LoNS: ns + 90, HiNS: ns + 110, RelCI: rel}, KernelMedianNS: ns,
		KernelLoNS: ns * (1 - rel), KernelHiNS: ns * (1 + rel), Path: "tier3", Converged: true}
	if j > 0 {
		r.Energy = &Energy{JoulesPerOp: j * float64(n), Method: "energy-counter", TickShare: 0.001}
	}
	return r
}

func TestCheckHeldOut(t *testing.T) {
	pts := []fitPoint{{10, linear(10, 1000, 10, 0.01, 1e-9)}, {20, linear(20, 1000, 10, 0.01, 1e-9)}, {30, linear(30, 1000, 10, 0.01, 1e-9)}}
	tests := []struct {
		name string
		r    *Result
		err  string // a part of the error, "" for none
	}{
		{"on the line", linear(15, 1000, 10, 0.01, 1e-9), ""},
		{"2.9% off", linear(15, 1000*1.03, 10*1.03, 0.01, 1e-9), ""},
		{"3.5% off", linear(15, 1000*1.035, 10*1.035, 0.01, 1e-9), "beyond ±3.0%"},
		{"3.5% off, spread 5%", linear(15, 1000*1.035, 10*1.035, 0.05, 1e-9), ""},
		{"spread unbounded", linear(15, 1000, 10, math.Inf(1), 1e-9), "no time with a bounded spread"},
		{"energy 10% off", linear(15, 1000, 10, 0.01, 1.1e-9), "J (-9.1%, beyond ±3.0%)"},
		{"energy not measured", linear(15, 1000, 10, 0.01, 0), ""},
	}
	for _, tt := range tests {
		_, err := checkHeldOut(pts, 15, tt.r)
		if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
		}
	}
}

func TestInterpolate(t *testing.T) {
	pts := []fitPoint{{10, linear(10, 1000, 10, 0.01, 1e-9)}, {20, linear(20, 1000, 20, 0.02, 1e-9)}}
	s := &signatures.Signature{ID: "x", Label: "cat x"}
	r := interpolate(pts, s, 15, "from two")
	// Between 1100 ns at n=10 and 1400 ns at n=20.
	if r.ID != "x" || r.ReportedNS() != 1250 || r.MedianNS != 1350 || r.RelCI != 0.02 || r.Path != "tier3" {
		t.Errorf("result %+v", r)
	}
	if e := r.Energy; e == nil || math.Abs(e.JoulesPerOp-15e-9) > 1e-18 || e.Method != InterpolatedMethod || e.Estimated != "from two" ||
		math.Abs(e.Watts-15e-9/1250e-9) > 1e-9 {
		t.Errorf("energy %+v", e)
	}
	pts[1].r.Energy = nil
	if r := interpolate(pts, s, 15, ""); r.Energy != nil || r.EnergyErr == "" {
		t.Errorf("energy with a fit member's missing: %+v, %q", r.Energy, r.EnergyErr)
	}
}

// familySet is a set of n cats of a KV cache [1,16,n,64] for n = 32..,
// and one other signature, "z", first.
func familySet(k int) *signatures.Set {
	set := &signatures.Set{Signatures: []*signatures.Signature{{ID: "z", Label: "z", Tier: signatures.TierKernel, Count: 1,
		TracedNS: signatures.Stats{Total: 1e9, Median: 1e6}}}}
	for i := range k {
		n := int64(32 + i)
		set.Signatures = append(set.Signatures, &signatures.Signature{
			ID: fmt.Sprint("c", n), Label: fmt.Sprint("cat n=", n), Tier: signatures.TierKernel, Class: signatures.ClassCat,
			Activity: signatures.ActivityKernel, Count: 24, Kernel: "cat", Op: "aten::cat",
			Inputs: []signatures.Input{{Type: "TensorList", List: []signatures.Tensor{
				{Shape: []int64{1, 16, n, 64}, Strides: []int64{1024 * n, 64 * n, 64, 1}},
				{Shape: []int64{1, 16, 1, 64}, Strides: []int64{1024, 64, 64, 1}},
			}}},
			Launch:   &signatures.Launch{Grid: [3]int64{n, 1, 1}, Block: [3]int64{512, 1, 1}},
			TracedNS: signatures.Stats{Total: 24 * 2000, Median: 2000},
		})
	}
	return set
}

// familyMeasure measures a cat of size n as time(n) with energy 1e-9*n J
// (and "z" as 1 ms), recording what it measured and whether with energy.
func familyMeasure(time func(n int64) float64, fail string, ran *[]string) measureFunc {
	return func(s *signatures.Signature, o SuiteOptions, e *Entry) error {
		*ran = append(*ran, fmt.Sprintf("%s%s", s.ID, map[bool]string{true: "+j"}[o.Measure.Energy]))
		if s.ID == fail {
			e.Err = "measure: failed"
			return fmt.Errorf("failed")
		}
		if s.ID == "z" {
			e.Result = linear(0, 1e6, 0, 0.01, 0)
			return nil
		}
		n := s.Inputs[0].List[0].Shape[2]
		e.Result = linear(n, time(n), 0, 0.01, 1e-9)
		same := true
		e.SameKernel = &same
		return nil
	}
}

// cats names the cats of sizes lo..hi but those in but, with mark.
func cats(lo, hi int, mark string, but ...int) []string {
	var ids []string
	for n := lo; n <= hi; n++ {
		if !slices.Contains(but, n) {
			ids = append(ids, fmt.Sprint("c", n, mark))
		}
	}
	return ids
}

func TestRunSetFamilies(t *testing.T) {
	straight := func(n int64) float64 { return 1000 + 10*float64(n) }
	step := func(n int64) float64 { // a step at n=37, as at a tile boundary
		if n >= 37 {
			return 1500
		}
		return 1000
	}
	// The plan of 32..47: fit 32 36 40 43 47, held out 34 38.
	planned := []string{"c32+j", "c36+j", "c40+j", "c43+j", "c47+j", "c34+j", "c38+j"}
	plannedAt := []int{32, 36, 40, 43, 47, 34, 38}
	tests := []struct {
		name   string
		k      int
		o      SuiteOptions
		time   func(int64) float64
		fail   string
		ran    []string // what was measured, in order, after "z" ("+j": with energy)
		interp int
		line   string // a part of the family's progress line
	}{
		{"off", 16, SuiteOptions{}, straight, "", cats(32, 47, ""), 0, ""},
		{"linear", 16, SuiteOptions{Families: true}, straight, "", planned, 9,
			"7 members measured, 2 of them held out within tolerance (+0.0%, +0.0%); 9 interpolated"},
		{"a step", 16, SuiteOptions{Families: true}, step, "", append(slices.Clone(planned), cats(32, 47, "", plannedAt...)...), 0,
			"beyond ±3.0%): every member measured"},
		{"a planned member fails", 16, SuiteOptions{Families: true}, straight, "c40", append(slices.Clone(planned), cats(32, 47, "", plannedAt...)...), 0,
			"a planned member has no result: every member measured"},
		{"too small", 7, SuiteOptions{Families: true}, straight, "", cats(32, 38, ""), 0, ""},
		{"skipped members leave too few", 9, SuiteOptions{Families: true, Skip: map[string]string{"c33": "", "c34": ""}}, straight, "",
			cats(32, 40, "", 33, 34), 0, ""},
		{"previous interpolated entries measured anew", 16, SuiteOptions{Families: true, Previous: map[string]Entry{
			"c33": {ID: "c33", Result: &Result{}, Interpolated: "from before"},
			"c32": {ID: "c32", Result: linear(32, straight(32), 0, 0.01, 1e-9)}}}, straight, "",
			planned[1:], 9, "9 interpolated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran, done []string
			var progress strings.Builder
			tt.o.Done = func(e Entry) { done = append(done, e.ID) }
			tt.o.Progress = &progress
			tt.o.Measure.Energy = true
			tt.o.EnergyShare = 0.5 // "z" has more than half the traced time: only it gets energy, besides the planned members
			set := familySet(tt.k)
			entries := (&Device{}).runSet(set, tt.o, familyMeasure(tt.time, tt.fail, &ran))
			checkFamilyRun(t, set, entries, done, progress.String())
			if want := append([]string{"z+j"}, tt.ran...); fmt.Sprint(ran) != fmt.Sprint(want) {
				t.Errorf("measured %v, want %v", ran, want)
			}
			interp := 0
			for _, e := range entries {
				if e.Interpolated != "" {
					interp++
					checkInterpolated(t, e, tt.time)
				}
			}
			if interp != tt.interp {
				t.Errorf("%d interpolated, want %d", interp, tt.interp)
			}
			if !strings.Contains(progress.String(), tt.line) || (tt.line == "") == strings.Contains(progress.String(), "family ") {
				t.Errorf("progress lacks %q:\n%s", tt.line, progress.String())
			}
		})
	}
}

// checkFamilyRun checks what every suite owes: one entry per signature
// in the set's order, each with its Done call and progress line.
func checkFamilyRun(t *testing.T, set *signatures.Set, entries []Entry, done []string, progress string) {
	t.Helper()
	var ids []string
	for _, s := range set.Signatures {
		ids = append(ids, s.ID)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.ID)
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) || fmt.Sprint(done) != fmt.Sprint(ids) {
		t.Errorf("entries %v, Done %v; want %v", got, done, ids)
	}
	lines := strings.Count(progress, "\n") - strings.Count(progress, "family ") - strings.Count(progress, "energy: ")
	if lines != len(ids) {
		t.Errorf("%d progress lines for %d signatures:\n%s", lines, len(ids), progress)
	}
}

// checkInterpolated checks an interpolated entry against the true time.
func checkInterpolated(t *testing.T, e Entry, time func(int64) float64) {
	t.Helper()
	var n int64
	fmt.Sscanf(e.ID, "c%d", &n)
	if e.SameKernel != nil || e.Err != "" || e.TracedMedianNS != 2000 || e.Result == nil ||
		math.Abs(e.ReplayNS()-time(n)) > 1e-6 || !strings.HasPrefix(e.Interpolated, "interpolated from 5 measured members of n 32..47") {
		t.Errorf("interpolated entry %+v", e)
		return
	}
	if en := e.Result.Energy; en == nil || en.Method != InterpolatedMethod || math.Abs(en.JoulesPerOp-1e-9*float64(n)) > 1e-18 {
		t.Errorf("interpolated entry %s: energy %+v", e.ID, en)
	}
	if !strings.Contains(e.line(), " INTERPOLATED") {
		t.Errorf("progress line %q", e.line())
	}
}
