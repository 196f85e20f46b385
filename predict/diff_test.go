package predict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// Two SYNTHETIC outputs of the real prefill set, as from two drivers: in
// the new one every GEMM is 20% slower in all six runs, everything else
// has the same values.
func TestDiffSignificance(t *testing.T) {
	set := prefillSet(t)
	old := synth{runs: 6, jitter: jitter6}
	cur := old
	cur.factor = func(s *signatures.Signature) float64 {
		if s.Class == signatures.ClassGEMM {
			return 1.2
		}
		return 1
	}
	c, err := Diff([]Input{input("old", old.output(set))}, []Input{input("new", cur.output(set))}, []*signatures.Set{set}, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Workloads) != 1 || c.Alpha != 0.05 {
		t.Fatalf("%d workloads, alpha %g", len(c.Workloads), c.Alpha)
	}
	wd := c.Workloads[0]
	gemms := 0
	for _, d := range wd.Sigs {
		s := set.ByID(d.ID)
		if d.Label != s.Label || d.Count != s.Count {
			t.Errorf("%s: label %q count %d", d.ID, d.Label, d.Count)
		}
		if s.Class == signatures.ClassGEMM {
			gemms++
			// Six runs each, all new ones above all old ones: the
			// Mann-Whitney U test gives p = 0.002165 (benchstat prints p=0.002).
			if !d.Significant || !near(d.P, 0.002165, 0.01) || d.Delta != "+20.00%" || !near(d.Change, 0.2, 1e-7) {
				t.Errorf("GEMM %s: %+v, want +20.00%% at p=0.002", d.ID, d)
			}
			continue
		}
		if d.Significant || d.Delta != "~" || d.P != 1 || d.Change != 0 {
			t.Errorf("%s: %+v, want no change", d.ID, d)
		}
	}
	if gemms == 0 || wd.Slower != gemms || wd.Faster != 0 {
		t.Errorf("slower %d faster %d, want %d GEMMs slower", wd.Slower, wd.Faster, gemms)
	}
	// Sorted by the change of predicted time: the GEMMs first.
	for i, d := range wd.Sigs[:gemms] {
		if !d.Significant {
			t.Errorf("signature %d (%s) is not a GEMM", i, d.ID)
		}
	}
	// The total: the GEMMs' share of the predicted time grows by 20%.
	var oldT, newT float64
	for _, s := range set.Signatures {
		if s.PartOf != "" {
			continue
		}
		v := perCall(set, s) * 1.005 * float64(s.Count) // 1.005: the median of the jitter
		oldT += v
		if s.Class == signatures.ClassGEMM {
			v *= 1.2
		}
		newT += v
	}
	tot := wd.Total
	if tot == nil || !near(tot.Old.Center, oldT, 1e-7) || !near(tot.New.Center, newT, 1e-7) || !near(tot.Change, newT/oldT-1, 1e-7) {
		t.Fatalf("total %+v, want %.0f -> %.0f", tot, oldT, newT)
	}
	if !tot.Significant || tot.Runs != [2]int{6, 6} || tot.Signatures != len(wd.Sigs) {
		t.Errorf("total %+v: want a significant change over 6 runs each", tot)
	}
	want := math.Pow(1.2, float64(gemms)/float64(len(wd.Sigs)))
	if !near(wd.Geomean, want, 1e-7) {
		t.Errorf("geomean %g, want %g", wd.Geomean, want)
	}

	var text bytes.Buffer
	if err := c.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"workload bloom-560m_prefill", "+20.00%", "predicted GPU time over", "without a significant change"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if _, err := json.Marshal(c); err != nil {
		t.Fatal(err)
	}
}

// One run on each side is never significant, whatever the change.
func TestDiffOneRun(t *testing.T) {
	set := prefillSet(t)
	old := synth{runs: 1}
	cur := synth{runs: 1, factor: func(*signatures.Signature) float64 { return 2 }}
	c, err := Diff([]Input{input("old", old.output(set))}, []Input{input("new", cur.output(set))}, []*signatures.Set{set}, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wd := c.Workloads[0]
	for _, d := range wd.Sigs {
		if d.Significant || d.Delta != "~" || !near(d.Change, 1, 1e-7) || len(d.Warnings) == 0 {
			t.Errorf("%s: %+v, want a doubling that is not significant, with a warning", d.ID, d)
		}
	}
	if wd.Total.Significant || !near(wd.Total.Change, 1, 1e-7) || !wd.Total.Never {
		t.Errorf("total %+v", wd.Total)
	}
	for _, d := range wd.Sigs {
		if !d.Never {
			t.Errorf("%s: one run a side, not flagged as never significant", d.ID)
		}
	}
	var buf strings.Builder
	if err := c.WriteText(&buf, false); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d signatures can never be significant at p < 0.05", len(wd.Sigs)); !strings.Contains(buf.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, buf.String())
	}
}

// MinP is the Mann-Whitney U test's smallest two-sided p-value.
func TestMinP(t *testing.T) {
	for _, tc := range []struct {
		n1, n2 int
		want   float64
	}{
		{0, 5, 1}, {1, 1, 1}, {2, 2, 1.0 / 3}, {3, 3, 0.1}, {4, 4, 2.0 / 70}, {6, 6, 2.0 / 924}, {1, 20, 2.0 / 21},
	} {
		if got := MinP(tc.n1, tc.n2); !near(got, tc.want, 1e-12) {
			t.Errorf("MinP(%d, %d) = %v, want %v", tc.n1, tc.n2, got, tc.want)
		}
	}
}

// Signatures in one output only, a stricter alpha, and no set.
func TestDiffOnlyOneSideAlphaNoSet(t *testing.T) {
	set := prefillSet(t)
	var first, last string
	for _, s := range set.Signatures {
		if s.PartOf == "" {
			if first == "" {
				first = s.ID
			}
			last = s.ID
		}
	}
	old := synth{runs: 6, jitter: jitter6, skip: func(s *signatures.Signature) bool { return s.ID == first }}
	cur := synth{runs: 6, jitter: jitter6, skip: func(s *signatures.Signature) bool { return s.ID == last },
		factor: func(*signatures.Signature) float64 { return 1.5 }}
	c, err := Diff([]Input{input("old", old.output(set))}, []Input{input("new", cur.output(set))}, nil, DiffOptions{Alpha: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	wd := c.Workloads[0]
	if len(wd.OnlyOld) != 1 || wd.OnlyOld[0] != last || len(wd.OnlyNew) != 1 || wd.OnlyNew[0] != first {
		t.Errorf("only old %v only new %v, want [%s] and [%s]", wd.OnlyOld, wd.OnlyNew, last, first)
	}
	if wd.Total != nil {
		t.Errorf("total without a set: %+v", wd.Total)
	}
	for _, d := range wd.Sigs {
		// p = 0.002 is not below alpha = 0.001.
		if d.Significant || d.Count != 0 || d.Label != "" {
			t.Errorf("%s: %+v", d.ID, d)
		}
	}
	var text bytes.Buffer
	if err := c.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "only in the old output: "+last) || !strings.Contains(text.String(), "no predicted total") {
		t.Errorf("text:\n%s", text.String())
	}
	// A workload in one output only is a warning.
	c, err = Diff([]Input{input("old", old.output(set))}, []Input{input("new", old.output(generateSet(t)))}, nil, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Workloads) != 0 || len(c.Warnings) != 2 {
		t.Errorf("workloads %d warnings %v", len(c.Workloads), c.Warnings)
	}
}
