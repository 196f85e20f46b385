// Package signatures turns a profiler trace of real inference into the set of
// unique kernel signatures that kreplay replays.
//
// A PyTorch-profiler (Kineto) trace is read one event at a time (plain or
// gzip JSON; see Reader). Every GPU activity (kernel, memcpy, memset) is
// linked to the CPU op that launched it, invocations that would replay
// identically are collapsed into one Signature with its invocation count
// and traced durations, and each signature is classified into a replay tier
// and class with the parameters its tier needs (GEMM dimensions, memory-op
// bytes, collective sizes, element counts). The ordered invocations are
// kept as a Timeline with per-device busy and idle time.
//
// A Set is written and read as versioned JSON (WriteSet, ReadSet).
package signatures

// Tier says which replay path a signature takes.
type Tier int

// The replay tiers.
const (
	// TierMemory is CUDA memory ops: memcpy and memset.
	TierMemory Tier = 1
	// TierLibrary is work done by a vendor library called directly:
	// cuBLAS/cuBLASLt GEMMs and NCCL collectives.
	TierLibrary Tier = 2
	// TierKernel is everything else, replayed by kreplay's own kernels.
	TierKernel Tier = 3
)

// Activity is the kind of GPU activity a signature stands for.
type Activity string

// GPU activity kinds, as Kineto categorises them.
const (
	ActivityKernel Activity = "kernel"
	ActivityMemcpy Activity = "memcpy"
	ActivityMemset Activity = "memset"
)

// Class is a signature's op class within its tier.
type Class string

// Signature classes.
const (
	ClassMemcpy      Class = "memcpy"
	ClassMemset      Class = "memset"
	ClassGEMM        Class = "gemm"
	ClassCollective  Class = "collective"
	ClassElementwise Class = "elementwise"
	ClassCopy        Class = "copy"
	ClassFill        Class = "fill"
	ClassReduce      Class = "reduce"
	ClassNorm        Class = "norm"
	ClassSoftmax     Class = "softmax"
	ClassCat         Class = "cat"
	ClassIndex       Class = "index"
	ClassScan        Class = "scan"
	ClassAttention   Class = "attention"
	ClassOther       Class = "other"
)

// Signature is one unique replayable GPU activity: every invocation in the
// trace with the same identity (kernel, launch shape, op, inputs, bytes)
// collapses into one Signature.
type Signature struct {
	// ID is a short hash of the identity, the same on any machine and in
	// any run for the same identity.
	ID string `json:"id"`
	// Label is a short human description: op and shapes.
	Label    string   `json:"label"`
	Tier     Tier     `json:"tier"`
	Class    Class    `json:"class"`
	Activity Activity `json:"activity"`
	// Count is the number of invocations in the trace.
	Count  int    `json:"count"`
	Kernel string `json:"kernel"`
	// Op is the innermost CPU op that launched the activity; empty when the
	// trace links none.
	Op     string  `json:"op"`
	Inputs []Input `json:"inputs,omitempty"`
	// Launch is the kernel's launch shape (kernels only).
	Launch *Launch `json:"launch,omitempty"`
	// TracedNS summarises the traced durations in nanoseconds.
	TracedNS Stats `json:"traced_ns"`

	// Tier parameters: at most one of these is set.
	Memory     *MemoryOp     `json:"memory,omitempty"`
	GEMM       *GEMM         `json:"gemm,omitempty"`
	Collective *Collective   `json:"collective,omitempty"`
	Tensor     *TensorParams `json:"tensor,omitempty"`

	// Binary is the captured kernel the signature replays as launched
	// (a bundle made by kreplay capture); nil for a plain trace.
	Binary *Binary `json:"binary,omitempty"`

	// PartOf names the signature this one belongs to and is replayed with
	// (a split-K reduce kernel, or a memset cuBLAS issues inside a GEMM op,
	// points at the GEMM); its time is not counted twice.
	PartOf string `json:"part_of,omitempty"`
	// Unreplayable says why the replay parameters could not be derived,
	// starting with "unreplayable: "; empty when they were.
	Unreplayable string `json:"unreplayable,omitempty"`
	// Graph is set when a CUDA graph's launch ran the signature's kernels
	// (torch.compile's reduce-overhead mode): the trace records no op
	// shapes for them.
	Graph bool `json:"graph,omitempty"`
}

// Launch is a kernel's launch configuration as traced.
type Launch struct {
	Grid      [3]int64 `json:"grid"`
	Block     [3]int64 `json:"block"`
	SharedMem int64    `json:"shared_mem"`
	Registers int64    `json:"registers"`
}

// Stats summarises traced durations in nanoseconds.
type Stats struct {
	Total  int64 `json:"total"`
	Min    int64 `json:"min"`
	Median int64 `json:"median"`
	Mean   int64 `json:"mean"`
	Max    int64 `json:"max"`
}

// CopyKind is the direction of a memcpy.
type CopyKind string

// Memcpy directions.
const (
	HtoD CopyKind = "HtoD"
	DtoH CopyKind = "DtoH"
	DtoD CopyKind = "DtoD"
	HtoH CopyKind = "HtoH"
	PtoP CopyKind = "PtoP"
)

// MemoryOp holds the replay parameters of a memcpy or memset.
type MemoryOp struct {
	Kind  CopyKind `json:"kind,omitempty"` // memcpy only
	Bytes int64    `json:"bytes"`
	// Host is "pageable" or "pinned" for copies to or from the host.
	Host string `json:"host,omitempty"`
}

