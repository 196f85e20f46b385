package schedule

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/kreplay/kreplay/signatures"
)

// FromTrace makes the schedule of one inference from a Kineto trace's
// CUDA runtime and driver calls (the fallback for a bundle without a
// recorded schedule; see FromRuntime). name is used in errors.
func FromTrace(r io.Reader, name string) (*Schedule, error) {
	rt, err := signatures.ReadRuntime(r, name)
	if err != nil {
		return nil, err
	}
	s, err := FromRuntime(rt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// FromRuntime makes the schedule of one inference from a trace's runtime
// calls. Its Source is SourceTrace: the profiler slowed the host, so every
// figure made from it is a guess. The calls are mapped to the schedule's
// kinds by name (any _v2, _ptsz or _ptds suffix dropped) and by the GPU
// activities they launched:
//
//   - a call that launched activities is a G if it is a graph launch or
//     launched several, else an L, C or S by its activity (a copy is
//     synchronous unless the call's name ends in Async); a call that
//     launched nothing is dropped unless named below, so its time counts
//     as framework time;
//   - cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize
//     (and the driver's cuStream-, cuEvent-, cuCtxSynchronize) are W;
//   - cudaStreamQuery and cudaEventQuery are Q, ready when the trace's GPU
//     had reached the target by the call's exit;
//   - cudaEventRecord(WithFlags) is R and cudaStreamWaitEvent is E.
//
// The trace names no stream for a wait, query, record or stream wait, and
// no event handle: the stream is taken as that of the last GPU activity
// launched before the call, except for a stream wait, whose stream is
// that of the next GPU op (the stream made to wait is the one launched to
// next, as around a collective on its own stream), and every event is
// taken as one (handle 0x0), so a wait on an event waits on the last one
// recorded. A call nested in another on the same thread (a driver call
// inside a runtime call) is part of the outer call. Only the threads that
// launched GPU work are the inference's host: the calls of others (a
// watchdog thread's event queries) are dropped. Launches keep the trace's kernel names; streams are the
// trace's stream numbers. The inference ends at the later of the last
// call's exit and the last GPU activity's end: the trace's wall span.
func FromRuntime(rt *signatures.Runtime) (*Schedule, error) {
	s := &Schedule{Version: Version, Source: SourceTrace, Clock: "trace", Names: map[uint32]string{}}
	b := traceBuilder{rt: rt, s: s, ids: map[string]uint32{}, tail: map[uint64]int64{}}
	var inf Inference
	calls := hostCalls(rt)
	launching := map[int64]bool{}
	for _, hc := range calls {
		if len(hc.acts) > 0 {
			launching[hc.call.TID] = true
		}
	}
	for _, hc := range calls {
		if !launching[hc.call.TID] {
			continue
		}
		c, ok, err := b.call(hc)
		if err != nil {
			return nil, fmt.Errorf("call %q at %d ns: %w", hc.call.Name, hc.call.TS, err)
		}
		if !ok {
			continue
		}
		if len(inf.Calls) == 0 {
			inf.Start = hc.call.TS
		}
		c.Enter, c.Exit = hc.call.TS-inf.Start, hc.call.TS-inf.Start+hc.call.Dur
		inf.End = max(inf.End, c.Exit)
		inf.Calls = append(inf.Calls, c)
	}
	if len(inf.Calls) == 0 {
		return nil, fmt.Errorf("the trace has no CUDA call a schedule records")
	}
	for _, a := range rt.Activities {
		inf.End = max(inf.End, a.TS+a.Dur-inf.Start)
	}
	waitingStreams(inf.Calls)
	s.Inferences = []Inference{inf}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// waitingStreams gives each stream wait (E) the stream of the next GPU op
// after it, where there is one.
func waitingStreams(calls []Call) {
	next, ok := uint64(0), false
	for k := len(calls) - 1; k >= 0; k-- {
		c := &calls[k]
		switch {
		case c.Kind.GPU():
			next, ok = c.Stream, true
		case c.Kind == StreamWait && ok:
			c.Stream = next
		}
	}
}

// hostCall is a top-level call with the activities of the calls nested
// in it.
type hostCall struct {
	call *signatures.RuntimeCall
	acts []int
}

// hostCalls returns the trace's top-level calls in order: a call within
// the span of the previous top-level call on its thread is part of it.
func hostCalls(rt *signatures.Runtime) []hostCall {
	out := make([]hostCall, 0, len(rt.Calls))
	top := map[int64]int{} // thread -> index in out of its open call
	for i := range rt.Calls {
		c := &rt.Calls[i]
		if j, ok := top[c.TID]; ok {
			o := out[j].call
			if c.TS >= o.TS && c.TS+c.Dur <= o.TS+o.Dur {
				out[j].acts = append(out[j].acts, c.Activities...)
				continue
			}
		}
		top[c.TID] = len(out)
		out = append(out, hostCall{call: c, acts: c.Activities})
	}
	return out
}

var apiSuffix = regexp.MustCompile(`(_v[0-9]+|_ptsz|_ptds)+$`)

// apiName is a call's name without its variant suffixes.
func apiName(n string) string { return apiSuffix.ReplaceAllString(n, "") }

type traceBuilder struct {
	rt  *signatures.Runtime
	s   *Schedule
	ids map[string]uint32
	// stream is the stream of the last activity launched; tail is each
	// stream's latest activity end in the trace, event the trace time the
	// last recorded event completes.
	stream uint64
	tail   map[uint64]int64
	event  int64
}

// call maps one top-level call; ok is false for a call a schedule does not
// record. Enter and Exit are left to the caller.
func (b *traceBuilder) call(hc hostCall) (c Call, ok bool, err error) {
	if len(hc.acts) > 0 {
		c, err = b.gpuOp(hc)
		return c, err == nil, err
	}
	exit := hc.call.TS + hc.call.Dur
	switch apiName(hc.call.Name) {
	case "cudaStreamSynchronize", "cuStreamSynchronize":
		c = Call{Kind: Wait, Target: OnStream, Stream: b.stream}
	case "cudaEventSynchronize", "cuEventSynchronize":
		c = Call{Kind: Wait, Target: OnEvent}
	case "cudaDeviceSynchronize", "cuCtxSynchronize":
		c = Call{Kind: Wait, Target: OnContext}
	case "cudaStreamQuery", "cuStreamQuery":
		c = Call{Kind: Query, Target: OnStream, Stream: b.stream, Ready: b.tail[b.stream] <= exit}
	case "cudaEventQuery", "cuEventQuery":
		c = Call{Kind: Query, Target: OnEvent, Ready: b.event <= exit}
	case "cudaEventRecord", "cudaEventRecordWithFlags", "cuEventRecord", "cuEventRecordWithFlags":
		c = Call{Kind: Record, Stream: b.stream}
		b.event = b.tail[b.stream]
	case "cudaStreamWaitEvent", "cuStreamWaitEvent":
		c = Call{Kind: StreamWait, Stream: b.stream}
	default:
		return c, false, nil
	}
	return c, true, nil
}

// gpuOp maps a call that launched GPU activities.
func (b *traceBuilder) gpuOp(hc hostCall) (Call, error) {
	first := &b.rt.Activities[hc.acts[0]]
	c := Call{Stream: uint64(first.Stream)}
	for _, k := range hc.acts {
		a := &b.rt.Activities[k]
		st := uint64(a.Stream)
		b.tail[st] = max(b.tail[st], a.TS+a.Dur)
	}
	b.stream = c.Stream
	name := apiName(hc.call.Name)
	switch {
	case strings.Contains(name, "GraphLaunch") || len(hc.acts) > 1:
		c.Kind = Graph
	case first.Activity == signatures.ActivityKernel:
		c.Kind = Launch
		for i := 0; i < 3; i++ {
			g, bl := first.Grid[i], first.Block[i]
			if g < 1 || g > 1<<31 || bl < 1 || bl > 1<<31 {
				return c, fmt.Errorf("kernel %q: grid %v block %v", first.Name, first.Grid, first.Block)
			}
			c.Grid[i], c.Block[i] = uint32(g), uint32(bl)
		}
		c.Name = b.nameID(first.Name)
	case first.Activity == signatures.ActivityMemcpy:
		c.Kind, c.Bytes, c.Dir = Copy, first.Bytes, Direction(first.Copy)
		c.Sync = !strings.HasSuffix(name, "Async")
		if c.Dir == "" {
			return c, fmt.Errorf("copy %q: the trace names no direction", first.Name)
		}
	default:
		c.Kind, c.Bytes = Memset, first.Bytes
		c.Sync = !strings.HasSuffix(name, "Async")
	}
	return c, nil
}

// nameID returns the id of a kernel name, adding it.
func (b *traceBuilder) nameID(n string) uint32 {
	if id, ok := b.ids[n]; ok {
		return id
	}
	id := uint32(len(b.ids))
	b.ids[n] = id
	b.s.Names[id] = n
	return id
}
