package predict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// replayNS matches a replay result line of go test -bench output, its
// signature and its ns/op value.
var replayNS = regexp.MustCompile(`(?m)^(BenchmarkReplay/workload=\S+/sig=([0-9a-f]+)\S*\s+\d+\s+)(\S+)( ns/op)`)

// scaled multiplies the ns/op values of recorded output by factor(sig):
// SYNTHETIC values made from the REAL ones, as if the replays of those
// signatures had run that much slower or faster.
func scaled(t testing.TB, recorded string, factor func(id string) float64) string {
	t.Helper()
	return replayNS.ReplaceAllStringFunc(recorded, func(line string) string {
		m := replayNS.FindStringSubmatch(line)
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return m[1] + strconv.FormatFloat(v*factor(m[2]), 'f', -1, 64) + m[4]
	})
}

// The config lines of the scenarios below (SYNTHETIC values).
const (
	cfgH100 = "gpu: " + h100 + "\ngpu-sms: 132\ndriver: 580.159.04\ncublas: 13.0.2 (/usr/local/cuda/lib64/libcublas.so.13)\nnvrtc: 13.0\ncudnn: 9.10.2 (libcudnn.so.9)\ntrace-gpu: " + h100 + "\n"
)

// cfgWith is cfgH100 with the values of some keys replaced.
func cfgWith(repl map[string]string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(cfgH100, "\n") {
		k, _, ok := strings.Cut(line, ": ")
		if v, r := repl[k]; ok && r {
			line = k + ": " + v + "\n"
		}
		b.WriteString(line)
	}
	return b.String()
}

// sameKernel is byTier with the GEMMs running the traced kernel.
func sameKernel(s *signatures.Signature) (bench.Fidelity, bool) {
	f, ok := byTier(s)
	if s.Tier == signatures.TierLibrary {
		f.Kind, f.Kernel = replay.FidelitySame, ""
	}
	return f, ok
}

