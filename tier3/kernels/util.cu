// Helpers every tier-3 kernel source may use, and the fills of indices.
typedef unsigned long long u64;
typedef long long i64;

__device__ __forceinline__ u64 kr_mix64(u64 x) {
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

// kr_fill_index writes random integers in [0, limit) as int64 (wide != 0)
// or int32.
extern "C" __global__ void kr_fill_index(void *p, u64 n, u64 seed, i64 limit, int wide) {
	for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
		i64 v = limit > 0 ? (i64)(kr_mix64(seed ^ (i * 0xd1b54a32d192ed03ULL)) % (u64)limit) : 0;
		if (wide) ((i64 *)p)[i] = v; else ((int *)p)[i] = (int)v;
	}
}

// kr_approx_thread is this thread's index over the whole launch and the
// launch's thread count, for a grid-stride loop of any launch shape.
__device__ __forceinline__ void kr_approx_thread(u64 &tid, u64 &stride) {
	stride = (u64)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
	u64 block = ((u64)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
	tid = block * (blockDim.x * blockDim.y * blockDim.z) + (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

// kr_approx_read folds this thread's share of in16 16-byte words.
__device__ __forceinline__ uint4 kr_approx_read(const uint4 *in, u64 in16, u64 tid, u64 stride) {
	uint4 acc = make_uint4(0, 0, 0, 0);
	for (u64 i = tid; i < in16; i += stride) {
		uint4 v = in[i];
		acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
	}
	return acc;
}

// kr_approx_write writes this thread's share of out16 16-byte words.
__device__ __forceinline__ void kr_approx_write(uint4 *out, u64 out16, u64 tid, u64 stride, uint4 acc) {
	for (u64 i = tid; i < out16; i += stride) {
		out[i] = make_uint4(acc.x ^ (unsigned)i, acc.y, acc.z, acc.w);
	}
}

// kr_approx_fns evaluates the functions fns selects (kr_approx_math) for
// elements from, from+step, ... below to, on arguments drawn from seed, and
// returns the bits of their sum.
__device__ __forceinline__ unsigned kr_approx_fns(unsigned seed, u64 from, u64 to, u64 step, unsigned fns) {
	float base = __uint_as_float((seed & 0x007fffffu) | 0x3f800000u) - 1.0f;
	float r = 0.0f;
	for (u64 i = from; i < to; i += step) {
		float x = base + (float)(i & 4095) * 0.0123f;
		if (fns & 1u) r += sinf(x);
		if (fns & 2u) r += cosf(x);
		if (fns & 4u) r += expf(-x);
		if (fns & 8u) r += logf(x + 1.0f);
		if (fns & 16u) r += tanhf(x);
		if (fns & 32u) r += erff(x);
	}
	return __float_as_uint(r);
}

// kr_approx reads in_bytes and writes out_bytes (both multiples of 16) with
// whatever launch shape it is given: the stand-in for an op kreplay has no
// kernel for, moving the op's bytes with the traced grid and block.
extern "C" __global__ void kr_approx(const uint4 *in, u64 in16, uint4 *out, u64 out16) {
	u64 tid, stride;
	kr_approx_thread(tid, stride);
	kr_approx_write(out, out16, tid, stride, kr_approx_read(in, in16, tid, stride));
}

// kr_approx_math is kr_approx for an Inductor kernel whose name lists
// transcendental functions: besides moving the bytes, each thread
// evaluates the functions fns selects (1 sinf, 2 cosf, 4 expf, 8 logf,
// 16 tanhf, 32 erff; f32, CUDA's accurate versions, as Triton's libdevice
// calls are) once for each of n elements of the kernel's iteration space,
// on arguments drawn from the bytes it read so that none can be folded.
extern "C" __global__ void kr_approx_math(const uint4 *in, u64 in16, uint4 *out, u64 out16, u64 n, unsigned fns) {
	u64 tid, stride;
	kr_approx_thread(tid, stride);
	uint4 acc = kr_approx_read(in, in16, tid, stride);
	acc.y ^= kr_approx_fns(acc.x, tid, n, stride, fns);
	kr_approx_write(out, out16, tid, stride, acc);
}

// kr_approx_2pass is the stand-in of a looped reduction whose epilogue
// needs the finished reduction (Inductor's "red" kernels that normalize the
// rows they reduce): each block owns a contiguous share of the input, as a
// program owns its rows, reads it, reduces it across the block, then reads
// it again (from the L2) and writes its share of the output. With fns != 0
// it also evaluates kr_approx_math's functions on its share of n elements.
extern "C" __global__ void kr_approx_2pass(const uint4 *in, u64 in16, uint4 *out, u64 out16, u64 n, unsigned fns) {
	__shared__ unsigned red;
	u64 blocks = (u64)gridDim.x * gridDim.y * gridDim.z;
	u64 b = ((u64)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
	u64 threads = (u64)blockDim.x * blockDim.y * blockDim.z;
	u64 t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
	u64 lo = in16 * b / blocks, hi = in16 * (b + 1) / blocks;
	if (t == 0) red = 0;
	__syncthreads();
	uint4 acc = kr_approx_read(in + lo, hi - lo, t, threads);
	atomicXor(&red, acc.x ^ acc.y ^ acc.z ^ acc.w);
	__syncthreads();
	uint4 again = kr_approx_read(in + lo, hi - lo, t, threads);
	again.x ^= red;
	if (fns != 0) again.y ^= kr_approx_fns(again.x, n * b / blocks + t, n * (b + 1) / blocks, threads, fns);
	u64 olo = out16 * b / blocks, ohi = out16 * (b + 1) / blocks;
	kr_approx_write(out + olo, ohi - olo, t, threads, again);
}

// kr_touch writes n bytes at dst from src (flip is 0, which the compiler
// cannot know, so every store happens), 16 bytes at a time where both are
// equally aligned. The primed cache mode runs it before each launch to
// write an op's inputs from twins that hold the same bytes, as the kernels
// that produced them would have: the inputs are just written and in L2 as
// far as it holds them, beside the lines of what their producer read. With
// src == dst it rewrites the bytes in place. CUPTI's records of it are not
// the op's.
extern "C" __global__ void kr_touch(unsigned char *dst, const unsigned char *src, u64 n, unsigned flip) {
	u64 tid = blockIdx.x * (u64)blockDim.x + threadIdx.x;
	u64 stride = (u64)gridDim.x * blockDim.x;
	u64 head = (16 - ((u64)dst & 15)) & 15;
	if ((((u64)dst ^ (u64)src) & 15) != 0) head = n; // unequal alignment: bytes only
	if (head > n) head = n;
	u64 n16 = (n - head) / 16;
	uint4 *d = (uint4 *)(dst + head);
	const uint4 *v = (const uint4 *)(src + head);
	for (u64 i = tid; i < head; i += stride) dst[i] = src[i] ^ (unsigned char)flip;
	for (u64 i = tid; i < n16; i += stride) {
		uint4 x = v[i];
		x.x ^= flip; x.y ^= flip; x.z ^= flip; x.w ^= flip;
		d[i] = x;
	}
	for (u64 i = head + 16 * n16 + tid; i < n; i += stride) dst[i] = src[i] ^ (unsigned char)flip;
}

// KrMaskShape is the layout of kr_causal_mask's tensor: ndim (2 to 8) sizes
// and element strides, the last two dims a query and a key dim.
struct KrMaskShape {
	i64 ndim, size[8], stride[8];
};

// kr_causal_mask writes v, the low size bytes of which are the dtype's
// lowest value, to each of the n elements of a [..., Q, K] tensor whose key
// index k lies past its query index q (k - q > K - Q, the causal mask
// aligned to the last key), as a causal language model's additive mask
// leaves its attention scores.
extern "C" __global__ void kr_causal_mask(unsigned char *p, const KrMaskShape s, u64 n, u64 v, int size) {
	const i64 Q = s.size[s.ndim - 2], K = s.size[s.ndim - 1];
	for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
		u64 r = i;
		i64 off = 0, q = 0, k = 0;
		for (int d = (int)s.ndim - 1; d >= 0; d--) {
			const i64 c = (i64)(r % (u64)s.size[d]);
			r /= (u64)s.size[d];
			if (d == s.ndim - 1) k = c;
			if (d == s.ndim - 2) q = c;
			off += c * s.stride[d];
		}
		if (k - q <= K - Q) continue;
		unsigned char *e = p + off * size;
		switch (size) {
		case 2: *(unsigned short *)e = (unsigned short)v; break;
		case 4: *(unsigned *)e = (unsigned)v; break;
		case 8: *(u64 *)e = v; break;
		}
	}
}
