// Softmax and log-softmax along one dim, numerically stable (the row max
// is subtracted before exp). Compiled per case with:
//   SM_IN, SM_OUT  input and output dtype codes (reduce_common.cu)
//   SM_LOG         1: log-softmax
//   SM_V           elements per vector load and store (sm_rows)
//   SM_CH          vectors per thread (sm_rows)
//   SM_TPR         threads per row (sm_rows): <= 32, groups in a warp; else
//                  the whole block (blockDim.x == SM_TPR)
//
// sm_rows keeps a row in registers (SM_CH*SM_V values a thread): a warp or
// less per row up to 1024 elements, a block up to 32768. sm_long takes a
// block per longer row: an online max-and-sum pass, then a pass that
// writes. sm_cols takes a thread per row, for softmax along a dim that is
// not the fastest-varying in memory (neighbouring threads read neighbouring
// rows).

typedef RD<SM_IN>::T in_t;
typedef RD<SM_OUT>::T out_t;
#if SM_IN == RD_F64 || SM_OUT == RD_F64
typedef double acc_t;
#else
typedef float acc_t;
#endif

// RowPlan mirrors rdRowPlan.raw in tier3/reduce_common.go.
struct RowPlan {
	long long no, osize[RD_MAXD], oin[RD_MAXD], oout[RD_MAXD]; // the other dims: rows
	long long rows, n, sd, sdo;                                 // rows, row length, element strides
	double eps;
};

__device__ __forceinline__ float sm_exp(float x) {
#if SM_OUT == RD_F32
	return expf(x);
#else
	return __expf(x); // within f16/bf16 rounding, and fewer instructions
#endif
}
__device__ __forceinline__ double sm_exp(double x) { return exp(x); }
__device__ __forceinline__ float sm_log(float x) { return logf(x); }
__device__ __forceinline__ double sm_log(double x) { return log(x); }

// sm_out is the result for x - max = d and sum of exps s (inv = 1/s).
__device__ __forceinline__ acc_t sm_out(acc_t d, acc_t s, acc_t inv) {
#if SM_LOG
	return d - sm_log(s);
#else
	return sm_exp(d) * inv;
#endif
}

template <class A> __device__ __forceinline__ A sm_max(A a, A b) { return (b > a || b != b) ? b : a; }

extern "C" __global__ void __launch_bounds__(1024)
sm_rows(const in_t *__restrict__ x, const RowPlan p, out_t *__restrict__ y) {
	__shared__ acc_t red[32];
	const int sub = threadIdx.x % SM_TPR;
	const long long rpb = blockDim.x / SM_TPR;
	const acc_t ninf = -rd_inf((acc_t)0);
	for (long long r0 = blockIdx.x * rpb; r0 < p.rows; r0 += (long long)gridDim.x * rpb) {
		const long long row = r0 + threadIdx.x / SM_TPR;
		const bool ok = row < p.rows;
		long long ib = 0, ob = 0;
		if (ok) {
			ib = rd_off(row, p.no, p.osize, p.oin);
			ob = rd_off(row, p.no, p.osize, p.oout);
		}
		acc_t v[SM_CH * SM_V];
		acc_t m = ninf;
#pragma unroll
		for (int c = 0; c < SM_CH; c++) {
			const long long e = ((long long)c * SM_TPR + sub) * SM_V;
			if (ok && e < p.n) {
#if SM_V > 1
				in_t t[SM_V];
				rd_loadv<SM_V>(x + ib + e, t);
#pragma unroll
				for (int k = 0; k < SM_V; k++) v[c * SM_V + k] = (acc_t)RD<SM_IN>::get(t[k]);
#else
				v[c] = (acc_t)RD<SM_IN>::get(x[ib + e * p.sd]);
#endif
			} else {
#pragma unroll
				for (int k = 0; k < SM_V; k++) v[c * SM_V + k] = ninf;
			}
#pragma unroll
			for (int k = 0; k < SM_V; k++) m = sm_max(m, v[c * SM_V + k]);
		}
#if SM_TPR <= 32
		m = rd_gmax<SM_TPR>(m);
#else
		m = rd_bmax(m, red);
#endif
		acc_t s = 0;
#pragma unroll
		for (int i = 0; i < SM_CH * SM_V; i++) {
			v[i] -= m;
			s += sm_exp(v[i]);
		}
#if SM_TPR <= 32
		s = rd_gsum<SM_TPR>(s);
#else
		s = rd_bsum(s, red);
#endif
		const acc_t inv = (acc_t)1 / s;
#pragma unroll
		for (int c = 0; c < SM_CH; c++) {
			const long long e = ((long long)c * SM_TPR + sub) * SM_V;
			if (ok && e < p.n) {
#if SM_V > 1
				out_t t[SM_V];
#pragma unroll
				for (int k = 0; k < SM_V; k++) t[k] = RD<SM_OUT>::put(sm_out(v[c * SM_V + k], s, inv));
				rd_storev<SM_V>(y + ob + e, t);
#else
				y[ob + e * p.sdo] = RD<SM_OUT>::put(sm_out(v[c], s, inv));
#endif
			}
		}
	}
}

