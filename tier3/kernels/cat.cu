// cat as PyTorch's CatArrayBatchedCopy does it, for the faithful replay of
// a traced cat (tier3/faithful.go, cat.go). Prepended with util.cu and
// ew_common.cu. blockIdx.y picks the input; the block's threads go over
// the input's elements in a grid-stride loop (the traced grid and block),
// and each element's place in the output is found by hardware division
// over every dimension of the output (the input's own size along the cat
// dimension), as is its place in the input when the input is not
// contiguous. Elements are moved as EW_CAT_BYTES-byte words.
//
//   EW_CAT_BYTES   the element size (1, 2, 4, 8)
//   EW_IDX64       64-bit indices (otherwise 32-bit, as PyTorch's
//                  unsigned int IndexType)

#define EW_CAT_MAXD 8

// Parameters; tier3/cat.go (ptCatOut.bytes, ptCatIn.bytes) writes them.
struct EwCatOut {
	char *out;
	int ndim;
	int dim;                        // the cat dimension
	long long size[EW_CAT_MAXD];    // the output's sizes, outermost first
	long long stride[EW_CAT_MAXD];  // and strides in elements
};
struct EwCatIn {
	char *in;
	long long n;                    // elements
	long long dimSize;              // size along the cat dimension
	long long offset;               // first output element (offset along dim * stride)
	int contig;                     // read in[i] for element i
	int pad;
	long long stride[EW_CAT_MAXD];  // the input's strides in elements (when not contig)
};

typedef typename EwWord<EW_CAT_BYTES>::T ew_cat_t;

// ew_cat_offset is CatArrIndexToOffset: element i's offset over sizes
// (dimSize at the cat dimension) and strides, innermost dimension first.
__device__ __forceinline__ ew_idx ew_cat_offset(const EwCatOut &o, const long long *stride, ew_idx dimSize, ew_idx i) {
	ew_idx off = 0;
#pragma unroll
	for (int d = EW_CAT_MAXD - 1; d >= 1; d--) {
		if (d < o.ndim) {
			ew_idx size = d == o.dim ? dimSize : (ew_idx)o.size[d];
			ew_idx next = i / size;
			off += (i - next * size) * (ew_idx)stride[d];
			i = next;
		}
	}
	return off + i * (ew_idx)stride[0];
}

extern "C" __global__ void kr_cat_pt(const EwCatOut o, const EwCatIn *__restrict__ ins) {
	const EwCatIn &in = ins[blockIdx.y];
	const ew_idx n = (ew_idx)in.n;
	ew_idx i = (ew_idx)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	const ew_idx dimSize = (ew_idx)in.dimSize, step = (ew_idx)gridDim.x * blockDim.x;
	const ew_cat_t *src = reinterpret_cast<const ew_cat_t *>(in.in);
	ew_cat_t *dst = reinterpret_cast<ew_cat_t *>(o.out) + in.offset;
	for (; i < n; i += step) {
		ew_idx to = ew_cat_offset(o, o.stride, dimSize, i);
		ew_idx from = in.contig ? i : ew_cat_offset(o, in.stride, dimSize, i);
		EW_ACCESS(src + from, EW_CAT_BYTES, EW_CAT_BYTES);
		EW_ACCESS(dst + to, EW_CAT_BYTES, EW_CAT_BYTES);
		dst[to] = src[from];
	}
}
