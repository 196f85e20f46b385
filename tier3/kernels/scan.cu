// Inclusive scans (cumsum, cumprod) along one dim, accumulating in f32 for
// f16/bf16/f32, f64 for f64 and int64 for integers and bool. Compiled per
// case with:
//   SC_IN, SC_OUT  input and output dtype codes (reduce_common.cu)
//   SC_OP          0 sum, 1 prod
//   SC_V           consecutive elements per thread in a tile (sc_rows)
//   SC_TPR         threads per row (sc_rows): <= 32, groups in a warp; else
//                  the whole block (blockDim.x == SC_TPR)
//   SC_VLD         1: rows contiguous in input and output, their length a
//                  multiple of SC_V and their starts aligned to SC_V
//                  elements (sc_rows loads and stores SC_V-element vectors)
//   SC_U           tiles a thread loads before it scans them (SC_VLD)
//
// sc_rows scans a row in tiles of SC_TPR*SC_V elements: each thread scans
// its SC_V elements, the group scans the thread totals with shuffles (and
// shared memory across warps), and a running carry links the tiles.
// sc_cols takes a thread per row, for scans along a dim that is not the
// fastest-varying in memory.

typedef RD<SC_IN>::T in_t;
typedef RD<SC_OUT>::T out_t;
#if RD_IS_FLOAT(SC_IN) || RD_IS_FLOAT(SC_OUT)
#if SC_IN == RD_F64 || SC_OUT == RD_F64
typedef double acc_t;
#else
typedef float acc_t;
#endif
#else
typedef long long acc_t;
#endif

// RowPlan mirrors rdRowPlan.raw in tier3/reduce_common.go.
struct RowPlan {
	long long no, osize[RD_MAXD], oin[RD_MAXD], oout[RD_MAXD];
	long long rows, n, sd, sdo;
	double eps;
};

__device__ __forceinline__ acc_t sc_id() { return SC_OP == 0 ? (acc_t)0 : (acc_t)1; }
__device__ __forceinline__ acc_t sc_op(acc_t a, acc_t b) {
#if SC_OP == 0
	return a + b;
#else
	return a * b;
#endif
}

// sc_group returns the inclusive scan of v over groups of W lanes
// (W <= 32) and the group total in tot.
template <int W> __device__ __forceinline__ acc_t sc_group(acc_t v, acc_t &tot) {
	const int lane = threadIdx.x % W;
#pragma unroll
	for (int d = 1; d < W; d <<= 1) {
		acc_t o = __shfl_up_sync(0xffffffffu, v, d, W);
		if (lane >= d) v = sc_op(o, v);
	}
	tot = __shfl_sync(0xffffffffu, v, W - 1, W);
	return v;
}

// sc_block is sc_group over the whole block.
__device__ __forceinline__ acc_t sc_block(acc_t v, acc_t &tot) {
	__shared__ acc_t sm[32];
	const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
	acc_t wt;
	v = sc_group<32>(v, wt);
	__syncthreads();
	if (lane == 0) sm[wid] = wt;
	__syncthreads();
	acc_t pre = sc_id(), all = sc_id();
	for (int w = 0; w < nw; w++) {
		if (w < wid) pre = sc_op(pre, sm[w]);
		all = sc_op(all, sm[w]);
	}
	tot = all;
	return sc_op(pre, v);
}

// sc_tile takes a thread's total run of its SC_V elements in a tile and
// returns its exclusive prefix in the row (carry, the total of the earlier
// tiles, then the group's earlier threads), and adds the tile's total to
// carry.
__device__ __forceinline__ acc_t sc_tile(acc_t run, int sub, acc_t &carry) {
	acc_t tot;
#if SC_TPR <= 32
	acc_t inc = sc_group<SC_TPR>(run, tot);
#else
	acc_t inc = sc_block(run, tot);
#endif
	// Exclusive prefix of this thread within the tile: the inclusive
	// scan minus its own total, without dividing (for products).
#if SC_TPR <= 32
	acc_t exc = __shfl_up_sync(0xffffffffu, inc, 1, SC_TPR);
	if (sub == 0) exc = sc_id();
#else
	__shared__ acc_t last[32];
	acc_t exc = __shfl_up_sync(0xffffffffu, inc, 1, 32);
	__syncthreads();
	if ((threadIdx.x & 31) == 31) last[threadIdx.x >> 5] = inc;
	__syncthreads();
	if ((threadIdx.x & 31) == 0) exc = threadIdx.x == 0 ? sc_id() : last[(threadIdx.x >> 5) - 1];
#endif
	const acc_t pre = sc_op(carry, exc);
	carry = sc_op(carry, tot);
	return pre;
}

