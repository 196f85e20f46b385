// cat as PyTorch's CatArrayBatchedCopy does it, for the faithful replay of
// a traced cat (tier3/faithful.go, cat.go). Prepended with util.cu and
// ew_common.cu. blockIdx.y picks the input; the block's threads go over
// the input's elements in a grid-stride loop (the traced grid and block),
// and each element's place in the output is found by hardware division
// over every dimension of the output (the input's own size along the cat
// dimension), and its place in the input, when the input is not
// contiguous, by division over the input's own sizes. Those are the
// output's but for the cat dimension, so the divisions could be shared;
// PyTorch's kernel does not know that and divides twice, and so does this
// one. PyTorch's strided path (stride_size > 1, taken when any input of
// the cat is not contiguous) marks every input non-contiguous, so
// faithful.go clears contig for all of them there: BLOOM-560M decode's
// KV-cache cats read the contiguous past keys that way (Nsight Compute:
// 360,640 instructions against 253,184 with the past marked contiguous).
// Elements are moved as EW_CAT_BYTES-byte words.
//
// As in PyTorch, the number of dimensions is a compile-time constant and
// the metadata of the launch's inputs is passed by value in the kernel's
// parameters; each thread keeps its input's sizes and strides in
// registers, so the loop does the divisions and nothing else (an earlier
// version looped over 8 dimensions with run-time bounds and read the
// strides from device memory on every element: twice PyTorch's time).
//
//   EW_CAT_BYTES   the element size (1, 2, 4, 8)
//   EW_CAT_DIMS    the number of dimensions (1 to 8)
//   EW_CAT_BATCH   the inputs of this launch (gridDim.y)
//   EW_IDX64       64-bit indices (otherwise 32-bit, as PyTorch's
//                  unsigned int IndexType)

#ifndef EW_CAT_DIMS
#define EW_CAT_DIMS 4
#endif
#ifndef EW_CAT_BATCH
#define EW_CAT_BATCH 2
#endif

// Parameters; tier3/faithful.go (ptCatArgs.bytes) writes them. Every field
// is 8 bytes, so the host and the device lay them out alike.
struct EwCatIn {
	char *in;
	long long n;                    // elements
	long long dimSize;              // size along the cat dimension
	long long offset;               // first output element (offset along dim * stride)
	long long contig;               // read in[i] for element i
	long long size[EW_CAT_DIMS];    // the input's sizes
	long long stride[EW_CAT_DIMS];  // and strides in elements (when not contig)
};
struct EwCatArgs {
	char *out;
	long long dim;                  // the cat dimension
	long long size[EW_CAT_DIMS];    // the output's sizes, outermost first
	long long stride[EW_CAT_DIMS];  // and strides in elements
	EwCatIn in[EW_CAT_BATCH];
};

typedef typename EwWord<EW_CAT_BYTES>::T ew_cat_t;

// ew_cat_offset is CatArrIndexToOffset: element i's offset over the first
// EW_CAT_DIMS of size (dimSize at the cat dimension) and strides, innermost
// dimension first, in index type I.
template <typename I, int N>
__device__ __forceinline__ I ew_cat_offset(const I (&size)[N], const I (&stride)[N], int dim, I dimSize, I i) {
	I off = 0;
#pragma unroll
	for (int d = EW_CAT_DIMS - 1; d >= 1; d--) {
		I size_d = d == dim ? dimSize : size[d];
		I next = i / size_d;
		off += (i - next * size_d) * stride[d];
		i = next;
	}
	return off + i * stride[0];
}

