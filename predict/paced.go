package predict

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/kname"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/schedule"
	"github.com/kreplay/kreplay/signatures"
)

// PacedInference is the schedule's inference whose pacing a paced
// timeline replays: the steady one (not the first, not fresh) of median
// span, else the first; -1 for a schedule without inferences.
func PacedInference(s *schedule.Schedule) int {
	var steady []int
	for i, inf := range s.Inferences {
		if i > 0 && !inf.Fresh {
			steady = append(steady, i)
		}
	}
	if len(steady) == 0 {
		if len(s.Inferences) == 0 {
			return -1
		}
		return 0
	}
	slices.SortStableFunc(steady, func(a, b int) int { return cmp.Compare(s.Inferences[a].End, s.Inferences[b].End) })
	return steady[len(steady)/2]
}

// Pacing is the host's pacing of inference inf of s for a timeline whose
// launches replay the set's invocations invs (replay.Timeline.Invocations).
// At: each launch's recorded call time since the host's last wait returned
// (or since the inference's start), less the recorder's cost per call
// recorded in between; a sync after the launch a host wait follows, at the
// wait's recorded time since the same point (WaitAt; its time is the
// GPU's). Gap, the older pacing kept beside: the host time since the
// previous GPU op's call returned (the captured gaps, less the recorder's
// cost per call, and the own time of the calls between that are neither
// GPU ops nor waits). The GPU ops are bound to the set's invocations as
// the model binds them (schedule.Bind); one whose invocation the timeline
// does not launch gives its time to the next.
func Pacing(s *schedule.Schedule, inf int, set *signatures.Set, rt *signatures.Runtime, invs []int) (replay.Pacing, error) {
	if s == nil || inf < 0 || inf >= len(s.Inferences) {
		return replay.Pacing{}, errors.New("pacing: no such inference")
	}
	bound, err := schedule.Bind(s, inf, set, rt, schedule.Memo(kname.SameKernel))
	if err != nil {
		return replay.Pacing{}, fmt.Errorf("pacing: %w", err)
	}
	pos := make(map[int]int, len(invs))
	for k, v := range invs {
		if _, seen := pos[v]; v >= 0 && !seen {
			pos[v] = k
		}
	}
	n := len(invs)
	p := replay.Pacing{At: make([]time.Duration, n), WaitAt: make([]time.Duration, n), Gap: make([]time.Duration, n), Sync: make([]bool, n)}
	var perCall int64
	if s.Process != nil {
		perCall = s.Process.CallOverheadNS
	}
	calls := s.Inferences[inf].Calls
	var acc int64 // host time since the last launch's call returned
	// base is the last wait's return (the inference's start at first), and
	// since the calls recorded after it, each with the recorder's cost.
	var base, since int64
	last, j, launched := -1, 0, false
	for k := range calls {
		c := &calls[k]
		if k > 0 {
			acc += max(c.Enter-calls[k-1].Exit-perCall, 0)
		}
		rel := time.Duration(max(c.Enter-base-perCall*since, 0))
		since++
		switch {
		case c.Kind.GPU():
			b := bound[j]
			j++
			at, ok := pos[b.Timeline[0]]
			if !ok {
				acc += c.Exit - c.Enter // not launched: its call is host time
				continue
			}
			p.Gap[at], p.At[at], acc, last, launched = time.Duration(acc), rel, 0, at, true
			if c.IsWait() {
				p.Sync[at], p.WaitAt[at] = true, rel
				base, since, launched = c.Exit, 0, false
			}
		case c.IsWait():
			switch {
			case last < 0: // the previous inference's tail: the pass starts after it
				base, since = c.Exit, 0
			case launched:
				p.Sync[last], p.WaitAt[last] = true, rel
				base, since, launched = c.Exit, 0, false
			}
			acc = 0
		default:
			acc += c.Exit - c.Enter
		}
	}
	return p, nil
}

