// rmsnorm_fused_bf16: rmsnorm_fused.cu for a bf16 model (kreplay's recipe
// llama-rmsnorm binds T = bf16 there): the same chain, the same precision
// (the row's mean of squares in f32, x * rsqrt rounded to bf16, times w in
// f32, rounded to bf16), with bf16's conversions in place of f16's: a bf16
// is the top half of an f32, and f32 rounds to it to nearest even (NaN
// stays a quiet NaN), as PyTorch's c10::BFloat16 rounds.
//
//   extern "C" __global__ void NAME(const T *x, const T *w, T *y, int rows, int cols, float eps)
//
// T = bf16 as 16-bit storage. Launch as rmsnorm_fused.cu: grid (rows), a
// block of a multiple of 32 threads up to 1024. No #include.

typedef unsigned short u16;
typedef unsigned int u32;

__device__ __forceinline__ float h2f(u16 h) { return __uint_as_float((u32)h << 16); }
__device__ __forceinline__ u16 f2h(float f) {
	const u32 u = __float_as_uint(f);
	if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | 0x40u);
	return (u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// sq2 is the sum of the squares of the two halves packed in u.
__device__ __forceinline__ float sq2(u32 u) {
	const float a = h2f((u16)(u & 0xffffu)), b = h2f((u16)(u >> 16));
	return a * a + b * b;
}

// norm1 is one output: w * bf16(x * r), rounded to bf16, as the chain has it.
__device__ __forceinline__ u16 norm1(u16 x, u16 w, float r) { return f2h(h2f(w) * h2f(f2h(h2f(x) * r))); }

// norm2 applies norm1 to the two halves packed in x and w.
__device__ __forceinline__ u32 norm2(u32 x, u32 w, float r) {
	return (u32)norm1((u16)(x & 0xffffu), (u16)(w & 0xffffu), r) | (u32)norm1((u16)(x >> 16), (u16)(w >> 16), r) << 16;
}

// block_sum returns the sum of v over the block to every thread: within
// each warp by shuffles, then each warp sums the warps' partial sums.
__device__ __forceinline__ float block_sum(float v) {
	__shared__ float part[32];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
	for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
	if (lane == 0) part[warp] = v;
	__syncthreads();
	v = lane < nwarps ? part[lane] : 0.f;
	for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
	return v;
}

extern "C" __global__ void __launch_bounds__(1024)
rmsnorm_fused_bf16(const u16 *__restrict__ x, const u16 *__restrict__ w, u16 *__restrict__ y, int rows, int cols, float eps) {
	const int row = blockIdx.x;
	if (row >= rows) return;
	const u16 *xr = x + (long long)row * cols;
	u16 *yr = y + (long long)row * cols;
	// 16-byte vectors of 8 bf16s where the rows and buffers allow them.
	const bool vec = (cols & 7) == 0 && (((unsigned long long)x | (unsigned long long)w | (unsigned long long)y) & 15) == 0;
	float ss = 0.f;
	if (vec) {
		for (int i = threadIdx.x * 8; i < cols; i += blockDim.x * 8) {
			const uint4 v = *(const uint4 *)(xr + i);
			ss += (sq2(v.x) + sq2(v.y)) + (sq2(v.z) + sq2(v.w));
		}
	} else {
		for (int i = threadIdx.x; i < cols; i += blockDim.x) {
			const float f = h2f(xr[i]);
			ss += f * f;
		}
	}
	const float r = rsqrtf(block_sum(ss) * (1.f / (float)cols) + eps);
	if (vec) {
		for (int i = threadIdx.x * 8; i < cols; i += blockDim.x * 8) {
			const uint4 v = *(const uint4 *)(xr + i), g = *(const uint4 *)(w + i);
			uint4 o;
			o.x = norm2(v.x, g.x, r);
			o.y = norm2(v.y, g.y, r);
			o.z = norm2(v.z, g.z, r);
			o.w = norm2(v.w, g.w, r);
			*(uint4 *)(yr + i) = o;
		}
	} else {
		for (int i = threadIdx.x; i < cols; i += blockDim.x) yr[i] = norm1(xr[i], w[i], r);
	}
}
