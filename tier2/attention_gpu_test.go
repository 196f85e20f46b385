package tier2

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cudnn"
	"github.com/kreplay/kreplay/internal/cupti"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/kname"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// cuDNNSDPAKernel begins the names of cuDNN's fused SDPA forward kernels
// the traces show (..._sm90_flash_fprop_wgmma_f16_knob_..., and sm80
// wmma for decode).
const cuDNNSDPAKernel = "cudnn_generated_fort_native_sdpa"

// readElems reads n elements of a 16-bit or f32 dtype from device memory
// as float64.
func readElems(t *testing.T, p cuda.DevicePtr, bytes int64, dtype string, s *cuda.Stream) []float64 {
	t.Helper()
	b := make([]byte, bytes)
	if err := cuda.CopyDtoH(b, p, s); err != nil {
		t.Fatal(err)
	}
	size := signatures.DTypeSize(dtype)
	out := make([]float64, bytes/size)
	for i := range out {
		switch dtype {
		case "f16":
			out[i] = float64(launch.F16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
		case "bf16":
			out[i] = float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16))
		default:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	}
	return out
}

// sdpaRow computes one query row of the op in float64: the output
// [d] and the logsumexp of the scaled (biased, masked) scores.
func sdpaRow(d *cudnn.SDPA, q, k, v, bias []float64, b, h, i int64) ([]float64, float64) {
	at := func(sh cudnn.Shape, x []float64, i0, i1, i2, i3 int64) float64 {
		idx := [4]int64{i0, i1, i2, i3}
		off := int64(0)
		for j := range idx {
			if sh.Dims[j] > 1 {
				off += idx[j] * sh.Strides[j]
			}
		}
		return x[off]
	}
	hk := h / (d.Q.Dims[1] / d.K.Dims[1])
	dim, skv := d.Q.Dims[3], d.K.Dims[2]
	scores := make([]float64, skv)
	mx := math.Inf(-1)
	for j := int64(0); j < skv; j++ {
		var dot float64
		for x := int64(0); x < dim; x++ {
			dot += at(d.Q, q, b, h, i, x) * at(d.K, k, b, hk, j, x)
		}
		sc := float64(d.Scale) * dot
		if d.Bias != nil {
			sc += at(*d.Bias, bias, b, h, i, j)
		}
		if d.Causal && j > i {
			sc = math.Inf(-1)
		}
		scores[j] = sc
		mx = max(mx, sc)
	}
	var sum float64
	for j := range scores {
		scores[j] = math.Exp(scores[j] - mx)
		sum += scores[j]
	}
	o := make([]float64, d.V.Dims[3])
	for j := int64(0); j < skv; j++ {
		for x := range o {
			o[x] += scores[j] / sum * at(d.V, v, b, hk, j, int64(x))
		}
	}
	return o, mx + math.Log(sum)
}

// TestGPUCuDNNSDPA replays traced cuDNN SDPA signatures (the l1b and
// Qwen2 compiled prefills' _cudnn_attention_forward with a mask bias) and
// synthetic ones (causal with logsumexp; decode) through cuDNN, checks
// sampled output rows (and the stats) against a float64 reference of the
// same random inputs, and checks with CUPTI that cuDNN's fused SDPA
// kernel ran: for the traced ones the very kernel the trace names. It
// logs the kernel's mean time next to the traced median.
func TestGPUCuDNNSDPA(t *testing.T) {
	gputest.Require(t, func() error {
		if err := cudnn.Load(); err != nil {
			return err
		}
		return cupti.Load()
	})
	cases := []struct {
		name string
		sig  *signatures.Signature
		tol  float64
	}{
		{"l1b f16 bias", tracedSignature(t, l1bTrace, l1bSDPA), 1e-2},
		{"qwen2 bf16 bias", tracedSignature(t, qwenTrace, qwenSDPA), 3e-2},
		{"causal lse", sdpaSig(2, 16, 4, 1024, 1024, 128, "True", "True"), 1e-2},
		{"decode", sdpaSig(4, 32, 32, 1, 1024, 128, "False", "False"), 1e-2},
	}
	v, _ := cudnn.Version()
	t.Logf("cuDNN %s from %s", cudnn.VersionString(v), cudnn.Path())
	withLibraries(t, func(libs *Libraries, s *cuda.Stream) {
		for _, tc := range cases {
			runSDPACase(t, tc.name, tc.sig, tc.tol, libs, s)
		}
	})
}

