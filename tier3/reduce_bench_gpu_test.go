package tier3

import (
	"strings"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/launch"
)

// rdBandwidthCases are large ops of the reduction family (>= 256 MiB
// read) whose bandwidth TestRdBandwidthGPU reports.
var rdBandwidthCases = []rdCase{
	{"sum f16 [8192,16384] last dim", "aten::sum", []rdIn{rdT("c10::Half", 8192, 16384), rdL("[-1]"), rdS("False"), rdNone()}},
	{"mean f32 [16384,4096] last dim", "aten::mean", []rdIn{rdT("float", 16384, 4096), rdL("[-1]"), rdS("True"), rdNone()}},
	{"sum f32 [64Mi] full two-pass", "aten::sum", []rdIn{rdT("float", 1<<26), rdNone()}},
	{"sum f16 [65536,2048] dim 0", "aten::sum", []rdIn{rdT("c10::Half", 65536, 2048), rdL("[0]"), rdS("False"), rdNone()}},
	{"argmax f16 [8192,16384] last dim", "aten::argmax", []rdIn{rdT("c10::Half", 8192, 16384), rdS("-1"), rdS("False")}},
	{"softmax f16 [32,16,512,512] last dim", "aten::_softmax", []rdIn{rdT("c10::Half", 32, 16, 512, 512), rdS("-1"), rdS("False")}},
	{"softmax f16 [16384,8192] last dim", "aten::_softmax", []rdIn{rdT("c10::Half", 16384, 8192), rdS("-1"), rdS("False")}},
	{"layer norm f16 [131072,1024]", "aten::native_layer_norm", []rdIn{rdT("c10::Half", 131072, 1024), rdL("[1024]"), rdT("c10::Half", 1024), rdT("c10::Half", 1024), rdS("1e-05")}},
	{"cumsum f32 [65536,1024] last dim", "aten::cumsum", []rdIn{rdT("float", 65536, 1024), rdS("-1"), rdNone()}},
}

// rdTime returns the mean time of one call of run, timed with CUDA events
// over iters calls after warm calls.
func rdTime(t *testing.T, s *cuda.Stream, warm, iters int, run func() error) time.Duration {
	t.Helper()
	ms := eventMillis(t, s, warm, iters, run)
	return time.Duration(float64(ms)*float64(time.Millisecond)) / time.Duration(iters)
}

// TestRdBandwidthGPU reports (t.Logf, no thresholds) the bandwidth of
// large reductions, softmax, layer norm and cumsum next to a
// device-to-device copy of the bytes they read. A reduction reads its
// input once and writes little, so its read rate is to be compared with
// the copy's read+write rate (the target is at least 85% of it); softmax,
// layer norm and cumsum read and write about the same bytes, so their
// read+write rate compares with the copy's.
func TestRdBandwidthGPU(t *testing.T) {
	sub := gputest.NewSubtests(t)
	if testing.Short() {
		t.Skip("allocates and times gigabytes")
	}
	for i, c := range rdBandwidthCases {
		sub.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			gpuEnv(t, func(dev Device, s *cuda.Stream) {
				sig := rdSig(t, c.op, c.ins...)
				k, err := New(sig, dev, launch.Options{Sets: 1, Seed: uint64(5000 + i)}, s)
				if err != nil {
					t.Fatal(err)
				}
				defer k.Close()
				if a := k.Approximate(); a != "" {
					t.Fatalf("approximate: %s", a)
				}
				inst := k.Instance(0)
				var read, write int64
				for _, x := range inst.Inputs {
					read += x.Bytes()
				}
				for _, x := range inst.Outputs {
					write += x.Bytes()
				}
				op := rdTime(t, s, 3, 20, func() error { return k.Launch(s, 0) })

				src, err := cuda.MemAlloc(int(read))
				if err != nil {
					t.Fatal(err)
				}
				defer src.Free()
				dst, err := cuda.MemAlloc(int(read))
				if err != nil {
					t.Fatal(err)
				}
				defer dst.Free()
				cp := rdTime(t, s, 3, 20, func() error { return cuda.MemcpyDtoDAsync(dst, src, int(read), s) })

				gbs := func(bytes int64, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e9 }
				copyRW := gbs(2*read, cp)
				t.Logf("%s: %v; reads %d MiB at %.0f GB/s, read+write %.0f GB/s (%.0f%% of copy)",
					c.name, op, read>>20, gbs(read, op), gbs(read+write, op), 100*gbs(read+write, op)/copyRW)
				t.Logf("  copy of %d MiB: %v, %.0f GB/s read+write; the op's read rate is %.0f%% of it",
					read>>20, cp, copyRW, 100*gbs(read, op)/copyRW)
			})
		})
	}
}
