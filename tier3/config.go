package tier3

// Config chooses how tier 3 replays where a choice is a guess. Its zero
// value is the default: PyTorch's traced kernels, causally masked square
// scores. It travels in Device (New, NewWith) to every Builder, and is an
// argument of the planning functions that need no GPU (FaithfulFor,
// Heuristics).
type Config struct {
	// UniformScores fills the input of a softmax over the last dim of a
	// tensor of rank 3 or more whose last two dims are equal
	// ([..., S, S], S > 1) uniformly in [-1, 1), as every other input.
	// By default it is filled as a causal language model's attention
	// scores in prefill: each key past its query holds the dtype's lowest
	// value, as an additive causal mask (Hugging Face's
	// torch.finfo(dtype).min) leaves them, the rest uniform.
	//
	// The softmax's time depends on it. After exp, about half the row is
	// exactly 0, and dividing 0 by the row sum takes the slow path of IEEE
	// division, in both PyTorch's softmax_warp_forward and kreplay's. On
	// an H100, PyTorch's softmax of BLOOM-560M prefill's f16[4,16,512,512]
	// scores (traced 45.51 µs) took 46.35 µs on the model's real scores
	// and 38.90 on uniform ones, with the same DRAM traffic; Nsight Compute
	// counted 32.6 and 20.8 million warp instructions
	// (results/h100/tier3-data/). Square scores without a causal mask (an
	// encoder's) replay too slow without UniformScores.
	UniformScores bool
	// NoFaithful replays every op with kreplay's fast kernels. By default
	// the elementwise family (elementwise ops, copies and casts, fill,
	// arange, cat), reductions, layer and RMS norms and softmax take
	// PyTorch's strategy and launch shape, read from the traced kernel
	// (faithful.go).
	NoFaithful bool
}

// faithful reports whether c replays PyTorch's traced kernels.
func (c Config) faithful() bool { return !c.NoFaithful }
