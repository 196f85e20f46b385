package replay

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/signatures"
)

// capturedSet reads the bundle that KREPLAY_TEST_BUNDLE names (a
// directory kreplay capture wrote, its kernels directory with it), so
// that its signatures replay by their captured binaries; the test skips
// without one (the bundles are too large for testdata). On a decode's
// bundle TestGPUTimelineDataFlow can fail: the data flow's values drift
// into indices out of range (results/h200/timeline-dataflow/).
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

// A timeline on the recorded data flow either refuses with
// ErrDataFlowFault, naming the launch that failed on the shared buffers
// (a decode's index out of range), or launches its graph three times
// without an error; the process must not die in the driver either way.
func TestGPUTimelineDataFlowChecked(t *testing.T) {
	set := capturedSet(t)
	d := openGPU(t)
	tl, err := d.PrepareTimeline(set, TimelineOptions{DataFlow: true})
	if errors.Is(err, ErrDataFlowFault) {
		t.Logf("refused: %v", err)
		if cuda.IsSticky(err) && d.Lost() == nil {
			t.Error("a fault that loses the context did not mark the device lost")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tl.Close(); err != nil {
			t.Error(err)
		}
	})
	s := d.stream
	for i := range 3 {
		if err := d.Do(func() error {
			if err := tl.graph.Launch(s); err != nil {
				return err
			}
			return s.Synchronize()
		}); err != nil {
			t.Fatalf("graph launch %d after the check passed: %v", i, err)
		}
	}
	t.Logf("checked, then the graph of %d launches 3 times without an error", len(tl.order))
}
