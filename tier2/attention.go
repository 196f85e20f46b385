package tier2

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/kreplay/kreplay/gpu"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cudnn"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// APICuDNNSDPA is the library call a cuDNN SDPA signature replays with:
// cuDNN's backend API executing the graph cudnn-frontend builds for
// PyTorch (internal/cudnn, SDPA).
const APICuDNNSDPA API = "cudnnBackendExecute+SDPA"

// ErrNotCuDNNSDPA is returned for signatures that are not cuDNN SDPA ops
// (signatures.CuDNNAttentionOps) of a plain trace.
var ErrNotCuDNNSDPA = errors.New("not a cuDNN SDPA signature")

// cuDNNSDPA describes, without a GPU, how a cuDNN SDPA signature's op is
// handed to cuDNN: as PyTorch 2.11's MHA.cpp describes q, k, v, the
// output, the bias and the stats to cudnn-frontend. It fails, wrapping
// ErrNotCuDNNSDPA or signatures.ErrAttention, for other signatures and
// for arguments it does not replay.
func cuDNNSDPA(sig *signatures.Signature) (*cudnn.SDPA, *signatures.Attention, error) {
	if !slices.Contains(signatures.CuDNNAttentionOps, sig.Op) {
		return nil, nil, fmt.Errorf("%s (%s): %w", sig.ID, sig.Op, ErrNotCuDNNSDPA)
	}
	if sig.Unreplayable != "" {
		return nil, nil, errors.New(sig.Unreplayable)
	}
	a, err := signatures.ParseAttention(sig)
	if err != nil {
		return nil, nil, err
	}
	s := &cudnn.SDPA{DType: cudnn.DataHalf, Causal: a.Causal, Stats: a.LSE, Scale: float32(a.Scale)}
	if a.DType == "bf16" {
		s.DType = cudnn.DataBFloat16
	}
	var raw [3]cudnn.Shape
	for i := range raw {
		raw[i] = shapeOf(sig.Inputs[i])
	}
	s.Q, s.K, s.V = raw[0], raw[1], raw[2]
	for _, t := range []*cudnn.Shape{&s.Q, &s.K, &s.V} {
		t.Strides = cudnn.FixSizeOneStrides(t.Dims, t.Strides)
	}
	s.O = cudnn.Shape{Dims: [4]int64{a.B, a.Hq, a.Sq, a.D}, Strides: matchingLayout(raw[0], [4]int64{a.B, a.Hq, a.Sq, a.D})}
	if a.Bias {
		b := shapeOf(sig.Inputs[signatures.AttentionBiasInput(sig.Op)])
		s.Bias = &b
		switch a.BiasDType {
		case "f16":
			s.BiasType = cudnn.DataHalf
		case "bf16":
			s.BiasType = cudnn.DataBFloat16
		default:
			s.BiasType = cudnn.DataFloat
		}
	}
	return s, a, nil
}

// shapeOf is a 4-d tensor input's dims and strides (row-major where the
// trace records none).
func shapeOf(in signatures.Input) cudnn.Shape {
	var sh cudnn.Shape
	copy(sh.Dims[:], in.Shape)
	if len(in.Strides) == 4 {
		copy(sh.Strides[:], in.Strides)
		return sh
	}
	acc := int64(1)
	for i := 3; i >= 0; i-- {
		sh.Strides[i] = acc
		acc *= max(sh.Dims[i], 1)
	}
	return sh
}

// matchingLayout returns the strides PyTorch's alloc_with_matching_layout
// gives the output of shape dims: where dims are q's, empty_like(q), so
// q's own strides if q is dense and non-overlapping and row-major ones
// if not; otherwise dense, its dimensions stored in the order of q's
// strides.
func matchingLayout(q cudnn.Shape, dims [4]int64) [4]int64 {
	if dims == q.Dims {
		if denseStrides(q) {
			return q.Strides
		}
		var st [4]int64
		acc := int64(1)
		for i := 3; i >= 0; i-- {
			st[i] = acc
			acc *= dims[i]
		}
		return st
	}
	order := []int{0, 1, 2, 3}
	sort.SliceStable(order, func(a, b int) bool { return q.Strides[order[a]] < q.Strides[order[b]] })
	var st [4]int64
	acc := int64(1)
	for _, d := range order {
		st[d] = acc
		acc *= dims[d]
	}
	return st
}

