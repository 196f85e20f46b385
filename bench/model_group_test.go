package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

// A group run's lines: each rank's own metrics, then the group's, the
// same on every line: the slowest rank's ns/op and, where every rank
// measured its energy, the energies summed.
func TestGroupModelMetrics(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  []*runner.Result
		want []map[string]float64
	}{
		{"energy on every GPU", []*runner.Result{
			{WallSPerInference: 0.0105, EnergyJPerInference: 5, IdleW: 70, SpanMS: []float64{9, 10, 12}},
			{WallSPerInference: 0.0105, EnergyJPerInference: 4, IdleW: 60, SpanMS: []float64{10, 11, 12}},
		}, []map[string]float64{
			{"ns/op": 1e7, UnitMeanNS: 1.05e7, UnitJoules: 5, UnitWatts: 5 / 0.0105, UnitIdleWatts: 70, UnitSpanP10: 9e6, UnitSpanP90: 12e6, UnitGroupNS: 1.1e7, UnitGroupJoules: 9},
			{"ns/op": 1.1e7, UnitMeanNS: 1.05e7, UnitJoules: 4, UnitWatts: 4 / 0.0105, UnitIdleWatts: 60, UnitSpanP10: 10e6, UnitSpanP90: 12e6, UnitGroupNS: 1.1e7, UnitGroupJoules: 9},
		}},
		// Rank 0 the slowest; rank 2 without energy: no group energy.
		{"a GPU without energy", []*runner.Result{
			{WallSPerInference: 0.03, EnergyJPerInference: 5},
			{WallSPerInference: 0.02, EnergyJPerInference: 4},
			{WallSPerInference: 0.01},
		}, []map[string]float64{
			{"ns/op": 3e7, UnitJoules: 5, UnitWatts: 5 / 0.03, UnitGroupNS: 3e7},
			{"ns/op": 2e7, UnitJoules: 4, UnitWatts: 4 / 0.02, UnitGroupNS: 3e7},
			{"ns/op": 1e7, UnitGroupNS: 3e7},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, err := GroupModelMetrics(tc.res)
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != len(tc.want) {
				t.Fatalf("%d lines, want %d", len(lines), len(tc.want))
			}
			for r, line := range lines {
				got := map[string]float64{}
				for _, v := range line {
					got[v.Unit] = v.Value
				}
				if line[0].Unit != "ns/op" || len(got) != len(tc.want[r]) {
					t.Errorf("rank %d: %v, want %v", r, line, tc.want[r])
					continue
				}
				for u, w := range tc.want[r] {
					if !near(got[u], w, 1e-12) {
						t.Errorf("rank %d: %s = %g, want %g", r, u, got[u], w)
					}
				}
			}
		})
	}
	for _, res := range [][]*runner.Result{nil, {{WallSPerInference: 1}, nil}} {
		if _, err := GroupModelMetrics(res); err == nil {
			t.Errorf("%v: no error", res)
		}
	}
}

// rankSets are n empty sets, the ranks of workload w.
func rankSets(w string, n int) []*signatures.Set {
	sets := make([]*signatures.Set, n)
	for r := range sets {
		sets[r] = &signatures.Set{Source: signatures.Source{Workload: w, File: "x.trace.json.gz", Rank: r, WorldSize: n}}
	}
	return sets
}

// The spec of a group model run must run as many ranks as the package
// has sets; what does not is ErrNoModel, saying why.
func TestGroupModelSpec(t *testing.T) {
	const tp2 = `{"version": 1, "name": "w_prefill", "command": {"argv": ["true"], "dir": "/"},
		"workload": {"kind": "prefill", "batch": 1, "seq": 8}, "devices": [0, 1], "parallel": {"tensor": 2}}`
	const noParallel = `{"version": 1, "name": "w_prefill", "model": {"builtin": "bloom-560m"},
		"workload": {"kind": "prefill", "batch": 1, "seq": 8}, "devices": [0, 1]}`
	const one = `{"version": 1, "name": "w_prefill", "command": {"argv": ["true"], "dir": "/"},
		"workload": {"kind": "prefill", "batch": 1, "seq": 8}}`
	for _, tc := range []struct {
		name string
		sets []*signatures.Set
		spec string
		want string // "" for a spec to run
	}{
		{"tensor parallel", rankSets("w_prefill", 2), tp2, ""},
		{"other world", rankSets("w_prefill", 3), tp2, "runs as 2 rank(s), and the package holds the sets of 3 ranks"},
		{"one process", rankSets("w_prefill", 2), one, "runs as 1 rank(s)"},
		{"devices without parallel", rankSets("w_prefill", 2), noParallel, `unless the spec says "parallel"`},
		{"no spec, no model of that name", rankSets("w_prefill", 2), "", "generate the package from a bundle"},
		{"no ranks", nil, tp2, "no ranks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := GroupModelSpec(tc.sets, []byte(tc.spec))
			switch {
			case tc.want == "" && (err != nil || s.World() != 2):
				t.Errorf("spec %+v, err %v", s, err)
			case tc.want != "" && (!errors.Is(err, workload.ErrNoModel) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want ErrNoModel saying %q", err, tc.want)
			}
		})
	}
}

// A package of one rank's set does not run a spec of several ranks, and
// says which package does.
func TestOneProcess(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec *workload.Spec
		want string // "" for none
	}{
		{"one device", &workload.Spec{Name: "w"}, ""},
		{"devices without parallel", &workload.Spec{Name: "w", Devices: []int{0, 1}}, ""},
		{"tensor parallel", &workload.Spec{Name: "w", Devices: []int{0, 1}, Parallel: &workload.Parallel{Tensor: 2}}, "runs as 2 ranks"},
	} {
		err := oneProcess(tc.spec)
		if tc.want == "" && err != nil || tc.want != "" && (!errors.Is(err, workload.ErrNoModel) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "kreplay gen BUNDLE")) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
