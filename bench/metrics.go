package bench

import (
	"golang.org/x/perf/benchfmt"
	"slices"

	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/replay"
)

// The metrics each benchmark reports, in one place for the testing.B
// benchmarks and for Flow's benchmark-format output, so that both read
// back the same.

// SignatureMetrics are a signature replay's metrics: ns/op (ReplayNS),
// GB/s and TFLOP/s where its work has bytes or FLOPs, J/op and W where
// its energy was measured, and sm-MHz where NVML sampled its SM clock.
func SignatureMetrics(r *replay.Result) []benchfmt.Value {
	ns := ReplayNS(r)
	v := []benchfmt.Value{{Value: ns, Unit: "ns/op"}}
	if ns > 0 {
		if r.Work.Bytes > 0 {
			v = append(v, benchfmt.Value{Value: float64(r.Work.Bytes) / ns, Unit: UnitGBps})
		}
		if r.Work.FLOPs > 0 {
			v = append(v, benchfmt.Value{Value: float64(r.Work.FLOPs) / ns / 1e3, Unit: UnitTFLOPs})
		}
	}
	if e := r.Energy; e != nil && e.JoulesPerOp > 0 {
		v = append(v, benchfmt.Value{Value: e.JoulesPerOp, Unit: UnitJoules}, benchfmt.Value{Value: e.Watts, Unit: UnitWatts})
	}
	if g := r.GPU; g != nil && g.MeanSMClockMHz > 0 {
		v = append(v, benchfmt.Value{Value: g.MeanSMClockMHz, Unit: UnitSMMHz})
	}
	return v
}

// TimelineMetrics are a timeline replay's: ns/op and skipped-ns; gap-ns,
// the energy, and the graph's busy time and gaps where measured.
func TimelineMetrics(r *replay.TimelineResult) []benchfmt.Value {
	v := []benchfmt.Value{{Value: r.MedianNS, Unit: "ns/op"}, {Value: float64(r.SkippedNS), Unit: UnitSkippedNS}}
	if r.GapNS > 0 {
		v = append(v, benchfmt.Value{Value: float64(r.GapNS), Unit: UnitGapNS})
	}
	if e := r.Energy; e != nil && e.JoulesPerOp > 0 {
		v = append(v, benchfmt.Value{Value: e.JoulesPerOp, Unit: UnitJoules}, benchfmt.Value{Value: e.Watts, Unit: UnitWatts})
	}
	if g := r.Gaps; g != nil {
		v = append(v, benchfmt.Value{Value: g.BusyNS, Unit: UnitGraphBusyNS}, benchfmt.Value{Value: g.GapNS, Unit: UnitGraphGapNS},
			benchfmt.Value{Value: float64(g.Gaps), Unit: UnitGraphGaps}, benchfmt.Value{Value: g.MedianGapNS, Unit: UnitGraphGapMedianNS})
	}
	return v
}

// ModelMetrics are a full-model run's: the wall time of one inference as
// ns/op, its energy as J/op with the average power, the idle power, and
// the spread of its inferences' spans where the runner measured it.
//
// Where the spread was measured, ns/op is the median inference's span on
// the GPU (the time between consecutive inferences' ends, back to back)
// and mean-ns the mean wall time over the run, which the energy per
// inference belongs to. A launch-bound inference's spans have a tail of
// host stalls that moves the mean from run to run while the median holds
// (see results/h100/capture/README.md). Without a spread, ns/op is the
// mean.
func ModelMetrics(r *runner.Result) []benchfmt.Value {
	mean := r.WallSPerInference * 1e9
	ms, spread := r.MedianMS()
	v := []benchfmt.Value{{Value: ms * 1e6, Unit: "ns/op"}}
	if spread && mean > 0 {
		v = append(v, benchfmt.Value{Value: mean, Unit: UnitMeanNS})
	}
	if r.EnergyJPerInference > 0 && r.WallSPerInference > 0 {
		v = append(v, benchfmt.Value{Value: r.EnergyJPerInference, Unit: UnitJoules},
			benchfmt.Value{Value: r.EnergyJPerInference / r.WallSPerInference, Unit: UnitWatts})
	}
	if r.EnergyJWithFirsts > 0 {
		v = append(v, benchfmt.Value{Value: r.EnergyJWithFirsts, Unit: UnitFirstsJoules})
	}
	if r.IdleW > 0 {
		v = append(v, benchfmt.Value{Value: r.IdleW, Unit: UnitIdleWatts})
	}
	if spread {
		v = append(v, benchfmt.Value{Value: r.SpanMS[0] * 1e6, Unit: UnitSpanP10},
			benchfmt.Value{Value: r.SpanMS[2] * 1e6, Unit: UnitSpanP90})
	}
	if len(r.ProcessesMS) > 1 {
		v = append(v, benchfmt.Value{Value: slices.Max(r.ProcessesMS)/slices.Min(r.ProcessesMS) - 1, Unit: UnitProcSpread})
	}
	if len(r.TPOTMS) == 3 && r.Tokens > 0 {
		v = append(v, benchfmt.Value{Value: r.Tokens, Unit: UnitTokens},
			benchfmt.Value{Value: r.TPOTMS[1] * 1e6, Unit: UnitTPOTNS},
			benchfmt.Value{Value: r.TPOTMS[2] * 1e6, Unit: UnitTPOTP90NS})
	}
	return v
}

func reportMetrics(tb benchTB, v []benchfmt.Value) {
	for _, m := range v {
		tb.ReportMetric(m.Value, m.Unit)
	}
}
