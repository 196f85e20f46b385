package signatures

import (
	"fmt"
	"io"
	"sort"
)

// RuntimeCall is one CUDA runtime or driver API call of a trace (a
// cuda_runtime or cuda_driver event). Times are ns on the trace's clock.
type RuntimeCall struct {
	Name   string
	Driver bool // a cuda_driver event (else cuda_runtime)
	PID    int64
	TID    int64
	TS     int64
	Dur    int64

	Correlation int64
	HasCorr     bool
	ExternalID  int64
	HasExternal bool

	// Activities are the indices into Runtime.Activities (and so into the
	// Timeline of the Set imported from the same trace) of the GPU
	// activities that share the call's correlation id, in start order:
	// none for a call that launched nothing, one for a kernel launch, copy
	// or memset, the graph's activities for a graph launch.
	Activities []int
}

// RuntimeActivity is one GPU activity of a trace with its correlation id.
type RuntimeActivity struct {
	Activity    Activity
	Name        string
	Correlation int64
	HasCorr     bool
	Device      int64 // -1 when the trace does not say
	Stream      int64 // -1 when the trace does not say
	TS          int64
	Dur         int64
	// Bytes of a copy or memset; Copy is a copy's direction ("" when the
	// name does not say).
	Bytes int64
	Copy  CopyKind
	// Grid and Block of a kernel.
	Grid, Block [3]int64
}

// Runtime is what a trace records of the host's CUDA API calls and the
// GPU activities they launched.
type Runtime struct {
	// Calls are sorted by start, ties in trace order.
	Calls []RuntimeCall
	// Activities are in the order of the Timeline that Import builds from
	// the same trace: Activities[k] is Timeline[k].
	Activities []RuntimeActivity
}

// ReadRuntime reads the CUDA runtime and driver calls and the GPU
// activities (kernel, gpu_memcpy, gpu_memset) of the Kineto trace in r
// (plain or gzip JSON); name is used in errors. It checks the activities
// as Import does, so a trace Import accepts gives Activities parallel to
// its Timeline.
func ReadRuntime(r io.Reader, name string) (*Runtime, error) {
	rd, err := NewReader(r, name)
	if err != nil {
		return nil, err
	}
	rt := &Runtime{}
	for rd.Scan() {
		ev := rd.Event()
		if err := rt.add(ev); err != nil {
			return nil, &FormatError{File: name, Offset: ev.Offset, Event: ev.Index, Err: err}
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	rt.order()
	return rt, nil
}

func (rt *Runtime) add(ev *Event) error {
	switch ev.Cat {
	case "cuda_runtime", "cuda_driver":
		if !ev.HasTS {
			return fmt.Errorf("%s %q has no ts", ev.Cat, ev.Name)
		}
		if ev.Dur < 0 || ev.Dur > maxDurNS || ev.TS < -maxEventTS || ev.TS > maxEventTS {
			return fmt.Errorf("%w: %s %q at %d ns lasts %d ns", errAbsurd, ev.Cat, ev.Name, ev.TS, ev.Dur)
		}
		rt.Calls = append(rt.Calls, RuntimeCall{
			Name: ev.Name, Driver: ev.Cat == "cuda_driver", PID: ev.PID, TID: ev.TID, TS: ev.TS, Dur: ev.Dur,
			Correlation: ev.Correlation, HasCorr: ev.HasCorr, ExternalID: ev.ExternalID, HasExternal: ev.HasExternal,
		})
	case "kernel", "gpu_memcpy", "gpu_memset":
		// addActivity's checks are Import's: an activity it rejects fails
		// the read here as it fails Import.
		var im importer
		if err := im.addActivity(ev); err != nil {
			return err
		}
		a := RuntimeActivity{
			Activity: im.acts[0].act, Name: ev.Name, Correlation: ev.Correlation, HasCorr: ev.HasCorr,
			Device: ev.Device, Stream: ev.Stream, TS: ev.TS, Dur: ev.Dur, Bytes: ev.Bytes,
		}
		switch a.Activity {
		case ActivityKernel:
			a.Bytes, a.Grid, a.Block = 0, ev.Grid, ev.Block
		case ActivityMemcpy:
			a.Copy, _ = copyKind(ev.Name)
		}
		rt.Activities = append(rt.Activities, a)
	}
	return nil
}

// order sorts the activities as Import's timeline (by start, stable) and
// the calls by start, and gives each call its activities.
func (rt *Runtime) order() {
	sort.SliceStable(rt.Activities, func(i, j int) bool { return rt.Activities[i].TS < rt.Activities[j].TS })
	sort.SliceStable(rt.Calls, func(i, j int) bool { return rt.Calls[i].TS < rt.Calls[j].TS })
	byCorr := make(map[int64]int, len(rt.Calls))
	for i, c := range rt.Calls {
		if c.HasCorr {
			byCorr[c.Correlation] = i
		}
	}
	for k, a := range rt.Activities {
		if !a.HasCorr {
			continue
		}
		if i, ok := byCorr[a.Correlation]; ok {
			rt.Calls[i].Activities = append(rt.Calls[i].Activities, k)
		}
	}
}
