package schedule

import (
	"slices"

	"github.com/kreplay/kreplay/signatures"
)

// traceSamples are a profiled trace's own host-GPU constants, sampled from
// its schedule (FromRuntime) and the ops bound to its timeline, on the
// trace's clock, classified as the model places ops:
//
//   - submit: a kernel's start after its launch's enter, where its stream
//     was idle at the enter;
//   - gap: a kernel's start after its stream's previous end, where that end
//     is later than the launch's enter + the submit samples' median (the
//     model queues it); an op whose stream frees between the two gives no
//     sample (the model starts it at enter + SubmitNS);
//   - wake: a wait's exit after the GPU reached its target, where the
//     wait entered before (it blocked).
//
// An op whose stream was made to wait on an event since its previous op
// gives no sample: its start may be the event's.
type traceSamples struct{ submit, gap, wake []float64 }

// launched is one op's times on the trace's clock: its launch's enter,
// its stream's previous end (-1: none) and its start.
type launched struct{ enter, prev, start int64 }

func sampleTrace(s *Schedule, set *signatures.Set, b []Bound) traceSamples {
	var ts traceSamples
	var ops []launched
	inf := &s.Inferences[0]
	end := map[uint64]int64{}   // each stream's last end so far
	waited := map[uint64]bool{} // a stream wait since the stream's last op
	var all, event int64        // every stream's end; the last event's time
	j := 0
	for k := range inf.Calls {
		c := &inf.Calls[k]
		enter, exit := inf.Start+c.Enter, inf.Start+c.Exit
		switch {
		case c.Kind.GPU():
			tl := b[j].Timeline
			j++
			first := set.Timeline[tl[0]]
			st := uint64(first.Stream)
			if !waited[st] {
				prev, ok := end[st]
				if !ok {
					prev = -1
				}
				ops = append(ops, launched{enter, prev, first.Start})
			}
			waited[st] = false
			for _, t := range tl {
				inv := set.Timeline[t]
				end[uint64(inv.Stream)] = max(end[uint64(inv.Stream)], inv.Start+inv.Dur)
				all = max(all, inv.Start+inv.Dur)
			}
			if c.Sync && end[st] > enter {
				ts.wake = append(ts.wake, float64(exit-end[st]))
			}
		case c.Kind == Record:
			event = end[c.Stream]
		case c.Kind == StreamWait:
			waited[c.Stream] = true
		case c.IsWait():
			target := all
			switch c.Target {
			case OnStream:
				target = end[c.Stream]
			case OnEvent:
				target = event
			}
			if target > enter {
				ts.wake = append(ts.wake, float64(exit-target))
			}
		}
	}
	for _, op := range ops {
		if op.prev <= op.enter {
			ts.submit = append(ts.submit, float64(op.start-op.enter))
		}
	}
	submit := int64(quantiles(slices.Clone(ts.submit)).Median)
	for _, op := range ops {
		if op.prev > op.enter+submit {
			ts.gap = append(ts.gap, float64(op.start-op.prev))
		}
	}
	return ts
}

// constants estimates the model's constants from the samples: SubmitNS
// and WakeNS are medians (each enters a wall once per wait, where the GPU
// went idle, so a robust typical value is what counts), QueueGapNS is the
// mean (it enters a wall once per queued op, summed over chains of
// hundreds: the chain's length is the gaps' sum, which a skewed
// distribution's median misses).
func (ts traceSamples) constants() Constants {
	return Constants{
		SubmitNS:   int64(quantiles(slices.Clone(ts.submit)).Median),
		QueueGapNS: int64(mean(ts.gap)),
		WakeNS:     int64(quantiles(slices.Clone(ts.wake)).Median),
	}
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
