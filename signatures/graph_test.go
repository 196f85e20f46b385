package signatures

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kreplay/kreplay/internal/gztest"
	"github.com/kreplay/kreplay/internal/inject"
)

// graphBundle is a real capture of a model run through CUDA graphs
// (torch.compile's reduce-overhead mode; testdata/README.md): its trace
// and the index of the launches the recorder kept when the graph was
// captured and wrote for each of the graph's launches.
const graphBundle = "testdata/l1b-ro_prefill/"

func readGraphIndex(t *testing.T) *inject.Index {
	t.Helper()
	b := gztest.ReadFile(t, graphBundle+"index.json.gz")
	x, err := inject.ReadIndex(fstest.MapFS{"index.json": {Data: b}})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// The kernels a CUDA graph runs link to the compiled region around the
// graph's launch, an op with no shapes: they match the launches recorded
// at capture, in order, and the launches' keys tell apart the signatures
// that the op cannot: here two GEMMs of one kernel and grid, one of them
// 3.5 times the other's time (24.7 and 86.7 µs), which a plain trace
// merges into one signature. A signature that is alone keeps the ID a
// plain trace gives it.
func TestGraphKernelsByLaunch(t *testing.T) {
	x := readGraphIndex(t)
	set, err := ImportFile(graphBundle+"trace.json.gz", Options{Kernels: x})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ImportFile(graphBundle+"trace.json.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range plain.Signatures {
		if s.Activity != ActivityKernel {
			continue
		}
		// The graph's static inputs are copied in by a kernel of its own.
		if inRegion := strings.HasPrefix(s.Op, "Torch-Compiled Region"); s.Graph != inRegion {
			t.Errorf("%s %s: graph %v", s.ID, s.Label, s.Graph)
		}
		if s.Graph && s.Unreplayable != "" && !strings.Contains(s.Unreplayable, "kreplay capture") {
			t.Errorf("%s %s: %q does not say what would replay it", s.ID, s.Label, s.Unreplayable)
		}
	}
	m := set.Kernels
	if m.Traced < 200 || m.Matched != m.Traced {
		t.Fatalf("%d of %d traced kernels matched the %d recorded launches", m.Matched, m.Traced, m.Recorded)
	}
	plainIDs := map[string]bool{}
	for _, s := range plain.Signatures {
		plainIDs[s.ID] = true
	}
	ids := map[string]bool{}
	split, graphed := 0, 0
	for _, s := range set.Signatures {
		if ids[s.ID] {
			t.Errorf("ID %s twice", s.ID)
		}
		ids[s.ID] = true
		if s.Activity != ActivityKernel {
			continue
		}
		if s.Binary == nil {
			t.Errorf("%s %s: no binary", s.ID, s.Label)
			continue
		}
		if strings.HasPrefix(s.Op, "Torch-Compiled Region") {
			graphed++
		}
		if s.Binary.Keys != 1 {
			t.Errorf("%s %s: %d recorded launches in one signature", s.ID, s.Label, s.Binary.Keys)
		}
		switch {
		case strings.Contains(s.Label, "[launch "):
			split++
			if plainIDs[s.ID] {
				t.Errorf("%s %s: split by its launch, but with a plain trace's ID", s.ID, s.Label)
			}
		case !plainIDs[s.ID]:
			t.Errorf("%s %s: alone, but not with its plain trace's ID", s.ID, s.Label)
		}
	}
	if graphed < 20 || split == 0 {
		t.Errorf("%d signatures of the graph's kernels, %d split by launch", graphed, split)
	}
	var n, pn int
	spread := func(s *Signature) float64 { return float64(s.TracedNS.Max) / float64(max(s.TracedNS.Min, 1)) }
	wide := 0.0
	for _, s := range plain.Signatures {
		pn += s.Count
		if s.Class == ClassGEMM {
			wide = max(wide, spread(s))
		}
	}
	for _, s := range set.Signatures {
		n += s.Count
		if s.Class == ClassGEMM && spread(s) > 1.5 {
			t.Errorf("%s %s: traced %d to %d ns, still two GEMMs in one", s.ID, s.Label, s.TracedNS.Min, s.TracedNS.Max)
		}
	}
	if wide < 3 {
		t.Errorf("the plain trace's widest GEMM signature spans x%.1f: no merged GEMMs to tell apart", wide)
	}
	if n != pn {
		t.Errorf("%d invocations with binaries, %d without", n, pn)
	}
}

// Inspect totals what CUDA graphs ran, and says so in its text; a trace
// without graphs has no such line.
func TestInspectGraphs(t *testing.T) {
	set, err := ImportFile(graphBundle+"trace.json.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := Inspect(set, 0)
	if g := in.Graph; g.Signatures < 20 || g.Share < 0.99 || g.Share > 1 {
		t.Errorf("graph total %+v: want nearly all of the trace", g)
	}
	var b strings.Builder
	if err := in.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "CUDA graphs ran") {
		t.Errorf("no line on CUDA graphs in:\n%s", b.String())
	}
	eager, err := ImportFile("testdata/qwen2-0.5b-bf16-compiled_prefill.trace.json.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g := Inspect(eager, 0).Graph; g.Signatures != 0 {
		t.Errorf("a trace without graphs: %+v", g)
	}
}
