package predict

import (
	"fmt"

	"github.com/kreplay/kreplay/signatures"
)

// The memsets' arrival term.
//
// A replayed memset is timed paced, as it runs after the GPU idled (tier 1,
// launch.Paced). A memset that the traced run's host launched within the
// arrival window after the GPU went idle (signatures.ArrivalWindowLoNS
// to ArrivalWindowHiNS) was stretched in part, the more the earlier it
// came (signatures/arrival.go), and no isolated replay reproduces that.
// So each such invocation of a memset signature (one not part of another,
// not in a CUDA graph) is charged MemsetArrivalSlope times the time left
// from its arrival to the window's end. That is the expected wait, if a
// share MemsetArrivalSlope of them waited until the window's end. It is
// an estimate, labelled as one in the report; -memset-arrival=false
// leaves it out.
//
// MemsetArrivalSlope is a least-squares fit of traced memsets' duration
// beyond their paced replay against the time left to the window's end
// (scripts/gpu/memprobe/arrival -fit; the fit and its check on later
// captures are in results/h100/memset-pacing/README.md). A constant
// charge was tried first and left the earliest arrivals short.
const MemsetArrivalSlope = 0.53

// MemsetArrivalFit is what the slope was fitted on: traces captured and
// replayed on this GPU with this driver. The term applies only to an
// output whose replays and trace ran there (arrivalScope).
var MemsetArrivalFit = struct{ GPU, Driver string }{"NVIDIA H100 80GB HBM3", "580.159.04"}

// arrivalScope says why the arrival term does not apply to the results w
// ("" when it does): their replay GPU, trace GPU or driver (configuration
// lines) is not the fit's.
func arrivalScope(w *WorkloadResults) string {
	fit := MemsetArrivalFit
	gpu, trace, driver := w.Config["gpu"], w.Config["trace-gpu"], w.Config["driver"]
	if gpu == fit.GPU && trace == fit.GPU && driver == fit.Driver {
		return ""
	}
	return fmt.Sprintf("left out: fitted on %s traces replayed there with driver %s; these ran on %q (trace %q, driver %q)",
		fit.GPU, fit.Driver, gpu, trace, driver)
}

// addArrivals charges sp's window arrivals a, in its predicted time and
// the workload's.
func (wp *WorkloadPrediction) addArrivals(sp *SigPrediction, a signatures.Arrivals) {
	if a.N <= 0 {
		return
	}
	add := MemsetArrivalSlope * float64(a.EarlyNS)
	sp.Arrivals, sp.ArrivalNS = a.N, add
	sp.PredictedNS = Interval{sp.PredictedNS.Center + add, sp.PredictedNS.Lo + add, sp.PredictedNS.Hi + add}
	wp.Arrivals += a.N
	wp.ArrivalNS += add
}
