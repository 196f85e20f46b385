// PyTorch's vectorized_layer_norm_kernel (ATen layer_norm_kernel.cu) for
// the faithful replay of a traced layer norm (tier3/norm_pt.go). Prepended
// with util.cu and ew_common.cu.
//
// One block per row, blockDim (32, BY) as traced. Statistics: each thread
// goes over the row's 4-element vectors spaced by the block, updating a
// Welford triple (mean, sum of squared deviations, count) element by
// element with a reciprocal of the count per element, as PyTorch does;
// the lanes combine by shuffles (offsets 16, 8, ... 1), then the warps in
// a tree through shared memory (the upper half writes, the lower half
// combines). The output pass reads the row's vectors again, with the
// weight's and bias's, and writes gamma * (rstd * (x - mean)) + beta.
//
//   LP_T      the dtype code of x, y, weight and bias (EW_F16, EW_BF16, EW_F32)
//   LP_HAS_W  a weight; LP_HAS_B a bias

#define LP_VEC 4
typedef EwTy<LP_T> lp_t;
typedef typename lp_t::S lp_s;

struct LpWelford {
	float mean, m2, count;
};

__device__ __forceinline__ LpWelford lp_online(float x, LpWelford w) {
	float delta = x - w.mean, count = w.count + 1.f;
	float mean = w.mean + delta * (1.f / count);
	return {mean, w.m2 + delta * (x - mean), count};
}

__device__ __forceinline__ LpWelford lp_combine(LpWelford b, LpWelford a) {
	float delta = b.mean - a.mean, count = a.count + b.count;
	if (!(count > 0.f)) return {0.f, 0.f, 0.f};
	float coef = 1.f / count, na = a.count * coef, nb = b.count * coef;
	return {na * a.mean + nb * b.mean, a.m2 + b.m2 + delta * delta * a.count * nb, count};
}

extern "C" __global__ void kr_ln_pt(int N, float eps, const lp_s *__restrict__ X, const lp_s *__restrict__ gamma,
                                    const lp_s *__restrict__ beta, float *__restrict__ mean, float *__restrict__ rstd,
                                    lp_s *__restrict__ Y) {
	extern __shared__ float lp_shared[];
	const unsigned row = blockIdx.x;
	const lp_s *x = X + (unsigned long long)row * N;
	const int numx = blockDim.x * blockDim.y, thrx = threadIdx.x + threadIdx.y * blockDim.x;
	const int nvec = N / LP_VEC;
	LpWelford wd = {0.f, 0.f, 0.f};
	for (int i = thrx; i < nvec; i += numx) {
		lp_s v[LP_VEC];
		ew_ldv<lp_s, LP_VEC>(x + i * LP_VEC, v);
#pragma unroll
		for (int k = 0; k < LP_VEC; k++) wd = lp_online((float)lp_t::ld(v[k]), wd);
	}
	for (int off = 16; off > 0; off >>= 1) {
		LpWelford b = {__shfl_down_sync(0xffffffffu, wd.mean, off), __shfl_down_sync(0xffffffffu, wd.m2, off),
		               __shfl_down_sync(0xffffffffu, wd.count, off)};
		wd = lp_combine(wd, b);
	}
	float mu, var;
	if (blockDim.y > 1) {
		float *ms = lp_shared, *cnt = lp_shared + blockDim.y;
		for (int off = blockDim.y / 2; off > 0; off /= 2) {
			if (threadIdx.x == 0 && threadIdx.y >= off && threadIdx.y < 2 * off) {
				const int k = threadIdx.y - off;
				ms[2 * k] = wd.mean;
				ms[2 * k + 1] = wd.m2;
				cnt[k] = wd.count;
			}
			__syncthreads();
			if (threadIdx.x == 0 && threadIdx.y < off) {
				LpWelford b = {ms[2 * threadIdx.y], ms[2 * threadIdx.y + 1], cnt[threadIdx.y]};
				wd = lp_combine(wd, b);
			}
			__syncthreads();
		}
		if (threadIdx.x == 0 && threadIdx.y == 0) {
			ms[0] = wd.mean;
			ms[1] = wd.m2 / (float)N;
		}
		__syncthreads();
		mu = ms[0];
		var = ms[1];
	} else {
		mu = __shfl_sync(0xffffffffu, wd.mean, 0);
		var = __shfl_sync(0xffffffffu, wd.m2, 0) / (float)N;
	}
	const float rs = rsqrtf(var + eps);
	lp_s *y = Y + (unsigned long long)row * N;
	for (int i = thrx; i < nvec; i += numx) {
		lp_s v[LP_VEC], o[LP_VEC];
		ew_ldv<lp_s, LP_VEC>(x + i * LP_VEC, v);
#if LP_HAS_W
		lp_s g[LP_VEC];
		ew_ldv<lp_s, LP_VEC>(gamma + i * LP_VEC, g);
#endif
#if LP_HAS_B
		lp_s bb[LP_VEC];
		ew_ldv<lp_s, LP_VEC>(beta + i * LP_VEC, bb);
#endif
#pragma unroll
		for (int k = 0; k < LP_VEC; k++) {
			float r = rs * ((float)lp_t::ld(v[k]) - mu);
#if LP_HAS_W
			r = (float)lp_t::ld(g[k]) * r;
#endif
#if LP_HAS_B
			r = r + (float)lp_t::ld(bb[k]);
#endif
			o[k] = lp_t::st(r);
		}
		ew_stv<lp_s, LP_VEC>(y + i * LP_VEC, o);
	}
	if (thrx == 0) {
		mean[row] = mu;
		rstd[row] = rs;
	}
}
