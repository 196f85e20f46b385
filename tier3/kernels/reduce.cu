// Reductions (sum, mean, prod, max, min, argmax, argmin, any, all) over any
// set of dims of a strided tensor. Compiled per case with:
//   RD_IN, RD_OUT  input and value-output dtype codes (reduce_common.cu)
//   RD_OP          0 sum, 1 prod, 2 max, 3 min, 4 argmax, 5 argmin, 6 any, 7 all
//   RD_MEAN        1: scale the sum by RdPlan.scale (mean)
//   RD_V           elements per vector load (1: scalar loads)
//   RD_TPR         rd_rows: threads per row (<= 32: groups in a warp;
//                  otherwise the whole block, blockDim.x == RD_TPR)
//   RD_COLS        1: compile rd_cols, 0: rd_rows (rd_finish always)
//
// The host (tier3/reduce.go) describes the case as kept dims (one output
// each) and reduced dims, both after dropping size-1 dims and merging dims
// that are contiguous with each other, and picks:
//   rd_rows   when the reduction runs along the fastest-varying memory: a
//             group of RD_TPR threads per output row, RD_V-wide loads, four
//             loads in flight per thread;
//   rd_cols   when a kept dim is the fastest-varying one: threads along that
//             kept dim (RD_V outputs each, coalesced), blockDim.y threads
//             splitting the reduction, combined in shared memory;
// and, when there are too few outputs to fill the GPU, splits each
// reduction into RdPlan.split chunks whose partial states rd_finish
// combines (the two-pass path of full reductions).

#define OP_SUM 0
#define OP_PROD 1
#define OP_MAX 2
#define OP_MIN 3
#define OP_ARGMAX 4
#define OP_ARGMIN 5
#define OP_ANY 6
#define OP_ALL 7

#define RD_ARG (RD_OP == OP_ARGMAX || RD_OP == OP_ARGMIN)

typedef RD<RD_IN>::T in_t;
typedef RD<RD_OUT>::T out_t;

#if RD_OP == OP_ANY || RD_OP == OP_ALL
typedef int acc_t;
#elif RD_IN == RD_F64
typedef double acc_t;
#elif RD_IS_FLOAT(RD_IN)
typedef float acc_t;
#else
typedef long long acc_t;
#endif

// RdPlan mirrors rdPlan.raw in tier3/reduce.go.
struct RdPlan {
	long long nk, ksize[RD_MAXD], kstride[RD_MAXD], kout[RD_MAXD]; // kept dims: sizes, input and output strides
	long long nr, rsize[RD_MAXD], rstride[RD_MAXD];                // reduced dims: sizes, input strides
	long long O, R;                                                // outputs, elements reduced per output
	long long split, chunk;                                        // partial reductions per output, elements each
	long long ocontig;                                             // output index == output offset
	double scale;                                                  // mean: 1/R
};

struct St {
	acc_t v;
#if RD_ARG
	long long i;
#endif
};

__device__ __forceinline__ acc_t rd_lowest() {
#if RD_OP == OP_ANY || RD_OP == OP_ALL
	return 0;
#elif RD_IS_FLOAT(RD_IN)
	return -rd_inf((acc_t)0);
#else
	return (long long)0x8000000000000000ULL;
#endif
}
__device__ __forceinline__ acc_t rd_highest() {
#if RD_OP == OP_ANY || RD_OP == OP_ALL
	return 1;
#elif RD_IS_FLOAT(RD_IN)
	return rd_inf((acc_t)0);
#else
	return 0x7fffffffffffffffLL;
#endif
}

__device__ __forceinline__ St rd_init() {
	St s;
#if RD_OP == OP_SUM || RD_OP == OP_ANY
	s.v = 0;
#elif RD_OP == OP_PROD || RD_OP == OP_ALL
	s.v = 1;
#elif RD_OP == OP_MAX || RD_OP == OP_ARGMAX
	s.v = rd_lowest();
#else
	s.v = rd_highest();
#endif
#if RD_ARG
	s.i = 0x7fffffffffffffffLL;
#endif
	return s;
}

