package tier3

import (
	"fmt"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/launch"
)

// TestGPUEwVariants logs, for the large elementwise cases of
// TestGPUEwBandwidth, the bandwidth of the fast kernel's plan and of
// variants of it (vector width, unroll) next to a
// device copy: the data behind the choices ewMakePlan makes. No
// thresholds; the results of the variants are not checked (the plan's
// are, in TestGPUEwBandwidth).
func TestGPUEwVariants(t *testing.T) {
	sub := gputest.NewSubtests(t)
	if testing.Short() {
		t.Skip("allocates and times gigabytes")
	}
	type variant struct {
		name   string
		vec    int64 // 0: the plan's
		unroll int64 // 0: the plan's
	}
	variants := []variant{
		{"plan", 0, 0},
		{"unroll 2", 0, 2},
		{"unroll 4", 0, 4},
		{"vec 8", 8, 0},
		{"vec 4", 4, 0},
		{"vec 4 unroll 4", 4, 4},
	}
	for _, c := range ewBandwidthCases() {
		if c.name == "mul_rope_f16_strided" {
			continue
		}
		sub.Run(c.name, func(t *testing.T) {
			gpuEnv(t, func(dev Device, s *cuda.Stream) {
				k, err := New(c.sig(t), dev, launch.Options{Sets: 1, Seed: 9}, s)
				if err != nil {
					t.Fatal(err)
				}
				defer k.Close()
				inst := k.Instance(0)
				var bytes int64
				for _, x := range append(append([]*Tensor{}, inst.Inputs...), inst.Outputs...) {
					bytes += x.Bytes()
				}
				pl, err := ewAnalyze(c.sig(t))
				if err != nil {
					pl, err = ewAnalyzeCopy(c.sig(t))
				}
				if err != nil {
					t.Fatal(err)
				}
				pr := ewProblem{out: inst.Outputs[0]}
				in := 0
				for j, a := range pl.args {
					switch {
					case a.in != nil:
						pr.in[j] = ewTensorOperand(inst.Inputs[in])
						in++
					case a.isSet:
						pr.in[j] = ewConstOperand(a.c)
					}
				}
				e := &Env{Compiler: dev.Compiler, Stream: s, SMs: dev.SMs}
				for _, v := range variants {
					spec := ewSpec{op: pl.code, ct: pl.ct, alpha: pl.alpha, raw: pl.raw, vec: v.vec}
					mp, err := ewMakePlan(spec, []ewProblem{pr})
					if err != nil {
						t.Fatal(err)
					}
					if v.unroll > 0 {
						mp.defines["EW_UNROLL"] = fmt.Sprint(v.unroll)
					}
					f, err := e.Function(ewSources("elementwise.cu", ewSource, mp.defines), "kr_ew")
					if err != nil {
						t.Fatal(err)
					}
					unroll := int64(1)
					fmt.Sscan(mp.defines["EW_UNROLL"], &unroll)
					gx, err := ewGrid(e, f, mp.units, unroll)
					if err != nil {
						t.Fatal(err)
					}
					arg := cuda.RawArg{Data: mp.params[0].bytes(), Align: 8}
					run := func(st *cuda.Stream) error {
						return f.Launch([3]uint32{gx, 1, 1}, [3]uint32{ewBlock, 1, 1}, 0, st, arg)
					}
					op, mc := ewBandwidth(t, s, &Kernel{sets: []*Instance{{Launch: run}}}, bytes)
					t.Logf("%s %-14s vec %s unroll %s grid %d: %.0f GB/s, copy %.0f: %.2fx",
						c.name, v.name, mp.defines["EW_VEC"], mp.defines["EW_UNROLL"], gx, op, mc, op/mc)
				}
			})
		})
	}
}
