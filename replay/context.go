package replay

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kreplay/kreplay/internal/cupti"
)

// contextPasses is how many launches of the timeline graph the in-context
// times are taken from.
const contextPasses = 5

// SigContext is a signature's time in context: the kernel time (CUPTI) of
// its invocations inside the timeline replay, where each starts as it did
// in the trace, right after the kernels that ran before it, with their
// outputs in the L2 and the instruction caches warm or cold as they left
// them. Isolated replays of small decode kernels in back-to-back batches
// run without that context.
type SigContext struct {
	ID string `json:"id"`
	// Invocations is the signature's invocations in one timeline; Samples
	// the invocation times the median is taken over.
	Invocations int `json:"invocations"`
	Samples     int `json:"samples"`
	// MedianNS and MeanNS are per invocation.
	MedianNS float64 `json:"median_ns"`
	MeanNS   float64 `json:"mean_ns"`
}

// inContext launches the timeline graph passes times with CUPTI recording
// and gives each invocation the summed duration of the kernels it
// launched, found by counting how many kernels each prepared signature
// launches on its own; and, from the same records, where a launch's time
// goes (TimelineGaps; nil where the records do not divide into the
// launches). Call inside Do.
func (t *Timeline) inContext(passes int) ([]SigContext, *TimelineGaps, error) {
	rec, err := startRecording(t.dev, nil)
	if err != nil {
		return nil, nil, err
	}
	defer rec.stop()
	per, err := t.kernelsPerLaunch(rec)
	if err != nil {
		return nil, nil, err
	}
	want := 0
	for _, p := range t.order {
		want += per[p]
	}
	if err := rec.discard(); err != nil {
		return nil, nil, err
	}
	for i := 0; i < passes; i++ {
		if err := t.graph.Launch(t.dev.stream); err != nil {
			return nil, nil, err
		}
	}
	all, err := activityRecords(rec)
	if err != nil {
		return nil, nil, err
	}
	gaps := gapsOf(launchesOf(all, passes))
	ks := kernelsOf(all)
	if len(ks) != passes*want {
		return nil, gaps, fmt.Errorf("CUPTI recorded %d kernels in %d timeline launches, want %d", len(ks), passes, passes*want)
	}
	times := map[*Prepared][]float64{}
	k := 0
	for range passes {
		for _, p := range t.order {
			var ns uint64
			for _, r := range ks[k : k+per[p]] {
				ns += r.Duration()
			}
			k += per[p]
			if per[p] > 0 {
				times[p] = append(times[p], float64(ns))
			}
		}
	}
	var out []SigContext
	for _, p := range t.launchable() {
		v := times[p]
		if len(v) == 0 {
			continue
		}
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		slices.Sort(v)
		out = append(out, SigContext{ID: p.Sig.ID, Invocations: len(v) / passes, Samples: len(v),
			MedianNS: v[len(v)/2], MeanNS: sum / float64(len(v))})
	}
	return out, gaps, nil
}

// launchable lists what the graph launches, once each: the prepared
// signatures, then the substitutes.
func (t *Timeline) launchable() []*Prepared {
	return append(slices.Clip(t.Prepared), t.subs...)
}

// kernelsPerLaunch launches each prepared signature twice and counts the
// kernels the second launch ran (the first may set a library up); on the
// recorded data flow, kernelsPerLaunchInOrder.
func (t *Timeline) kernelsPerLaunch(rec *recorder) (map[*Prepared]int, error) {
	if t.shared != nil {
		return t.kernelsPerLaunchInOrder(rec)
	}
	per := map[*Prepared]int{}
	for _, p := range t.launchable() {
		if err := p.Kernel.Launch(t.dev.stream, 0); err != nil {
			return nil, err
		}
		if err := rec.discard(); err != nil {
			return nil, err
		}
		if err := p.Kernel.Launch(t.dev.stream, 0); err != nil {
			return nil, err
		}
		ks, err := kernelRecords(rec)
		if err != nil {
			return nil, err
		}
		per[p] = len(ks) // 0 for copies and memsets: no time in context

	}
	return per, nil
}

// kernelRecords synchronizes, flushes CUPTI and returns the kernel
// records, by start time.
func kernelRecords(rec *recorder) ([]cupti.Record, error) {
	all, err := activityRecords(rec)
	return kernelsOf(all), err
}

// activityRecords synchronizes, flushes CUPTI and returns the records of
// every activity (kernels, copies, memsets), by start time.
func activityRecords(rec *recorder) ([]cupti.Record, error) {
	if err := rec.d.stream.Synchronize(); err != nil {
		return nil, err
	}
	if err := cupti.Flush(); err != nil {
		return nil, err
	}
	all := slices.DeleteFunc(cupti.Drain(), func(r cupti.Record) bool { return !rec.own(r) })
	slices.SortStableFunc(all, func(a, b cupti.Record) int { return cmp.Compare(a.Start, b.Start) })
	return all, nil
}

// kernelsOf keeps the kernel records of recs, in order.
func kernelsOf(recs []cupti.Record) []cupti.Record {
	var ks []cupti.Record
	for _, r := range recs {
		if r.Kind == cupti.KindKernel || r.Kind == cupti.KindConcurrentKernel {
			ks = append(ks, r)
		}
	}
	return ks
}
