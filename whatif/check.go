package whatif

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier3"
)

// DefaultTolerance is the output check's default tolerance: every
// element of the kernel's output within 1e-2 times the chain output's
// largest magnitude (about ten f16 rounding steps of it).
const DefaultTolerance = 1e-2

// Check is the output check of one variant: the kernel's y against the
// replaced ops run by kreplay's own kernels (tier 3, the traced signatures
// with their dtypes) on the same x, w and eps, wired as the recipe's flow
// says, and against Reference, the chain computed on the host from x and
// w read back.
type Check struct {
	Variant int `json:"variant"`
	// Chain compares y with the chain's output, Host with the host
	// reference; ChainHost the chain's output with the host reference
	// (that the chain ran as the recipe says).
	Chain     Agreement `json:"chain"`
	Host      Agreement `json:"host"`
	ChainHost Agreement `json:"chain_host"`
	// Steps are the chain's steps as replayed: the signature and
	// kreplay's kernel (its PyTorch strategy where it follows one).
	Steps []string `json:"steps"`
}

// OK reports whether the kernel's output agrees with the chain's and the
// host reference's.
func (c *Check) OK() bool { return c.Chain.OK() && c.Host.OK() }

// chainStep is one replaced op prepared for the check.
type chainStep struct {
	sig  *signatures.Signature
	p    *replay.Prepared
	inst *tier3.Instance
}

