package predict

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/traces/tracetest"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

// With every signature replayed at exactly its traced median, compute is
// the traced compute and communication the traced collective time, so the
// prediction misses busy-minus-wait by exactly the waiting it does not
// model; with collectives replayed at their transfer time it matches.
func TestPredictRanksTP(t *testing.T) {
	var sets []*signatures.Set
	for _, n := range []string{"2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz", "2xh200_llama-7b-tp2_prefill.rank1.trace.json.gz"} {
		sets = append(sets, embedded(t, n))
	}
	_, comm, err := signatures.PairCollectives(sets)
	if err != nil {
		t.Fatal(err)
	}
	var lists [][]replay.Entry
	for i, set := range sets {
		var es []replay.Entry
		// Parts' time is inside their parent's replay: it is added there.
		for _, s := range set.Signatures {
			e := replay.Entry{ID: s.ID, Class: s.Class, Count: s.Count, TracedTotalNS: s.TracedNS.Total, PartOf: s.PartOf}
			per := float64(s.TracedNS.Total) / float64(s.Count) // the traced mean
			if s.Class == signatures.ClassCollective {
				per = float64(comm[i].TransferNS) / float64(comm[i].Collectives)
			}
			if s.PartOf == "" {
				// 500 W while busy; a collective's energy per GPU.
				e.Result = &replay.Result{Stats: replay.Stats{MedianNS: per}, Energy: &replay.Energy{JoulesPerOp: 500 * per * 1e-9}}
				if s.Class == signatures.ClassCollective {
					e.Result.RankEnergy = []replay.Energy{{JoulesPerOp: 1e-3}, {JoulesPerOp: 2e-3}}
				}
			}
			es = append(es, e)
		}
		for _, s := range set.Signatures {
			if s.PartOf == "" {
				continue
			}
			for k := range es {
				if es[k].ID == s.PartOf {
					es[k].Result.MedianNS += float64(s.TracedNS.Total) / float64(es[k].Count)
				}
			}
		}
		lists = append(lists, es)
	}
	ps, err := PredictRanks(sets, lists)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		// Busy time is the union of intervals; with one stream it is the
		// sum of durations up to rounding, so the error is tiny.
		if math.Abs(p.Error) > 0.01 || p.Missing != 0 {
			t.Errorf("rank %d: %+v", p.Rank, p)
		}
	}
	m, err := workload.ReadMeasured("../workload/testdata/measured.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := range ps {
		p := &ps[i]
		if p.NoEnergy != 0 || p.BusyJ <= 0 {
			t.Errorf("rank %d: busy energy %.3f J, %d without", p.Rank, p.BusyJ, p.NoEnergy)
		}
		run, err := m.Lookup(sets[i].Source.Workload, sets[i].Source.Rank, sets[i].Source.WorldSize)
		if err != nil {
			t.Fatal(err)
		}
		p.Compare(run, 100)
		if p.WallNS < 0.12e9 || p.IdleJ <= 0 || math.Abs(p.EnergyJ-p.BusyJ-p.IdleJ) > 1e-9 || p.MeasuredJ < 40 {
			t.Errorf("rank %d: %+v", p.Rank, p)
		}
	}
	var b bytes.Buffer
	if err := WriteRanks(&b, ps); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"busy-wait_ms", "predicted_J", "measured_J", "whole set, 2 ranks: predicted busy", "measured wall 122.277 ms", "energy of the 2 GPUs predicted"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table has no %q:\n%s", want, b.String())
		}
	}
	t.Logf("\n%s", b.String())
	if _, err := PredictRanks(sets[:1], lists[:1]); err == nil {
		t.Error("one rank: no error")
	}
}

