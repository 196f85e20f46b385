package replay

import (
	"fmt"
	"sort"
	"time"

	"github.com/kreplay/kreplay/energy"
)

// span is the wall-clock interval of one timing sample: from before its
// work was enqueued to after it finished (the host waits for every
// sample's end event, so its GPU work lies within).
type span struct{ start, end time.Time }

// sampling is what sampleToTarget took.
type sampling struct {
	// values are the samples' event times per call in nanoseconds, in
	// order; spans their wall-clock intervals.
	values []float64
	spans  []span
	// rel is the last relative half-width a check computed, of the values
	// the judge returned; converged says the stop rule ended sampling.
	rel       float64
	converged bool
}

// judgeFunc is called at each check with the samples taken so far (event
// times and wall-clock spans) and returns the check's judging: a function
// that gives the values the check judges, those of the value the result
// will report (the CUPTI kernel time where it is recorded, the event time
// otherwise), less the samples the throttle policy would discard
// (dropThrottled). What belongs to the moment of the check (the NVML
// states read so far) is read at the call; the judging may run later, at
// a later check and before that check's own (see sampleToTarget), and
// must give what it would have given at once. A nil judge judges the
// event times.
type judgeFunc func(values []float64, spans []span) func() []float64

// pendingCheck is a check whose judging has not run yet: it runs with the
// elapsed time of the moment the check was made.
type pendingCheck struct {
	judging func() []float64
	elapsed time.Duration
}

// checkOf is the check of the samples so far, made elapsed after sampling
// began.
func checkOf(judge judgeFunc, values []float64, spans []span, elapsed time.Duration) pendingCheck {
	if judge == nil {
		return pendingCheck{func() []float64 { return values }, elapsed}
	}
	return pendingCheck{judge(values, spans), elapsed}
}

// settle runs the judging of checks, in order, and tells the rule each
// one's interval (kept in s.rel); it reports whether the rule stopped
// sampling at one of them.
func (s *sampling) settle(rule *stopRule, checks []pendingCheck, confidence float64) bool {
	for _, c := range checks {
		s.rel = relCI(summarize(c.judging(), confidence))
		if rule.check(s.rel, c.elapsed) {
			return true
		}
	}
	return false
}

// confirmChecks is how many checks in a row, 5 samples apart, must find
// the interval within its target before sampling stops: one check could
// stop on a lucky early interval (ten samples alike at the start of a
// noisy run).
const confirmChecks = 2

// stopRule decides at each check whether sampling may stop: once the
// relative half-width of the judged values' median is within target at
// confirmChecks checks in a row, none of them before minTime.
type stopRule struct {
	target  float64
	minTime time.Duration
	held    int // checks in a row within the target
}

// check takes one check's relative half-width rel, made elapsed after
// sampling began, and reports whether sampling may stop.
func (s *stopRule) check(rel float64, elapsed time.Duration) bool {
	if rel <= s.target && elapsed >= s.minTime {
		s.held++
	} else {
		s.held = 0
	}
	return s.held >= confirmChecks
}

// sampleToTarget takes samples (nanoseconds each, timed by sample), with
// o.Cooldown before each, and checks every 5 samples once it has
// o.MinSamples: the values judge returns are summarized and the stop rule
// (stopRule) told their interval. Sampling ends when the rule says so
// (converged), the budget (at least o.MinTime) ends or o.MaxSamples are
// taken. On an error from sample it returns the samples taken before.
//
// A check that cannot end sampling whatever its interval (the rule needs
// more checks in a row than it and the checks waiting before it could
// give) waits: its judging (for a CUPTI judge, a flush of the records)
// runs at the next check that can, just before that check's own, so that
// one flush serves both. The rule is told the same intervals, made of the
// same samples at the same elapsed times, in the same order, and stops at
// the same check as if each had been judged at once.
func sampleToTarget(o Options, sample func() (float64, error), judge judgeFunc) (*sampling, error) {
	s := &sampling{}
	began := time.Now()
	deadline := began.Add(max(o.Budget, o.MinTime))
	rule := stopRule{target: o.TargetRelCI, minTime: o.MinTime}
	var waiting []pendingCheck
	for len(s.values) < o.MaxSamples {
		if o.Cooldown > 0 {
			time.Sleep(o.Cooldown)
		}
		start := time.Now()
		v, err := sample()
		if err != nil {
			return s, err
		}
		s.values = append(s.values, v)
		s.spans = append(s.spans, span{start, time.Now()})
		if len(s.values) < o.MinSamples {
			continue
		}
		if len(s.values)%5 == 0 || time.Now().After(deadline) {
			waiting = append(waiting, checkOf(judge, s.values, s.spans, time.Since(began)))
			if rule.held+len(waiting) >= confirmChecks {
				if s.settle(&rule, waiting, o.Confidence) {
					s.converged = true
					return s, nil
				}
				waiting = waiting[:0]
			}
			if time.Now().After(deadline) {
				break
			}
		}
	}
	// Checks still waiting could not have ended sampling: their intervals
	// only complete s.rel.
	s.settle(&rule, waiting, o.Confidence)
	return s, nil
}

