// PyTorch's fused RMSNorm forward (ATen layer_norm_kernel.cu with
// rms_norm = true: aten::_fused_rms_norm, which aten::rms_norm calls) for
// the faithful replay of tier3/rmsnorm.go. Prepended with util.cu and
// reduce_common.cu. y = x * rstd * w, rstd = 1/sqrt(mean(x^2) + eps) per
// row of n elements, in the accumulate type (float; double for double).
//
//   RMS_T   dtype code of x, y and the weight (reduce_common.cu)
//   RMS_W   1 when there is a weight
//
// kr_rms_vec is vectorized_layer_norm_kernel<T, float, true>: one block
// per row, blockDim (32, BY), 4-element vector loads spaced by the block,
// each thread summing the squares of its elements one by one; the lanes
// combine by shuffles (offsets 16 ... 1), the warps in a tree through
// shared memory (the upper half writes its mean, sum and count, the lower
// half adds), thread (0,0) divides by n; then a second pass over the
// row's vectors (and the weight's) writes w * (rstd * x), and thread 0
// the row's rstd.
//
// When the row is not a multiple of 4 elements, the input is double or a
// buffer is misaligned, PyTorch runs two kernels instead, each its own
// trace signature:
// kr_rms_moments is RowwiseMomentsCUDAKernel<T, T_ACC, true>: one block
// per row (512 threads), a Welford update per element (with a division)
// over elements spaced by the block, a block reduction of the Welford
// states (warp shuffles at offsets 1 ... 16, the warps' results through
// shared memory into warp 0), and rstd = 1/sqrt(var + mean^2 + eps).
// kr_rms_fwd is LayerNormForwardCUDAKernel<T, T_ACC, true>: one block per
// row (256 threads), y = x * rstd[row] * w element by element.

typedef RD<RMS_T>::T rms_t;
#if RMS_T == RD_F64
typedef double rms_acc;
#else
typedef float rms_acc;
#endif

__device__ __forceinline__ float rms_rsqrt(float v) { return rsqrtf(v); }
__device__ __forceinline__ double rms_rsqrt(double v) { return rsqrt(v); }

#if RMS_T != RD_F64
extern "C" __global__ void kr_rms_vec(int N, float eps, const rms_t *__restrict__ X, const rms_t *__restrict__ gamma,
                                      float *__restrict__ rstd, rms_t *__restrict__ Y) {
#ifdef RD_HOST
	static float rms_smem[96];
#else
	extern __shared__ float rms_smem[];
#endif
	const unsigned row = blockIdx.x;
	const rms_t *x = X + (unsigned long long)row * N;
	const int numx = blockDim.x * blockDim.y, thrx = threadIdx.x + threadIdx.y * blockDim.x;
	const int nvec = N / 4;
	float s2 = 0.f;
	for (int i = thrx; i < nvec; i += numx) {
		rms_t v[4];
		rd_loadv<4>(x + i * 4, v);
#pragma unroll
		for (int k = 0; k < 4; k++) {
			const float f = (float)RD<RMS_T>::get(v[k]);
			s2 = s2 + f * f;
		}
	}
	for (int off = 16; off > 0; off >>= 1) s2 = s2 + __shfl_down_sync(0xffffffffu, s2, off);
	float var;
	if (blockDim.y > 1) {
		float *ms = rms_smem, *cnt = rms_smem + blockDim.y;
		for (int off = blockDim.y / 2; off > 0; off /= 2) {
			if (threadIdx.x == 0 && threadIdx.y >= off && threadIdx.y < 2 * off) {
				const int k = threadIdx.y - off;
				ms[2 * k] = 0.f;
				ms[2 * k + 1] = s2;
				cnt[k] = 0.f;
			}
			__syncthreads();
			if (threadIdx.x == 0 && threadIdx.y < off) s2 = s2 + ms[2 * threadIdx.y + 1];
			__syncthreads();
		}
		if (threadIdx.x == 0 && threadIdx.y == 0) {
			ms[0] = 0.f;
			ms[1] = s2 / (float)N;
		}
		__syncthreads();
		var = ms[1];
	} else {
		var = __shfl_sync(0xffffffffu, s2, 0) / (float)N;
	}
	const float rs = rms_rsqrt(var + eps);
	rms_t *y = Y + (unsigned long long)row * N;
	for (int i = thrx; i < nvec; i += numx) {
		rms_t v[4], o[4];
		rd_loadv<4>(x + i * 4, v);
#if RMS_W
		rms_t g[4];
		rd_loadv<4>(gamma + i * 4, g);
#endif
#pragma unroll
		for (int k = 0; k < 4; k++) {
			float r = rs * (float)RD<RMS_T>::get(v[k]);
#if RMS_W
			r = (float)RD<RMS_T>::get(g[k]) * r;
#endif
			o[k] = RD<RMS_T>::put(r);
		}
		rd_storev<4>(y + i * 4, o);
	}
	if (thrx == 0) rstd[row] = rs;
}
#endif

