// Package replay replays kernel signatures alone on a GPU and measures them.
//
// A Device owns one GPU: its primary CUDA context, a stream, the library
// handles tier 2 needs, and (where NVML is there) the energy meter. All
// CUDA work of a Device runs on one goroutine locked to an OS thread, as
// CUDA's per-thread context requires; Device's methods may be called from
// any goroutine.
//
//	dev, err := replay.Open(0)
//	...
//	defer dev.Close()
//	p, err := dev.Prepare(sig)        // tier 1, 2 or 3 by the signature
//	...
//	defer p.Close()
//	res, err := dev.Measure(p, replay.Options{})
//
// Measure follows nvbench's method: warm-up; CUDA events around batches of
// launches, captured in a CUDA graph where possible so that launch latency
// does not count, the batch grown until it lasts long enough to time well;
// then samples until the confidence interval of the median of the value
// reported (the CUPTI kernel time where it is recorded, the event time
// otherwise) is narrower than a target at two checks in a row, or a time
// budget ends. The L2 cache state is a choice (warm, cold, primed inputs
// or rotating buffer sets: see CacheMode), and SM and memory clocks,
// temperature, power and throttle reasons are sampled through NVML during
// the measurement: as in nvbench, the samples timed while NVML saw the
// clocks throttled are left out when enough others remain, and counted
// (Result.ThrottledSamples). With Options.ClockProbe, the SM clock the
// replay ran at is also measured on the GPU, after the timed samples, by
// a probe that reads the SM cycle counter and the global timer while the
// samples' launches run once more (Result.SMClockMHz): NVML's readings can
// stand far from it.
package replay