// A block is 256 threads (several rows) when SC_TPR <= 32, SC_TPR otherwise.
extern "C" __global__ void __launch_bounds__(SC_TPR > 32 ? SC_TPR : 256)
sc_rows(const in_t *__restrict__ x, const RowPlan p, out_t *__restrict__ y) {
	const int sub = threadIdx.x % SC_TPR;
	const long long rpb = blockDim.x / SC_TPR;
	for (long long r0 = blockIdx.x * rpb; r0 < p.rows; r0 += (long long)gridDim.x * rpb) {
		const long long row = r0 + threadIdx.x / SC_TPR;
		const bool ok = row < p.rows;
		long long ib = 0, ob = 0;
		if (ok) {
			ib = rd_off(row, p.no, p.osize, p.oin);
			ob = rd_off(row, p.no, p.osize, p.oout);
		}
		acc_t carry = sc_id();
#if SC_VLD
		// SC_U tiles' vectors loaded at once (a row of 1024 f32 in one go
		// with a warp a row), then scanned tile by tile.
		for (long long t0 = 0; t0 < p.n; t0 += (long long)SC_U * SC_TPR * SC_V) {
			in_t e[SC_U][SC_V];
#pragma unroll
			for (int u = 0; u < SC_U; u++) {
				const long long e0 = t0 + ((long long)u * SC_TPR + sub) * SC_V;
				if (ok && e0 < p.n) rd_loadv<SC_V>(x + ib + e0, e[u]);
			}
#pragma unroll
			for (int u = 0; u < SC_U; u++) {
				const long long e0 = t0 + ((long long)u * SC_TPR + sub) * SC_V;
				const bool in = ok && e0 < p.n;
				acc_t v[SC_V];
				acc_t run = sc_id();
#pragma unroll
				for (int k = 0; k < SC_V; k++) {
					run = sc_op(run, in ? (acc_t)RD<SC_IN>::get(e[u][k]) : sc_id());
					v[k] = run;
				}
				const acc_t pre = sc_tile(run, sub, carry);
				if (in) {
					out_t o[SC_V];
#pragma unroll
					for (int k = 0; k < SC_V; k++) o[k] = RD<SC_OUT>::put(sc_op(pre, v[k]));
					rd_storev<SC_V>(y + ob + e0, o);
				}
			}
		}
#else
		for (long long t0 = 0; t0 < p.n; t0 += (long long)SC_TPR * SC_V) {
			const long long e0 = t0 + (long long)sub * SC_V;
			acc_t v[SC_V];
			acc_t run = sc_id();
#pragma unroll
			for (int k = 0; k < SC_V; k++) {
				acc_t a = sc_id();
				if (ok && e0 + k < p.n) a = (acc_t)RD<SC_IN>::get(x[ib + (e0 + k) * p.sd]);
				run = sc_op(run, a);
				v[k] = run;
			}
			const acc_t pre = sc_tile(run, sub, carry);
#pragma unroll
			for (int k = 0; k < SC_V; k++) {
				if (ok && e0 + k < p.n) y[ob + (e0 + k) * p.sdo] = RD<SC_OUT>::put(sc_op(pre, v[k]));
			}
		}
#endif
	}
}

extern "C" __global__ void __launch_bounds__(256) sc_cols(const in_t *__restrict__ x, const RowPlan p, out_t *__restrict__ y) {
	for (long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x; row < p.rows;
	     row += (long long)gridDim.x * blockDim.x) {
		const long long ib = rd_off(row, p.no, p.osize, p.oin), ob = rd_off(row, p.no, p.osize, p.oout);
		acc_t run = sc_id();
		for (long long e = 0; e < p.n; e++) {
			run = sc_op(run, (acc_t)RD<SC_IN>::get(x[ib + e * p.sd]));
			y[ob + e * p.sdo] = RD<SC_OUT>::put(run);
		}
	}
}
