package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/signatures"
)

// capturedSet reads the bundle that KREPLAY_TEST_BUNDLE names (a
// directory kreplay capture wrote, its kernels directory with it), so
// that its signatures replay by their captured binaries; the test skips
// without one (the bundles are too large for testdata).
func capturedSet(t *testing.T) *signatures.Set {
	t.Helper()
	dir := os.Getenv("KREPLAY_TEST_BUNDLE")
	if dir == "" {
		t.Skip("KREPLAY_TEST_BUNDLE names no bundle with its kernels directory")
	}
	kfs := os.DirFS(filepath.Join(dir, "kernels"))
	x, err := inject.ReadIndex(kfs)
	if err != nil {
		t.Fatal(err)
	}
	set, err := signatures.ImportFile(filepath.Join(dir, "trace.json.gz"), signatures.Options{Kernels: x, KernelsFS: kfs})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// A timeline on the recorded data flow shares the captured binaries'
// allocations: it prepares the same launches in fewer bytes, replays
// them, reads its shared buffers' values back, and closes.
func TestGPUTimelineDataFlow(t *testing.T) {
	set := capturedSet(t)
	d := openGPU(t)
	var res [2]*TimelineResult
	var bytes [2]int64
	for i, flow := range []bool{false, true} {
		tl, err := d.PrepareTimeline(set, TimelineOptions{DataFlow: flow})
		if err != nil {
			t.Fatalf("data flow %v: %v", flow, err)
		}
		bytes[i] = tl.BufferBytes
		res[i], err = tl.Measure(quick)
		if cerr := tl.Close(); cerr != nil {
			t.Errorf("data flow %v: close: %v", flow, cerr)
		}
		if err != nil {
			t.Fatalf("data flow %v: %v", flow, err)
		}
		t.Logf("data flow %v: %d bytes of buffers; %s", flow, bytes[i], res[i])
	}
	if res[0].SharedBuffers != 0 || res[1].SharedBuffers == 0 {
		t.Errorf("shared allocations %d without the data flow, %d with it; want 0 and some", res[0].SharedBuffers, res[1].SharedBuffers)
	}
	if res[1].Invocations != res[0].Invocations {
		t.Errorf("%d invocations on the data flow, %d without", res[1].Invocations, res[0].Invocations)
	}
	if res[1].SharedAfter == nil || res[1].SharedAfter.Bytes == 0 {
		t.Errorf("no census of the shared buffers after the samples: %s", res[1].SharedErr)
	}
	if bytes[1] >= bytes[0] {
		t.Errorf("buffers %d bytes on the data flow, %d without: want fewer", bytes[1], bytes[0])
	}
}

// A timeline on the recorded data flow runs its invocations one at a
// time, synchronizing after each, for two passes, then as its graph,
// without a CUDA error: a kernel that faults is named by its place in
// the timeline. With KREPLAY_TEST_LAUNCH_LOG naming a file, each launch
// is written there before it is made, so that a process that dies in
// the driver leaves the last launch it tried.
func TestGPUTimelineDataFlowStepwise(t *testing.T) {
	set := capturedSet(t)
	d := openGPU(t)
	tl, err := d.PrepareTimeline(set, TimelineOptions{DataFlow: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tl.Close(); err != nil {
			t.Error(err)
		}
	})
	var log *os.File
	if name := os.Getenv("KREPLAY_TEST_LAUNCH_LOG"); name != "" {
		if log, err = os.Create(name); err != nil {
			t.Fatal(err)
		}
		defer log.Close()
	}
	s := d.stream
	for pass := range 2 {
		for i, p := range tl.order {
			if log != nil {
				fmt.Fprintf(log, "pass %d launch %d %s %s\n", pass, i, p.Sig.ID, p.Sig.Label)
			}
			err := d.Do(func() error {
				if err := p.Kernel.Launch(s, 0); err != nil {
					return err
				}
				return s.Synchronize()
			})
			if err != nil {
				t.Fatalf("pass %d, launch %d of %d (%s %s): %v", pass, i, len(tl.order), p.Sig.ID, p.Sig.Label, err)
			}
		}
		t.Logf("pass %d: %d launches, one at a time, without an error", pass, len(tl.order))
	}
	for i := range 3 {
		if log != nil {
			fmt.Fprintf(log, "graph launch %d\n", i)
		}
		if err := d.Do(func() error {
			if err := tl.graph.Launch(s); err != nil {
				return err
			}
			return s.Synchronize()
		}); err != nil {
			t.Fatalf("graph launch %d: %v", i, err)
		}
	}
	t.Logf("the graph of %d launches, 3 times, without an error", len(tl.order))
}