// sm_fold adds element x to the online state (m, s): s is the sum of
// exp(x_i - m) so far. -inf elements add nothing; NaN poisons the sum.
__device__ __forceinline__ void sm_fold(acc_t &m, acc_t &s, acc_t x) {
	const acc_t ninf = -rd_inf((acc_t)0);
	if (x > m) {
		s = (m == ninf ? (acc_t)0 : s * sm_exp(m - x)) + 1;
		m = x;
	} else if (m != ninf || x != x) {
		s += sm_exp(x - m);
	}
}

// sm_merge combines two online states.
__device__ __forceinline__ void sm_merge(acc_t &m, acc_t &s, acc_t m2, acc_t s2) {
	const acc_t ninf = -rd_inf((acc_t)0);
	if (m2 == ninf && s2 == 0) return;
	if (m == ninf && s == 0) {
		m = m2;
		s = s2;
		return;
	}
	acc_t mm = sm_max(m, m2);
	s = s * sm_exp(m - mm) + s2 * sm_exp(m2 - mm);
	m = mm;
}

extern "C" __global__ void __launch_bounds__(1024) sm_long(const in_t *__restrict__ x, const RowPlan p, out_t *__restrict__ y) {
	__shared__ acc_t sm_m[32], sm_s[32];
	const acc_t ninf = -rd_inf((acc_t)0);
	for (long long row = blockIdx.x; row < p.rows; row += gridDim.x) {
		const long long ib = rd_off(row, p.no, p.osize, p.oin), ob = rd_off(row, p.no, p.osize, p.oout);
		acc_t m = ninf, s = 0;
		for (long long e = threadIdx.x; e < p.n; e += blockDim.x) sm_fold(m, s, (acc_t)RD<SM_IN>::get(x[ib + e * p.sd]));
#pragma unroll
		for (int k = 16; k > 0; k >>= 1) {
			acc_t m2 = __shfl_xor_sync(0xffffffffu, m, k), s2 = __shfl_xor_sync(0xffffffffu, s, k);
			sm_merge(m, s, m2, s2);
		}
		const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
		__syncthreads();
		if (lane == 0) {
			sm_m[wid] = m;
			sm_s[wid] = s;
		}
		__syncthreads();
		m = ninf;
		s = 0;
		for (int w = 0; w < (int)(blockDim.x >> 5); w++) sm_merge(m, s, sm_m[w], sm_s[w]);
		const acc_t inv = (acc_t)1 / s;
		for (long long e = threadIdx.x; e < p.n; e += blockDim.x) {
			acc_t d = (acc_t)RD<SM_IN>::get(x[ib + e * p.sd]) - m;
			y[ob + e * p.sdo] = RD<SM_OUT>::put(sm_out(d, s, inv));
		}
	}
}

