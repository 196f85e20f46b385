// rmsnorm_fused: Llama's RMSNorm in one kernel, the worked example of
// kreplay's fused-kernel what-if (kreplay whatif; README.md here).
//
// It replaces the eight kernels eager PyTorch launches for Hugging Face's
// LlamaRMSNorm.forward in an f16 model (kreplay's recipe llama-rmsnorm):
//
//   h = x.to(torch.float32)                  aten::copy_
//   v = h.pow(2).mean(-1, keepdim=True)      aten::pow, aten::mean
//   h = h * torch.rsqrt(v + eps)             aten::add, aten::rsqrt, aten::mul
//   y = w * h.to(torch.float16)              aten::copy_, aten::mul
//
// and computes what they compute, in their precision: the row's mean of
// squares in f32 (sum times 1/cols), plus eps, rsqrt, x * rsqrt in f32
// rounded to f16, times w in f32, rounded to f16. It reads x and w and
// writes y once (x's second read is of a row just read, from the L1 or
// L2), where the chain moves an f32 copy of x through memory four times.
//
// kreplay's row-norm ABI (whatif.RowNormABI), T = f16 as 16-bit storage:
//
//   extern "C" __global__ void NAME(const T *x, const T *w, T *y, int rows, int cols, float eps)
//
// rmsnorm_fused_bf16, below, is the same kernel for a bf16 model (the
// recipe binds T = bf16 there): bf16's conversions in place of f16's (a
// bf16 is the top half of an f32; f32 rounds to it to nearest even, NaN
// staying a quiet NaN, as PyTorch's c10::BFloat16 rounds), the same
// precision otherwise.
//
// x and y [rows, cols] row-major, w [cols]. One block per row: launch with
// grid (rows), a block of a multiple of 32 threads up to 1024 (kreplay
// whatif's defaults: -grid rows -block 256). No #include: NVRTC compiles it
// as it is (nvcc -cubin too, for kreplay whatif -kernel FILE.cubin).

typedef unsigned short u16;
typedef unsigned int u32;

__device__ __forceinline__ float h2f(u16 h) {
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}
__device__ __forceinline__ u16 f2h(float f) {
	u16 h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
}

// The 16-bit formats: F16 and BF16 convert one value to and from f32.
struct F16 {
	static __device__ __forceinline__ float f(u16 h) { return h2f(h); }
	static __device__ __forceinline__ u16 to(float v) { return f2h(v); }
};
struct BF16 {
	static __device__ __forceinline__ float f(u16 b) { return __uint_as_float((u32)b << 16); }
	static __device__ __forceinline__ u16 to(float v) {
		const u32 u = __float_as_uint(v);
		if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | 0x40u);
		return (u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
	}
};

// sq2 is the sum of the squares of the two halves packed in u.
template <class T> __device__ __forceinline__ float sq2(u32 u) {
	const float a = T::f((u16)(u & 0xffffu)), b = T::f((u16)(u >> 16));
	return a * a + b * b;
}

// norm1 is one output: w * T(x * r), rounded to T, as the chain has it.
template <class T> __device__ __forceinline__ u16 norm1(u16 x, u16 w, float r) { return T::to(T::f(w) * T::f(T::to(T::f(x) * r))); }

// norm2 applies norm1 to the two halves packed in x and w.
template <class T> __device__ __forceinline__ u32 norm2(u32 x, u32 w, float r) {
	return (u32)norm1<T>((u16)(x & 0xffffu), (u16)(w & 0xffffu), r) | (u32)norm1<T>((u16)(x >> 16), (u16)(w >> 16), r) << 16;
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

// rmsnorm_rows is the kernel's body for the 16-bit format T.
template <class T>
__device__ __forceinline__ void rmsnorm_rows(const u16 *__restrict__ x, const u16 *__restrict__ w, u16 *__restrict__ y, int rows, int cols, float eps) {
	const int row = blockIdx.x;
	if (row >= rows) return;
	const u16 *xr = x + (long long)row * cols;
	u16 *yr = y + (long long)row * cols;
	// 16-byte vectors of 8 values where the rows and buffers allow them.
	const bool vec = (cols & 7) == 0 && (((unsigned long long)x | (unsigned long long)w | (unsigned long long)y) & 15) == 0;
	float ss = 0.f;
	if (vec) {
		for (int i = threadIdx.x * 8; i < cols; i += blockDim.x * 8) {
			const uint4 v = *(const uint4 *)(xr + i);
			ss += (sq2<T>(v.x) + sq2<T>(v.y)) + (sq2<T>(v.z) + sq2<T>(v.w));
		}
	} else {
		for (int i = threadIdx.x; i < cols; i += blockDim.x) {
			const float f = T::f(xr[i]);
			ss += f * f;
		}
	}
	const float r = rsqrtf(block_sum(ss) * (1.f / (float)cols) + eps);
	if (vec) {
		for (int i = threadIdx.x * 8; i < cols; i += blockDim.x * 8) {
			const uint4 v = *(const uint4 *)(xr + i), g = *(const uint4 *)(w + i);
			uint4 o;
			o.x = norm2<T>(v.x, g.x, r);
			o.y = norm2<T>(v.y, g.y, r);
			o.z = norm2<T>(v.z, g.z, r);
			o.w = norm2<T>(v.w, g.w, r);
			*(uint4 *)(yr + i) = o;
		}
	} else {
		for (int i = threadIdx.x; i < cols; i += blockDim.x) yr[i] = norm1<T>(xr[i], w[i], r);
	}
}

extern "C" __global__ void __launch_bounds__(1024)
rmsnorm_fused(const u16 *__restrict__ x, const u16 *__restrict__ w, u16 *__restrict__ y, int rows, int cols, float eps) {
	rmsnorm_rows<F16>(x, w, y, rows, cols, eps);
}

extern "C" __global__ void __launch_bounds__(1024)
rmsnorm_fused_bf16(const u16 *__restrict__ x, const u16 *__restrict__ w, u16 *__restrict__ y, int rows, int cols, float eps) {
	rmsnorm_rows<BF16>(x, w, y, rows, cols, eps);
}
