package bench

import (
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