// Every significant change of a diff is attributed from what the two
// outputs record: the kernel (fidelity lines), the configuration lines that
// bear on the signature's replay, the throttling flags. The times are the
// REAL recorded H100 output (6 runs), scaled per scenario; the scaling,
// the configuration lines and the fidelity lines are SYNTHETIC.
func TestDiffAttribution(t *testing.T) {
	set := prefillSet(t)
	recorded := recordedPrefill(t)
	top := set.Signatures[0].ID // the LM head GEMM, f400919612b9
	tier := func(k signatures.Tier, f float64) func(string) float64 {
		return func(id string) float64 {
			if set.ByID(id).Tier == k {
				return f
			}
			return 1
		}
	}
	throttledTop := func(s *signatures.Signature) (bench.Fidelity, bool) {
		f, ok := sameKernel(s)
		f.Throttled = s.ID == top
		return f, ok
	}
	tests := []struct {
		name             string
		oldCfg, newCfg   string
		oldFid, newFid   func(*signatures.Signature) (bench.Fidelity, bool)
		factor           func(id string) float64
		changed          signatures.Tier // the tier whose signatures change (all of them), 0: only top
		causes           []string        // what each change is attributed to
		configs          []string        // the workload's configuration changes
		note             string          // in ConfigNote
		unchangedOutside bool
	}{
		{name: "cuBLAS version", oldCfg: cfgH100, newCfg: cfgWith(map[string]string{"cublas": "13.1.0 (/opt/cublas-13.1/libcublas.so.13)"}),
			oldFid: sameKernel, newFid: sameKernel, factor: tier(signatures.TierLibrary, 1.1), changed: signatures.TierLibrary,
			causes: []string{"config cublas"}, configs: []string{"cublas"}},
		{name: "another kernel chosen", oldCfg: cfgH100, newCfg: cfgH100, oldFid: sameKernel, newFid: byTier,
			factor: tier(signatures.TierLibrary, 1.1), changed: signatures.TierLibrary, causes: []string{"kernel kernel"}},
		{name: "NVRTC version bears on kreplay's kernels only", oldCfg: cfgH100, newCfg: cfgWith(map[string]string{"nvrtc": "13.1"}),
			oldFid: sameKernel, newFid: sameKernel, factor: tier(signatures.TierKernel, 0.9), changed: signatures.TierKernel,
			causes: []string{"config nvrtc"}, configs: []string{"nvrtc"}},
		{name: "cuDNN bears on no GEMM", oldCfg: cfgH100, newCfg: cfgWith(map[string]string{"cudnn": "9.16.0 (libcudnn.so.9)"}),
			oldFid: sameKernel, newFid: sameKernel, factor: tier(signatures.TierLibrary, 1.1), changed: signatures.TierLibrary,
			causes: nil, configs: []string{"cudnn"}},
		{name: "throttled on one side", oldCfg: cfgH100, newCfg: cfgH100, oldFid: sameKernel, newFid: throttledTop,
			factor: func(id string) float64 { return map[bool]float64{true: 1.1, false: 1}[id == top] }, causes: []string{"clocks throttled"}},
		{name: "another GPU", oldCfg: cfgH100, newCfg: cfgWith(map[string]string{"gpu": h200, "gpu-sms": "132x"}),
			oldFid: sameKernel, newFid: sameKernel, factor: tier(signatures.TierLibrary, 0.8), changed: signatures.TierLibrary,
			causes: []string{"config gpu"}, configs: []string{"gpu", "gpu-sms"}},
		{name: "no fidelity lines: every library may bear", oldCfg: cfgH100, newCfg: cfgWith(map[string]string{"cublas": "13.1.0 (libcublas.so.13)", "nvrtc": "13.1", "cudnn": "9.16.0 (libcudnn.so.9)"}),
			factor: tier(signatures.TierLibrary, 1.1), changed: signatures.TierLibrary,
			causes: []string{"config cublas", "config cudnn", "config nvrtc"}, configs: []string{"cublas", "cudnn", "nvrtc"}},
		{name: "old output without configuration lines", newCfg: cfgWith(map[string]string{"cublas": "13.1.0 (libcublas.so.13)"}),
			oldFid: sameKernel, newFid: byTier, factor: tier(signatures.TierLibrary, 1.1), changed: signatures.TierLibrary,
			causes: []string{"kernel kernel"}, note: "the old output has no configuration lines"},
		{name: "nothing recorded", oldCfg: cfgH100, newCfg: cfgH100, oldFid: sameKernel, newFid: sameKernel,
			factor: tier(signatures.TierLibrary, 1.1), changed: signatures.TierLibrary, causes: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := labelled(set, recorded, tt.oldCfg, tt.oldFid)
			cur := labelled(set, scaled(t, recorded, tt.factor), tt.newCfg, tt.newFid)
			c, err := Diff([]Input{input("old.bench", old)}, []Input{input("new.bench", cur)}, []*signatures.Set{set}, DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wd := c.Workloads[0]
			var configs []string
			for _, cc := range wd.Config {
				configs = append(configs, cc.What)
			}
			if !slices.Equal(configs, tt.configs) || !strings.Contains(wd.ConfigNote, tt.note) || (tt.note == "") != (wd.ConfigNote == "") {
				t.Errorf("configuration changes %v note %q, want %v %q", configs, wd.ConfigNote, tt.configs, tt.note)
			}
			significant := 0
			for _, d := range wd.Sigs {
				s := set.ByID(d.ID)
				changed := s.Tier == tt.changed || (tt.changed == 0 && s.ID == top)
				if !changed {
					if d.Significant || len(d.Causes) > 0 {
						t.Errorf("%s (tier %d) unchanged, but %s with causes %v", d.ID, s.Tier, d.Delta, d.Causes)
					}
					continue
				}
				if !d.Significant {
					t.Errorf("%s: %s at p=%.3f, want significant", d.ID, d.Delta, d.P)
					continue
				}
				significant++
				var got []string
				for _, cs := range d.Causes {
					got = append(got, cs.Kind+" "+cs.What)
				}
				if !slices.Equal(got, tt.causes) {
					t.Errorf("%s (tier %d, %s): causes %v, want %v", d.ID, s.Tier, d.Delta, got, tt.causes)
				}
				for _, cs := range d.Causes {
					if cs.What == "kernel" && (cs.Old != s.Kernel || !strings.HasPrefix(cs.New, "nvjet_")) {
						t.Errorf("%s: kernel %q -> %q, want the traced %q -> the one that ran", d.ID, cs.Old, cs.New, s.Kernel)
					}
				}
			}
			if significant == 0 {
				t.Fatal("no significant change")
			}
			var text bytes.Buffer
			if err := c.WriteText(&text, false); err != nil {
				t.Fatal(err)
			}
			for _, k := range tt.configs {
				if !strings.Contains(text.String(), "configuration "+k+": ") {
					t.Errorf("text lacks the configuration change of %s:\n%s", k, text.String())
				}
			}
			if len(tt.causes) == 0 && !strings.Contains(text.String(), "  -\n") {
				t.Errorf("text does not mark a change with nothing recorded:\n%s", text.String())
			}
			js, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.causes) > 0 && !strings.Contains(string(js), `"causes":[{"kind":`) {
				t.Errorf("JSON without causes")
			}
		})
	}
}

