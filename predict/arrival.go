package predict

import "github.com/kreplay/kreplay/signatures"

// The memsets' arrival term.
//
// A replayed memset is timed paced, as it runs after the GPU idled (tier 1,
// launch.Paced): 768 ns for a 4-byte one on the H100 once the captured
// PyTorch kernels before it have run (704 ns alone or after kreplay's own
// kernels; why is open, results/h100/memset-pacing/). A memset that the
// traced run's host launched 1.2-2.0 µs after the GPU went idle was
// stretched in part, the more the earlier it came (signatures/arrival.go),
// and no isolated replay reproduces that. So each such invocation of a
// memset signature (one not part of another, not in a CUDA graph) is
// charged MemsetArrivalSlope times the time left from its arrival to the
// window's end, 2.0 µs after idle: up to 423 ns for one that came at
// 1.2 µs. That is the expected wait, if a share MemsetArrivalSlope of them
// waited until 2.0 µs. It is an estimate, labelled as one in the report;
// -memset-arrival=false leaves it out.
//
// Fitted (least squares) on the 54 such invocations of the 22 traces of the
// twelfth to fourteenth sessions: their traced duration less the paced 768
// ns against the time left to 2.0 µs (scripts/gpu/memprobe/arrival -fit).
// A first version charged a constant 201 ns (their mean excess) and was
// checked on fresh captures before this one was built: in the SDPA
// prefill's stretched captures it left the memsets at -12% to -13%. The
// excess per 100 ns of arrival then showed the fall with the arrival time
// (585, 357, 269, 168, 80 and 42 ns from 1.2 to 1.8 µs in the fitted
// traces), which the slope follows. On 21 later traces the memset class
// came within 10% in 20 (15 paced); on five captures made after the slope
// was fixed, in five of five (one paced). results/h100/memset-pacing/.
const MemsetArrivalSlope = 0.53

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