// rd_comb folds b into a. Max and min propagate NaN; argmax and argmin
// take NaN as the extreme and break ties by the lower index, as PyTorch.
__device__ __forceinline__ void rd_comb(St &a, const St &b) {
#if RD_OP == OP_SUM
	a.v += b.v;
#elif RD_OP == OP_PROD
	a.v *= b.v;
#elif RD_OP == OP_MAX
	if (b.v > a.v || b.v != b.v) a.v = b.v;
#elif RD_OP == OP_MIN
	if (b.v < a.v || b.v != b.v) a.v = b.v;
#elif RD_ARG
	bool an = a.v != a.v, bn = b.v != b.v, take;
	if (an || bn) {
		take = bn && (!an || b.i < a.i);
	} else {
#if RD_OP == OP_ARGMAX
		take = b.v > a.v || (b.v == a.v && b.i < a.i);
#else
		take = b.v < a.v || (b.v == a.v && b.i < a.i);
#endif
	}
	if (take) a = b;
#elif RD_OP == OP_ANY
	a.v |= b.v;
#else
	a.v &= b.v;
#endif
}

// rd_add folds element x (index i along the reduction) into a.
__device__ __forceinline__ void rd_add(St &a, in_t x, long long i) {
	St b;
#if RD_OP == OP_ANY || RD_OP == OP_ALL
	b.v = RD<RD_IN>::get(x) != 0;
#else
	b.v = (acc_t)RD<RD_IN>::get(x);
#endif
#if RD_ARG
	b.i = i;
#endif
	rd_comb(a, b);
}

// rd_addv folds RD_V consecutive elements, indices i0.., into a. For
// argmax and argmin it relies on the order rd_span visits a thread's
// elements in (increasing index, a's index lower when set): the vector's
// extreme (NaN when any element is NaN) replaces a only when it is
// strictly better than a's value, or NaN while a's is not, or a is still
// empty, and the index taken is its first occurrence in the vector. That
// is rd_comb's rule (NaN the extreme, ties to the lower index, as
// PyTorch), at a tree of min/max per vector instead of a compare and
// select of (value, index) pairs per element.
__device__ __forceinline__ acc_t rd_ext(acc_t x, acc_t y) {
#if RD_ARG && (RD_IN == RD_F32 || RD_IN == RD_F16 || RD_IN == RD_BF16)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
	float d;
#if RD_OP == OP_ARGMAX
	asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(x), "f"(y));
#else
	asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(x), "f"(y));
#endif
	return d;
#endif
#endif
#if RD_OP == OP_ARGMIN
	return (x < y || x != x) ? x : y;
#else
	return (x > y || x != x) ? x : y;
#endif
}

