package replay

import (
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// unpaced hides a kernel's Pace: its timed launches go back to back.
type unpaced struct{ launch.Kernel }

func (u unpaced) Streamed() bool { return launch.IsStreamed(u.Kernel) }

// A memset's timed launches are paced (launch.Paced), and paced it is
// timed no slower than back to back, where each memset queues right
// behind the one before it.
func TestGPUMemsetPaced(t *testing.T) {
	d := openGPU(t)
	// The trace's memsets are cuBLAS's, part of a GEMM: this one is
	// measured on its own.
	in := lastSig(t, "h100_bloom-560m_prefill.trace.json.gz", func(s *signatures.Signature) bool {
		return s.Class == signatures.ClassMemset
	})
	sig := *in
	sig.PartOf = ""
	p, err := d.PrepareFor(&sig, Warm)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	o := quick
	o.Budget = 500 * time.Millisecond
	paced, err := d.Measure(p, o)
	if err != nil {
		t.Fatal(err)
	}
	if paced.KernelErr != "" {
		t.Skipf("no CUPTI time: %s", paced.KernelErr)
	}
	if paced.PaceNS <= 0 || !paced.ReportsSingles {
		t.Fatalf("%s: pace %d ns, singles %v; want paced singles", sig.Label, paced.PaceNS, paced.ReportsSingles)
	}
	p.Kernel = unpaced{p.Kernel}
	queued, err := d.Measure(p, o)
	if err != nil {
		t.Fatal(err)
	}
	if queued.PaceNS != 0 {
		t.Errorf("unpaced kernel paced %d ns", queued.PaceNS)
	}
	t.Logf("%s (traced median %d ns): paced %.0f ns (%.0f-%.0f), back to back %.0f ns (%.0f-%.0f)", sig.Label, sig.TracedNS.Median,
		paced.KernelMedianNS, paced.KernelLoNS, paced.KernelHiNS, queued.KernelMedianNS, queued.KernelLoNS, queued.KernelHiNS)
	if paced.KernelMedianNS > queued.KernelMedianNS*1.02 {
		t.Errorf("paced %.0f ns slower than back to back %.0f ns", paced.KernelMedianNS, queued.KernelMedianNS)
	}
}