// denseStrides reports whether a tensor's elements fill its span exactly
// once (PyTorch's is_non_overlapping_and_dense): by increasing stride,
// each dimension of more than one element steps over the ones before.
func denseStrides(t cudnn.Shape) bool {
	order := []int{0, 1, 2, 3}
	sort.SliceStable(order, func(a, b int) bool { return t.Strides[order[a]] < t.Strides[order[b]] })
	acc := int64(1)
	for _, d := range order {
		if t.Dims[d] == 1 {
			continue
		}
		if t.Strides[d] != acc {
			return false
		}
		acc *= t.Dims[d]
	}
	return true
}

// PlanCuDNNSDPA reports, without a GPU, whether sig replays through
// cuDNN's SDPA (a replay falls back to tier 3's kernel where cuDNN does
// not load or its graph does not build on the device).
func PlanCuDNNSDPA(sig *signatures.Signature) bool {
	_, _, err := cuDNNSDPA(sig)
	return err == nil
}

// spanBytes is the bytes a strided tensor of elem-byte elements spans.
func spanBytes(sh cudnn.Shape, elem int64) int64 {
	n := int64(1)
	for i, d := range sh.Dims {
		if d == 0 {
			return 0
		}
		n += (d - 1) * sh.Strides[i]
	}
	return n * elem
}

// attnSet is one buffer set of an attention replay, with its variant pack.
type attnSet struct {
	bufs [6]cuda.DevicePtr // q, k, v, bias, o, stats
	pack *cudnn.Pack
}

// attnBuffers names the buffers of a set, their UIDs and dtypes.
var attnBuffers = [6]struct {
	uid  int64
	name string
}{{cudnn.UIDQ, "q"}, {cudnn.UIDK, "k"}, {cudnn.UIDV, "v"}, {cudnn.UIDBias, "bias"}, {cudnn.UIDO, "o"}, {cudnn.UIDStats, "stats"}}

// Attention is a cuDNN SDPA signature made launchable through cuDNN's
// backend API.
type Attention struct {
	sig       *signatures.Signature
	a         *signatures.Attention
	desc      *cudnn.SDPA
	plan      *cudnn.Plan
	libs      *Libraries
	bytes     [6]int64
	dtypes    [6]string
	sets      []attnSet
	workspace cuda.DevicePtr
	// Note says what differs from PyTorch's own graph, "" when nothing.
	note string
}

var _ launch.Kernel = (*Attention)(nil)

// NewAttention allocates a cuDNN SDPA signature's tensors (random data;
// the bias, whose values the trace does not record, uniform like every
// input) and builds its cuDNN graph and plan as PyTorch 2.11 does. It
// must run with the device's context current.
func NewAttention(sig *signatures.Signature, libs *Libraries, opt gpu.Options, s *gpu.Stream) (k *Attention, err error) {
	desc, a, err := cuDNNSDPA(sig)
	if err != nil {
		return nil, err
	}
	k = &Attention{sig: sig, a: a, desc: desc, libs: libs}
	built := k
	defer func() {
		if err != nil {
			built.Close()
		}
	}()
	h, err := libs.cuDNN()
	if err != nil {
		return nil, err
	}
	if err := k.buildPlan(h); err != nil {
		return nil, err
	}
	io := a.DType
	shapes := [6]*cudnn.Shape{&desc.Q, &desc.K, &desc.V, desc.Bias, &desc.O, nil}
	k.dtypes = [6]string{io, io, io, a.BiasDType, io, "f32"}
	for i, sh := range shapes {
		if sh != nil {
			k.bytes[i] = spanBytes(*sh, signatures.DTypeSize(k.dtypes[i]))
		}
	}
	if a.LSE {
		k.bytes[5] = 4 * a.B * a.Hq * a.Sq
	}
	if k.plan.Workspace > 0 {
		if k.workspace, err = cuda.MemAlloc(int(k.plan.Workspace)); err != nil {
			return nil, err
		}
	}
	if err := k.allocSets(opt, s); err != nil {
		return nil, err
	}
	return k, nil
}

