package predict

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

const (
	h100 = "NVIDIA H100 80GB HBM3" // the GPU the embedded traces came from
	h200 = "NVIDIA H200"
)

// unlabelledPrefill is the REAL recorded output of the BLOOM-560M prefill
// set on the H100 written before configuration and fidelity lines existed
// (6 runs of every signature; not *.bench, so that TestRecordedOutput
// reads only testdata/h100-bloom-560m_prefill.bench, its successor with
// those lines). The tests that add SYNTHETIC lines start from it.
const unlabelledPrefill = "h100-bloom-560m_prefill.unlabelled.txt"

// recordedPrefill is the REAL recorded output of the BLOOM-560M prefill
// set on the H100 (unlabelledPrefill).
func recordedPrefill(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", unlabelledPrefill))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// labelled is recorded output with SYNTHETIC lines added: config, as
// configuration lines after each "cpu:" line (ahead of every result), and
// a fidelity line per signature from fid (none where fid returns ok
// false).
func labelled(set *signatures.Set, recorded, config string, fid func(s *signatures.Signature) (bench.Fidelity, bool)) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(recorded, "\n") {
		b.WriteString(line)
		if strings.HasPrefix(line, "cpu: ") {
			b.WriteString(config)
		}
	}
	if fid != nil {
		w := bench.Workload(set.Source)
		for _, s := range set.Signatures {
			if f, ok := fid(s); ok && s.PartOf == "" {
				b.WriteString(bench.FidelityLine("Benchmark"+bench.ReplayName+"/"+bench.SignatureName(w, s.ID), f) + "\n")
			}
		}
	}
	return b.String()
}

// byTier is a SYNTHETIC fidelity per signature, as a replay of the set
// on another GPU would say it: cuBLAS chose another kernel for every
// GEMM, tier 1 copied as traced, tier 3 ran kreplay's kernels.
func byTier(s *signatures.Signature) (bench.Fidelity, bool) {
	switch s.Tier {
	case signatures.TierMemory:
		return bench.Fidelity{Kind: replay.FidelityMemory, Path: string(s.Class)}, true
	case signatures.TierLibrary:
		return bench.Fidelity{Kind: replay.FidelityOther, Path: "cublasGemmEx", Kernel: "nvjet_sm90_hsh_128x256_64x4_2x1_v_bz_coopA_TNN"}, true
	}
	return bench.Fidelity{Kind: replay.FidelityOwn, Path: "kreplay:" + strings.TrimPrefix(s.Op, "aten::")}, true
}

// A replay on another GPU than the traced one is a projection: the report
// says so in the workload's header and counts another kernel as the
// library's choice on the target, not as a fidelity loss. The times are
// the REAL recorded H100 output; the configuration and fidelity lines are
// SYNTHETIC (the recorded output has none).
func TestReportProjection(t *testing.T) {
	set := prefillSet(t)
	recorded := recordedPrefill(t)
	tests := []struct {
		name, config    string
		gpu, trace      string
		projected       bool
		header, notText string
	}{
		{name: "no configuration lines", trace: h100, header: "(h100_bloom-560m_prefill.trace.json.gz, traced on " + h100 + "):"},
		{name: "replayed where traced", config: "gpu: " + h100 + "\ntrace-gpu: " + h100 + "\n", gpu: h100, trace: h100,
			header: "(h100_bloom-560m_prefill.trace.json.gz, " + h100 + "):", notText: "projected"},
		{name: "projected", config: "gpu: " + h200 + "\ngpu-sms: 132\ntrace-gpu: " + h100 + "\n", gpu: h200, trace: h100, projected: true,
			header: "(h100_bloom-560m_prefill.trace.json.gz, projected from " + h100 + " onto " + h200 + "):"},
		{name: "trace GPU from the set", config: "gpu: " + h200 + "\n", gpu: h200, trace: h100, projected: true,
			header: "projected from " + h100 + " onto " + h200},
		{name: "trace GPU unknown to the output", config: "gpu: " + h200 + "\ntrace-gpu: unknown\n", gpu: h200, trace: h100, projected: true,
			header: "projected from " + h100 + " onto " + h200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := labelled(set, recorded, tt.config, byTier)
			p, err := Report([]Input{input("recorded+synthetic.bench", out)}, []*signatures.Set{set}, ReportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wp := p.Workloads[0]
			if wp.GPU != tt.gpu || wp.TraceGPU != tt.trace || wp.Projected != tt.projected {
				t.Errorf("gpu %q trace %q projected %v, want %q %q %v", wp.GPU, wp.TraceGPU, wp.Projected, tt.gpu, tt.trace, tt.projected)
			}
			var gemmNS float64
			for _, s := range wp.Sigs {
				if s.Tier == signatures.TierLibrary {
					gemmNS += s.PredictedNS.Center
					want := replay.FidelityOther
					if tt.projected {
						want = FidelityTarget
					}
					if s.Fidelity != want {
						t.Errorf("GEMM %s: fidelity %q, want %q", s.ID, s.Fidelity, want)
					}
				}
			}
			split := map[string]float64{}
			for _, f := range wp.ByFidelity {
				split[f.Fidelity] = f.PredictedNS
			}
			mine, notMine := replay.FidelityOther, FidelityTarget
			if tt.projected {
				mine, notMine = notMine, mine
			}
			if gemmNS == 0 || !near(split[mine], gemmNS, 1e-9) || split[notMine] != 0 {
				t.Errorf("split %v: want the GEMMs' %.0f ns as %q, nothing as %q", split, gemmNS, mine, notMine)
			}
			var text bytes.Buffer
			if err := p.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(text.String(), "\n")
			if !strings.Contains(first, tt.header) || (tt.notText != "" && strings.Contains(text.String(), tt.notText)) {
				t.Errorf("header %q, want %q", first, tt.header)
			}
			if !strings.Contains(text.String(), mine+" ") {
				t.Errorf("the fidelity split does not name %q:\n%s", mine, text.String())
			}
			js, err := json.Marshal(wp)
			if err != nil {
				t.Fatal(err)
			}
			if tt.projected != strings.Contains(string(js), `"projected":true`) {
				t.Errorf("JSON %s", js[:200])
			}
		})
	}
}

