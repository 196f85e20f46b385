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

// The energy flags of a duty-cycled and an estimated energy are written
// and read back.
func TestFidelityEnergyFlags(t *testing.T) {
	tests := []struct {
		e    *replay.Energy
		tail string
	}{
		{&replay.Energy{Duty: &replay.DutyEnergy{Duty: 0.6}}, "; energy duty-cycled"},
		{&replay.Energy{Method: replay.EstimatedMethod}, "; energy estimated"},
		{&replay.Energy{Throttled: true, DutyErr: "still capped"}, "; energy throttled"},
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
