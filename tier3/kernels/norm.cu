// Layer norm over the trailing dims: y = (x - mean) * rstd * w + b, with
// mean and rstd = 1/sqrt(var + eps) (biased variance) per row, computed in
// f32 (f64 for f64 input). Compiled per case with:
//   LN_IN   input (and y) dtype code (reduce_common.cu)
//   LN_W    weight and bias dtype code
//   LN_V    elements per vector load and store (ln_rows)
//   LN_CH   vectors per thread (ln_rows)
//   LN_TPR  threads per row (ln_rows): <= 32, groups in a warp; else the
//           whole block (blockDim.x == LN_TPR)
//
// ln_rows keeps a row in registers and takes two passes over them (mean,
// then the sum of squared deviations): a warp or less per row up to 1024
// elements, a block up to 32768. ln_long takes a block per longer row and
// reads it three times.

typedef RD<LN_IN>::T in_t;
typedef RD<LN_W>::T w_t;
#if LN_IN == RD_F64
typedef double acc_t;
#else
typedef float acc_t;
#endif

// RowPlan mirrors rdRowPlan.raw in tier3/reduce_common.go.
struct RowPlan {
	long long no, osize[RD_MAXD], oin[RD_MAXD], oout[RD_MAXD];
	long long rows, n, sd, sdo;
	double eps;
};

__device__ __forceinline__ float ln_rsqrt(float v) { return rsqrtf(v); }
__device__ __forceinline__ double ln_rsqrt(double v) { return rsqrt(v); }

extern "C" __global__ void __launch_bounds__(1024)
ln_rows(const in_t *__restrict__ x, const RowPlan p, const w_t *__restrict__ w, const w_t *__restrict__ b,
        in_t *__restrict__ y, acc_t *__restrict__ mean, acc_t *__restrict__ rstd) {
	__shared__ acc_t red[32];
	const int sub = threadIdx.x % LN_TPR;
	const long long rpb = blockDim.x / LN_TPR;
	const acc_t rn = (acc_t)1 / (acc_t)p.n;
	for (long long r0 = blockIdx.x * rpb; r0 < p.rows; r0 += (long long)gridDim.x * rpb) {
		const long long row = r0 + threadIdx.x / LN_TPR;
		const bool ok = row < p.rows;
		const long long ib = ok ? rd_off(row, p.no, p.osize, p.oin) : 0;
		acc_t v[LN_CH * LN_V];
		acc_t s = 0;
#pragma unroll
		for (int c = 0; c < LN_CH; c++) {
			const long long e = ((long long)c * LN_TPR + sub) * LN_V;
			if (ok && e < p.n) {
#if LN_V > 1
				in_t t[LN_V];
				rd_loadv<LN_V>(x + ib + e, t);
#pragma unroll
				for (int k = 0; k < LN_V; k++) v[c * LN_V + k] = (acc_t)RD<LN_IN>::get(t[k]);
#else
				v[c] = (acc_t)RD<LN_IN>::get(x[ib + e * p.sd]);
#endif
			} else {
#pragma unroll
				for (int k = 0; k < LN_V; k++) v[c * LN_V + k] = 0;
			}
#pragma unroll
			for (int k = 0; k < LN_V; k++) s += v[c * LN_V + k];
		}
#if LN_TPR <= 32
		s = rd_gsum<LN_TPR>(s);
#else
		s = rd_bsum(s, red);
#endif
		const acc_t mu = s * rn;
		acc_t q = 0;
#pragma unroll
		for (int c = 0; c < LN_CH; c++) {
			const long long e = ((long long)c * LN_TPR + sub) * LN_V;
			if (e < p.n) {
#pragma unroll
				for (int k = 0; k < LN_V; k++) {
					acc_t d = v[c * LN_V + k] - mu;
					q += d * d;
				}
			}
		}
#if LN_TPR <= 32
		q = rd_gsum<LN_TPR>(q);
#else
		q = rd_bsum(q, red);
#endif
		const acc_t rs = ln_rsqrt(q * rn + (acc_t)p.eps);
		if (ok) {
			const long long ob = row * p.n;
#pragma unroll
			for (int c = 0; c < LN_CH; c++) {
				const long long e = ((long long)c * LN_TPR + sub) * LN_V;
				if (e < p.n) {
					in_t t[LN_V];
					w_t wv[LN_V], bv[LN_V];
#if LN_V > 1
					if (w) rd_loadv<LN_V>(w + e, wv);
					if (b) rd_loadv<LN_V>(b + e, bv);
#else
					if (w) wv[0] = w[e];
					if (b) bv[0] = b[e];
#endif
#pragma unroll
					for (int k = 0; k < LN_V; k++) {
						acc_t o = (v[c * LN_V + k] - mu) * rs;
						if (w) o = o * (acc_t)RD<LN_W>::get(wv[k]);
						if (b) o = o + (acc_t)RD<LN_W>::get(bv[k]);
						t[k] = RD<LN_IN>::put(o);
					}
#if LN_V > 1
					rd_storev<LN_V>(y + ob + e, t);
#else
					y[ob + e] = t[0];
#endif
				}
			}
			if (sub == 0) {
				mean[row] = mu;
				rstd[row] = rs;
			}
		}
	}
}

extern "C" __global__ void __launch_bounds__(1024)
ln_long(const in_t *__restrict__ x, const RowPlan p, const w_t *__restrict__ w, const w_t *__restrict__ b,
        in_t *__restrict__ y, acc_t *__restrict__ mean, acc_t *__restrict__ rstd) {
	__shared__ acc_t red[32];
	const acc_t rn = (acc_t)1 / (acc_t)p.n;
	for (long long row = blockIdx.x; row < p.rows; row += gridDim.x) {
		const long long ib = rd_off(row, p.no, p.osize, p.oin), ob = row * p.n;
		acc_t s = 0;
		for (long long e = threadIdx.x; e < p.n; e += blockDim.x) s += (acc_t)RD<LN_IN>::get(x[ib + e * p.sd]);
		const acc_t mu = rd_bsum(s, red) * rn;
		acc_t q = 0;
		for (long long e = threadIdx.x; e < p.n; e += blockDim.x) {
			acc_t d = (acc_t)RD<LN_IN>::get(x[ib + e * p.sd]) - mu;
			q += d * d;
		}
		const acc_t rs = ln_rsqrt(rd_bsum(q, red) * rn + (acc_t)p.eps);
		for (long long e = threadIdx.x; e < p.n; e += blockDim.x) {
			acc_t o = ((acc_t)RD<LN_IN>::get(x[ib + e * p.sd]) - mu) * rs;
			if (w) o = o * (acc_t)RD<LN_W>::get(w[e]);
			if (b) o = o + (acc_t)RD<LN_W>::get(b[e]);
			y[ob + e] = RD<LN_IN>::put(o);
		}
		if (threadIdx.x == 0) {
			mean[row] = mu;
			rstd[row] = rs;
		}
	}
}