extern "C" __global__ void kr_cat_pt(const EwCatArgs a) {
	const unsigned b = blockIdx.y;
	const ew_idx n = (ew_idx)a.in[b].n;
	ew_idx i = (ew_idx)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	const int dim = (int)a.dim;
	const bool contig = a.in[b].contig != 0;
	const ew_idx dimSize = (ew_idx)a.in[b].dimSize, step = (ew_idx)gridDim.x * blockDim.x;
	ew_idx osize[EW_CAT_DIMS], ostride[EW_CAT_DIMS], isize[EW_CAT_DIMS], istride[EW_CAT_DIMS];
#pragma unroll
	for (int d = 0; d < EW_CAT_DIMS; d++) {
		osize[d] = (ew_idx)a.size[d];
		ostride[d] = (ew_idx)a.stride[d];
		isize[d] = (ew_idx)a.in[b].size[d];
		istride[d] = (ew_idx)a.in[b].stride[d];
	}
	const ew_cat_t *src = reinterpret_cast<const ew_cat_t *>(a.in[b].in);
	ew_cat_t *dst = reinterpret_cast<ew_cat_t *>(a.out) + a.in[b].offset;
	for (; i < n; i += step) {
		ew_idx to = ew_cat_offset(osize, ostride, dim, dimSize, i);
		ew_idx from = contig ? i : ew_cat_offset(isize, istride, dim, dimSize, i);
		EW_ACCESS(src + from, EW_CAT_BYTES, EW_CAT_BYTES);
		EW_ACCESS(dst + to, EW_CAT_BYTES, EW_CAT_BYTES);
		dst[to] = src[from];
	}
}

#ifdef EW_CAT_PT_N
// kr_cat_ptmeta is kr_cat_pt with PyTorch's parameters, for a traced
// CatArrayBatchedCopy<T, unsigned int, Dims, N, S>: the output pointer,
// then the metadata of N inputs as arrays of pointers, 32-bit offsets
// along the cat dimension, sizes along it and element counts, contiguity
// flags and S size-and-stride records of 4 dimensions, then the output's
// record, the dimension and the output's stride along it. The parameters
// are one struct laid out as those five parameters are, so each field is
// read from the constant bank at PyTorch's offset (3440 bytes for N = S =
// 64) and the indices are 32-bit, as PyTorch's. (kr_cat_pt, with 64-bit
// fields packed together, ran BLOOM-560M decode's KV-cache cat 6-8%
// faster than PyTorch's kernel launched the same way.)
//
//   EW_CAT_PT_N    inputs per launch (batch_size)
//   EW_CAT_PT_S    size-and-stride records (stride_size: N, or 1 when
//                  all inputs are contiguous)
struct EwCatPtDims {
	unsigned size[4];
	unsigned stride[4];
};
struct EwCatPtMeta {
	const char *in[EW_CAT_PT_N];
	unsigned offset[EW_CAT_PT_N];   // along the cat dimension
	unsigned dimSize[EW_CAT_PT_N];
	unsigned n[EW_CAT_PT_N];
	bool contig[EW_CAT_PT_N];
	EwCatPtDims dims[EW_CAT_PT_S];
};
struct EwCatPtArgs {
	char *out;
	EwCatPtMeta meta;
	EwCatPtDims out_dims;
	int dim;
	unsigned dimStride;
};

extern "C" __global__ void kr_cat_ptmeta(const EwCatPtArgs a) {
	const unsigned b = blockIdx.y;
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	const unsigned n = a.meta.n[b];
	const EwCatPtDims in_dims = a.meta.dims[EW_CAT_PT_S > 1 ? b : 0];
	const bool contig = a.meta.contig[b];
	if (i >= n) return;
	const ew_cat_t *src = reinterpret_cast<const ew_cat_t *>(a.meta.in[b]);
	ew_cat_t *dst = reinterpret_cast<ew_cat_t *>(a.out) + a.meta.offset[b] * a.dimStride;
	const unsigned dimSize = a.meta.dimSize[b], step = gridDim.x * blockDim.x;
	for (; i < n; i += step) {
		unsigned to = ew_cat_offset(a.out_dims.size, a.out_dims.stride, a.dim, dimSize, i);
		unsigned from = contig ? i : ew_cat_offset(in_dims.size, in_dims.stride, a.dim, dimSize, i);
		EW_ACCESS(src + from, EW_CAT_BYTES, EW_CAT_BYTES);
		EW_ACCESS(dst + to, EW_CAT_BYTES, EW_CAT_BYTES);
		dst[to] = src[from];
	}
}
#endif
