// The N-d strided elementwise kernel of tier 3: out = op(in1, in2, in3) over
// the broadcast shape, with per-operand strides (0 on broadcast dimensions),
// up to EW_MAXD dimensions after coalescing. Prepended with util.cu and
// ew_common.cu. Each (op, dtypes, kinds, vector width) is one compilation,
// chosen with -D:
//
//   EW_OP          the op (EW_ADD, ...)
//   EW_CT          the C type the op computes in (float, double, long long, int, bool)
//   EW_DO, EW_D1..3  dtype codes of the output and the three operands
//   EW_K1..3       operand kinds: EW_KT a tensor read with V-element vector
//                  loads along the innermost dimension (or one element when
//                  V is 1), EW_KB a tensor broadcast along the innermost
//                  dimension (one load per unit), EW_KC a constant from the
//                  parameters, EW_KN absent
//   EW_VEC         V: elements per unit along the innermost dimension
//   EW_UNROLL      units per thread per loop iteration
//   EW_IDX64       64-bit indexing (otherwise 32-bit with fast division)
//   EW_FLAT        every problem is one-dimensional (the fast path: no
//                  index decomposition compiled in)
//
// The iteration space is counted in units of V elements; a unit's operand
// offsets come from decomposing its index over the coalesced shape
// (innermost dimension first). A one-dimensional space takes no division:
// that is the fast path of contiguous operands, with 16-byte vector loads
// and stores. Elements past the last full unit of a one-dimensional space
// (tail) are done one at a time by the first block.

#define EW_KN 0
#define EW_KT 1
#define EW_KB 2
#define EW_KC 3

#define EW_COPY 1
#define EW_NEG 2
#define EW_RSQRT 3
#define EW_SQRT 4
#define EW_TANH 5
#define EW_SILU 6
#define EW_SIGMOID 7
#define EW_RELU 8
#define EW_GELU 9
#define EW_GELU_TANH 10
#define EW_SIN 11
#define EW_COS 12
#define EW_EXP 13
#define EW_LOG 14
#define EW_ABS 15
#define EW_BITWISE_NOT 16
#define EW_LOGICAL_NOT 17
#define EW_RECIPROCAL 18
#define EW_ERF 19
#define EW_POW 20
#define EW_ADD 21
#define EW_SUB 22
#define EW_RSUB 23
#define EW_MUL 24
#define EW_DIV 25
#define EW_DIV_TRUNC 26
#define EW_DIV_FLOOR 27
#define EW_EQ 28
#define EW_NE 29
#define EW_LT 30
#define EW_LE 31
#define EW_GT 32
#define EW_GE 33
#define EW_BITWISE_AND 34
#define EW_BITWISE_OR 35
#define EW_BITWISE_XOR 36
#define EW_LOGICAL_AND 37
#define EW_LOGICAL_OR 38
#define EW_LOGICAL_XOR 39
#define EW_MAXIMUM 40
#define EW_MINIMUM 41
#define EW_CLAMP_MIN 42
#define EW_CLAMP_MAX 43
#define EW_WHERE 44
#define EW_MASKED_FILL 45
#define EW_ADDCMUL 46
#define EW_CLAMP 47

typedef EW_CT ew_ct;

// Parameters, passed by value (or as an array in device memory for the
// batched copy of cat). tier3/strided.go (ewParams.bytes) writes this layout.
struct EwParams {
	char *ptr[4];                // output, operands 1..3 (null when constant or absent)
	long long units;             // units of EW_VEC elements
	long long tail;              // elements after the last unit (one-dimensional spaces only)
	int ndim;                    // coalesced dimensions, innermost first
	int dyn;                     // kr_ew_pt_dyncopy: source | destination << 8 (c10::ScalarType codes)
	long long size[EW_MAXD];     // unit shape (size[0] counts units)
	u32 magic[EW_MAXD];          // division by size[d]
	u32 shift[EW_MAXD];
	long long st[4][EW_MAXD];    // strides in elements per unit step
	long long istr[4];           // innermost strides in elements (tail)
	double cd[4];                // constant operands 1..3 and alpha, as double
	long long ci[4];             // and as integer
};

