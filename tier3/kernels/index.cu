// Gathers of tier 3 (index_select, gather, embedding, index with one index
// tensor): every output element copies one source element whose offset is
// the source strides of the output position plus an index value times the
// indexed dimension's stride. Prepended with util.cu and ew_common.cu.
//
//   EW_DS     storage dtype code of the elements (an integer code of the
//             element's size: the gather copies bits)
//   EW_DI     index dtype code (EW_I64 or EW_I32)
//   EW_VEC    elements per unit along the innermost output dimension, where
//             the source is contiguous and the index constant
//   EW_UNROLL units per thread per loop iteration
//   EW_IDX64  64-bit indexing of the output and index

// Parameters; tier3/index.go (ewGatherParams.bytes) writes this layout.
struct EwGather {
	char *out;
	const char *src;
	const char *idx;
	long long units;         // units of EW_VEC output elements
	int ndim;                // output dimensions, innermost first
	int pad;
	long long size[EW_MAXD]; // unit shape of the output
	u32 magic[EW_MAXD];
	u32 shift[EW_MAXD];
	long long ost[EW_MAXD];  // output strides per unit step
	long long sst[EW_MAXD];  // source strides (0 where the index decides)
	long long ist[EW_MAXD];  // index strides (0 where the index is constant)
	long long dstride;       // source stride of the indexed dimension
	long long limit;         // size of the indexed dimension
};

typedef EwTy<EW_DS>::S ew_s;
typedef EwTy<EW_DI>::S ew_i;

__device__ __forceinline__ void ew_gather_offsets(const EwGather &p, ew_idx u, ew_idx &o, long long &s, ew_idx &x) {
	o = 0;
	s = 0;
	x = 0;
	ew_idx r = u;
#pragma unroll
	for (int d = 0; d < EW_MAXD; d++) {
		if (d < p.ndim) {
			const ew_idx c = d == p.ndim - 1 ? r : ew_divmod(r, p.size[d], p.magic[d], p.shift[d]);
			o += c * (ew_idx)p.ost[d];
			s += (long long)c * p.sst[d];
			x += c * (ew_idx)p.ist[d];
		}
	}
}

extern "C" __global__ void __launch_bounds__(EW_BLOCK) kr_gather(const EwGather p) {
	const ew_idx units = (ew_idx)p.units;
	const ew_idx step = (ew_idx)gridDim.x * (EW_BLOCK * EW_UNROLL);
	for (ew_idx base = (ew_idx)blockIdx.x * (EW_BLOCK * EW_UNROLL) + threadIdx.x; base < units; base += step) {
		ew_idx o[EW_UNROLL];
		ew_s v[EW_UNROLL][EW_VEC];
#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			ew_idx j = base + u * EW_BLOCK;
			if (j < units) {
				long long s;
				ew_idx x;
				ew_gather_offsets(p, j, o[u], s, x);
				const ew_i *ip = reinterpret_cast<const ew_i *>(p.idx) + x;
				EW_ACCESS(ip, sizeof(ew_i), sizeof(ew_i));
				long long i = (long long)*ip;
				if (i < 0) i += p.limit;
				ew_ldv<ew_s, EW_VEC>(reinterpret_cast<const ew_s *>(p.src) + s + i * p.dstride, v[u]);
			}
		}
#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			if (base + u * EW_BLOCK < units) ew_stv<ew_s, EW_VEC>(reinterpret_cast<ew_s *>(p.out) + o[u], v[u]);
		}
	}
}