// The change of the predicted total comes with its interval: for the REAL
// recorded output against itself the interval holds 0; with the GEMMs
// SYNTHETICALLY 10% slower in every run, it lies between 0 and +10% (the
// GEMMs are a part of the total) and holds the change of the centers.
func TestDiffTotalInterval(t *testing.T) {
	set := prefillSet(t)
	recorded := recordedPrefill(t)
	gemmShare := 0.0
	tests := []struct {
		name   string
		factor float64
	}{{"no change", 1}, {"GEMMs 10% slower", 1.1}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := scaled(t, recorded, func(id string) float64 {
				if set.ByID(id).Class == signatures.ClassGEMM {
					return tt.factor
				}
				return 1
			})
			c, err := Diff([]Input{input("old", recorded)}, []Input{input("new", cur)}, []*signatures.Set{set}, DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tot := c.Workloads[0].Total
			iv := tot.ChangeCI
			if tot.Runs != [2]int{6, 6} || tot.ChangeRange || !(iv.Lo <= iv.Center && iv.Center <= iv.Hi) {
				t.Fatalf("total %+v", tot)
			}
			if tt.factor == 1 {
				if tot.Significant || iv.Center != 0 || !(iv.Lo < 0 && iv.Hi > 0) {
					t.Errorf("no change: %s, interval %+v", tot.Delta, iv)
				}
			} else {
				gemmShare = tot.Change / (tt.factor - 1)
				if !tot.Significant || !(iv.Lo > 0 && iv.Hi < 0.1) || !(iv.Lo <= tot.Change && tot.Change <= iv.Hi) {
					t.Errorf("%s (change %.4f), interval %+v: want within (0, 0.1) around the change", tot.Delta, tot.Change, iv)
				}
			}
			var text bytes.Buffer
			if err := c.WriteText(&text, false); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("%s [%+.2f%%, %+.2f%%] at 95%% (p=", tot.Delta, 100*iv.Lo, 100*iv.Hi)
			if !strings.Contains(text.String(), want) {
				t.Errorf("text lacks %q:\n%s", want, text.String())
			}
		})
	}
	if gemmShare < 0.3 || gemmShare > 0.6 {
		t.Errorf("the GEMMs' share of the total is %.2f: the recorded output's is about 0.44", gemmShare)
	}
}

// Kernel names that share a long prefix keep their ends in diff's table.
func TestCauseString(t *testing.T) {
	tests := []struct {
		c    Cause
		want string
	}{
		{Cause{Kind: CauseConfig, What: "cublas", Old: "13.0.2 (a)", New: "13.1.0 (b)"}, "cublas"},
		{Cause{Kind: CauseClocks, What: "throttled", Old: "no", New: "yes"}, "throttled no -> yes"},
		{Cause{Kind: CauseKernel, What: "kernel", Old: "nvjet_sm90_hsh_128x256_64x4_2x1_v_bz_coopA_TNN", New: "nvjet_sm90_hsh_128x256_64x4_2x1_v_bz_coopB_TNN"},
			"kernel nvjet_sm90_hsh_128x256_64x4_2x1_v_bz_coopA_TNN -> nvjet_sm90_hsh_128x256_64x4_2x1_v_bz_coopB_TNN"},
		{Cause{Kind: CauseKernel, What: "kernel", Old: "same kernel", New: "_ZN7cutlass7Kernel2I56cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_tn_align8EEvNT_6ParamsE"},
			"kernel same kernel -> _ZN7cutlass7Kernel2I56cutlas...128x2_tn_align8EEvNT_6ParamsE"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.c, got, tt.want)
		}
	}
}

func TestConfigBears(t *testing.T) {
	for _, c := range []struct {
		key   string
		paths []string
		want  bool
	}{
		{"cudnn", []string{"cudnnBackendExecute+SDPA"}, true},
		{"cudnn", []string{"cublasLtMatmul"}, false},
		{"cudnn", []string{"captured"}, false},
		{"cudnn", nil, true},
		{"cublas", []string{"cublasLtMatmul"}, false},
		{"cublaslt", []string{"cublasGemmEx"}, true},
		{"nvrtc", []string{"approximate"}, true},
		{"nccl", []string{"kreplay:softmax"}, false},
		{"gpu", []string{"captured"}, true},
	} {
		if got := configBears(c.key, c.paths); got != c.want {
			t.Errorf("configBears(%q, %q) = %v, want %v", c.key, c.paths, got, c.want)
		}
	}
}