// Constants in the compute type: floating types take the double, integers
// the integer, bool either being nonzero.
template <typename T> __device__ __forceinline__ T ew_const(double d, long long i) { return (T)i; }
template <> __device__ __forceinline__ float ew_const<float>(double d, long long i) { return (float)d; }
template <> __device__ __forceinline__ double ew_const<double>(double d, long long i) { return d; }
template <> __device__ __forceinline__ bool ew_const<bool>(double d, long long i) { return d != 0 || i != 0; }

// Math in float or double.
__device__ __forceinline__ float ew_exp(float x) { return expf(x); }
__device__ __forceinline__ double ew_exp(double x) { return exp(x); }
__device__ __forceinline__ float ew_log(float x) { return logf(x); }
__device__ __forceinline__ double ew_log(double x) { return log(x); }
__device__ __forceinline__ float ew_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double ew_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float ew_rsqrt(float x) { return rsqrtf(x); }
__device__ __forceinline__ double ew_rsqrt(double x) { return rsqrt(x); }
__device__ __forceinline__ float ew_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double ew_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float ew_sin(float x) { return sinf(x); }
__device__ __forceinline__ double ew_sin(double x) { return sin(x); }
__device__ __forceinline__ float ew_cos(float x) { return cosf(x); }
__device__ __forceinline__ double ew_cos(double x) { return cos(x); }
__device__ __forceinline__ float ew_erf(float x) { return erff(x); }
__device__ __forceinline__ double ew_erf(double x) { return erf(x); }
__device__ __forceinline__ float ew_trunc(float x) { return truncf(x); }
__device__ __forceinline__ double ew_trunc(double x) { return trunc(x); }
__device__ __forceinline__ float ew_floor(float x) { return floorf(x); }
__device__ __forceinline__ double ew_floor(double x) { return floor(x); }

// pow: PyTorch's special exponents, then the library pow; integers by
// squaring (negative exponents give 0 except for bases 1 and -1).
__device__ __forceinline__ float ew_pow(float a, float b) {
	if (b == 2.0f) return a * a;
	if (b == 3.0f) return a * a * a;
	if (b == 0.5f) return sqrtf(a);
	if (b == -0.5f) return rsqrtf(a);
	if (b == -1.0f) return 1.0f / a;
	if (b == -2.0f) return 1.0f / (a * a);
	return powf(a, b);
}
__device__ __forceinline__ double ew_pow(double a, double b) {
	if (b == 2.0) return a * a;
	if (b == 3.0) return a * a * a;
	if (b == 0.5) return sqrt(a);
	if (b == -0.5) return rsqrt(a);
	if (b == -1.0) return 1.0 / a;
	if (b == -2.0) return 1.0 / (a * a);
	return pow(a, b);
}
__device__ __forceinline__ long long ew_pow(long long a, long long b) {
	if (b < 0) {
		if (a == 1) return 1;
		if (a == -1) return (b & 1) ? -1 : 1;
		return 0;
	}
	long long r = 1;
	while (b) {
		if (b & 1) r *= a;
		b >>= 1;
		a *= a;
	}
	return r;
}
__device__ __forceinline__ int ew_pow(int a, int b) { return (int)ew_pow((long long)a, (long long)b); }
__device__ __forceinline__ bool ew_pow(bool a, bool b) { return a || !b; }

__device__ __forceinline__ bool ew_bnot(bool a) { return !a; }
__device__ __forceinline__ int ew_bnot(int a) { return ~a; }
__device__ __forceinline__ long long ew_bnot(long long a) { return ~a; }