// throttledSamples reports, for each timing sample, whether it overlaps an
// NVML state that saw throttling (energy.State.Throttled: the power cap,
// a thermal or a hardware slowdown; idle, application or sync-boost clocks
// do not count). Each state stands for the time nearer to it than to the
// states beside it, the first one's from the start of time and the last
// one's to its end: the reasons read closest to a moment are taken for
// that moment's. states must be in time order; with none, nothing is
// throttled.
func throttledSamples(spans []span, states []energy.State) []bool {
	out := make([]bool, len(spans))
	if len(states) == 0 {
		return out
	}
	// mids[i] is where state i's time ends and state i+1's begins;
	// thrown[i] counts the throttled states before state i.
	mids := make([]time.Time, len(states)-1)
	thrown := make([]int, len(states)+1)
	for i, st := range states {
		if i+1 < len(states) {
			mids[i] = st.Time.Add(states[i+1].Time.Sub(st.Time) / 2)
		}
		thrown[i+1] = thrown[i]
		if st.Throttled() {
			thrown[i+1]++
		}
	}
	for i, sp := range spans {
		// The states whose times the span touches: from the one holding
		// its start to the one holding its end.
		a := sort.Search(len(mids), func(j int) bool { return mids[j].After(sp.start) })
		b := sort.Search(len(mids), func(j int) bool { return mids[j].After(sp.end) })
		out[i] = thrown[b+1]-thrown[a] > 0
	}
	return out
}

// dropThrottled applies the throttled-sample policy to values, one per
// sample: the samples throttled marks are left out when at least minKeep
// others remain (discarded), and all are kept otherwise, as they are
// when none is throttled. n is how many are throttled. throttled may be
// nil (nothing is known to be throttled); marks for another number of
// samples than values has are not the values' and count as nil.
func dropThrottled(values []float64, throttled []bool, minKeep int) (kept []float64, n int, discarded bool) {
	if len(throttled) != len(values) {
		return values, 0, false
	}
	for _, t := range throttled {
		if t {
			n++
		}
	}
	if n == 0 || len(values)-n < minKeep {
		return values, n, false
	}
	kept = make([]float64, 0, len(values)-n)
	for i, v := range values {
		if !throttled[i] {
			kept = append(kept, v)
		}
	}
	return kept, n, true
}

// setReported fills r's statistics from the samples: events are their
// event times, kernel their CUPTI kernel times (nil when not recorded)
// and throttled marks those that overlap a throttled NVML state. The
// throttled samples are left out of both as dropThrottled decides, given
// minKeep (Options.MinSamples), and counted; MedianAllNS and
// KernelMedianAllNS keep the medians over all samples. RelCI is the
// interval of the value the result reports (ReportedNS), and Converged
// says whether it is within target.
func setReported(r *Result, events, kernel []float64, throttled []bool, minKeep int, confidence, target float64) {
	keptEvents, n, discarded := dropThrottled(events, throttled, minKeep)
	setStats(r, keptEvents, confidence)
	r.MedianAllNS = median(events, confidence)
	r.ThrottledSamples, r.ThrottledKept = n, n > 0 && !discarded
	if len(kernel) > 0 {
		keptKernel := kernel
		if discarded {
			keptKernel, _, _ = dropThrottled(kernel, throttled, minKeep)
		}
		sum := summarize(keptKernel, confidence)
		r.KernelMedianNS, r.KernelLoNS, r.KernelHiNS = sum.Center, sum.Lo, sum.Hi
		r.KernelMedianAllNS = median(kernel, confidence)
		r.RelCI = relCI(sum)
	}
	r.Converged = r.RelCI <= target
}

// median is the median of values as summarize computes it, or 0 for none.
func median(values []float64, confidence float64) float64 {
	if len(values) == 0 {
		return 0
	}
	return summarize(values, confidence).Center
}

// ReportedNS is the time r reports for one invocation: the CUPTI kernel
// time where it was recorded, the CUDA event time otherwise. RelCI is its
// interval's relative half-width.
func (r *Result) ReportedNS() float64 {
	if r.KernelMedianNS > 0 {
		return r.KernelMedianNS
	}
	return r.MedianNS
}

// TakenSamples is how many samples were timed, throttled ones left out of
// the statistics included.
func (r *Result) TakenSamples() int {
	if r.ThrottledSamples > 0 && !r.ThrottledKept {
		return r.Samples + r.ThrottledSamples
	}
	return r.Samples
}

// ThrottleNote says what became of the samples that overlapped NVML's
// throttling: "3 of 40 samples throttled, discarded" (left out of the
// statistics), "12 of 15 samples throttled, kept" (too few others were
// left to discard them), or "" when none did.
func (r *Result) ThrottleNote() string {
	return throttleNote(r.ThrottledSamples, r.TakenSamples(), r.ThrottledKept)
}

func throttleNote(n, of int, kept bool) string {
	switch {
	case n == 0:
		return ""
	case kept:
		return fmt.Sprintf("%d of %d samples throttled, kept", n, of)
	}
	return fmt.Sprintf("%d of %d samples throttled, discarded", n, of)
}