// GEMM holds the replay parameters of a matrix product, in both the op's
// row-major terms and the column-major cuBLAS call PyTorch makes for it:
// C[m,n] = alpha * op(A[m,k]) * op(B[k,n]) + beta * C, batch times.
type GEMM struct {
	M     int64 `json:"m"`
	N     int64 `json:"n"`
	K     int64 `json:"k"`
	Batch int64 `json:"batch"`

	// The column-major cuBLAS view: C^T = B^T A^T, so cuBLAS's A is the
	// op's B. TransA and TransB are "N" or "T" for cuBLAS's A and B.
	TransA  string `json:"transa"`
	TransB  string `json:"transb"`
	LDA     int64  `json:"lda"`
	LDB     int64  `json:"ldb"`
	LDC     int64  `json:"ldc"`
	StrideA int64  `json:"stride_a,omitempty"`
	StrideB int64  `json:"stride_b,omitempty"`
	StrideC int64  `json:"stride_c,omitempty"`

	// Dtypes: "f16", "bf16", "f32", ... for the operands and the output.
	AType   string `json:"a_type"`
	BType   string `json:"b_type"`
	OutType string `json:"out_type"`

	Alpha float64 `json:"alpha"`
	Beta  float64 `json:"beta"`
	// Bias is true when the op adds a bias vector fused as a cuBLASLt
	// epilogue (addmm with a 1-D bias and beta 1).
	Bias bool `json:"bias,omitempty"`
	// BiasType is the bias vector's dtype when Bias is set.
	BiasType string `json:"bias_type,omitempty"`
	// Copied lists operands ("A", "B") whose layout PyTorch cannot pass
	// to cuBLAS as is and copies to a contiguous buffer first.
	Copied []string `json:"copied,omitempty"`
	// Scaled is set for an FP8 scaled GEMM (aten::_scaled_mm): how its
	// operands are scaled. Its bias, when it has one, is always fused.
	Scaled *ScaledGEMM `json:"scaled,omitempty"`
	// Grouped is set for a grouped GEMM (aten::_grouped_mm) of a plain
	// trace, replayed as Batch equal groups of M rows: a guess.
	Grouped *GroupedGEMM `json:"grouped,omitempty"`
}

// Scaling modes of an FP8 scaled GEMM, as PyTorch picks them from the
// scales' dtypes and shapes (ScaledBlas.cpp, get_joint_scaling).
const (
	// ScalingTensorwise: scale_a and scale_b are one float32 element each.
	ScalingTensorwise = "tensorwise"
	// ScalingRowwise: scale_a is float32 [m,1] and scale_b float32 [1,n].
	ScalingRowwise = "rowwise"
)

// ScaledGEMM is what an FP8 scaled GEMM (aten::_scaled_mm) adds to a
// GEMM: C = (scale_a * A) (scale_b * B) (+ bias) in the op's terms, with
// A and B FP8 and C in the op's out_dtype.
type ScaledGEMM struct {
	// Scaling is the scaling mode, ScalingTensorwise or ScalingRowwise.
	Scaling string `json:"scaling"`
	// ScaleAType and ScaleBType are the dtypes of scale_a and scale_b.
	ScaleAType string `json:"scale_a_type"`
	ScaleBType string `json:"scale_b_type"`
	// ResultScale is set when the op passes scale_result, which PyTorch
	// hands to cuBLASLt (D_SCALE_POINTER) only for an FP8 output.
	ResultScale bool `json:"result_scale,omitempty"`
	// FastAccum is the op's use_fast_accum (CUBLASLT_MATMUL_DESC_FAST_ACCUM).
	FastAccum bool `json:"fast_accum,omitempty"`
}

// Collective holds the replay parameters of an NCCL collective.
type Collective struct {
	Op        string `json:"op"` // allreduce, allgather, reduce_scatter, broadcast, ...
	Nelems    int64  `json:"nelems"`
	OutNelems int64  `json:"out_nelems,omitempty"`
	DType     string `json:"dtype"`
	Ranks     int64  `json:"ranks"`
	// Reduction is the reduction op in the kernel's name (Sum, Max, ...).
	Reduction string `json:"reduction,omitempty"`
	// Algorithm and Protocol as named by the NCCL kernel (RING, LL, ...).
	Algorithm  string  `json:"algorithm,omitempty"`
	Protocol   string  `json:"protocol,omitempty"`
	Group      string  `json:"group,omitempty"`
	GroupRanks []int64 `json:"group_ranks,omitempty"`
}

// TensorParams are the replay parameters of a tier-3 op: what it reads and
// writes, as the trace states it.
type TensorParams struct {
	// Numel is the number of elements of the op's output (the broadcast
	// shape of its tensor inputs for elementwise ops).
	Numel int64   `json:"numel"`
	Shape []int64 `json:"shape,omitempty"`
	// DTypes of the tensor inputs, in order.
	DTypes []string `json:"dtypes,omitempty"`
	// Broadcast is true when tensor inputs differ in shape.
	Broadcast bool `json:"broadcast,omitempty"`
	// Dims are the reduction, softmax, norm, cat or index dimension(s).
	Dims    []int64 `json:"dims,omitempty"`
	KeepDim bool    `json:"keepdim,omitempty"`
	// Bytes is an estimate of the bytes the op reads and writes.
	Bytes int64 `json:"bytes,omitempty"`
	// Math names the transcendental functions an Inductor kernel's name
	// lists ("sin", "cos", "exp", "log", "tanh", "erf"), which its
	// stand-in evaluates once per element of the iteration space (Shape's
	// product): a guess from the name, for plain traces only.
	Math []string `json:"math,omitempty"`
	// Passes is 2 for an Inductor looped reduction (a "red" kernel) that
	// writes a tensor as large as its iteration space (as its arguments
	// suggest): its epilogue, which needs the finished reduction, loops
	// over the rows it reduced a second time, so its stand-in reads them
	// twice, the second time from the L2 after the block's reduction (a
	// guess, for plain traces only); 0 otherwise.
	Passes int `json:"passes,omitempty"`
}