// kreplay predict's report of a replay on an H200 of the H100 trace:
// Flow's output (configuration lines from replay.Device.Config, SYNTHETIC
// here, with trace-gpu from the set) reads back as a projection.
func TestFlowProjection(t *testing.T) {
	set := prefillSet(t)
	fr := &FlowResult{Set: set, GPU: h200, Config: []replay.ConfigItem{{Key: "gpu", Value: h200}, {Key: "cublas", Value: "13.1.0 (libcublas.so.13)"}}}
	for _, s := range set.Signatures {
		if s.PartOf != "" || s.Tier != signatures.TierLibrary {
			continue
		}
		fr.Entries = append(fr.Entries, replay.Entry{ID: s.ID, Result: &replay.Result{Stats: replay.Stats{MedianNS: float64(s.TracedNS.Median)}, ID: s.ID, Converged: true,
			Fidelity: replay.FidelityOther, Path: "cublasGemmEx", Ran: []replay.Ran{{Kind: "kernel", Name: "nvjet_h200", DurNS: 10, PerCall: 1}}}})
	}
	var buf bytes.Buffer
	if err := fr.WriteBench(&buf, "p"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "; ran nvjet_h200") {
		t.Errorf("the fidelity lines do not name the kernel that ran:\n%s", buf.String())
	}
	p, err := Report([]Input{input("predict.bench", buf.String())}, []*signatures.Set{set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wp := p.Workloads[0]
	if !wp.Projected || len(wp.ByFidelity) != 1 || wp.ByFidelity[0].Fidelity != FidelityTarget || wp.ByFidelity[0].Share != 1 {
		t.Errorf("projected %v, split %+v: want all of it the library's choice on the target", wp.Projected, wp.ByFidelity)
	}
}

// Outputs of two GPUs read together as one side: the first GPU counts and
// a warning names the configuration that differs (the REAL recorded times
// with SYNTHETIC configuration lines).
func TestResultsMixedConfig(t *testing.T) {
	set := prefillSet(t)
	recorded := recordedPrefill(t)
	a := labelled(set, recorded, "gpu: "+h100+"\ncpu: another\n", nil)
	b := labelled(set, recorded, "gpu: "+h200+"\n", nil)
	rs, err := ReadResults([]Input{input("a.bench", a), input("b.bench", b)})
	if err != nil {
		t.Fatal(err)
	}
	w := rs.Workload(bench.Workload(set.Source))
	if w.Config["gpu"] != h100 || len(w.ConfigMixed) != 1 || w.ConfigMixed[0] != "gpu" {
		t.Errorf("config %v, mixed %v: want the first GPU and gpu mixed (cpu is not kreplay's)", w.Config, w.ConfigMixed)
	}
	n := 0
	for _, s := range rs.Warnings {
		if strings.Contains(s, "configuration gpu ("+h100+" and "+h200+") differs") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("warnings %v: want one on the GPUs", rs.Warnings)
	}
}
