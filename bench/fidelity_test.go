package bench

import (
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
)

// A fidelity line reads back as written, from go test's output with or
// without the GOMAXPROCS suffix and indentation, and other lines do not.
func TestFidelityLine(t *testing.T) {
	f := FidelityOf(&replay.Result{Fidelity: replay.FidelitySame, Path: "captured", Throttled: true,
		Energy: &replay.Energy{Throttled: true}})
	line := FidelityLine("BenchmarkReplay/workload=l1b_prefill/sig=0123456789ab", f)
	if line != "kreplay BenchmarkReplay/workload=l1b_prefill/sig=0123456789ab: fidelity: same kernel; path captured; throttled; unconverged; energy throttled" {
		t.Errorf("line %q", line)
	}
	if g := FidelityOf(&replay.Result{Fidelity: replay.FidelitySame, Converged: true, Energy: &replay.Energy{}}); g.EnergyThrottled || g.Throttled || g.Unconverged {
		t.Errorf("an unflagged result: %+v", g)
	}
	for _, in := range []string{line, "    " + line, "kreplay BenchmarkReplay/workload=l1b_prefill/sig=0123456789ab-16: fidelity: same kernel; path captured; throttled; unconverged; energy throttled"} {
		w, sig, got, ok := ParseFidelityLine(in)
		if !ok || w != "l1b_prefill" || sig != "0123456789ab" || got != f {
			t.Errorf("%q: %s %s %+v %v", in, w, sig, got, ok)
		}
	}
	for _, in := range []string{"", "kreplay BenchmarkModel/workload=w/model: no model run: x", "BenchmarkReplay/workload=w/sig=s 1 5 ns/op", "kreplay BenchmarkReplay/workload=w: fidelity: same kernel"} {
		if _, _, _, ok := ParseFidelityLine(in); ok {
			t.Errorf("%q parsed as a fidelity line", in)
		}
	}
}

// The energy flags of a duty-cycled, an estimated and a shared energy are written
// and read back.
func TestFidelityEnergyFlags(t *testing.T) {
	tests := []struct {
		e    *replay.Energy
		tail string
	}{
		{&replay.Energy{Duty: &replay.DutyEnergy{Duty: 0.6}}, "; energy duty-cycled"},
		{&replay.Energy{Method: replay.EstimatedMethod}, "; energy estimated"},
		{&replay.Energy{Throttled: true, DutyErr: "still capped"}, "; energy throttled"},
		{&replay.Energy{Method: replay.SharedMethod, Shared: &replay.SharedWindow{Members: []string{"a", "b", "c"}}}, "; energy shared by 3"},
	}
	for _, tt := range tests {
		f := FidelityOf(&replay.Result{Fidelity: replay.FidelityOwn, Path: "p", Converged: true, Energy: tt.e})
		line := FidelityLine("BenchmarkReplay/workload=w/sig=s", f)
		if !strings.HasSuffix(line, "path p"+tt.tail) {
			t.Errorf("%+v: line %q, want it to end %q", tt.e, line, tt.tail)
		}
		if _, _, got, ok := ParseFidelityLine(line); !ok || got != f {
			t.Errorf("%q read back as %+v, want %+v", line, got, f)
		}
	}
}

// Another kernel than the traced one: the line names the kernel that ran
// the longest per invocation (the recorded H100 replay of llama-7b's
// e6587ef873a9 ran a 4-byte memset and this nvjet kernel,
// results/h100/replay/files.tar.xz, h100_llama-7b_prefill.tiers12.run.json; the "other
// kernel" verdict and the second kernel are SYNTHETIC), and reads back.
func TestFidelityOtherKernel(t *testing.T) {
	const nvjet = "nvjet_sm90_hsh_192x192_64x4_2x1_v_bz_coopB_TNN"
	ran := []replay.Ran{
		{Kind: "memset", Name: "Memset", Bytes: 4, DurNS: 783, PerCall: 1},
		{Kind: "kernel", Name: "splitKreduce_kernel", DurNS: 2000, PerCall: 1},
		{Kind: "kernel", Name: nvjet, DurNS: 251419, PerCall: 1},
	}
	tests := []struct {
		kind, kernel string
	}{
		{replay.FidelityOther, nvjet},
		{replay.FidelitySame, ""}, // the traced kernel: the set names it
	}
	for _, tt := range tests {
		f := FidelityOf(&replay.Result{Fidelity: tt.kind, Path: "cublasGemmEx", Converged: true, Ran: ran})
		if f.Kernel != tt.kernel {
			t.Errorf("%s: kernel %q, want %q", tt.kind, f.Kernel, tt.kernel)
		}
		line := FidelityLine("BenchmarkReplay/workload=llama-7b_prefill/sig=e6587ef873a9", f)
		if tt.kernel != "" && !strings.HasSuffix(line, "; path cublasGemmEx; ran "+nvjet) {
			t.Errorf("line %q does not name the kernel after the path", line)
		}
		if _, _, got, ok := ParseFidelityLine(line); !ok || got != f {
			t.Errorf("%q read back as %+v, want %+v", line, got, f)
		}
	}
	// A ";" in a (demangled) name cannot split the line.
	f := Fidelity{Kind: replay.FidelityOther, Path: "p", Kernel: "k<a; b>", Throttled: true}
	_, _, got, ok := ParseFidelityLine(FidelityLine("BenchmarkReplay/workload=w/sig=s", f))
	if !ok || got.Kernel != "k<a, b>" || !got.Throttled {
		t.Errorf("read back as %+v", got)
	}
}

// The throttled samples a result left out, or kept, are written after the
// throttled flag and read back; malformed counts read as none.
func TestFidelityThrottledSamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    replay.Result
		want string // in the line; "" for no count
	}{
		{"discarded", replay.Result{Samples: 37, Throttled: true, ThrottledSamples: 3}, "; throttled; 3 of 40 samples throttled, discarded; unconverged"},
		{"kept", replay.Result{Samples: 15, Throttled: true, ThrottledSamples: 12, ThrottledKept: true}, "; throttled; 12 of 15 samples throttled, kept; unconverged"},
		{"none", replay.Result{Samples: 40, Throttled: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.r.Fidelity, tc.r.Path = replay.FidelitySame, "p"
			f := FidelityOf(&tc.r)
			line := FidelityLine("BenchmarkReplay/workload=w/sig=s", f)
			if tc.want != "" && !strings.Contains(line, tc.want) || tc.want == "" && strings.Contains(line, "samples throttled") {
				t.Errorf("line %q, want %q in it", line, tc.want)
			}
			if _, _, got, ok := ParseFidelityLine(line); !ok || got != f {
				t.Errorf("%q read back as %+v, want %+v", line, got, f)
			}
		})
	}
	for _, p := range []string{"x of 40 samples throttled, discarded", "3 of 2 samples throttled, kept", "3 of 40 samples throttled, dropped", "3 of 40 samples throttled, kept too"} {
		line := "kreplay BenchmarkReplay/workload=w/sig=s: fidelity: same kernel; path p; " + p
		if _, _, got, ok := ParseFidelityLine(line); !ok || got.ThrottledSamples != 0 || got.TakenSamples != 0 || got.ThrottledKept {
			t.Errorf("%q read as %+v", p, got)
		}
	}
}
