package signatures

// When a memory operation arrives, and what it costs.
//
// A small memset that the host launches within the arrival window after
// its GPU went idle (ArrivalWindowLoNS to ArrivalWindowHiNS) is often
// stretched, to about 1 µs instead of its paced time; memsets that follow
// sooner (the host well ahead) or later are not, and neither are a CUDA
// graph's, whose launches the GPU issues itself. The window and the
// stretch come from traced runs and the probe memprobe/pace (see
// results/h100/memset-pacing/README.md). An isolated replay times a
// memset paced, as it arrives after idle, so the arrival is read from the
// trace.
//
// The earlier in the window, the more often a memset stretches, and the
// stretched ones begin their work at about the same time after the GPU
// went idle, as if they waited for something that ends then.

// The arrival window, in ns of GPU idle before an activity: from
// ArrivalWindowLoNS up to (not including) ArrivalWindowHiNS.
const (
	ArrivalWindowLoNS = 1200
	ArrivalWindowHiNS = 2000
)

// IdleBefore returns, for each invocation of t in t's order, how long its
// device had been idle when it started: its start less the latest end of
// the device's invocations before it in t (0 when one still ran; -1 for
// the device's first).
func IdleBefore(t Timeline) []int64 {
	out := make([]int64, len(t))
	end := map[int64]int64{}
	for i, v := range t {
		e, ok := end[v.Device]
		switch {
		case !ok:
			out[i] = -1
		default:
			out[i] = max(0, v.Start-e)
		}
		if !ok || v.Start+v.Dur > e {
			end[v.Device] = v.Start + v.Dur
		}
	}
	return out
}

// Arrivals are a signature's invocations that arrived in the window: N of
// them, and EarlyNS, the sum over them of the time left from their
// arrival to the window's end (ArrivalWindowHiNS less the idle before
// them).
type Arrivals struct {
	N       int
	EarlyNS int64
}

// ArrivesInWindow reports whether an invocation of sig that started idle
// ns after its device went idle is a window arrival: a memset's, launched
// by the host (not by a CUDA graph), inside the arrival window.
func ArrivesInWindow(sig *Signature, idle int64) bool {
	return sig.Class == ClassMemset && !sig.Graph && idle >= ArrivalWindowLoNS && idle < ArrivalWindowHiNS
}

// WindowArrivals returns, per signature index, the invocations of memset
// signatures that a host launch (not a CUDA graph's) started inside the
// arrival window after their device went idle. Other signatures have none.
func (s *Set) WindowArrivals() []Arrivals {
	out := make([]Arrivals, len(s.Signatures))
	for i, idle := range IdleBefore(s.Timeline) {
		k := s.Timeline[i].Sig
		if k < 0 || k >= len(s.Signatures) {
			continue
		}
		if ArrivesInWindow(s.Signatures[k], idle) {
			out[k].N++
			out[k].EarlyNS += ArrivalWindowHiNS - idle
		}
	}
	return out
}