// buildPlan builds the graph cudnn-frontend builds for the loaded cuDNN.
// Where the unified SDPA operation does not build, the composite graph
// is tried, and Note says so.
func (k *Attention) buildPlan(h *cudnn.Handle) error {
	version, err := cudnn.Version()
	if err != nil {
		return err
	}
	g, err := k.desc.Graph(version)
	if err != nil {
		return err
	}
	k.plan, err = cudnn.Build(h, g)
	if err != nil && g.Unified {
		g2, err2 := k.desc.Graph(0) // the composite expansion
		if err2 != nil {
			return err2
		}
		var err3 error
		if k.plan, err3 = cudnn.Build(h, g2); err3 != nil {
			return fmt.Errorf("cuDNN SDPA: unified: %v; composite: %w", err, err3)
		}
		k.note = fmt.Sprintf("the unified SDPA operation did not build (%v); composite graph", err)
		return nil
	}
	return err
}

// allocSets allocates opt.Sets buffer sets (at least one) of random data,
// within opt.FreeBytes, and their variant packs.
func (k *Attention) allocSets(opt launch.Options, s *cuda.Stream) error {
	sets := max(opt.Sets, 1)
	if need := int64(sets)*k.Footprint() + k.plan.Workspace; opt.FreeBytes > 0 && need > opt.FreeBytes {
		return fmt.Errorf("needs %d bytes of device memory for %d buffer sets, %d available", need, sets, opt.FreeBytes)
	}
	for i := 0; i < sets; i++ {
		k.sets = append(k.sets, attnSet{})
		cur := &k.sets[len(k.sets)-1]
		ptrs := map[int64]uintptr{}
		for j, n := range k.bytes {
			if n == 0 {
				continue
			}
			p, err := cuda.MemAlloc(int(n))
			if err != nil {
				return err
			}
			cur.bufs[j] = p
			ptrs[attnBuffers[j].uid] = uintptr(p)
			if j < 4 { // inputs
				if err := launch.FillRandom(p, n, k.dtypes[j], opt.Seed+uint64(i*6+j), s); err != nil {
					return err
				}
			}
		}
		pack, err := k.plan.NewPack(ptrs, uintptr(k.workspace))
		if err != nil {
			return err
		}
		cur.pack = pack
	}
	return nil
}

// Launch enqueues the plan on s using buffer set set.
func (k *Attention) Launch(s *gpu.Stream, set int) error {
	h, err := k.libs.cuDNN()
	if err != nil {
		return err
	}
	if err := k.libs.dnnStream(s); err != nil {
		return err
	}
	return k.plan.Execute(h, k.sets[set].pack)
}

// Sets returns the number of buffer sets.
func (k *Attention) Sets() int { return len(k.sets) }

// Footprint is the tensors' device memory for one buffer set (the
// workspace, shared by the sets, left out).
func (k *Attention) Footprint() int64 {
	var n int64
	for _, b := range k.bytes {
		n += b
	}
	return n
}

// Work counts the op's FLOPs as tier 3 counts them (4 * head dim per
// visible (query, key) pair) and the tensors' bytes.
func (k *Attention) Work() gpu.Work {
	return launch.Work{FLOPs: k.a.FLOPs(), Bytes: k.Footprint()}
}

// AuxMemset is true: cuDNN's fused SDPA plan clears 4 bytes of its
// workspace before its kernel, a memset the trace records as a signature
// of its own ("Memset 4 B in _cudnn_attention_forward").
func (k *Attention) AuxMemset() bool { return true }

var _ launch.AuxMemset = (*Attention)(nil)

// Capturable is true: PyTorch captures cuDNN SDPA in CUDA graphs.
func (k *Attention) Capturable() bool { return true }

// cudnnPlan is the cuDNN plan the replay runs (graph, engine and
// workspace), nil before it is built.
func (k *Attention) cudnnPlan() *cudnn.Plan { return k.plan }

// Note says where the replay's graph differs from the one PyTorch would
// build, "" where it does not.
func (k *Attention) Note() string { return k.note }

// Close frees the tensors, variant packs, workspace and plan.
func (k *Attention) Close() error {
	var errs []error
	for _, st := range k.sets {
		errs = append(errs, st.pack.Destroy())
		for _, p := range st.bufs {
			if p != 0 {
				errs = append(errs, p.Free())
			}
		}
	}
	k.sets = nil
	if k.workspace != 0 {
		errs = append(errs, k.workspace.Free())
		k.workspace = 0
	}
	errs = append(errs, k.plan.Destroy())
	k.plan = nil
	return errors.Join(errs...)
}