// A rank's energy: busy energy from the replays (a collective's per GPU),
// idle power over the rest of the measured wall time.
func TestRankEnergy(t *testing.T) {
	coll := &replay.Result{Energy: &replay.Energy{JoulesPerOp: 3, GPUs: 2}, RankEnergy: []replay.Energy{{JoulesPerOp: 1}, {JoulesPerOp: 2}}}
	sum := &replay.Result{Energy: &replay.Energy{JoulesPerOp: 3, GPUs: 2}}
	one := &replay.Result{Energy: &replay.Energy{JoulesPerOp: 0.5}}
	tests := []struct {
		name string
		r    *replay.Result
		rank int
		want float64
		ok   bool
	}{
		{"collective rank 0", coll, 0, 1, true},
		{"collective rank 1", coll, 1, 2, true},
		{"collective sum only", sum, 1, 1.5, true},
		{"single GPU", one, 1, 0.5, true},
		{"no energy", &replay.Result{}, 0, 0, false},
	}
	for _, tt := range tests {
		if got, ok := rankJoules(tt.r, tt.rank); got != tt.want || ok != tt.ok {
			t.Errorf("%s: rankJoules = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}

	compare := []struct {
		name                         string
		p                            RankPrediction
		run                          workload.MeasuredRun
		idleW                        float64
		wantIdleJ, wantJ, wantErrRel float64
	}{
		// 40 ms busy at 10 J, 100 ms wall: 60 ms idle at 100 W.
		{"idle", RankPrediction{ComputeNS: 30e6, CommNS: 10e6, BusyJ: 10}, workload.MeasuredRun{WallS: 0.1, EnergyJ: 20}, 100, 6, 16, -0.2},
		// Predicted longer than the wall: no idle time.
		{"over wall", RankPrediction{ComputeNS: 150e6, BusyJ: 10}, workload.MeasuredRun{WallS: 0.1, EnergyJ: 10}, 100, 0, 10, 0},
		{"no measured energy", RankPrediction{ComputeNS: 50e6, BusyJ: 10}, workload.MeasuredRun{WallS: 0.1}, 80, 4, 14, 0},
		// No replayed energy: nothing to compare.
		{"no replayed energy", RankPrediction{ComputeNS: 50e6}, workload.MeasuredRun{WallS: 0.1, EnergyJ: 20}, 80, 4, 4, 0},
	}
	for _, tt := range compare {
		p := tt.p
		p.Compare(tt.run, tt.idleW)
		if math.Abs(p.IdleJ-tt.wantIdleJ) > 1e-9 || math.Abs(p.EnergyJ-tt.wantJ) > 1e-9 || math.Abs(p.EnergyError-tt.wantErrRel) > 1e-9 {
			t.Errorf("%s: idle %.3f J, energy %.3f J, error %.3f; want %.3f, %.3f, %.3f", tt.name, p.IdleJ, p.EnergyJ, p.EnergyError, tt.wantIdleJ, tt.wantJ, tt.wantErrRel)
		}
	}
	w := Whole([]RankPrediction{
		{ComputeNS: 30e6, CommNS: 10e6, TracedBusyNS: 50e6, WaitNS: 8e6, WallNS: 100e6, BusyJ: 10, EnergyJ: 16, MeasuredJ: 20},
		{ComputeNS: 35e6, CommNS: 10e6, TracedBusyNS: 46e6, WaitNS: 2e6, WallNS: 101e6, BusyJ: 12, EnergyJ: 18, MeasuredJ: 20},
	})
	if !w.Compared || w.Ranks != 2 || w.WallNS != 101e6 || w.EnergyJ != 34 || w.MeasuredJ != 40 || math.Abs(w.EnergyError+0.15) > 1e-9 ||
		w.BusyNS[1] != 45e6 || w.BusyWaitNS[0] != 42e6 || w.TracedBusyNS[1] != 46e6 {
		t.Errorf("Whole = %+v", w)
	}
}

// Without replayed energies the whole set does not compare energy.
func TestWholeNotCompared(t *testing.T) {
	w := Whole([]RankPrediction{{BusyJ: 10, MeasuredJ: 20, EnergyJ: 15}, {MeasuredJ: 20, EnergyJ: 4}})
	if w.Compared || w.EnergyError != 0 {
		t.Errorf("Whole = %+v", w)
	}
	var b bytes.Buffer
	if err := WriteRanks(&b, []RankPrediction{{MeasuredJ: 20, WallNS: 1e8}}); err != nil || !strings.Contains(b.String(), "(-)") {
		t.Errorf("table (%v):\n%s", err, b.String())
	}
}

// embedded imports one of the embedded traces (internal/traces).
func embedded(t *testing.T, name string) *signatures.Set {
	return tracetest.ImportSet(t, name)
}
