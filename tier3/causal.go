package tier3

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// causalScores reports whether a softmax along dim of a tensor of this
// shape takes causally masked inputs (see Config.UniformScores).
func (c Config) causalScores(shape []int64, dim int) bool {
	n := len(shape)
	return !c.UniformScores && n >= 3 && n <= krMaskMaxDims && dim == n-1 && shape[n-1] == shape[n-2] && shape[n-1] > 1
}

// krMaskMaxDims is KrMaskShape's capacity (util.cu).
const krMaskMaxDims = 8

// lowestBits returns the bit pattern of dtype's lowest finite value and its
// size in bytes; ok is false for a dtype that is not floating-point.
func lowestBits(dtype string) (bits uint64, size int, ok bool) {
	switch dtype {
	case "f16":
		return 0xfbff, 2, true
	case "bf16":
		return 0xff7f, 2, true
	case "f32":
		return 0xff7fffff, 4, true
	case "f64":
		return 0xffefffffffffffff, 8, true
	}
	return 0, 0, false
}

// MaskCausal writes the dtype's lowest value to every element of t, a
// [..., Q, K] floating-point tensor, whose key index is past its query
// index (aligned to the last key when Q < K), as an additive causal mask
// leaves attention scores, and waits for it.
func (e *Env) MaskCausal(t *Tensor) error {
	n := len(t.Shape)
	bits, size, ok := lowestBits(t.DType)
	switch {
	case !ok:
		return fmt.Errorf("causal mask over a %s tensor: not floating-point", t.DType)
	case n < 2 || n > krMaskMaxDims:
		return fmt.Errorf("causal mask over a tensor of rank %d: want 2 to %d", n, krMaskMaxDims)
	case len(t.Strides) != n:
		return fmt.Errorf("causal mask over a tensor with %d strides for %d dims", len(t.Strides), n)
	}
	numel := t.Numel()
	if numel == 0 {
		return nil
	}
	f, err := e.Function(Util, "kr_causal_mask")
	if err != nil {
		return err
	}
	grid := uint32(min((numel+255)/256, 4096))
	arg := cuda.RawArg{Data: maskShape(t.Shape, t.Strides), Align: 8}
	if err := f.Launch([3]uint32{grid, 1, 1}, [3]uint32{256, 1, 1}, 0, e.Stream,
		t.Ptr, arg, uint64(numel), bits, int32(size)); err != nil {
		return err
	}
	return e.Stream.Synchronize()
}

// maskShape lays out KrMaskShape (util.cu): ndim, then 8 sizes and 8
// strides, 64-bit each, unused entries 1 and 0.
func maskShape(shape, strides []int64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(shape)))
	sizes := slices.Concat(shape, slices.Repeat([]int64{1}, krMaskMaxDims-len(shape)))
	st := slices.Concat(strides, make([]int64, krMaskMaxDims-len(strides)))
	for _, v := range slices.Concat(sizes, st) {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return b
}

// HeuristicCausal names the causal-scores input heuristic
// (Config.UniformScores unset) where Heuristics reports it.
const HeuristicCausal = "causal scores"

// Heuristics lists the input heuristics the replay of sig applies, by
// name: HeuristicCausal for a softmax over square scores unless
// c.UniformScores, HeuristicAttnBias for an attention op with a bias
// it replays; none for the other ops.
func Heuristics(sig *signatures.Signature, c Config) []string {
	switch sig.Op {
	case "aten::_softmax", "aten::softmax", "aten::_log_softmax", "aten::log_softmax":
	default:
		if signatures.IsAttentionOp(sig.Op) {
			if p, err := parseAttention(sig); err == nil && p.Bias {
				return []string{HeuristicAttnBias}
			}
		}
		return nil
	}
	s, err := parseSoftmax(sig)
	if err != nil {
		return nil
	}
	if c.causalScores(rdArg(sig, 0).Shape, s.dim) {
		return []string{HeuristicCausal}
	}
	return nil
}