// runSDPACase is one case of TestGPUCuDNNSDPA.
func runSDPACase(t *testing.T, name string, sig *signatures.Signature, tol float64, libs *Libraries, s *cuda.Stream) {
	k, err := NewAttention(sig, libs, launch.Options{Sets: 1, Seed: 7}, s)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	defer k.Close()
	p := k.cudnnPlan()
	t.Logf("%s: unified %v, engine %d (config %d of %d), workspace %d B%s", name, p.Graph.Unified, p.Engine,
		p.Config, p.Configs, p.Workspace, map[bool]string{true: "; " + k.Note(), false: ""}[k.Note() != ""])
	kinds := []cupti.Kind{cupti.KindConcurrentKernel, cupti.KindMemset}
	if err := cupti.Enable(kinds...); err != nil {
		t.Fatal(err)
	}
	defer cupti.Disable(kinds...)
	cupti.Drain()
	const runs = 50
	for i := 0; i < runs; i++ {
		if err := k.Launch(s, 0); err != nil {
			t.Errorf("%s: launch: %v", name, err)
			return
		}
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := cupti.Flush(); err != nil {
		t.Fatal(err)
	}
	durs := map[string][]uint64{}
	var names []string
	for _, r := range cupti.Drain() {
		key := r.Name
		if r.Kind == cupti.KindMemset {
			key = "Memset"
		}
		if durs[key] == nil {
			names = append(names, key)
		}
		durs[key] = append(durs[key], r.Duration())
	}
	ran, same := false, false
	for _, n := range names {
		var sum uint64
		for _, d := range durs[n] {
			sum += d
		}
		t.Logf("%s: ran %s x%d, mean %.2f us", name, n, len(durs[n]), float64(sum)/float64(len(durs[n]))/1e3)
		ran = ran || strings.HasPrefix(n, cuDNNSDPAKernel)
		same = same || sig.Kernel != "" && kname.SameKernel(sig.Kernel, n)
	}
	if sig.Kernel != "" {
		t.Logf("%s: traced %s, median %.2f us; same kernel: %v", name, sig.Kernel, float64(sig.TracedNS.Median)/1e3, same)
		if !same {
			t.Errorf("%s: the traced kernel %s did not run", name, sig.Kernel)
		}
	}
	if !ran && !p.Graph.Unified {
		t.Errorf("%s: no %s kernel ran", name, cuDNNSDPAKernel)
	}
	checkSDPAOutput(t, name, k, tol, s)
}

// checkSDPAOutput compares sampled rows of the output and the stats with
// sdpaRow.
func checkSDPAOutput(t *testing.T, name string, k *Attention, tol float64, s *cuda.Stream) {
	d, a, set := k.desc, k.a, k.sets[0]
	var bufs [6][]float64
	for j := range bufs {
		if k.bytes[j] > 0 {
			bufs[j] = readElems(t, set.bufs[j], k.bytes[j], k.dtypes[j], s)
		}
	}
	var worst, worstLSE float64
	rows := 0
	for b := int64(0); b < a.B; b++ {
		for h := int64(0); h < a.Hq; h += max(a.Hq/4, 1) {
			for i := int64(0); i < a.Sq; i += max(a.Sq/8, 1) {
				o, lse := sdpaRow(d, bufs[0], bufs[1], bufs[2], bufs[3], b, h, i)
				for x, want := range o {
					got := bufs[4][b*d.O.Strides[0]+h*d.O.Strides[1]+i*d.O.Strides[2]+int64(x)]
					worst = max(worst, math.Abs(got-want))
				}
				if a.LSE {
					worstLSE = max(worstLSE, math.Abs(bufs[5][(b*a.Hq+h)*a.Sq+i]-lse))
				}
				rows++
			}
		}
	}
	t.Logf("%s: %d rows, max |output error| %.3g (tolerance %g), max |stats error| %.3g", name, rows, worst, tol, worstLSE)
	if !(worst <= tol) {
		t.Errorf("%s: output differs from the float64 reference by %g", name, worst)
	}
	if a.LSE && !(worstLSE <= 1e-2) {
		t.Errorf("%s: stats differ from the reference logsumexp by %g", name, worstLSE)
	}
}