// rd_vext is the extreme of N elements, NaN when any is NaN: pairs of f16
// or bf16 with one packed min/max a pair on sm_80 and later, else a tree
// of rd_ext in the accumulation type.
template <int N> __device__ __forceinline__ acc_t rd_vext(const in_t (&e)[N]) {
#if RD_ARG && (RD_IN == RD_F16 || RD_IN == RD_BF16) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
	if (N >= 2) {
		u32 m[N / 2];
#pragma unroll
		for (int k = 0; k < N / 2; k++) m[k] = (u32)e[2 * k] | ((u32)e[2 * k + 1] << 16);
#pragma unroll
		for (int w = N / 4; w > 0; w >>= 1) {
#pragma unroll
			for (int k = 0; k < w; k++) {
				u32 d;
#if RD_OP == OP_ARGMAX && RD_IN == RD_F16
				asm("max.NaN.f16x2 %0, %1, %2;" : "=r"(d) : "r"(m[k]), "r"(m[k + w]));
#elif RD_OP == OP_ARGMAX
				asm("max.NaN.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(m[k]), "r"(m[k + w]));
#elif RD_IN == RD_F16
				asm("min.NaN.f16x2 %0, %1, %2;" : "=r"(d) : "r"(m[k]), "r"(m[k + w]));
#else
				asm("min.NaN.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(m[k]), "r"(m[k + w]));
#endif
				m[k] = d;
			}
		}
		return rd_ext(RD<RD_IN>::get((u16)(m[0] & 0xffffu)), RD<RD_IN>::get((u16)(m[0] >> 16)));
	}
#endif
	acc_t m[N];
#pragma unroll
	for (int k = 0; k < N; k++) m[k] = (acc_t)RD<RD_IN>::get(e[k]);
#pragma unroll
	for (int w = N / 2; w > 0; w >>= 1) {
#pragma unroll
		for (int k = 0; k < w; k++) m[k] = rd_ext(m[k], m[k + w]);
	}
	return m[0];
}

template <int N> __device__ __forceinline__ void rd_addv(St &a, const in_t (&e)[N], long long i0) {
#if RD_ARG
	const acc_t x = rd_vext<N>(e);
#if RD_OP == OP_ARGMAX
	const bool better = x > a.v;
#else
	const bool better = x < a.v;
#endif
	if (a.v == a.v && (better || x != x || a.i == 0x7fffffffffffffffLL)) {
		int f = 0;
#pragma unroll
		for (int k = N - 1; k >= 0; k--) {
			const acc_t v = (acc_t)RD<RD_IN>::get(e[k]);
			if (v == x || (x != x && v != v)) f = k;
		}
		a.v = x;
		a.i = i0 + f;
	}
#else
#pragma unroll
	for (int k = 0; k < N; k++) rd_add(a, e[k], i0 + k);
#endif
}

__device__ __forceinline__ St rd_shfl(const St &a, int m) {
	St b;
	b.v = __shfl_xor_sync(0xffffffffu, a.v, m);
#if RD_ARG
	b.i = __shfl_xor_sync(0xffffffffu, a.i, m);
#endif
	return b;
}

// rd_group reduces over groups of W lanes (W <= 32, a power of two).
template <int W> __device__ __forceinline__ St rd_group(St a) {
#pragma unroll
	for (int m = W / 2; m > 0; m >>= 1) rd_comb(a, rd_shfl(a, m));
	return a;
}

// rd_block reduces over the block; thread 0 gets the result.
__device__ __forceinline__ St rd_block(St a) {
	__shared__ St sm[32];
	a = rd_group<32>(a);
	int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
	__syncthreads();
	if (lane == 0) sm[wid] = a;
	__syncthreads();
	if (wid == 0) {
		a = lane < (int)(blockDim.x >> 5) ? sm[lane] : rd_init();
		a = rd_group<32>(a);
	}
	return a;
}

// rd_store stores a result at output offset oo.
__device__ __forceinline__ void rd_store(const RdPlan &p, long long oo, St a, out_t *out, long long *idx) {
#if RD_MEAN
	a.v = a.v * (acc_t)p.scale;
#endif
	if (out) out[oo] = RD<RD_OUT>::put(a.v);
#if RD_ARG
	if (idx) idx[oo] = a.i;
#endif
}

// rd_write stores the result of output o.
__device__ __forceinline__ void rd_write(const RdPlan &p, long long o, St a, out_t *out, long long *idx) {
	rd_store(p, p.ocontig ? o : rd_off(o, p.nk, p.ksize, p.kout), a, out, idx);
}

// rd_span folds elements [lo, hi) of the reduction of an output whose
// first element is at x+base, thread sub of tpr.
__device__ __forceinline__ void rd_span(const in_t *__restrict__ x, const RdPlan &p, long long base, long long lo,
                                        long long hi, int sub, int tpr, St &acc) {
	if (p.nr > 1) {
		for (long long r = lo + sub; r < hi; r += tpr) rd_add(acc, x[base + rd_off(r, p.nr, p.rsize, p.rstride)], r);
		return;
	}
#if RD_V > 1
	// The host guarantees rs == 1 and base, lo aligned to RD_V elements.
	const in_t *q = x + base + lo;
	const long long n = hi - lo, nv = n / RD_V;
	long long j = sub;
	for (; j + 3 * tpr < nv; j += 4 * tpr) {
		in_t e0[RD_V], e1[RD_V], e2[RD_V], e3[RD_V];
		rd_loadv<RD_V>(q + j * RD_V, e0);
		rd_loadv<RD_V>(q + (j + tpr) * RD_V, e1);
		rd_loadv<RD_V>(q + (j + 2 * tpr) * RD_V, e2);
		rd_loadv<RD_V>(q + (j + 3 * tpr) * RD_V, e3);
		rd_addv<RD_V>(acc, e0, lo + j * RD_V);
		rd_addv<RD_V>(acc, e1, lo + (j + tpr) * RD_V);
		rd_addv<RD_V>(acc, e2, lo + (j + 2 * tpr) * RD_V);
		rd_addv<RD_V>(acc, e3, lo + (j + 3 * tpr) * RD_V);
	}
	for (; j < nv; j += tpr) {
		in_t e0[RD_V];
		rd_loadv<RD_V>(q + j * RD_V, e0);
		rd_addv<RD_V>(acc, e0, lo + j * RD_V);
	}
	for (long long r = nv * RD_V + sub; r < n; r += tpr) rd_add(acc, q[r], lo + r);
#else
	const long long rs = p.nr == 1 ? p.rstride[0] : 0;
	const in_t *q = x + base;
	long long r = lo + sub;
	for (; r + 3 * tpr < hi; r += 4 * tpr) {
		in_t a0 = q[r * rs], a1 = q[(r + tpr) * rs], a2 = q[(r + 2 * tpr) * rs], a3 = q[(r + 3 * tpr) * rs];
		rd_add(acc, a0, r);
		rd_add(acc, a1, r + tpr);
		rd_add(acc, a2, r + 2 * tpr);
		rd_add(acc, a3, r + 3 * tpr);
	}
	for (; r < hi; r += tpr) rd_add(acc, q[r * rs], r);
#endif
}

#if !RD_COLS
// rd_rows: RD_TPR threads per (output, split) work item.
extern "C" __global__ void __launch_bounds__(1024)
rd_rows(const in_t *__restrict__ x, const RdPlan p, out_t *out, long long *idx, St *part) {
	const int sub = threadIdx.x % RD_TPR;
	const long long rpb = blockDim.x / RD_TPR;
	const long long nwork = p.O * p.split;
	// The loop bound is uniform over the block, as the group and block
	// reductions need.
	for (long long w0 = blockIdx.x * rpb; w0 < nwork; w0 += (long long)gridDim.x * rpb) {
		const long long w = w0 + threadIdx.x / RD_TPR;
		St acc = rd_init();
		long long o = 0;
		if (w < nwork) {
			o = w / p.split;
			long long s = w - o * p.split;
			long long lo = s * p.chunk, hi = min(p.R, lo + p.chunk);
			long long base = p.nk == 1 ? o * p.kstride[0] : rd_off(o, p.nk, p.ksize, p.kstride);
			rd_span(x, p, base, lo, hi, sub, RD_TPR, acc);
		}
#if RD_TPR <= 32
		acc = rd_group<RD_TPR>(acc);
#else
		acc = rd_block(acc);
#endif
		if (sub == 0 && w < nwork) {
			if (p.split == 1) rd_write(p, o, acc, out, idx);
			else part[w] = acc;
		}
	}
}

#endif

#if RD_COLS
#define RD_BX 32
#define RD_BY 8
#define RD_CV (RD_V > 8 ? 8 : RD_V)

// rd_cols: blockDim (RD_BX, RD_BY). The last kept dim (size I, input
// stride si) runs along threadIdx.x, RD_CV outputs per thread; threadIdx.y
// strides through the reduction; blockIdx.y is the split.
extern "C" __global__ void __launch_bounds__(RD_BX *RD_BY)
rd_cols(const in_t *__restrict__ x, const RdPlan p, out_t *out, long long *idx, St *part) {
	__shared__ St sm[RD_BY][RD_BX * RD_CV];
	const long long I = p.ksize[p.nk - 1], si = p.kstride[p.nk - 1];
	const long long tiles = (I + RD_BX * RD_CV - 1) / (RD_BX * RD_CV);
	const long long nb = p.O / I * tiles;
	const int tx = threadIdx.x, ty = threadIdx.y;
	const long long s = blockIdx.y;
	const long long lo = s * p.chunk, hi = min(p.R, lo + p.chunk);
	const long long rs = p.nr == 1 ? p.rstride[0] : 0;
	for (long long b = blockIdx.x; b < nb; b += gridDim.x) {
		const long long ou = b / tiles, t = b - ou * tiles;
		const long long i0 = (t * RD_BX + tx) * RD_CV;
		St acc[RD_CV];
#pragma unroll
		for (int k = 0; k < RD_CV; k++) acc[k] = rd_init();
		if (i0 < I) {
			const in_t *q = x + rd_off(ou * I, p.nk, p.ksize, p.kstride) + i0 * si;
			long long r = lo + ty;
			if (p.nr <= 1) {
				for (; r + 3 * RD_BY < hi; r += 4 * RD_BY) {
					in_t e0[RD_CV], e1[RD_CV], e2[RD_CV], e3[RD_CV];
#if RD_CV > 1
					rd_loadv<RD_CV>(q + r * rs, e0);
					rd_loadv<RD_CV>(q + (r + RD_BY) * rs, e1);
					rd_loadv<RD_CV>(q + (r + 2 * RD_BY) * rs, e2);
					rd_loadv<RD_CV>(q + (r + 3 * RD_BY) * rs, e3);
#else
					e0[0] = q[r * rs];
					e1[0] = q[(r + RD_BY) * rs];
					e2[0] = q[(r + 2 * RD_BY) * rs];
					e3[0] = q[(r + 3 * RD_BY) * rs];
#endif
#pragma unroll
					for (int k = 0; k < RD_CV; k++) {
						rd_add(acc[k], e0[k], r);
						rd_add(acc[k], e1[k], r + RD_BY);
						rd_add(acc[k], e2[k], r + 2 * RD_BY);
						rd_add(acc[k], e3[k], r + 3 * RD_BY);
					}
				}
			}
			for (; r < hi; r += RD_BY) {
				const in_t *qr = q + (p.nr <= 1 ? r * rs : rd_off(r, p.nr, p.rsize, p.rstride));
				in_t e0[RD_CV];
#if RD_CV > 1
				rd_loadv<RD_CV>(qr, e0);
#else
				e0[0] = qr[0];
#endif
#pragma unroll
				for (int k = 0; k < RD_CV; k++) rd_add(acc[k], e0[k], r);
			}
		}
#pragma unroll
		for (int k = 0; k < RD_CV; k++) sm[ty][tx * RD_CV + k] = acc[k];
		__syncthreads();
		if (ty == 0 && i0 < I) {
			const long long o = ou * I + i0;
			const long long oo = p.ocontig ? o : rd_off(o, p.nk, p.ksize, p.kout);
			const long long os = p.ocontig ? 1 : p.kout[p.nk - 1];
#pragma unroll
			for (int k = 0; k < RD_CV; k++) {
				for (int y = 1; y < RD_BY; y++) rd_comb(acc[k], sm[y][tx * RD_CV + k]);
				if (p.split == 1) rd_store(p, oo + k * os, acc[k], out, idx);
				else part[(o + k) * p.split + s] = acc[k];
			}
		}
		__syncthreads();
	}
}

#endif

// rd_finish combines the split partial states of each output, a warp per
// output.
extern "C" __global__ void __launch_bounds__(256)
rd_finish(const St *__restrict__ part, const RdPlan p, out_t *out, long long *idx) {
	const int lane = threadIdx.x & 31;
	const long long wpb = blockDim.x >> 5;
	for (long long o = blockIdx.x * wpb + (threadIdx.x >> 5); o < p.O; o += (long long)gridDim.x * wpb) {
		St a = rd_init();
		for (long long s = lane; s < p.split; s += 32) rd_comb(a, part[o * p.split + s]);
		a = rd_group<32>(a);
		if (lane == 0) rd_write(p, o, a, out, idx);
	}
}
