package predict

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/kreplay/kreplay/signatures"
)

// replayTidBase offsets the thread ids of the replayed tracks from the
// traced streams' (a stream s is drawn beside "stream s (replayed)").
const replayTidBase = 1_000_000

// ReplayCat is the category of the replayed events an export writes;
// kreplay's trace reader passes over it.
const ReplayCat = "kreplay_replay"

// TimelineView is what an export draws beside the traced timeline: per
// signature, the replayed time of one invocation (ns; absent when not
// measured) and how it replays.
type TimelineView struct {
	ReplayNS map[string]float64
	Path     map[string]string
}

// traceEvent is one event of the Trace Event Format (the JSON Perfetto's
// UI and chrome://tracing load): ph "X" a complete event, "M" metadata.
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	TS   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	PID  int64          `json:"pid"`
	TID  int64          `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// WriteTimeline exports a set's traced timeline in the Trace Event Format:
// every traced activity on its device (pid) and stream (tid), as the
// trace had it (kernels with their launch shape, copies and sets with
// their bytes, so that kreplay's own reader reads them back), and, where
// view gives a signature's replayed time, the same invocation on a track
// beside its stream ("stream S (replayed)") lasting that long, annotated
// with the signature, the ratio to the traced time and the replay path.
// Times are microseconds on the trace's clock.
func WriteTimeline(w io.Writer, set *signatures.Set, view TimelineView) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if _, err := io.WriteString(bw, `{"displayTimeUnit":"ns","otherData":`); err != nil {
		return err
	}
	other := map[string]any{"workload": set.Source.Workload, "trace": set.Source.File, "gpu": set.Source.GPU(), "exported_by": "kreplay"}
	if err := enc.Encode(other); err != nil {
		return err
	}
	io.WriteString(bw, `,"traceEvents":[`)
	first := true
	emit := func(e traceEvent) error {
		if !first {
			bw.WriteByte(',')
		}
		first = false
		return enc.Encode(e)
	}
	for _, e := range timelineMetadata(set, view) {
		if err := emit(e); err != nil {
			return err
		}
	}
	for _, inv := range set.Timeline {
		sig := set.Signatures[inv.Sig]
		if err := emit(tracedEvent(sig, inv)); err != nil {
			return err
		}
		if ns, ok := view.ReplayNS[sig.ID]; ok && ns > 0 {
			if err := emit(replayedEvent(sig, inv, ns, view.Path[sig.ID])); err != nil {
				return err
			}
		}
	}
	io.WriteString(bw, "]}\n")
	return bw.Flush()
}

// timelineMetadata names each device's process and each stream's threads.
func timelineMetadata(set *signatures.Set, view TimelineView) []traceEvent {
	type track struct{ dev, stream int64 }
	seen := map[track]bool{}
	var tracks []track
	for _, inv := range set.Timeline {
		t := track{inv.Device, inv.Stream}
		if !seen[t] {
			seen[t] = true
			tracks = append(tracks, t)
		}
	}
	slices.SortFunc(tracks, func(a, b track) int {
		if a.dev != b.dev {
			return int(a.dev - b.dev)
		}
		return int(a.stream - b.stream)
	})
	var out []traceEvent
	named := map[int64]bool{}
	for _, t := range tracks {
		if !named[t.dev] {
			named[t.dev] = true
			out = append(out, traceEvent{Name: "process_name", Ph: "M", PID: t.dev,
				Args: map[string]any{"name": fmt.Sprintf("GPU %d: %s (traced, and replayed by kreplay)", t.dev, set.Source.GPU())}})
		}
		out = append(out, traceEvent{Name: "thread_name", Ph: "M", PID: t.dev, TID: t.stream, Args: map[string]any{"name": fmt.Sprintf("stream %d", t.stream)}})
		if len(view.ReplayNS) > 0 {
			out = append(out, traceEvent{Name: "thread_name", Ph: "M", PID: t.dev, TID: replayTidBase + t.stream,
				Args: map[string]any{"name": fmt.Sprintf("stream %d (replayed)", t.stream)}})
		}
	}
	return out
}

// tracedEvent is a traced activity as a Kineto trace writes it.
func tracedEvent(sig *signatures.Signature, inv signatures.Invocation) traceEvent {
	dur := float64(inv.Dur) / 1e3
	e := traceEvent{Name: sig.Kernel, Ph: "X", TS: float64(inv.Start) / 1e3, Dur: &dur, PID: inv.Device, TID: inv.Stream,
		Args: map[string]any{"device": inv.Device, "stream": inv.Stream, "kreplay signature": sig.ID, "kreplay class": string(sig.Class)}}
	switch sig.Activity {
	case signatures.ActivityMemcpy:
		e.Cat = "gpu_memcpy"
	case signatures.ActivityMemset:
		e.Cat = "gpu_memset"
	default:
		e.Cat = "kernel"
	}
	if m := sig.Memory; m != nil {
		e.Args["bytes"] = m.Bytes
	}
	if l := sig.Launch; l != nil {
		e.Args["grid"] = l.Grid
		e.Args["block"] = l.Block
		e.Args["shared memory"] = l.SharedMem
		e.Args["registers per thread"] = l.Registers
	}
	if c := sig.Collective; c != nil {
		e.Args["Collective name"] = c.Op
		e.Args["In msg nelems"] = c.Nelems
		e.Args["dtype"] = c.DType
		e.Args["Group size"] = c.Ranks
	}
	return e
}

// replayedEvent is an invocation's replay, at its traced start.
func replayedEvent(sig *signatures.Signature, inv signatures.Invocation, replayNS float64, path string) traceEvent {
	dur := replayNS / 1e3
	args := map[string]any{"signature": sig.ID, "label": sig.Label, "traced_ns": inv.Dur, "replay_ns": replayNS}
	if inv.Dur > 0 {
		args["ratio"] = replayNS / float64(inv.Dur)
	}
	if path != "" {
		args["path"] = path
	}
	return traceEvent{Name: sig.Kernel, Cat: ReplayCat, Ph: "X", TS: float64(inv.Start) / 1e3, Dur: &dur,
		PID: inv.Device, TID: replayTidBase + inv.Stream, Args: args}
}

// ReplayTimes gives each signature of a workload its replayed time per
// invocation: the median of its runs' ns/op.
func ReplayTimes(rs *Results, workload string) map[string]float64 {
	out := map[string]float64{}
	w := rs.Workload(workload)
	if w == nil {
		return out
	}
	for id, s := range w.Sigs {
		if len(s.NS) > 0 {
			out[id] = Summarize(s.NS, 0.95).Center
		}
	}
	return out
}
