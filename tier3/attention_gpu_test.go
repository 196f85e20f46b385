package tier3

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// GPU tests and benchmarks of the attention kernel (skipped without a
// GPU): the small correctness cases, the traced signatures and the tiling
// sweep.

// attnGPUCases are the small GPU correctness cases.
func attnGPUCases() []attnCase {
	var cs []attnCase
	for _, d := range []int64{64, 128} {
		for _, s := range []int64{64, 128, 130} {
			for _, causal := range []bool{false, true} {
				for _, layout := range []string{"bhsd", "bshd"} {
					c := attnCase{op: "aten::_cudnn_attention_forward", b: 1, hq: 2, hk: 2, sq: s, sk: s, d: d,
						dtype: "f16", layout: layout, causal: causal, lse: s != 128}
					if s == 130 {
						c.scale = "0.5" // sharper softmax: exercises the running max
					}
					cs = append(cs, c)
				}
			}
		}
	}
	return append(cs,
		// Fewer keys than queries, top left: the last rows see every key.
		attnCase{op: "aten::_cudnn_attention_forward", b: 1, hq: 2, hk: 2, sq: 130, sk: 64, d: 128,
			dtype: "f16", layout: "bshd", causal: true, lse: true},
		attnCase{op: "aten::_scaled_dot_product_cudnn_attention", b: 2, hq: 4, hk: 4, sq: 96, sk: 96, d: 128,
			dtype: "f16", layout: "bshd", causal: true, lse: true, scale: "0.088388347648318447"},
		// Bottom-right causal mask with more keys than queries, and GQA.
		attnCase{op: "aten::_scaled_dot_product_flash_attention", b: 1, hq: 4, hk: 2, sq: 64, sk: 130, d: 64,
			dtype: "f16", layout: "bhsd", causal: true},
		attnCase{op: "aten::_scaled_dot_product_efficient_attention", b: 1, hq: 2, hk: 2, sq: 130, sk: 130, d: 64,
			dtype: "f16", layout: "bhsd", causal: true, lse: true, scale: "1"},
		attnCase{op: "aten::_flash_attention_forward", b: 2, hq: 2, hk: 1, sq: 130, sk: 130, d: 128,
			dtype: "f16", layout: "bshd", causal: true},
		attnCase{op: "aten::_efficient_attention_forward", b: 1, hq: 2, hk: 2, sq: 100, sk: 130, d: 64,
			dtype: "f16", layout: "bhsd", maskType: "2", lse: true},
		attnCase{op: "aten::_cudnn_attention_forward", b: 1, hq: 2, hk: 2, sq: 130, sk: 130, d: 128,
			dtype: "bf16", layout: "bshd", causal: true, lse: true},
		attnCase{op: "aten::_cudnn_attention_forward", b: 1, hq: 2, hk: 2, sq: 200, sk: 200, d: 64,
			dtype: "bf16", layout: "bhsd", scale: "0.5"},
	)
}