extern "C" __global__ void __launch_bounds__(256) sm_cols(const in_t *__restrict__ x, const RowPlan p, out_t *__restrict__ y) {
	const acc_t ninf = -rd_inf((acc_t)0);
	for (long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x; row < p.rows;
	     row += (long long)gridDim.x * blockDim.x) {
		const long long ib = rd_off(row, p.no, p.osize, p.oin), ob = rd_off(row, p.no, p.osize, p.oout);
		acc_t m = ninf, s = 0;
		for (long long e = 0; e < p.n; e++) sm_fold(m, s, (acc_t)RD<SM_IN>::get(x[ib + e * p.sd]));
		const acc_t inv = (acc_t)1 / s;
		for (long long e = 0; e < p.n; e++) {
			acc_t d = (acc_t)RD<SM_IN>::get(x[ib + e * p.sd]) - m;
			y[ob + e * p.sdo] = RD<SM_OUT>::put(sm_out(d, s, inv));
		}
	}
}

#ifdef SM_PT_LOG2
// sm_pt_warp is PyTorch's softmax_warp_forward<in, out, acc, SM_PT_LOG2,
// SM_LOG, false> (the faithful replay, softmax.go): rows of n <= 2^LOG2
// contiguous elements (row stride n), WS = min(2^LOG2, 32) lanes per row
// along threadIdx.x, WB rows per warp (2 up to 128 elements, else 1), one
// warp's rows per threadIdx.y. Each lane holds IT = 2^LOG2/WS elements,
// lane + i*WS, read and written one at a time (scalar loads, coalesced
// across the lanes); the row's max and sum are butterfly reductions over
// the WS lanes. Every thread reaches the shuffles (no early return).
extern "C" __global__ void sm_pt_warp(const in_t *__restrict__ x, const long long rows, const int n, out_t *__restrict__ y) {
	constexpr int NP = 1 << SM_PT_LOG2;
	constexpr int WS = NP < 32 ? NP : 32;
	constexpr int IT = NP / WS;
	constexpr int WB = NP <= 128 ? 2 : 1;
	const acc_t ninf = -rd_inf((acc_t)0);
	const long long first = ((long long)blockIdx.x * blockDim.y + threadIdx.y) * WB;
	const long long local = rows - first;
	const int lane = threadIdx.x;
	x += first * n + lane;
	y += first * n + lane;
	acc_t v[WB][IT];
#pragma unroll
	for (int b = 0; b < WB; b++) {
#pragma unroll
		for (int i = 0; i < IT; i++) {
			const int e = lane + i * WS;
			v[b][i] = (b < local && e < n) ? (acc_t)RD<SM_IN>::get(x[(long long)b * n + i * WS]) : ninf;
		}
	}
	acc_t m[WB], s[WB];
#pragma unroll
	for (int b = 0; b < WB; b++) {
		m[b] = v[b][0];
#pragma unroll
		for (int i = 1; i < IT; i++) m[b] = sm_max(m[b], v[b][i]);
		m[b] = rd_gmax<WS>(m[b]);
	}
#pragma unroll
	for (int b = 0; b < WB; b++) {
		s[b] = 0;
#pragma unroll
		for (int i = 0; i < IT; i++) {
#if SM_LOG
			s[b] += sm_exp(v[b][i] - m[b]);
#else
			v[b][i] = sm_exp(v[b][i] - m[b]);
			s[b] += v[b][i];
#endif
		}
		s[b] = rd_gsum<WS>(s[b]);
	}
#pragma unroll
	for (int b = 0; b < WB; b++) {
		if (b >= local) break;
#if SM_LOG
		const acc_t ls = sm_log(s[b]);
#endif
#pragma unroll
		for (int i = 0; i < IT; i++) {
			if (lane + i * WS < n) {
#if SM_LOG
				y[(long long)b * n + i * WS] = RD<SM_OUT>::put(v[b][i] - m[b] - ls);
#else
				y[(long long)b * n + i * WS] = RD<SM_OUT>::put(v[b][i] / s[b]);
#endif
			}
		}
	}
}
#endif