// Division with rounding: floats divide then round; integers divide by
// zero to 0 (CUDA has no trap for it).
__device__ __forceinline__ float ew_div_trunc(float a, float b) { return truncf(a / b); }
__device__ __forceinline__ double ew_div_trunc(double a, double b) { return trunc(a / b); }
__device__ __forceinline__ float ew_div_floor(float a, float b) { return floorf(a / b); }
__device__ __forceinline__ double ew_div_floor(double a, double b) { return floor(a / b); }
template <typename T> __device__ __forceinline__ T ew_div_trunc(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); }
template <typename T> __device__ __forceinline__ T ew_div_floor(T a, T b) {
	if (b == 0) return (T)0;
	T q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0))) q = q - 1;
	return q;
}

// Fast math for results stored in 16 bits by kreplay's own kernel (not the
// faithful replay of PyTorch's, which computes as PyTorch does): exp and
// division in float to within a few ulp (__expf, __fdividef), far below
// the output's rounding, so that silu and sigmoid of f16 and bf16 tensors
// stay bound by memory bandwidth rather than by the accurate expf and
// IEEE division. The math is still float (PyTorch's opmath type); a double
// compute type keeps the accurate functions.
#if (EW_DO == EW_F16 || EW_DO == EW_BF16) && !defined(EW_PT_EPT)
#define EW_FAST_MATH 1
#else
#define EW_FAST_MATH 0
#endif
#ifdef EW_HOST
__device__ __forceinline__ float ew_fexp(float x) { return expf(x); }
#else
__device__ __forceinline__ float ew_fexp(float x) { return __expf(x); }
#endif
__device__ __forceinline__ double ew_fexp(double x) { return exp(x); }
__device__ __forceinline__ float ew_fdiv(float a, float b) { return __fdividef(a, b); }
__device__ __forceinline__ double ew_fdiv(double a, double b) { return a / b; }

__device__ __forceinline__ ew_ct ew_op(ew_ct a, ew_ct b, ew_ct c, ew_ct alpha) {
	[[maybe_unused]] const ew_ct zero = (ew_ct)0, one = (ew_ct)1;
#if EW_OP == EW_COPY
	return a;
#elif EW_OP == EW_NEG
	return -a;
#elif EW_OP == EW_RSQRT
	return ew_rsqrt(a);
#elif EW_OP == EW_SQRT
	return ew_sqrt(a);
#elif EW_OP == EW_TANH
	return ew_tanh(a);
#elif EW_OP == EW_SILU && EW_FAST_MATH
	return ew_fdiv(a, one + ew_fexp(-a));
#elif EW_OP == EW_SILU
	return a / (one + ew_exp(-a));
#elif EW_OP == EW_SIGMOID && EW_FAST_MATH
	return ew_fdiv(one, one + ew_fexp(-a));
#elif EW_OP == EW_SIGMOID
	return one / (one + ew_exp(-a));
#elif EW_OP == EW_RELU
	return a <= zero ? zero : a;
#elif EW_OP == EW_GELU
	return (ew_ct)0.5 * a * (one + ew_erf(a * (ew_ct)0.70710678118654752440));
#elif EW_OP == EW_GELU_TANH
	const ew_ct beta = (ew_ct)0.79788456080286535588, kappa = (ew_ct)0.044715;
	return (ew_ct)0.5 * a * (one + ew_tanh(beta * (a + kappa * a * a * a)));
#elif EW_OP == EW_SIN
	return ew_sin(a);
#elif EW_OP == EW_COS
	return ew_cos(a);
#elif EW_OP == EW_EXP
	return ew_exp(a);
#elif EW_OP == EW_LOG
	return ew_log(a);
#elif EW_OP == EW_ABS
	return a < zero ? -a : a;
#elif EW_OP == EW_BITWISE_NOT
	return ew_bnot(a);
#elif EW_OP == EW_LOGICAL_NOT
	return !(a != zero);
#elif EW_OP == EW_RECIPROCAL
	return one / a;
#elif EW_OP == EW_ERF
	return ew_erf(a);
#elif EW_OP == EW_POW
	return ew_pow(a, b);
#elif EW_OP == EW_ADD
	return a + alpha * b;
#elif EW_OP == EW_SUB
	return a - alpha * b;
#elif EW_OP == EW_RSUB
	return b - alpha * a;
#elif EW_OP == EW_MUL
	return a * b;
#elif EW_OP == EW_DIV
	return a / b;
#elif EW_OP == EW_DIV_TRUNC
	return ew_div_trunc(a, b);
#elif EW_OP == EW_DIV_FLOOR
	return ew_div_floor(a, b);
#elif EW_OP == EW_EQ
	return a == b;
#elif EW_OP == EW_NE
	return a != b;
#elif EW_OP == EW_LT
	return a < b;
#elif EW_OP == EW_LE
	return a <= b;
#elif EW_OP == EW_GT
	return a > b;
#elif EW_OP == EW_GE
	return a >= b;
#elif EW_OP == EW_BITWISE_AND
	return a & b;
#elif EW_OP == EW_BITWISE_OR
	return a | b;
#elif EW_OP == EW_BITWISE_XOR
	return a ^ b;
#elif EW_OP == EW_LOGICAL_AND
	return (a != zero) && (b != zero);
#elif EW_OP == EW_LOGICAL_OR
	return (a != zero) || (b != zero);
#elif EW_OP == EW_LOGICAL_XOR
	return (a != zero) != (b != zero);
#elif EW_OP == EW_MAXIMUM
	return (a != a || a > b) ? a : b;
#elif EW_OP == EW_MINIMUM
	return (a != a || a < b) ? a : b;
#elif EW_OP == EW_CLAMP_MIN
	return (a != a || a >= b) ? a : b;
#elif EW_OP == EW_CLAMP_MAX
	return (a != a || a <= b) ? a : b;
#elif EW_OP == EW_CLAMP
	return a != a ? a : (a < b ? b : (a > c ? c : a));
#elif EW_OP == EW_WHERE
	return a != zero ? b : c;
#elif EW_OP == EW_MASKED_FILL
	return b != zero ? c : a;
#elif EW_OP == EW_ADDCMUL
	return a + alpha * b * c;
#else
#error "unknown EW_OP"
#endif
}