// relErr is ||got-want|| / ||want||.
func relErr(got, want []float64) float64 {
	var num, den float64
	for i := range got {
		d := got[i] - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	return math.Sqrt(num / max(den, 1e-300))
}

// checkAttention compares an attention instance's outputs with the float64
// reference on the given (batch, head) pairs (all when nil).
func checkAttention(t *testing.T, p *attnParams, inst *Instance, s *cuda.Stream, heads [][2]int64) {
	t.Helper()
	var data [3]attnData
	for i := range data {
		x := download(t, inst.Inputs[i], s)
		h := p.Hq
		sl := p.Sq
		if i > 0 {
			h, sl = p.Hk, p.Sk
		}
		data[i] = attnData{x: x, h: h, s: sl, d: p.D, bshd: p.BSHD}
	}
	var bias *attnBiasData
	if p.Bias {
		if len(inst.Inputs) != 4 {
			t.Fatalf("%d inputs, want q, k, v and the bias", len(inst.Inputs))
		}
		bt := inst.Inputs[3]
		if bt.DType != p.BiasDType || len(bt.Shape) != 4 {
			t.Fatalf("bias input %s %v, want %s of rank 4", bt.DType, bt.Shape, p.BiasDType)
		}
		bias = &attnBiasData{x: download(t, bt, s), shape: [4]int64(bt.Shape)}
	} else if len(inst.Inputs) != 3 {
		t.Fatalf("%d inputs, want q, k and v", len(inst.Inputs))
	}
	out := attnData{x: download(t, inst.Outputs[0], s), h: p.Hq, s: p.Sq, d: p.D, bshd: p.BSHD}
	var lse []float64
	if p.LSE {
		if len(inst.Outputs) != 2 {
			t.Fatalf("%d outputs, want out and logsumexp", len(inst.Outputs))
		}
		lse = download(t, inst.Outputs[1], s)
	} else if len(inst.Outputs) != 1 {
		t.Fatalf("%d outputs, want 1", len(inst.Outputs))
	}
	if heads == nil {
		for b := int64(0); b < p.B; b++ {
			for h := int64(0); h < p.Hq; h++ {
				heads = append(heads, [2]int64{b, h})
			}
		}
	}
	var got, want, gotL, wantL []float64
	for _, bh := range heads {
		b, h := bh[0], bh[1]
		o, l := attnReferenceHead(p, data[0], data[1], data[2], bias, b, h)
		want = append(want, o...)
		for i := int64(0); i < p.Sq; i++ {
			for d := int64(0); d < p.D; d++ {
				got = append(got, out.at(b, h, i, d))
			}
		}
		if lse != nil {
			wantL = append(wantL, l...)
			gotL = append(gotL, lse[(b*p.Hq+h)*p.LSELen:][:p.Sq]...)
		}
	}
	checkClose(t, "out", got, want, p.DType)
	if lse != nil {
		// ex2/lg2.approx and f32 sums: a few ulp of f32.
		if e := relErr(gotL, wantL); !(e < 1e-5) {
			t.Errorf("logsumexp: relative error %.3g, tolerance 1e-5", e)
		}
	}
	t.Logf("out relative error %.3g", relErr(got, want))
}

func TestGPUAttention(t *testing.T) {
	sub := gputest.NewSubtests(t)
	for i, c := range attnGPUCases() {
		sub.Run(c.name(), func(t *testing.T) {
			sig := c.sig(t)
			p, err := parseAttention(sig)
			if err != nil {
				t.Fatal(err)
			}
			gpuEnv(t, func(dev Device, s *cuda.Stream) {
				k := launchExact(t, sig, dev, s, uint64(i+1))
				defer k.Close()
				checkAttention(t, p, k.Instance(0), s, nil)
			})
		})
	}
}

// TestGPUAttentionTraced replays the traced Llama-7B attention, [4, 32,
// 512, 128] in a transposed view, and checks sampled heads, with and
// without logsumexp.
func TestGPUAttentionTraced(t *testing.T) {
	sub := gputest.NewSubtests(t)
	for _, lse := range []bool{false, true} {
		sub.Run(fmt.Sprintf("lse%v", lse), func(t *testing.T) {
			// The trace is read inside gpuEnv: without a GPU the test
			// skips before it (TestAttentionTracedSignatures parses it on the CPU).
			gpuEnv(t, func(dev Device, s *cuda.Stream) {
				sig := tracedAttention(t, "h100_llama-7b_prefill.trace.json.gz", "aten::_cudnn_attention_forward")
				if lse {
					cp := *sig
					cp.Inputs = slices.Clone(sig.Inputs)
					cp.Inputs[8].Value = "True"
					sig = &cp
				}
				p, err := parseAttention(sig)
				if err != nil {
					t.Fatal(err)
				}
				k, err := New(sig, dev, launch.Options{Sets: 1, Seed: 7}, s)
				if err != nil {
					t.Fatal(err)
				}
				defer k.Close()
				if a := k.Approximate(); a != "" {
					t.Fatalf("approximate: %s", a)
				}
				// Twice: a second launch over the same buffers gives the same result.
				for i := 0; i < 2; i++ {
					if err := k.Launch(s, 0); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Synchronize(); err != nil {
					t.Fatal(err)
				}
				checkAttention(t, p, k.Instance(0), s, [][2]int64{{0, 0}, {0, 31}, {1, 7}, {2, 16}, {3, 30}})
			})
		})
	}
}

// BenchmarkGPUAttention times the traced attention shapes with CUDA events
// for each tiling of attnSweep (the first is the default) and reports
// microseconds per launch, TFLOP/s (FLOPs as attnFLOPs counts them) and
// the ratio to the traced cuDNN time.
func BenchmarkGPUAttention(b *testing.B) {
	for _, tc := range []struct{ name, trace string }{
		{"h100_llama7b_4x32x512x128", "h100_llama-7b_prefill.trace.json.gz"},
		{"h200_tp2_4x16x512x128", "2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz"},
	} {
		sig := tracedAttention(b, tc.trace, "aten::_cudnn_attention_forward")
		p, err := parseAttention(sig)
		if err != nil {
			b.Fatal(err)
		}
		for _, arch := range []int{90} {
			for _, cfg := range attnSweep(p, arch) {
				b.Run(tc.name+"/"+cfg.String(), func(b *testing.B) {
					gpuEnv(b, func(dev Device, s *cuda.Stream) {
						if dev.Compiler.Arch() < 80 {
							b.Skipf("sm_%d", dev.Compiler.Arch())
						}
						if cfg.valid(p, dev.Compiler.Arch()) != nil {
							b.Skipf("%v does not fit sm_%d", cfg, dev.Compiler.Arch())
						}
						benchAttention(b, dev, s, sig, p, cfg)
					})
				})
			}
		}
	}
}

func benchAttention(b *testing.B, dev Device, s *cuda.Stream, sig *signatures.Signature, p *attnParams, cfg attnConfig) {
	e := &Env{Compiler: dev.Compiler, Stream: s, SMs: dev.SMs, seed: 11}
	defer e.free()
	inst, err := buildAttentionConfig(e, sig, &cfg)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if err := inst.Launch(s); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
	n := max(b.N, 10)
	b.ResetTimer()
	ms := eventMillis(b, s, 0, n, func() error { return inst.Launch(s) })
	b.StopTimer()
	us := float64(ms) * 1e3 / float64(n)
	tflops := float64(inst.FLOPs) / us / 1e6
	b.ReportMetric(us, "us/launch")
	b.ReportMetric(tflops, "TFLOP/s")
	traced := float64(sig.TracedNS.Median) / 1e3
	b.ReportMetric(us/traced, "x_traced")
	b.Logf("%v: %.1f us per launch over %d, %.0f TFLOP/s (%.2f GFLOP); traced cuDNN %.1f us (%.2fx)",
		cfg, us, n, tflops, float64(inst.FLOPs)/1e9, traced, us/traced)
}
