package replay

import (
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// unpaced hides a kernel's Pace: its timed launches go back to back.
type unpaced struct{ launch.Kernel }

func (u unpaced) Streamed() bool { return launch.IsStreamed(u.Kernel) }

// A memset's and a copy to the host's timed launches are paced
// (launch.Paced), and paced each is timed no slower than back to back,
// where each queues right behind the one before it.
func TestGPUMemoryOpsPaced(t *testing.T) {
	d := openGPU(t)
	for _, c := range []struct{ name, trace string }{
		// The trace's memsets are cuBLAS's, part of a GEMM: this one is
		// measured on its own.
		{"memset", "h100_bloom-560m_prefill.trace.json.gz"},
		// tensor.item()'s 1-byte copy to pinned memory.
		{"copy to the host", "h100_llama-7b_prefill.trace.json.gz"},
	} {
		in := lastSig(t, c.trace, func(s *signatures.Signature) bool {
			if c.name == "memset" {
				return s.Class == signatures.ClassMemset
			}
			return s.Class == signatures.ClassMemcpy && s.Memory != nil && s.Memory.Kind == signatures.DtoH
		})
		sig := *in
		sig.PartOf = ""
		p, err := d.PrepareFor(&sig, Warm)
		if err != nil {
			t.Fatal(err)
		}
		o := quick
		o.Budget = 500 * time.Millisecond
		paced, err := d.Measure(p, o)
		if err != nil {
			p.Close()
			t.Fatal(err)
		}
		if paced.KernelErr != "" {
			p.Close()
			gputest.Skipf(t, "no CUPTI time: %s", paced.KernelErr)
		}
		if paced.PaceNS <= 0 || !paced.ReportsSingles {
			t.Errorf("%s: pace %d ns, singles %v; want paced singles", sig.Label, paced.PaceNS, paced.ReportsSingles)
		}
		p.Kernel = unpaced{p.Kernel}
		queued, err := d.Measure(p, o)
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		if queued.PaceNS != 0 {
			t.Errorf("%s: unpaced kernel paced %d ns", c.name, queued.PaceNS)
		}
		t.Logf("%s (traced median %d ns): paced %.0f ns (%.0f-%.0f), back to back %.0f ns (%.0f-%.0f)", sig.Label, sig.TracedNS.Median,
			paced.KernelMedianNS, paced.KernelLoNS, paced.KernelHiNS, queued.KernelMedianNS, queued.KernelLoNS, queued.KernelHiNS)
		if paced.KernelMedianNS > queued.KernelMedianNS*1.02 {
			t.Errorf("%s: paced %.0f ns slower than back to back %.0f ns", c.name, paced.KernelMedianNS, queued.KernelMedianNS)
		}
	}
}