typedef EwTy<EW_DO> EwO;
typedef EwTy<EW_D1> Ew1;
typedef EwTy<EW_D2> Ew2;
typedef EwTy<EW_D3> Ew3;

// EwIn<K, T, V> holds one operand's V values of a unit as loaded (storage,
// converted to the compute type when used, which keeps 16-bit data in half
// the registers).
template <int K, typename T, int V> struct EwIn {
	// EW_KN: absent.
	template <typename P> __device__ __forceinline__ void load(const P &p, int k, ew_idx off) {}
	__device__ __forceinline__ ew_ct get(int i) const { return (ew_ct)0; }
};
template <typename T, int V> struct EwIn<EW_KT, T, V> {
	typename T::S s[V];
	template <typename P> __device__ __forceinline__ void load(const P &p, int k, ew_idx off) {
		ew_ldv<typename T::S, V>(reinterpret_cast<const typename T::S *>(p.ptr[k]) + off, s);
	}
	__device__ __forceinline__ ew_ct get(int i) const { return (ew_ct)T::ld(s[i]); }
};
template <typename T, int V> struct EwIn<EW_KB, T, V> {
	typename T::S s;
	template <typename P> __device__ __forceinline__ void load(const P &p, int k, ew_idx off) {
		const typename T::S *q = reinterpret_cast<const typename T::S *>(p.ptr[k]) + off;
		EW_ACCESS(q, sizeof(*q), sizeof(*q));
		s = *q;
	}
	__device__ __forceinline__ ew_ct get(int i) const { return (ew_ct)T::ld(s); }
};
template <typename T, int V> struct EwIn<EW_KC, T, V> {
	ew_ct c;
	template <typename P> __device__ __forceinline__ void load(const P &p, int k, ew_idx off) {
		c = ew_const<ew_ct>(p.cd[k - 1], p.ci[k - 1]);
	}
	__device__ __forceinline__ ew_ct get(int i) const { return c; }
};

