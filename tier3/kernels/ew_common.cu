// Helpers shared by the elementwise-family kernels (elementwise.cu, index.cu,
// fill.cu): dtype traits with PyTorch's conversions, vector loads and stores,
// and 32-bit division by invariant integers. Prepended after util.cu; no
// #include (NVRTC has no include path here).
typedef unsigned int u32;
typedef unsigned short u16;

// Dtype codes; tier3/strided.go (ewCodes) must agree.
#define EW_BOOL 1
#define EW_U8 2
#define EW_I8 3
#define EW_I16 4
#define EW_I32 5
#define EW_I64 6
#define EW_F16 7
#define EW_BF16 8
#define EW_F32 9
#define EW_F64 10
#define EW_F8E4M3 11
#define EW_F8E5M2 12

#define EW_MAXD 8

#ifndef EW_HOST
__device__ __forceinline__ float ew_h2f(u16 h) {
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}
__device__ __forceinline__ u16 ew_f2h(float f) {
	u16 h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
}
#else
// The host build of the CPU tests (testdata/ew_host.h) converts in software.
__device__ __forceinline__ float ew_h2f(u16 h) { return ew_host_h2f(h); }
__device__ __forceinline__ u16 ew_f2h(float f) { return ew_host_f2h(f); }
#endif
__device__ __forceinline__ float ew_b2f(u16 b) { return __uint_as_float((u32)b << 16); }
// ew_f2b rounds to nearest even; NaN stays a quiet NaN.
__device__ __forceinline__ u16 ew_f2b(float f) {
	u32 u = __float_as_uint(f);
	if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | 0x40u);
	return (u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// FP8 (float8_e4m3fn: bias 7, no Inf, NaN S.1111.111; float8_e5m2: bias
// 15, IEEE-like) from and to f32 as PyTorch's c10 casts them: to nearest,
// ties to even, subnormals kept; e4m3fn turns what rounds beyond 448, Inf
// and NaN into NaN, e5m2 rounds beyond 57344 to Inf. launch.F32ToFP8 is the
// reference.
__device__ __forceinline__ unsigned char ew_f2f8(float f, int mbits, int bias, bool fn) {
	u32 u = __float_as_uint(f);
	const unsigned char sign = (unsigned char)((u >> 24) & 0x80u);
	u &= 0x7fffffffu;
	if (u > 0x7f800000u) return sign | 0x7fu;
	if (u < (u32)(128 - bias) << 23) // below the smallest normal: whole subnormal steps, to even
		return sign | (unsigned char)rintf(__uint_as_float(u) * __uint_as_float((u32)(127 + bias + mbits - 1) << 23));
	const int drop = 23 - mbits;
	const u32 r = u + ((1u << (drop - 1)) - 1u) + ((u >> drop) & 1u);
	const int code = ((int)(r >> 23) - 127 + bias) << mbits | (int)((r >> drop) & ((1u << mbits) - 1u));
	if (fn && code > 0x7e) return sign | 0x7fu;
	if (!fn && code >= 0x7c) return sign | 0x7cu;
	return sign | (unsigned char)code;
}
__device__ __forceinline__ float ew_e4m3_2f(unsigned char c) {
	const u32 s = (u32)(c & 0x80u) << 24, e = (c >> 3) & 15u, m = c & 7u;
	if (e == 15u && m == 7u) return __uint_as_float(s | 0x7fc00000u);
	if (e == 0u) return __uint_as_float(s | __float_as_uint((float)m * (1.f / 512.f)));
	return __uint_as_float(s | (e + 120u) << 23 | m << 20);
}

// EwTy<code>: S is the storage type, N the natural arithmetic type of the
// values; ld converts storage to N and st converts N to storage. Arithmetic
// casts to N follow C++ (and so PyTorch's static_cast): float to integer
// truncates, anything to bool is != 0.
template <int D> struct EwTy;
template <> struct EwTy<EW_BOOL> {
	typedef unsigned char S;
	typedef bool N;
	static __device__ __forceinline__ N ld(S s) { return s != 0; }
	static __device__ __forceinline__ S st(N v) { return v ? 1 : 0; }
};
template <> struct EwTy<EW_U8> {
	typedef unsigned char S;
	typedef int N;
	static __device__ __forceinline__ N ld(S s) { return s; }
	static __device__ __forceinline__ S st(N v) { return (S)v; }
};
template <> struct EwTy<EW_I8> {
	typedef signed char S;
	typedef int N;
	static __device__ __forceinline__ N ld(S s) { return s; }
	static __device__ __forceinline__ S st(N v) { return (S)v; }
};
template <> struct EwTy<EW_I16> {
	typedef short S;
	typedef int N;
	static __device__ __forceinline__ N ld(S s) { return s; }
	static __device__ __forceinline__ S st(N v) { return (S)v; }
};
template <> struct EwTy<EW_I32> {
	typedef int S;
	typedef int N;
	static __device__ __forceinline__ N ld(S s) { return s; }
	static __device__ __forceinline__ S st(N v) { return v; }
};
template <> struct EwTy<EW_I64> {
	typedef long long S;
	typedef long long N;
	static __device__ __forceinline__ N ld(S s) { return s; }
	static __device__ __forceinline__ S st(N v) { return v; }
};
template <> struct EwTy<EW_F16> {
	typedef u16 S;
	typedef float N;
	static __device__ __forceinline__ N ld(S s) { return ew_h2f(s); }
	static __device__ __forceinline__ S st(N v) { return ew_f2h(v); }
};
template <> struct EwTy<EW_BF16> {
	typedef u16 S;
	typedef float N;
	static __device__ __forceinline__ N ld(S s) { return ew_b2f(s); }
	static __device__ __forceinline__ S st(N v) { return ew_f2b(v); }
};
template <> struct EwTy<EW_F32> {
	typedef float S;
	typedef float N;
	static __device__ __forceinline__ N ld(S s) { return s; }
	static __device__ __forceinline__ S st(N v) { return v; }
};
template <> struct EwTy<EW_F64> {
	typedef double S;
	typedef double N;
	static __device__ __forceinline__ N ld(S s) { return s; }
	static __device__ __forceinline__ S st(N v) { return v; }
};
template <> struct EwTy<EW_F8E4M3> {
	typedef unsigned char S;
	typedef float N;
	static __device__ __forceinline__ N ld(S s) { return ew_e4m3_2f(s); }
	static __device__ __forceinline__ S st(N v) { return ew_f2f8(v, 3, 7, true); }
};
template <> struct EwTy<EW_F8E5M2> {
	typedef unsigned char S;
	typedef float N;
	// An e5m2 is the top byte of an f16.
	static __device__ __forceinline__ N ld(S s) { return ew_h2f((u16)((u16)s << 8)); }
	static __device__ __forceinline__ S st(N v) { return ew_f2f8(v, 2, 15, false); }
};

// Vector loads and stores of V elements of type S (V*sizeof(S) bytes,
// aligned to that size or 16, whichever is smaller), in 16-byte pieces.
template <int B> struct EwWord;
template <> struct EwWord<1> { typedef unsigned char T; };
template <> struct EwWord<2> { typedef unsigned short T; };
template <> struct EwWord<4> { typedef unsigned int T; };
template <> struct EwWord<8> { typedef uint2 T; };
template <> struct EwWord<16> { typedef uint4 T; };

template <typename S, int V> struct EwPack {
	static constexpr int B = (int)sizeof(S) * V;
	static constexpr int P = B < 16 ? B : 16;
	typedef typename EwWord<P>::T W;
	union U {
		W w[B / P];
		S s[V];
	};
};

// EW_ACCESS checks an access's alignment and bounds in the host build of
// the CPU tests; it is nothing on the GPU.
#ifdef EW_HOST
#define EW_ACCESS(p, bytes, align) ew_host_access((const void *)(p), bytes, align)
#else
#define EW_ACCESS(p, bytes, align)
#endif

template <typename S, int V>
__device__ __forceinline__ void ew_ldv(const S *p, S (&out)[V]) {
	typedef EwPack<S, V> K;
	EW_ACCESS(p, K::B, K::P);
	typename K::U u;
	const typename K::W *q = reinterpret_cast<const typename K::W *>(p);
#pragma unroll
	for (int i = 0; i < K::B / K::P; i++) u.w[i] = q[i];
#pragma unroll
	for (int i = 0; i < V; i++) out[i] = u.s[i];
}

template <typename S, int V>
__device__ __forceinline__ void ew_stv(S *p, const S (&in)[V]) {
	typedef EwPack<S, V> K;
	EW_ACCESS(p, K::B, K::P);
	typename K::U u;
#pragma unroll
	for (int i = 0; i < V; i++) u.s[i] = in[i];
	typename K::W *q = reinterpret_cast<typename K::W *>(p);
#pragma unroll
	for (int i = 0; i < K::B / K::P; i++) q[i] = u.w[i];
}

// Index arithmetic: 32-bit with division by invariant integers (n / d is
// (umulhi(n, magic) + n) >> shift for n < 2^31), or 64-bit with plain
// division when a tensor spans 2^31 elements or more (EW_IDX64).
#ifdef EW_IDX64
typedef long long ew_idx;
__device__ __forceinline__ ew_idx ew_div(ew_idx n, long long d, u32 magic, u32 shift) { return n / d; }
#else
typedef u32 ew_idx;
__device__ __forceinline__ ew_idx ew_div(ew_idx n, long long d, u32 magic, u32 shift) {
	return (__umulhi(n, magic) + n) >> shift;
}
#endif

// ew_divmod divides r by d in place and returns the remainder: the index
// along one dimension of size d, r becoming the index over the rest.
__device__ __forceinline__ ew_idx ew_divmod(ew_idx &r, long long d, u32 magic, u32 shift) {
	const ew_idx q = ew_div(r, d, magic, shift);
	const ew_idx c = r - q * (ew_idx)d;
	r = q;
	return c;
}

// The strided kernels' (elementwise.cu, index.cu) defaults for EW_VEC and
// EW_UNROLL, and their threads a block (tier3/strided.go's ewBlock).
#ifndef EW_VEC
#define EW_VEC 1
#endif
#ifndef EW_UNROLL
#define EW_UNROLL 1
#endif
#define EW_BLOCK 256