// RmsWelford is PyTorch's WelfordData<acc, int64>: mean, m2, count and
// its float copy.
struct RmsWelford {
	rms_acc mean, m2;
	long long n;
	rms_acc nf;
};

__device__ __forceinline__ RmsWelford rms_combine(RmsWelford a, RmsWelford b) {
	if (a.nf == 0) return b;
	if (b.nf == 0) return a;
	const rms_acc delta = b.mean - a.mean, nf = a.nf + b.nf, nb = b.nf / nf;
	return {a.mean + delta * nb, a.m2 + b.m2 + delta * delta * a.nf * nb, -1, nf};
}

__device__ __forceinline__ RmsWelford rms_shfl_down(RmsWelford w, int off) {
	return {__shfl_down_sync(0xffffffffu, w.mean, off), __shfl_down_sync(0xffffffffu, w.m2, off),
	        __shfl_down_sync(0xffffffffu, w.n, off), __shfl_down_sync(0xffffffffu, w.nf, off)};
}

__device__ __forceinline__ RmsWelford rms_warp_reduce(RmsWelford w) {
	for (int off = 1; off < 32; off <<= 1) w = rms_combine(w, rms_shfl_down(w, off));
	return w;
}

extern "C" __global__ void kr_rms_moments(long long N, rms_acc eps, const rms_t *__restrict__ X,
                                          rms_acc *__restrict__ rstd) {
	__shared__ RmsWelford shared[32];
	const long long i = blockIdx.x;
	RmsWelford w = {0, 0, 0, 0};
	for (long long j = threadIdx.x; j < N; j += blockDim.x) {
		const rms_acc v = (rms_acc)RD<RMS_T>::get(X[i * N + j]);
		const long long n = w.n + 1;
		const rms_acc nf = (rms_acc)n, delta = v - w.mean, mean = w.mean + delta / nf;
		w = {mean, w.m2 + delta * (v - mean), n, nf};
	}
	const int tid = threadIdx.x, lid = tid % 32, wid = tid / 32;
	w = rms_warp_reduce(w);
	__syncthreads();
	if (lid == 0) shared[wid] = w;
	__syncthreads();
	w = tid < (int)(blockDim.x / 32) ? shared[lid] : RmsWelford{0, 0, 0, 0};
	if (wid == 0) w = rms_warp_reduce(w);
	if (threadIdx.x == 0) {
		const rms_acc var = w.m2 / w.nf, mean = w.mean;
		rstd[i] = rms_rsqrt(var + mean * mean + eps);
	}
}

extern "C" __global__ void kr_rms_fwd(long long N, const rms_t *__restrict__ X, const rms_acc *__restrict__ rstd,
                                      const rms_t *__restrict__ gamma, rms_t *__restrict__ Y) {
	const long long i = blockIdx.x;
	for (long long j = threadIdx.x; j < N; j += blockDim.x) {
		const long long index = i * N + j;
		const rms_acc g = gamma == nullptr ? (rms_acc)1 : (rms_acc)RD<RMS_T>::get(gamma[j]);
		Y[index] = RD<RMS_T>::put((rms_acc)RD<RMS_T>::get(X[index]) * rstd[i] * g);
	}
}
