// Host shim for the CPU tests of the elementwise-family kernels
// (elementwise_host_test.go): the CUDA built-ins the kernels use, on the
// host, so that g++ compiles ew_common.cu and a kernel source unchanged
// (with EW_HOST defined) and ew_host_main.cc runs a launch one thread at a
// time. The kernels use no shared memory and no barriers, so running the
// threads in sequence computes what the GPU does.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct ew_dim3 {
	unsigned x, y, z;
};
static ew_dim3 threadIdx, blockIdx, blockDim, gridDim;

struct alignas(8) uint2 {
	unsigned x, y;
};
struct alignas(16) uint4 {
	unsigned x, y, z, w;
};

static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline float __uint_as_float(unsigned u) {
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static inline unsigned __float_as_uint(float f) {
	unsigned u;
	memcpy(&u, &f, 4);
	return u;
}
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float __fdividef(float a, float b) { return a / b; }

// IEEE half conversions, rounding to nearest even as cvt.rn.f16.f32 does.
static inline float ew_host_h2f(unsigned short h) {
	unsigned sign = (unsigned)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
	if (e == 0 && m == 0) return __uint_as_float(sign);
	if (e == 31) return __uint_as_float(sign | 0x7f800000u | (m << 13));
	if (e == 0) {
		int ex = 1;
		while (!(m & 0x400)) {
			m <<= 1;
			ex--;
		}
		m &= 0x3ff;
		return __uint_as_float(sign | (unsigned)(ex + 127 - 15) << 23 | m << 13);
	}
	return __uint_as_float(sign | (e + 127 - 15) << 23 | m << 13);
}
static inline unsigned short ew_host_f2h(float f) {
	unsigned b = __float_as_uint(f), sign = (b >> 16) & 0x8000;
	if ((b & 0x7fffffff) > 0x7f800000) return (unsigned short)(sign | 0x7fff);
	int e = (int)((b >> 23) & 0xff) - 127 + 15;
	unsigned m = b & 0x7fffff;
	if ((b & 0x7fffffff) == 0) return (unsigned short)sign;
	if (e >= 31) return (unsigned short)(sign | 0x7c00);
	if (e <= 0) {
		if (e < -10) return (unsigned short)sign;
		m |= 0x800000;
		unsigned sh = (unsigned)(14 - e), h = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
		if (rem > half || (rem == half && (h & 1))) h++;
		return (unsigned short)(sign | h);
	}
	unsigned h = sign | (unsigned)e << 10 | m >> 13, rem = m & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
	return (unsigned short)h;
}

// The arena standing for device memory (ew_host_main.cc reads it), and the
// check of every access the kernels make (EW_ACCESS in ew_common.cu).
static unsigned char *ew_arena;
static size_t ew_arena_size;

static inline void ew_host_access(const void *p, size_t bytes, size_t align) {
	uintptr_t u = (uintptr_t)p, a = (uintptr_t)ew_arena;
	if (u % align) {
		fprintf(stderr, "misaligned access at arena offset %lld (%zu bytes, alignment %zu)\n", (long long)(u - a), bytes, align);
		exit(3);
	}
	if (u < a || u + bytes > a + ew_arena_size) {
		fprintf(stderr, "access out of the arena at offset %lld (%zu bytes)\n", (long long)(u - a), bytes);
		exit(3);
	}
}
