// Helpers shared by the reduction-family kernels (reduce.cu, softmax.cu,
// norm.cu, scan.cu): dtype codes, storage <-> arithmetic conversions,
// vector loads and group (warp or block) reductions. Prepended after
// util.cu; no #include (NVRTC has no include path here).
typedef unsigned short u16;
typedef unsigned int u32;

// Dtype codes; tier3/reduce.go (rdCodes) must agree.
#define RD_F16 0
#define RD_BF16 1
#define RD_F32 2
#define RD_F64 3
#define RD_I64 4
#define RD_I32 5
#define RD_I16 6
#define RD_I8 7
#define RD_U8 8
#define RD_BOOL 9

#define RD_IS_FLOAT(c) ((c) <= RD_F64)
#define RD_MAXD 8

__device__ __forceinline__ float rd_h2f(u16 h) {
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}
__device__ __forceinline__ u16 rd_f2h(float f) {
	u16 h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
}
__device__ __forceinline__ float rd_b2f(u16 b) { return __uint_as_float((u32)b << 16); }
// rd_f2b rounds to nearest even; NaN stays a (quiet) NaN.
__device__ __forceinline__ u16 rd_f2b(float f) {
	u32 u = __float_as_uint(f);
	if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | 0x40u);
	return (u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// RD<code> gives a dtype's storage type T, the natural arithmetic type V of
// its values (float, double or long long), get (storage to V) and put (any
// arithmetic value to storage, with PyTorch's cast semantics).
template <int C> struct RD;
template <> struct RD<RD_F16> {
	typedef u16 T;
	typedef float V;
	static __device__ __forceinline__ float get(T x) { return rd_h2f(x); }
	template <class A> static __device__ __forceinline__ T put(A v) { return rd_f2h((float)v); }
};
template <> struct RD<RD_BF16> {
	typedef u16 T;
	typedef float V;
	static __device__ __forceinline__ float get(T x) { return rd_b2f(x); }
	template <class A> static __device__ __forceinline__ T put(A v) { return rd_f2b((float)v); }
};
template <> struct RD<RD_F32> {
	typedef float T;
	typedef float V;
	static __device__ __forceinline__ float get(T x) { return x; }
	template <class A> static __device__ __forceinline__ T put(A v) { return (float)v; }
};
template <> struct RD<RD_F64> {
	typedef double T;
	typedef double V;
	static __device__ __forceinline__ double get(T x) { return x; }
	template <class A> static __device__ __forceinline__ T put(A v) { return (double)v; }
};
template <> struct RD<RD_I64> {
	typedef long long T;
	typedef long long V;
	static __device__ __forceinline__ long long get(T x) { return x; }
	template <class A> static __device__ __forceinline__ T put(A v) { return (long long)v; }
};
template <> struct RD<RD_I32> {
	typedef int T;
	typedef long long V;
	static __device__ __forceinline__ long long get(T x) { return x; }
	template <class A> static __device__ __forceinline__ T put(A v) { return (int)(long long)v; }
};
template <> struct RD<RD_I16> {
	typedef short T;
	typedef long long V;
	static __device__ __forceinline__ long long get(T x) { return x; }
	template <class A> static __device__ __forceinline__ T put(A v) { return (short)(long long)v; }
};
template <> struct RD<RD_I8> {
	typedef signed char T;
	typedef long long V;
	static __device__ __forceinline__ long long get(T x) { return x; }
	template <class A> static __device__ __forceinline__ T put(A v) { return (signed char)(long long)v; }
};
template <> struct RD<RD_U8> {
	typedef unsigned char T;
	typedef long long V;
	static __device__ __forceinline__ long long get(T x) { return x; }
	template <class A> static __device__ __forceinline__ T put(A v) { return (unsigned char)(long long)v; }
};
template <> struct RD<RD_BOOL> {
	typedef unsigned char T;
	typedef long long V;
	static __device__ __forceinline__ long long get(T x) { return x != 0; }
	template <class A> static __device__ __forceinline__ T put(A v) { return v != (A)0; }
};

// RDVec<B> is an unsigned type of B bytes for one aligned vector load.
template <int B> struct RDVec;
template <> struct RDVec<1> { typedef unsigned char T; };
template <> struct RDVec<2> { typedef u16 T; };
template <> struct RDVec<4> { typedef u32 T; };
template <> struct RDVec<8> { typedef uint2 T; };
template <> struct RDVec<16> { typedef uint4 T; };

// RD_VEC_UNION declares, in rd_loadv and rd_storev, u: the N elements of
// type T overlaid on B / W unsigned words of W bytes (RDVec), B their bytes.
// A macro, not a shared type: a shared overlay type gave the RMS norm
// kernels a stack frame.
#define RD_VEC_UNION \
	constexpr int B = N * (int)sizeof(T), W = B > 16 ? 16 : B; \
	typedef typename RDVec<W>::T VT; \
	union { \
		VT w[B / W]; \
		T e[N]; \
	} u

// rd_loadv reads N consecutive elements at p, aligned to N*sizeof(T) bytes
// (or 16 when more), with loads of up to 16 bytes.
template <int N, class T> __device__ __forceinline__ void rd_loadv(const T *p, T (&e)[N]) {
	RD_VEC_UNION;
#pragma unroll
	for (int k = 0; k < B / W; k++) u.w[k] = reinterpret_cast<const VT *>(p)[k];
#pragma unroll
	for (int k = 0; k < N; k++) e[k] = u.e[k];
}

// rd_storev writes N consecutive elements at p, aligned as for rd_loadv.
template <int N, class T> __device__ __forceinline__ void rd_storev(T *p, const T (&e)[N]) {
	RD_VEC_UNION;
#pragma unroll
	for (int k = 0; k < N; k++) u.e[k] = e[k];
#pragma unroll
	for (int k = 0; k < B / W; k++) reinterpret_cast<VT *>(p)[k] = u.w[k];
}

__device__ __forceinline__ float rd_inf(float) { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double rd_inf(double) { return __longlong_as_double(0x7ff0000000000000LL); }

// rd_off maps a linear index over n dims (outermost first) to an offset
// with the given strides.
__device__ __forceinline__ long long rd_off(long long i, long long n, const long long *size, const long long *stride) {
	long long off = 0;
#pragma unroll
	for (int d = RD_MAXD - 1; d >= 0; d--) {
		if (d < n) {
			long long q = i / size[d];
			off += (i - q * size[d]) * stride[d];
			i = q;
		}
	}
	return off;
}

// Group reductions of a float or double over W lanes (W a power of two up
// to 32, groups aligned in the warp): every lane of the group gets the
// result.
template <int W, class A> __device__ __forceinline__ A rd_gsum(A v) {
#pragma unroll
	for (int m = W / 2; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
	return v;
}
template <int W, class A> __device__ __forceinline__ A rd_gmax(A v) {
#pragma unroll
	for (int m = W / 2; m > 0; m >>= 1) {
		A o = __shfl_xor_sync(0xffffffffu, v, m);
		v = (o > v || o != o) ? o : v;
	}
	return v;
}

// rd_bsum and rd_bmax reduce over the whole block (blockDim.x a multiple
// of 32) and give every thread the result. sm holds 32 values; the block
// must not use it concurrently.
template <class A> __device__ __forceinline__ A rd_bsum(A v, A *sm) {
	v = rd_gsum<32>(v);
	int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
	__syncthreads();
	if (lane == 0) sm[wid] = v;
	__syncthreads();
	v = lane < nw ? sm[lane] : (A)0;
	return rd_gsum<32>(v);
}
template <class A> __device__ __forceinline__ A rd_bmax(A v, A *sm) {
	v = rd_gmax<32>(v);
	int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
	__syncthreads();
	if (lane == 0) sm[wid] = v;
	__syncthreads();
	v = lane < nw ? sm[lane] : -rd_inf(v);
	return rd_gmax<32>(v);
}