// timelines prepares the set's timeline on d, measures it as one CUDA
// graph (Timeline) and, with a recorded host schedule, launches it from
// the host at the pacing of the schedule's median steady inference (Paced:
// the whole-inference model's independent check), then frees it.
func (fr *FlowResult) timelines(d *replay.Device, o FlowOptions, progress io.Writer) {
	tl, err := d.PrepareTimeline(fr.Set, replay.TimelineOptions{Gap: fr.timelineGap(o.Measured), Skip: o.Skip, DataFlow: o.TimelineDataFlow})
	if err != nil {
		fr.TimelineErr = err
		fmt.Fprintf(progress, "timeline: %v\n", err)
		fr.energyNotInPlace("no timeline: "+err.Error(), progress)
		return
	}
	defer tl.Close()
	if tl.SharedBuffers > 0 {
		fmt.Fprintf(progress, "timeline: the recorded data flow: %d allocations shared, %d bytes; once prepared they hold %s\n",
			tl.SharedBuffers, tl.SharedBytes, tl.SharedBefore)
	}
	if fr.Timeline, fr.TimelineErr = tl.Measure(o.Measure); cuda.IsSticky(fr.TimelineErr) {
		fmt.Fprintf(progress, "timeline: %v\n", fr.TimelineErr)
		fr.energyNotInPlace("no paced timeline: the CUDA context was lost in the timeline", progress)
		return
	} else if fr.TimelineErr != nil {
		fmt.Fprintf(progress, "timeline: %v\n", fr.TimelineErr)
	} else {
		fmt.Fprintf(progress, "timeline: %s\n", fr.Timeline)
	}
	if o.Schedule == nil || o.Schedule.Source != schedule.SourceRecorder {
		fr.energyNotInPlace("no recorded host schedule to pace a timeline with", progress)
		return
	}
	fr.PacedInference = PacedInference(o.Schedule)
	p, err := Pacing(o.Schedule, fr.PacedInference, fr.Set, o.Runtime, tl.Invocations())
	if err == nil {
		fr.Paced, err = tl.MeasurePaced(p, o.Measure)
	}
	if fr.PacedErr = err; err != nil {
		fmt.Fprintf(progress, "paced timeline: %v\n", err)
		fr.energyNotInPlace("paced timeline: "+err.Error(), progress)
		return
	}
	fmt.Fprintf(progress, "paced timeline: %s\n", fr.pacedText())
	if o.TimelineDataFlow {
		fr.energyNotInPlace("the timeline ran on the recorded data flow (-timeline-dataflow), whose computed values drift from real data: its energy is not the inference's", progress)
		return
	}
	if fr.Inference != nil {
		if PacedEnergy(fr.Inference, fr.Paced) {
			var gaps *replay.TimelineGaps
			if fr.Timeline != nil {
				gaps = fr.Timeline.Gaps
			}
			ScalePacedEnergy(fr.Inference, gaps)
		}
		fmt.Fprintf(progress, "inference energy: %s\n", fr.Inference.EnergyText())
	}
}

// energyNotInPlace keeps the predicted inference's isolated energy design
// for reason why, and says so; nothing without an inference.
func (fr *FlowResult) energyNotInPlace(why string, progress io.Writer) {
	if fr.Inference == nil {
		return
	}
	fr.Inference.isolatedEnergy(why)
	fmt.Fprintf(progress, "inference energy: %s\n", fr.Inference.EnergyText())
}

// pacedText is the paced timeline in one line, with the predicted
// inference beside it where there is one.
func (fr *FlowResult) pacedText() string {
	r := fr.Paced
	s := fmt.Sprintf("wall %.4g ms (10-90%% %.4g-%.4g) over %d passes, launched at the recorded pacing of inference %d, one inference a pass",
		r.Wall.MedianNS/1e6, r.Wall.P10NS/1e6, r.Wall.P90NS/1e6, r.Passes, fr.PacedInference)
	if r.Energy != nil {
		s += fmt.Sprintf(", %.4g J", r.Energy.JoulesPerOp)
		if t := r.Energy.GPU.MaxTemperatureC; t > 0 {
			s += fmt.Sprintf(" (GPU up to %d C)", t)
		}
	} else if r.EnergyErr != "" {
		s += "; no energy: " + r.EnergyErr
	}
	if inf := fr.Inference; inf != nil && inf.WallNS > 0 {
		s += fmt.Sprintf("; the model predicts %.4g ms (%+.1f%% from the paced)", inf.WallNS/1e6, 100*(inf.WallNS/r.Wall.MedianNS-1))
	}
	return s
}

// pacedMetrics are a paced timeline's figures as benchmark values: its
// median wall as ns/op, its energy as J/op where measured.
func pacedMetrics(r *replay.PacedResult) []benchfmt.Value {
	v := []benchfmt.Value{{Value: r.Wall.MedianNS, Unit: "ns/op"}}
	if r.Energy != nil && r.Energy.JoulesPerOp > 0 {
		v = append(v, benchfmt.Value{Value: r.Energy.JoulesPerOp, Unit: bench.UnitJoules})
	}
	return v
}
