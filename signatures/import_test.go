package signatures

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kreplay/kreplay/internal/traces"
)

// oracle is an independent reading of a trace with encoding/json, used to
// check the streaming importer.
type oracle struct {
	activities int
	linkable   int // activities whose External id (or runtime call's) names a cpu_op
	nccl       int
}

// oracleArgs are the arguments of an event that the oracle reads (any
// other is skipped: decoding every one into a map took most of the time
// of the import tests under -race).
type oracleArgs struct {
	ExternalID  any `json:"External id"`
	Correlation any `json:"correlation"`
	Collective  any `json:"Collective name"`
}

func readOracle(t *testing.T, name string) *oracle {
	t.Helper()
	var tr struct {
		TraceEvents []struct {
			Cat  string     `json:"cat"`
			Args oracleArgs `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(plainTrace(t, name), &tr); err != nil {
		t.Fatal(err)
	}
	o := &oracle{}
	ops := map[int64]bool{}
	runtimeExt := map[int64]int64{}
	id := func(v any) (int64, bool) {
		f, ok := v.(float64)
		return int64(f), ok
	}
	for _, e := range tr.TraceEvents {
		switch e.Cat {
		case "cpu_op":
			if x, ok := id(e.Args.ExternalID); ok {
				ops[x] = true
			}
		case "cuda_runtime", "cuda_driver":
			c, ok1 := id(e.Args.Correlation)
			x, ok2 := id(e.Args.ExternalID)
			if ok1 && ok2 {
				runtimeExt[c] = x
			}
		}
	}
	for _, e := range tr.TraceEvents {
		switch e.Cat {
		case "kernel", "gpu_memcpy", "gpu_memset":
			o.activities++
			if e.Args.Collective != nil {
				o.nccl++
			}
			if x, ok := id(e.Args.ExternalID); ok && ops[x] {
				o.linkable++
			} else if c, ok := id(e.Args.Correlation); ok && ops[runtimeExt[c]] {
				o.linkable++
			}
		}
	}
	return o
}

// imported holds each embedded trace's set, imported once for the tests
// that only read it (importEmbedded); importFresh imports anew.
var imported sync.Map // name -> *importOnce

type importOnce struct {
	once sync.Once
	set  *Set
	err  error
}

// importEmbedded returns the shared import of an embedded trace: the
// caller must not change it.
func importEmbedded(t testing.TB, name string) *Set {
	t.Helper()
	v, _ := imported.LoadOrStore(name, &importOnce{})
	o := v.(*importOnce)
	o.once.Do(func() {
		f, err := traces.Open(name)
		if err != nil {
			o.err = err
			return
		}
		defer f.Close()
		o.set, o.err = Import(f, name, Options{})
	})
	if o.err != nil {
		t.Fatal(o.err)
	}
	return o.set
}

// importFresh imports an embedded trace anew, for a caller that changes
// the set or checks that importing again gives the same.
func importFresh(t testing.TB, name string) *Set {
	t.Helper()
	f, err := traces.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := Import(f, name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestImportRealTraces(t *testing.T) {
	for _, name := range traces.Names() {
		t.Run(name, func(t *testing.T) {
			set := importEmbedded(t, name)
			o := readOracle(t, name)

			count := 0
			collectives := 0
			for _, s := range set.Signatures {
				count += s.Count
				if s.Tier < TierMemory || s.Tier > TierKernel {
					t.Errorf("%s: tier %d", s.ID, s.Tier)
				}
				if s.Count <= 0 || s.TracedNS.Min > s.TracedNS.Median || s.TracedNS.Median > s.TracedNS.Max ||
					s.TracedNS.Total < s.TracedNS.Max {
					t.Errorf("%s: inconsistent stats %+v count %d", s.ID, s.TracedNS, s.Count)
				}
				if s.Class == ClassGEMM && s.Unreplayable == "" {
					checkGEMM(t, s)
				}
				if s.Class == ClassCollective {
					collectives += s.Count
					c := s.Collective
					if s.Tier != TierLibrary || c == nil || c.Nelems <= 0 || c.DType == "" || c.Ranks != 2 {
						t.Errorf("%s: collective %+v tier %d", s.ID, c, s.Tier)
					}
				}
				if s.Tier == TierMemory && (s.Memory == nil || s.Memory.Bytes < 0) {
					t.Errorf("%s: memory op without bytes", s.ID)
				}
			}
			if count != o.activities || set.Links.Activities != o.activities || len(set.Timeline) != o.activities {
				t.Errorf("signature counts sum to %d, links %d, timeline %d; the trace has %d GPU activities",
					count, set.Links.Activities, len(set.Timeline), o.activities)
			}
			linked := set.Links.ByExternalID + set.Links.ByCorrelation
			if linked < o.linkable {
				t.Errorf("linked %d activities, the trace links %d", linked, o.linkable)
			}
			if linked+set.Links.Unlinked != o.activities {
				t.Errorf("link counts %+v do not add up to %d", set.Links, o.activities)
			}
			if collectives != o.nccl {
				t.Errorf("%d collective invocations, the trace has %d NCCL kernels", collectives, o.nccl)
			}
			// Every invocation of a signature shares its op and inputs.
			seen := map[string]bool{}
			for _, s := range set.Signatures {
				if seen[s.ID] {
					t.Errorf("duplicate signature id %s", s.ID)
				}
				seen[s.ID] = true
			}
			// Busy time never exceeds the summed durations or the wall span.
			for _, d := range set.Summary {
				if d.BusyNS > d.KernelNS || d.BusyNS > d.WallNS || d.IdleNS < 0 {
					t.Errorf("device %d summary %+v", d.Device, d)
				}
			}
		})
	}
}

// checkGEMM checks m, n, k and batch against the op's input shapes.
func checkGEMM(t *testing.T, s *Signature) {
	t.Helper()
	g := s.GEMM
	if g == nil || g.M <= 0 || g.N <= 0 || g.K <= 0 || g.Batch <= 0 {
		t.Errorf("%s %s: gemm %+v", s.ID, s.Label, g)
		return
	}
	var a, b []int64
	switch s.Op {
	case "aten::mm", "aten::bmm":
		a, b = s.Inputs[0].Shape, s.Inputs[1].Shape
	case "aten::addmm", "aten::baddbmm":
		a, b = s.Inputs[1].Shape, s.Inputs[2].Shape
	default:
		return
	}
	r := len(a)
	want := [4]int64{a[r-2], b[r-1], a[r-1], 1}
	if r == 3 {
		want[3] = a[0]
	}
	if got := [4]int64{g.M, g.N, g.K, g.Batch}; got != want || b[r-2] != g.K {
		t.Errorf("%s %s: m,n,k,batch = %v, shapes %v x %v want %v", s.ID, s.Label, got, a, b, want)
	}
	if g.LDA <= 0 || g.LDB <= 0 || g.LDC < g.N {
		t.Errorf("%s %s: leading dimensions %d %d %d", s.ID, s.Label, g.LDA, g.LDB, g.LDC)
	}
}

// The nvjet kernel names end in the transposes cuBLAS ran with; the
// derived cuBLAS call must match them.
func TestGEMMTransposesMatchKernelNames(t *testing.T) {
	checked := 0
	for _, name := range traces.Names() {
		for _, s := range importEmbedded(t, name).Signatures {
			if s.GEMM == nil || len(s.Kernel) < 4 || s.Kernel[:5] != "nvjet" {
				continue
			}
			tail := s.Kernel[len(s.Kernel)-3:]
			if got := s.GEMM.TransA + s.GEMM.TransB; got != tail[:2] {
				t.Errorf("%s %s: derived %s, kernel %s", name, s.Label, got, s.Kernel)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("checked only %d nvjet GEMMs", checked)
	}
}

func TestSplitKReducePointsAtGEMM(t *testing.T) {
	set := importEmbedded(t, "h100_bloom-560m_generate.trace.json.gz")
	n := 0
	for _, s := range set.Signatures {
		if !isSplitKReduce(s.Kernel) {
			continue
		}
		n++
		g := set.ByID(s.PartOf)
		if g == nil || g.Class != ClassGEMM || g.Op != s.Op || isSplitKReduce(g.Kernel) {
			t.Errorf("split-K reduce %s %s points at %v", s.ID, s.Label, g)
		}
	}
	if n == 0 {
		t.Fatal("no split-K reduce kernels in the generate trace")
	}
}

func TestSetRoundTrip(t *testing.T) {
	for _, name := range traces.Names() {
		set := importEmbedded(t, name)
		var buf bytes.Buffer
		if err := WriteSet(&buf, set); err != nil {
			t.Fatal(err)
		}
		back, err := ReadSet(bytes.NewReader(buf.Bytes()), name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(set, back, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: round trip differs (-want +got):\n%s", name, diff)
		}
		var buf2 bytes.Buffer
		if err := WriteSet(&buf2, back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
			t.Errorf("%s: second write differs from the first", name)
		}
	}
}

// IDs hash the identity only: importing again, or importing the other
// rank's trace, gives the same ID for the same identity.
func TestIDsAreStable(t *testing.T) {
	a := importEmbedded(t, "2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz")
	b := importEmbedded(t, "2xh200_llama-7b-tp2_prefill.rank1.trace.json.gz")
	ids := map[string]string{}
	for _, s := range a.Signatures {
		ids[s.ID] = s.Label
	}
	same := 0
	for _, s := range b.Signatures {
		if l, ok := ids[s.ID]; ok {
			same++
			if l != s.Label {
				t.Errorf("id %s labels %q and %q", s.ID, l, s.Label)
			}
		}
	}
	// Both ranks run the same GEMMs; they differ in durations only.
	if same < len(a.Signatures)/2 {
		t.Errorf("only %d of %d signature ids shared between ranks", same, len(a.Signatures))
	}
	again := importFresh(t, "2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz")
	for i := range a.Signatures {
		if a.Signatures[i].ID != again.Signatures[i].ID {
			t.Fatalf("signature %d: id %s then %s", i, a.Signatures[i].ID, again.Signatures[i].ID)
		}
	}
}

// A large tensor's strides multiply to more than any tensor has elements;
// only dims are checked that way.
func TestLargeStrides(t *testing.T) {
	op := `{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":1,"dur":5,"args":{"External id":7,` +
		`"Input Dims":[[4,32,1024,1024],[4,32,1024,1024]],"Input Strides":[[33554432,1048576,1024,1],[33554432,1048576,1024,1]],` +
		`"Input type":["c10::Half","c10::Half"],"Concrete Inputs":["",""]}}`
	set, err := Import(strings.NewReader(`{"traceEvents":[`+op+`,`+goodKernel+`]}`), "big.json", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := set.Signatures[0].Tensor.Numel; n != 4*32*1024*1024 {
		t.Errorf("numel %d", n)
	}
}

func TestWorkloadName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"h100_bloom-560m_prefill.trace.json.gz", "bloom-560m_prefill"},
		{"/x/y/2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz", "llama-7b-tp2_prefill"},
		{"mytrace.json", "mytrace"},
		{"a100_x.json", "x"},
	} {
		if got := WorkloadName(tc.in); got != tc.want {
			t.Errorf("WorkloadName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseMicros(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"4427811673313.539", 4427811673313539},
		{"0.768", 768},
		{"12", 12000},
		{"1.5", 1500},
		{"1.0005", 1001},
		{"1.0004", 1000},
		{"-2.5", -2500},
	} {
		l := &lexer{b: []byte(tc.in)}
		got, err := l.micros()
		if err != nil || got != tc.want {
			t.Errorf("micros(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	tl := Timeline{
		{Device: 0, Start: 0, Dur: 10},
		{Device: 0, Start: 5, Dur: 10}, // overlaps: busy 0-15
		{Device: 0, Start: 20, Dur: 5}, // gap of 5
		{Device: 1, Start: 100, Dur: 1},
	}
	got := Summarize(tl)
	want := []DeviceSummary{
		{Device: 0, Activities: 3, WallNS: 25, BusyNS: 20, IdleNS: 5, BusyFraction: 0.8, KernelNS: 25},
		{Device: 1, Activities: 1, WallNS: 1, BusyNS: 1, IdleNS: 0, BusyFraction: 1, KernelNS: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

func TestImportBusyTimeMatchesREADME(t *testing.T) {
	// shared/traces/README.md: BLOOM-560M generate keeps the GPU busy for
	// 27.7 ms of kernels.
	set := importEmbedded(t, "h100_bloom-560m_generate.trace.json.gz")
	if b := set.Summary[0].BusyNS; b < 27.6e6 || b > 27.8e6 {
		t.Errorf("busy %d ns, the trace's README says 27.7 ms", b)
	}
}
