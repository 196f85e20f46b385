package bench

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

// Units a tensor-parallel model benchmark reports on every rank's line
// besides ModelMetrics' (GroupModelMetrics): the whole group's figures,
// the same on each rank's line.
const (
	// UnitGroupNS is the group's time per inference: the slowest rank's
	// ns/op (its ranks run each inference together, the slowest holding
	// the others at its collectives).
	UnitGroupNS = "group-ns"
	// UnitGroupJoules is the group's energy per inference: every rank's
	// GPU's J/op summed.
	UnitGroupJoules = "group-J/op"
)

// GroupModel is the model benchmark of a tensor-parallel workload: it runs
// the real inference of every rank at once, one runner per rank on its
// GPU, as kreplay capture does (workload.MeasureGroup, with the energy
// window's ticks EnvModelTicks asks for), with the spec the package embeds
// (spec; ModelSpec without one), and reports each rank's run as a
// sub-benchmark of its own, in rank order:
//
//	BenchmarkModel/workload=W_rankN/model
//
// with the workload name of rank N's set (Workload: "_rankN"), so that
// kreplay report reads each against its rank's set as it reads a single
// GPU's model benchmark. A rank's line holds its run's ModelMetrics (its
// wall time as ns/op, its own GPU's energy as J/op, its idle power) and
// the group's: group-ns, the slowest rank's ns/op, and group-J/op, the
// energy of all the GPUs (GroupModelMetrics). sets are the ranks' sets, in
// rank order (CheckRanks). The group runs once per call of the benchmark
// function (once per -count), before its sub-benchmarks report.
//
// When the group cannot run (no spec, a spec that does not run as many
// ranks as sets, no PyTorch or no GPU), every rank's sub-benchmark prints
// why in a NoModelLine and skips, as Model does; under
// KREPLAY_REQUIRE_GPU=1 a missing PyTorch or GPU fails instead.
func GroupModel(b *testing.B, sets []*signatures.Set, spec []byte) {
	b.Helper()
	if err := CheckRanks(sets); err != nil {
		b.Fatal(err)
	}
	ticks := modelTicks(b)
	var metrics [][]benchfmt.Value
	s, err := GroupModelSpec(sets, spec)
	if err == nil {
		var log strings.Builder
		var res []*runner.Result
		res, err = workload.MeasureGroup(s, ticks, &log)
		if l := strings.TrimSpace(log.String()); l != "" {
			b.Logf("%s", l)
		}
		if err == nil {
			metrics, err = GroupModelMetrics(res)
		}
	}
	for r, set := range sets {
		b.Run(ModelBenchName(Workload(set.Source)), func(b *testing.B) {
			if err != nil {
				modelFailed(b, err)
			}
			reportMetrics(b, metrics[r])
		})
	}
}

// GroupModelSpec is the spec GroupModel runs for the ranks' sets: spec
// parsed (ModelSpec), which must run as many ranks as there are sets.
// The error wraps workload.ErrNoModel when it does not.
func GroupModelSpec(sets []*signatures.Set, spec []byte) (*workload.Spec, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("%w: no ranks", workload.ErrNoModel)
	}
	s, err := ModelSpec(sets[0], spec)
	if err != nil {
		return nil, err
	}
	if err := s.Capturable(); err != nil {
		return nil, fmt.Errorf("%w: %v", workload.ErrNoModel, err)
	}
	if s.World() != len(sets) {
		return nil, fmt.Errorf("%w: workload %s runs as %d rank(s), and the package holds the sets of %d ranks: regenerate it from its bundle",
			workload.ErrNoModel, s.Name, s.World(), len(sets))
	}
	return s, nil
}

// GroupModelMetrics are the lines of a tensor-parallel run's ranks
// (res, in rank order): each rank's ModelMetrics, then group-ns, the
// largest of their ns/op, and group-J/op, the sum of their J/op where
// every rank measured its energy.
func GroupModelMetrics(res []*runner.Result) ([][]benchfmt.Value, error) {
	if len(res) == 0 {
		return nil, fmt.Errorf("bench: a group run of no ranks")
	}
	out := make([][]benchfmt.Value, len(res))
	var slowest, joules float64
	energy := true
	for r, res := range res {
		if res == nil {
			return nil, fmt.Errorf("bench: rank %d of %d has no run", r, len(out))
		}
		out[r] = ModelMetrics(res)
		slowest = max(slowest, out[r][0].Value)
		energy = energy && res.EnergyJPerInference > 0
		joules += res.EnergyJPerInference
	}
	group := []benchfmt.Value{{Value: slowest, Unit: UnitGroupNS}}
	if energy {
		group = append(group, benchfmt.Value{Value: joules, Unit: UnitGroupJoules})
	}
	for r := range out {
		out[r] = append(out[r], group...)
	}
	return out, nil
}
