package replay

import (
	"math"
	"testing"
	"time"

	"github.com/kreplay/kreplay/signatures"
)

// A shared window measures the short signatures of a decode together: its
// energy is split among them whole, each member labelled with its window,
// and their energy per step is near what windows of their own give on the
// same signatures (the A/B that SuiteOptions.SharedEnergy must pass before
// it is on by default; the ratios are logged).
func TestGPUSharedEnergy(t *testing.T) {
	d := openMeteredGPU(t)
	set := embedded(t, "h100_bloom-560m_generate.trace.json.gz")
	sub := shortSignatures(set, 8)
	if len(sub.Signatures) < 4 {
		t.Fatalf("%d short signatures in the decode, want 4 or more", len(sub.Signatures))
	}
	o := SuiteOptions{Measure: quick}
	o.Measure.Energy, o.Measure.EnergyTicks, o.Measure.EnergyWarmup = true, 5, 100*time.Millisecond
	alone := d.RunSet(sub, o)
	o.SharedEnergy = 4
	shared := d.RunSet(sub, o)

	var jAlone, jShared float64
	windows := map[string]float64{} // split joules, by the window's first member
	for i, e := range shared {
		a := alone[i]
		if e.Result == nil || a.Result == nil || e.Result.Energy == nil || a.Result.Energy == nil {
			t.Fatalf("%s: no energy: shared %q %+v, alone %q %+v", e.ID, e.Err, e.Result, a.Err, a.Result)
		}
		es, ea := e.Result.Energy, a.Result.Energy
		t.Logf("%s %s x%d: %.2f µs, shared %.3g J (%.0f W, %s) alone %.3g J (%.0f W): x%.2f",
			e.ID, e.Label, e.Count, e.ReplayNS()/1e3, es.JoulesPerOp, es.Watts, es.Method, ea.JoulesPerOp, ea.Watts, es.JoulesPerOp/ea.JoulesPerOp)
		jAlone += ea.JoulesPerOp * float64(e.Count)
		jShared += es.JoulesPerOp * float64(e.Count)
		if es.Shared == nil {
			if e.ReplayNS() < SharedEnergyMaxNS {
				t.Logf("%s: measured alone (%s)", e.ID, es.Method)
			}
			continue
		}
		if es.Method != SharedMethod || es.Ops <= 0 || es.Watts <= 0 || es.Ticks < 5 {
			t.Errorf("%s: shared energy %+v", e.ID, es)
		}
		windows[es.Shared.Members[0]] += es.JoulesPerOp * es.Ops / es.Shared.Joules
	}
	if len(windows) == 0 {
		t.Fatal("no shared window ran")
	}
	for id, share := range windows {
		if math.Abs(share-1) > 1e-9 {
			t.Errorf("window of %s: its members hold %.6f of its energy", id, share)
		}
	}
	t.Logf("energy of one step of these signatures: shared %.4g J, alone %.4g J (x%.3f)", jShared, jAlone, jShared/jAlone)
	if r := jShared / jAlone; r < 0.75 || r > 1.33 {
		t.Errorf("shared windows give %.4g J a step, windows of their own %.4g (x%.2f)", jShared, jAlone, r)
	}
}

// shortSignatures is a set of set's first n signatures whose traced median
// is under SharedEnergyMaxNS, leaving out parts and those with parts.
func shortSignatures(set *signatures.Set, n int) *signatures.Set {
	hasParts := map[string]bool{}
	for _, s := range set.Signatures {
		if s.PartOf != "" {
			hasParts[s.PartOf] = true
		}
	}
	sub := *set
	sub.Signatures = nil
	for _, s := range set.Signatures {
		if len(sub.Signatures) < n && s.PartOf == "" && !hasParts[s.ID] && s.Count > 0 && s.TracedNS.Median > 0 && s.TracedNS.Median < SharedEnergyMaxNS {
			sub.Signatures = append(sub.Signatures, s)
		}
	}
	return &sub
}