// CheckOutput runs fused, the kernel of variant b prepared with
// PrepareWith (its buffer set 0: x and w random, uniform in [-1, 1)),
// then the variant's chain of signatures, prepared anew without captured
// binaries, on copies of the same x, w and eps, and compares the outputs.
func CheckOutput(d *replay.Device, set *signatures.Set, b *Bound, fused *replay.Prepared, tol float64) (*Check, error) {
	k3, ok := fused.Kernel.(*tier3.Kernel)
	if !ok || len(k3.Instance(0).Inputs) != 2 || len(k3.Instance(0).Outputs) != 1 {
		return nil, fmt.Errorf("check: the fused kernel was not prepared with its builder")
	}
	fi := k3.Instance(0)
	steps := make([]chainStep, len(b.Variant.Sigs))
	defer func() {
		for _, s := range steps {
			if s.p != nil {
				s.p.Close()
			}
		}
	}()
	c := &Check{Variant: b.Index}
	for i, si := range b.Variant.Sigs {
		sc := *set.Signatures[si]
		sc.Binary = nil
		p, err := d.PrepareFor(&sc, replay.Warm)
		if err != nil {
			return nil, fmt.Errorf("check: step %d: %w", i, err)
		}
		steps[i].p, steps[i].sig = p, &sc
		t3, ok := p.Kernel.(*tier3.Kernel)
		switch {
		case !ok:
			return nil, fmt.Errorf("check: step %d (%s) replays by %s, not by kreplay's kernels", i, sc.Label, p.Path)
		case t3.Approximate() != "":
			return nil, fmt.Errorf("check: step %d (%s): kreplay has no exact kernel: %s", i, sc.Label, t3.Approximate())
		}
		steps[i].inst = t3.Instance(0)
		c.Steps = append(c.Steps, fmt.Sprintf("%s %s: %s", sc.ID, sc.Label, strategyOf(p.Path, steps[i].inst)))
	}
	if out := steps[len(steps)-1].inst.Outputs[0]; !out.Contiguous() || out.Numel() != b.RowNorm.Rows*b.RowNorm.Cols {
		return nil, fmt.Errorf("check: the chain's output %s%v (strides %v) is not y's contiguous layout", out.DType, out.Shape, out.Strides)
	}
	var x, w, y, chain []byte
	err := d.Do(func() error {
		s := d.Stream()
		if err := fi.Launch(s); err != nil {
			return fmt.Errorf("the fused kernel: %w", err)
		}
		if err := runChain(b, steps, fi, s); err != nil {
			return err
		}
		var err error
		for _, rd := range []struct {
			dst *[]byte
			t   *tier3.Tensor
		}{{&x, fi.Inputs[0]}, {&w, fi.Inputs[1]}, {&y, fi.Outputs[0]}, {&chain, steps[len(steps)-1].inst.Outputs[0]}} {
			*rd.dst = make([]byte, rd.t.Bytes())
			if err = cuda.CopyDtoH(*rd.dst, rd.t.Ptr, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	return c, c.compare(b, x, w, y, chain, tol)
}

// strategyOf says how a step replays: its path and PyTorch strategy.
func strategyOf(path string, inst *tier3.Instance) string {
	if inst.Strategy != "" {
		return path + " (" + inst.Strategy + ")"
	}
	return path
}

// compare decodes the outputs and fills the agreements.
func (c *Check) compare(b *Bound, x, w, y, chain []byte, tol float64) error {
	rn := b.RowNorm
	got, err := decode(y, rn.DType)
	if err != nil {
		return fmt.Errorf("check: y: %w", err)
	}
	ch, err := decode(chain, rn.DType)
	if err != nil {
		return fmt.Errorf("check: the chain's output: %w", err)
	}
	ref, err := Reference(rn, b.Recipe.Casts, x, w)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	c.Chain, c.Host, c.ChainHost = Compare(got, ch, tol), Compare(got, ref, tol), Compare(ch, ref, tol)
	return nil
}

// operands are the positions of the signature inputs a step's tier-3
// kernel takes as its tensor inputs, in order (tier3.Instance.Inputs), for
// the recipes' ops: a copy's source (its destination is its output), else
// the tensors among the first two inputs (self and other; the rest are
// arguments such as alpha or an out= tensor).
func operands(sig *signatures.Signature) []int {
	var pos []int
	for i, in := range sig.Inputs {
		switch {
		case !in.IsTensor():
		case sig.Op == "aten::copy_" || sig.Op == "aten::copy":
			if i == 1 {
				pos = append(pos, i)
			}
		case i < 2:
			pos = append(pos, i)
		}
	}
	return pos
}

// runChain enqueues the chain on s: before each step, its inputs are
// written from their sources (x, w, eps, or an earlier step's output) as
// the recipe's flow says. Call inside Do.
func runChain(b *Bound, steps []chainStep, fi *tier3.Instance, s *cuda.Stream) error {
	for i, st := range steps {
		pos := operands(st.sig)
		if len(pos) != len(st.inst.Inputs) {
			return fmt.Errorf("step %d (%s): kreplay's kernel takes %d tensors, the recipe's flow reads %d", i, st.sig.Label, len(st.inst.Inputs), len(pos))
		}
		for j, at := range pos {
			src, ok := b.Recipe.Flow[i][at]
			dst := st.inst.Inputs[j]
			var err error
			switch {
			case !ok:
				err = fmt.Errorf("no source in the recipe")
			case src.Ext == "x":
				err = copyTensor(dst, fi.Inputs[0], s)
			case src.Ext == "w":
				err = copyTensor(dst, fi.Inputs[1], s)
			case src.Ext == "eps":
				err = writeScalar(dst, b.RowNorm.Eps, s)
			default:
				err = copyTensor(dst, steps[src.Step].inst.Outputs[0], s)
			}
			if err != nil {
				return fmt.Errorf("step %d (%s) input %d: %w", i, st.sig.Label, at, err)
			}
		}
		if err := st.inst.Launch(s); err != nil {
			return fmt.Errorf("step %d (%s): %w", i, st.sig.Label, err)
		}
	}
	return s.Synchronize()
}

// copyTensor copies src's elements into dst, which must have the same
// dtype and number of elements, both contiguous.
func copyTensor(dst, src *tier3.Tensor, s *cuda.Stream) error {
	if dst.DType != src.DType || dst.Numel() != src.Numel() || dst.Bytes() != src.Bytes() || !dst.Contiguous() || !src.Contiguous() {
		return fmt.Errorf("cannot copy %s%v (strides %v) into %s%v (strides %v)", src.DType, src.Shape, src.Strides, dst.DType, dst.Shape, dst.Strides)
	}
	return cuda.MemcpyDtoDAsync(dst.Ptr, src.Ptr, int(dst.Bytes()), s)
}

// scalarBytes is v as one element of dtype.
func scalarBytes(v float64, dtype string) ([]byte, error) {
	le := binary.LittleEndian
	switch dtype {
	case "f64":
		return le.AppendUint64(nil, math.Float64bits(v)), nil
	case "f32", "f16", "bf16":
		return encode([]float32{float32(v)}, dtype)
	}
	return nil, fmt.Errorf("eps into a %s tensor", dtype)
}

// writeScalar writes v into a one-element tensor.
func writeScalar(dst *tier3.Tensor, v float64, s *cuda.Stream) error {
	if dst.Numel() != 1 {
		return fmt.Errorf("eps into a tensor of %d elements", dst.Numel())
	}
	b, err := scalarBytes(v, dst.DType)
	if err != nil {
		return err
	}
	return cuda.CopyHtoD(dst.Ptr, b, s)
}