// ew_offsets decomposes unit index u over the coalesced shape into element
// offsets of the output and the operands that are tensors.
template <typename P>
__device__ __forceinline__ void ew_offsets(const P &p, ew_idx u, ew_idx (&o)[4]) {
	const bool used[4] = {true, EW_K1 == EW_KT || EW_K1 == EW_KB, EW_K2 == EW_KT || EW_K2 == EW_KB,
	                      EW_K3 == EW_KT || EW_K3 == EW_KB};
#pragma unroll
	for (int k = 0; k < 4; k++) o[k] = 0;
#ifdef EW_FLAT
	if (true) {
#else
	if (p.ndim == 1) {
#endif
#pragma unroll
		for (int k = 0; k < 4; k++)
			if (used[k]) o[k] = u * (ew_idx)p.st[k][0];
		return;
	}
	// One exit for all the dimensions past ndim: a test of each unused
	// dimension, as an earlier version had, costs two instructions and a
	// taken branch per dimension and element, which a latency-bound
	// strided kernel pays in full.
	ew_idx r = u;
#pragma unroll
	for (int d = 0; d < EW_MAXD; d++) {
		if (d >= p.ndim) break;
		const ew_idx c = d == p.ndim - 1 ? r : ew_divmod(r, p.size[d], p.magic[d], p.shift[d]);
#pragma unroll
		for (int k = 0; k < 4; k++)
			if (used[k]) o[k] += c * (ew_idx)p.st[k][d];
	}
}

// ew_offsets_pt is ew_offsets as PyTorch's OffsetCalculator computes it on
// the generic path: a division with remainder for every dimension, the
// outermost too, and one test per dimension, "if (dim == dims) break", with
// no one-dimensional shortcut. Fewer instructions do not make a faithful
// replay: on an H100, BLOOM-560M's broadcast add of f16[4,16,512,512]
// took 61.4 µs with a test of every unused dimension, and 55.6 with
// ew_offsets (two compares and branches a dimension, the outermost without
// a division: 41.7 million warp instructions under Nsight Compute against
// PyTorch's 37.1 million and 48.8 µs, with the same DRAM traffic).
template <typename P>
__device__ __forceinline__ void ew_offsets_pt(const P &p, ew_idx u, ew_idx (&o)[4]) {
	const bool used[4] = {true, EW_K1 == EW_KT || EW_K1 == EW_KB, EW_K2 == EW_KT || EW_K2 == EW_KB,
	                      EW_K3 == EW_KT || EW_K3 == EW_KB};
#pragma unroll
	for (int k = 0; k < 4; k++) o[k] = 0;
	ew_idx r = u;
#pragma unroll
	for (int d = 0; d < EW_MAXD; d++) {
		if (d == p.ndim) break;
		const ew_idx c = ew_divmod(r, p.size[d], p.magic[d], p.shift[d]);
#pragma unroll
		for (int k = 0; k < 4; k++)
			if (used[k]) o[k] += c * (ew_idx)p.st[k][d];
	}
}

// EwUnit is one unit of V elements: its operands and where it goes.
template <int V> struct EwUnit {
	EwIn<EW_K1, Ew1, V> a;
	EwIn<EW_K2, Ew2, V> b;
	EwIn<EW_K3, Ew3, V> c;
	ew_idx out;

	template <typename P> __device__ __forceinline__ void load(const P &p, const ew_idx (&o)[4]) {
		out = o[0];
		a.load(p, 1, o[1]);
		b.load(p, 2, o[2]);
		c.load(p, 3, o[3]);
	}

	template <typename P> __device__ __forceinline__ void store(const P &p) const {
		store(p, ew_const<ew_ct>(p.cd[3], p.ci[3]));
	}
	// store with alpha already in the compute type, as PyTorch's functors
	// hold it (kr_ew_pt_generic converts it once at the top; the compiler
	// may still rematerialize the conversion per element).
	template <typename P> __device__ __forceinline__ void store(const P &p, const ew_ct alpha) const {
		typename EwO::S r[V];
#pragma unroll
		for (int i = 0; i < V; i++) r[i] = EwO::st((typename EwO::N)ew_op(a.get(i), b.get(i), c.get(i), alpha));
		ew_stv<typename EwO::S, V>(reinterpret_cast<typename EwO::S *>(p.ptr[0]) + out, r);
	}
};

// ew_load_units loads the units base + u*EW_BLOCK (u < EW_UNROLL) that
// exist; ew_store_units computes and stores them.
template <typename P>
__device__ __forceinline__ void ew_load_units(const P &p, ew_idx base, ew_idx units, EwUnit<EW_VEC> (&w)[EW_UNROLL]) {
#pragma unroll
	for (int u = 0; u < EW_UNROLL; u++) {
		ew_idx j = base + u * EW_BLOCK;
		if (j < units) {
			ew_idx o[4];
			ew_offsets(p, j, o);
			w[u].load(p, o);
		}
	}
}
template <typename P>
__device__ __forceinline__ void ew_store_units(const P &p, ew_idx base, ew_idx units, const EwUnit<EW_VEC> (&w)[EW_UNROLL]) {
#pragma unroll
	for (int u = 0; u < EW_UNROLL; u++) {
		if (base + u * EW_BLOCK < units) w[u].store(p);
	}
}

template <typename P> __device__ __forceinline__ void ew_run(const P &p) {
	const ew_idx units = (ew_idx)p.units;
	const ew_idx step = (ew_idx)gridDim.x * (EW_BLOCK * EW_UNROLL);
	for (ew_idx base = (ew_idx)blockIdx.x * (EW_BLOCK * EW_UNROLL) + threadIdx.x; base < units; base += step) {
		EwUnit<EW_VEC> w[EW_UNROLL];
		// All loads first: the output may alias an operand (in-place ops).
		ew_load_units(p, base, units, w);
		ew_store_units(p, base, units, w);
	}
	if (blockIdx.x == 0 && (long long)threadIdx.x < p.tail) {
		// One-dimensional tail, one element per thread.
		ew_idx e = (ew_idx)p.units * EW_VEC + threadIdx.x;
		ew_idx o[4];
#pragma unroll
		for (int k = 0; k < 4; k++) o[k] = e * (ew_idx)p.istr[k];
		EwUnit<1> w;
		w.load(p, o);
		w.store(p);
	}
}

extern "C" __global__ void __launch_bounds__(EW_BLOCK) kr_ew(const EwParams p) { ew_run(p); }

// kr_ew_batched runs gridDim.y independent problems of the same kind, one
// per blockIdx.y (the inputs of cat).
extern "C" __global__ void __launch_bounds__(EW_BLOCK) kr_ew_batched(const EwParams *__restrict__ ps) {
	ew_run(ps[blockIdx.y]);
}

#ifdef EW_PT_EPT
// PyTorch's elementwise loops, for the faithful replay of a traced kernel
// (tier3/faithful.go): EW_PT_NT threads per block (the traced block),
// EW_PT_EPT elements per thread, no grid-stride loop (the grid covers the
// elements once).

// kr_ew_pt_generic is elementwise_kernel<NT, VT> of TensorIterator's
// generic path (EW_VEC 1): thread t of block b does elements
// b*NT*VT + t + i*NT for i < VT, each with its operand offsets decomposed
// over the coalesced shape and one scalar load per operand.
extern "C" __global__ void __launch_bounds__(EW_PT_NT) kr_ew_pt_generic(const EwParams p) {
	const ew_idx n = (ew_idx)p.units;
	const ew_ct alpha = ew_const<ew_ct>(p.cd[3], p.ci[3]);
	ew_idx idx = (ew_idx)blockIdx.x * (ew_idx)(EW_PT_NT * EW_PT_EPT) + (ew_idx)threadIdx.x;
#pragma unroll
	for (int i = 0; i < EW_PT_EPT; i++) {
		if (idx < n) {
			ew_idx o[4];
			ew_offsets_pt(p, idx, o);
			EwUnit<1> w;
			w.load(p, o);
			w.store(p, alpha);
		}
		idx += EW_PT_NT;
	}
}

// kr_ew_pt_lin is vectorized_elementwise_kernel<V> (EW_VEC V) and
// unrolled_elementwise_kernel (EW_VEC 1) over one contiguous run of
// elements (a one-dimensional space): a block covers NT*EPT elements.
// A full block loads EPT/V vectors per thread, thread t's at vector
// t + i*NT of the block, then computes and stores them; a partial block
// (and every block when V is 1) does EPT elements per thread, t + i*NT,
// bounds-checked. Loads all come before stores, as in PyTorch.
extern "C" __global__ void __launch_bounds__(EW_PT_NT) kr_ew_pt_lin(const EwParams p) {
	const ew_idx n = (ew_idx)p.units * EW_VEC + (ew_idx)p.tail;
	const ew_idx bw = (ew_idx)(EW_PT_NT * EW_PT_EPT);
	const ew_idx base = (ew_idx)blockIdx.x * bw;
	if (base >= n) return;
	if (EW_VEC == 1 || n - base < bw) {
		EwUnit<1> w[EW_PT_EPT];
#pragma unroll
		for (int i = 0; i < EW_PT_EPT; i++) {
			ew_idx e = base + (ew_idx)threadIdx.x + (ew_idx)(i * EW_PT_NT);
			if (e < n) {
				ew_idx o[4];
#pragma unroll
				for (int k = 0; k < 4; k++) o[k] = e * (ew_idx)p.istr[k];
				w[i].load(p, o);
			}
		}
#pragma unroll
		for (int i = 0; i < EW_PT_EPT; i++) {
			if (base + (ew_idx)threadIdx.x + (ew_idx)(i * EW_PT_NT) < n) w[i].store(p);
		}
		return;
	}
#if EW_VEC > 1
	EwUnit<EW_VEC> w[EW_PT_EPT / EW_VEC];
	const ew_idx u0 = base / EW_VEC + (ew_idx)threadIdx.x;
#pragma unroll
	for (int i = 0; i < EW_PT_EPT / EW_VEC; i++) {
		ew_idx u = u0 + (ew_idx)(i * EW_PT_NT), o[4];
#pragma unroll
		for (int k = 0; k < 4; k++) o[k] = u * (ew_idx)p.st[k][0];
		w[i].load(p, o);
	}
#pragma unroll
	for (int i = 0; i < EW_PT_EPT / EW_VEC; i++) w[i].store(p);
#endif
}

#ifdef EW_PT_DYN
// kr_ew_pt_dyncopy is unrolled_elementwise_kernel with LoadWithCast<1> and
// StoreWithCast<1>, PyTorch's contiguous copy between dtypes: each element
// is fetched through a switch on its dtype, a c10::ScalarType code known
// only at run time (p.dyn: source | destination << 8), converted to the
// compute type EW_PT_DYN (the argument type of the traced kernel's
// lambda), and stored through the same kind of switch. The conversion
// inside each case waits for its load before the next element's switch,
// so a thread has one load in flight where the vectorized kernels have
// several: this is why PyTorch's cast copies run below the memory's
// bandwidth, and what this kernel replays. The switches are inlined, as
// PyTorch's fetch_and_cast is; EW_PT_DYN_CALL makes them calls instead.
#ifdef EW_PT_DYN_CALL
#define EW_DYN_INLINE __noinline__
#else
#define EW_DYN_INLINE __forceinline__
#endif
template <int D> __device__ __forceinline__ EW_PT_DYN ew_dyn_ld(const char *p, ew_idx e) {
	const typename EwTy<D>::S *q = reinterpret_cast<const typename EwTy<D>::S *>(p) + e;
	EW_ACCESS(q, sizeof(*q), sizeof(*q));
	return (EW_PT_DYN)EwTy<D>::ld(*q);
}
template <int D> __device__ __forceinline__ void ew_dyn_st(char *p, ew_idx e, EW_PT_DYN v) {
	typename EwTy<D>::S *q = reinterpret_cast<typename EwTy<D>::S *>(p) + e;
	EW_ACCESS(q, sizeof(*q), sizeof(*q));
	*q = EwTy<D>::st((typename EwTy<D>::N)v);
}
__device__ EW_DYN_INLINE EW_PT_DYN ew_dyn_fetch(const char *p, ew_idx e, int code) {
	switch (code) {
	case 0: return ew_dyn_ld<EW_U8>(p, e);
	case 1: return ew_dyn_ld<EW_I8>(p, e);
	case 2: return ew_dyn_ld<EW_I16>(p, e);
	case 3: return ew_dyn_ld<EW_I32>(p, e);
	case 4: return ew_dyn_ld<EW_I64>(p, e);
	case 5: return ew_dyn_ld<EW_F16>(p, e);
	case 6: return ew_dyn_ld<EW_F32>(p, e);
	case 7: return ew_dyn_ld<EW_F64>(p, e);
	case 11: return ew_dyn_ld<EW_BOOL>(p, e);
	case 15: return ew_dyn_ld<EW_BF16>(p, e);
	case 23: return ew_dyn_ld<EW_F8E5M2>(p, e);
	case 24: return ew_dyn_ld<EW_F8E4M3>(p, e);
	}
	return (EW_PT_DYN)0;
}
__device__ EW_DYN_INLINE void ew_dyn_store(char *p, ew_idx e, int code, EW_PT_DYN v) {
	switch (code) {
	case 0: ew_dyn_st<EW_U8>(p, e, v); return;
	case 1: ew_dyn_st<EW_I8>(p, e, v); return;
	case 2: ew_dyn_st<EW_I16>(p, e, v); return;
	case 3: ew_dyn_st<EW_I32>(p, e, v); return;
	case 4: ew_dyn_st<EW_I64>(p, e, v); return;
	case 5: ew_dyn_st<EW_F16>(p, e, v); return;
	case 6: ew_dyn_st<EW_F32>(p, e, v); return;
	case 7: ew_dyn_st<EW_F64>(p, e, v); return;
	case 11: ew_dyn_st<EW_BOOL>(p, e, v); return;
	case 15: ew_dyn_st<EW_BF16>(p, e, v); return;
	case 23: ew_dyn_st<EW_F8E5M2>(p, e, v); return;
	case 24: ew_dyn_st<EW_F8E4M3>(p, e, v); return;
	}
}
extern "C" __global__ void __launch_bounds__(EW_PT_NT) kr_ew_pt_dyncopy(const EwParams p) {
	const ew_idx n = (ew_idx)p.units * EW_VEC + (ew_idx)p.tail;
	const ew_idx base = (ew_idx)blockIdx.x * (ew_idx)(EW_PT_NT * EW_PT_EPT) + (ew_idx)threadIdx.x;
	const int src = p.dyn & 0xff, dst = (p.dyn >> 8) & 0xff;
	EW_PT_DYN v[EW_PT_EPT];
#pragma unroll
	for (int i = 0; i < EW_PT_EPT; i++) {
		const ew_idx e = base + (ew_idx)(i * EW_PT_NT);
		if (e >= n) break;
		v[i] = ew_dyn_fetch(p.ptr[1], e * (ew_idx)p.istr[1], src);
	}
#pragma unroll
	for (int i = 0; i < EW_PT_EPT; i++) {
		const ew_idx e = base + (ew_idx)(i * EW_PT_NT);
		if (e >= n) break;
		ew_dyn_store(p.ptr[0], e * (ew_idx)p.istr[0], dst, v[i]);
	}
}
#endif
#endif
