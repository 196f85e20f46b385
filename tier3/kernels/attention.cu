// Flash-attention forward: softmax(scale * Q K^T + mask) V with the
// softmax computed online over tiles of keys, on tensor cores through
// mma.sync.m16n8k16 (f32 accumulation) fed by ldmatrix from shared memory
// filled by cp.async. No headers: NVRTC here has no include path.
//
// Compile-time parameters (-D):
//   HEAD_DIM  64 or 128: the head dimension of q, k and v
//   BLOCK_M   query rows per block, 16 per warp (64 or 128)
//   BLOCK_N   keys per tile streamed through shared memory (32, 64, 128)
//   STAGES    key/value tiles in flight (2 or 3)
//   ORDER     0: blocks take the heaviest query tiles of every head first
//             (causal work is uneven); 1: head by head
//   IS_BF16   1 for bfloat16 inputs and output, 0 for float16
//   MIN_BLOCKS the __launch_bounds__ occupancy hint
//   HAS_BIAS  1: add an attention bias, score = scale q.k + bias[b, h, i, j],
//             read through four element strides (0 for a broadcast dim);
//             undefined: no bias and no bias arguments
//   BIAS_F32  with HAS_BIAS, 1: the bias is f32; 0: the inputs' 16-bit type
//   BIAS_PAIRS with HAS_BIAS, 1: keys contiguous, pairs aligned: read two at a time
//   BIAS_SMEM with HAS_BIAS and a 16-bit bias, 1: keys contiguous, rows
//             16-byte aligned, Sk a multiple of 8: each stage of the K/V
//             pipeline also stages the tile's BLOCK_M x BLOCK_N bias block
//             in shared memory by cp.async (rows padded to BLOCK_N + 8
//             elements), and the scores read it from there
//
// One block computes BLOCK_M query rows of one (batch, head); each warp owns
// 16 of them and keeps their Q fragments, running max, running sum and
// output accumulator in registers. For each key tile j:
//   S = Q K_j^T                        (mma, K_j by ldmatrix)
//   (with HAS_BIAS: S += bias / scale, so that S * scale is scale q.k + bias)
//   mask keys past the end, and causal keys past row + causal_off
//   m' = max(m, rowmax S * scale*log2 e); P = 2^(S*scale*log2 e - m')
//   l = l * 2^(m-m') + rowsum P; O = O * 2^(m-m') + P V_j
// where P goes from the S accumulators straight into A fragments (the
// m16n8k16 accumulator layout of two n-tiles is the A layout of one k-step)
// and V_j is read by ldmatrix.trans. At the end O / l is written through
// shared memory in 16-byte stores, and logsumexp = (m + log2 l) ln 2.
//
// Shared memory rows are HEAD_DIM elements with their 16-byte chunks
// XOR-swizzled by (row mod 8), so the eight row addresses of every
// ldmatrix 8x8 matrix fall in distinct banks.

// ACC_KEY_ROW(n, e) names the key and query row of a thread's accumulator
// element e of key tile n (the mma.sync m16n8 layout); n and e are loop
// variables, never expressions.
#define ACC_KEY_ROW(n, e) \
	const int key = n0 + n * 8 + 2 * t + (e & 1); \
	const int row = row0 + (e >> 1) * 8

typedef unsigned short u16;
typedef unsigned int u32;
typedef long long i64;

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
#ifndef BLOCK_M
#define BLOCK_M 128
#endif
#ifndef BLOCK_N
#define BLOCK_N 64
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef ORDER
#define ORDER 0
#endif
#ifndef IS_BF16
#define IS_BF16 0
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif

#define NWARPS (BLOCK_M / 16)
#define NTHREADS (NWARPS * 32)
#define CHUNKS (HEAD_DIM / 8) // 16-byte chunks in a row
#define KSTEPS (HEAD_DIM / 16) // k-steps of Q K^T
#define NTILES (BLOCK_N / 8)  // 8-column tiles of S
#define PSTEPS (BLOCK_N / 16) // k-steps of P V
#define DTILES (HEAD_DIM / 8) // 8-column tiles of O

#if HEAD_DIM != 64 && HEAD_DIM != 128
#error "HEAD_DIM must be 64 or 128"
#endif
#if BLOCK_M % 16 != 0 || BLOCK_N % 16 != 0 || STAGES < 2
#error "bad tile configuration"
#endif

// Element offset of chunk c of row r in a swizzled tile.
__device__ __forceinline__ int swz(int r, int c) { return r * HEAD_DIM + ((c ^ (r & 7)) << 3); }

__device__ __forceinline__ u32 smem_addr(const void *p) {
	u32 a;
	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
	return a;
}

// cp_async16 copies 16 bytes, or writes 16 zero bytes when !valid.
__device__ __forceinline__ void cp_async16(u32 dst, const void *src, bool valid) {
	int n = valid ? 16 : 0;
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(n) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldsm_x4(u32 addr, u32 &r0, u32 &r1, u32 &r2, u32 &r3) {
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
	             : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
	             : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_t(u32 addr, u32 &r0, u32 &r1, u32 &r2, u32 &r3) {
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
	             : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
	             : "r"(addr));
}

// mma16816 accumulates a 16x16 A times a 16x8 B into the 16x8 f32 tile c.
__device__ __forceinline__ void mma16816(float *c, const u32 *a, u32 b0, u32 b1) {
#if IS_BF16
	asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
#else
	asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
#endif
	    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// pack2 rounds two floats to 16-bit floats, lo in the low half.
__device__ __forceinline__ u32 pack2(float lo, float hi) {
	u32 r;
#if IS_BF16
	asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#else
	asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#endif
	return r;
}

__device__ __forceinline__ float fast_exp2(float x) {
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}
__device__ __forceinline__ float fast_log2(float x) {
	float y;
	asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}

#if HAS_BIAS
#ifndef BIAS_F32
#define BIAS_F32 0
#endif
#ifndef BIAS_PAIRS
#define BIAS_PAIRS 0
#endif
#ifndef BIAS_SMEM
#define BIAS_SMEM 0
#endif
#if BIAS_SMEM && BIAS_F32
#error "BIAS_SMEM stages a 16-bit bias only"
#endif
// bias_float converts one attention bias element to float.
#if BIAS_F32
typedef float bias_t;
__device__ __forceinline__ float bias_float(float x) { return x; }
#else
typedef u16 bias_t;
__device__ __forceinline__ float bias_float(u16 x) {
#if IS_BF16
	return __int_as_float((int)((u32)x << 16));
#else
	float y;
	asm("cvt.f32.f16 %0, %1;\n" : "=f"(y) : "h"(x));
	return y;
#endif
}
#endif
#endif

// load_rows copies rows [r0, r0+ROWS) of one head (row stride rs, elements)
// into a swizzled shared tile, zero-filling rows at or past limit. Each
// thread copies one 16-byte chunk column of every RSTEP-th row.
template <int ROWS>
__device__ __forceinline__ void load_rows(u32 dst, const u16 *src, i64 rs, int r0, int limit, int tid) {
	const int RSTEP = NTHREADS / CHUNKS;
	static_assert(ROWS % (NTHREADS / CHUNKS) == 0, "tile rows must be a multiple of the rows per pass");
	const int c = tid % CHUNKS, rr = tid / CHUNKS;
	const u16 *p = src + (i64)(r0 + rr) * rs + c * 8;
	const i64 step = (i64)RSTEP * rs;
#pragma unroll
	for (int it = 0; it < ROWS / RSTEP; ++it) {
		const int r = it * RSTEP + rr;
		const bool ok = r0 + r < limit;
		cp_async16(dst + 2 * swz(r, c), ok ? p : src, ok);
		p += step;
	}
}

#if HAS_BIAS && BIAS_SMEM
// A staged bias tile: BLOCK_M rows of BLOCK_N keys, each row padded by 16
// bytes so that the fragment reads (rows g = lane / 4, key pairs 2t of
// t = lane % 4) of a warp fall in distinct banks: the row stride is 4
// banks mod 32, and the 4 t of a row take consecutive banks.
#define BROW (BLOCK_N + 8) // elements
#define BCHUNKS (BLOCK_N / 8) // 16-byte chunks of a row
#define BIAS_STAGE_BYTES (BLOCK_M * BROW * 2)

// load_bias copies the bias of query rows [m0, m0+BLOCK_M) and keys
// [n0, n0+BLOCK_N) (row stride bsq, keys contiguous) into a staged tile,
// zero-filling rows at or past Sq and keys at or past Sk (Sk is a multiple
// of 8: a chunk is wholly inside or past the row). Each thread copies one
// 16-byte chunk column of every BSTEP-th row.
__device__ __forceinline__ void load_bias(u32 dst, const u16 *src, i64 bsq, int m0, int n0, int Sq, int Sk,
                                          int tid) {
	const int BSTEP = NTHREADS / BCHUNKS;
	static_assert(BLOCK_M % (NTHREADS / BCHUNKS) == 0, "bias rows must be a multiple of the rows per pass");
	const int c = tid % BCHUNKS, rr = tid / BCHUNKS;
	const bool kok = n0 + c * 8 < Sk;
	const u16 *p = src + (i64)(m0 + rr) * bsq + n0 + c * 8;
	const i64 step = (i64)BSTEP * bsq;
#pragma unroll
	for (int it = 0; it < BLOCK_M / BSTEP; ++it) {
		const int r = it * BSTEP + rr;
		const bool ok = kok && m0 + r < Sq;
		cp_async16(dst + 2 * (r * BROW + c * 8), ok ? p : src, ok);
		p += step;
	}
}
#endif

#define INF (__int_as_float(0x7f800000))

// kr_attention_fwd: grid = B * H * mblocks blocks of NTHREADS threads,
// (BLOCK_M + 2 * STAGES * BLOCK_N) * HEAD_DIM * 2 bytes of dynamic shared
// memory (with BIAS_SMEM, STAGES * BIAS_STAGE_BYTES more). Strides are in elements for (batch, head, sequence); the head
// dimension is contiguous. Query head h reads key/value head h / group.
// A causal query row i sees keys j <= i + causal_off. lse (may be null) is
// f32 indexed b * lsb + h * lsh + i. With HAS_BIAS, bias element (i, j)
// of (b, h) is bias[b * bsb + h * bsh + i * bsq + j * bsk], added to the
// scores as bias * inv_scale before scaling (inv_scale = 1 / scale).
extern "C" __global__ void __launch_bounds__(NTHREADS, MIN_BLOCKS)
kr_attention_fwd(const u16 *__restrict__ q, const u16 *__restrict__ k, const u16 *__restrict__ v,
                 u16 *__restrict__ o, float *__restrict__ lse,
                 i64 qsb, i64 qsh, i64 qss, i64 ksb, i64 ksh, i64 kss, i64 vsb, i64 vsh, i64 vss,
                 i64 osb, i64 osh, i64 oss, i64 lsb, i64 lsh,
                 int B, int H, int group, int Sq, int Sk, int mblocks,
                 float scale_log2, int causal, int causal_off
#if HAS_BIAS
                 , const bias_t *__restrict__ bias, i64 bsb, i64 bsh, i64 bsq, i64 bsk, float inv_scale
#endif
                 ) {
	extern __shared__ __align__(128) u16 smem[];
	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	const int g = lane >> 2, t = lane & 3;

	const int BH = B * H;
#if ORDER == 0
	const int mi = blockIdx.x / BH, bh = blockIdx.x % BH;
#else
	const int bh = blockIdx.x / mblocks, mi = blockIdx.x % mblocks;
#endif
	const int mblk = causal ? mblocks - 1 - mi : mi;
	const int b = bh / H, h = bh % H, hk = h / group;
	const int m0 = mblk * BLOCK_M;

	const u16 *qp = q + b * qsb + h * qsh;
	const u16 *kp = k + b * ksb + hk * ksh;
	const u16 *vp = v + b * vsb + hk * vsh;
#if HAS_BIAS
	const bias_t *bp = bias + b * bsb + h * bsh;
#endif

	// Keys this block needs: all, or up to the causal limit of its last row.
	int nend = Sk;
	if (causal) nend = min(Sk, max(0, min(Sq, m0 + BLOCK_M) + causal_off));
	const int ntiles = (nend + BLOCK_N - 1) / BLOCK_N;

	const u32 sQ = smem_addr(smem);
	const u32 sKV = sQ + BLOCK_M * HEAD_DIM * 2;
	const u32 stage_bytes = 2 * BLOCK_N * HEAD_DIM * 2;
#if HAS_BIAS && BIAS_SMEM
	// The staged bias tiles, after the K/V stages, one per stage.
	const u32 sBias = sKV + STAGES * stage_bytes;
#endif

	load_rows<BLOCK_M>(sQ, qp, qss, m0, Sq, tid);
	cp_async_commit();
#pragma unroll
	for (int s = 0; s < STAGES - 1; ++s) {
		if (s < ntiles) {
			u32 st = sKV + s * stage_bytes;
			load_rows<BLOCK_N>(st, kp, kss, s * BLOCK_N, Sk, tid);
			load_rows<BLOCK_N>(st + BLOCK_N * HEAD_DIM * 2, vp, vss, s * BLOCK_N, Sk, tid);
#if HAS_BIAS && BIAS_SMEM
			load_bias(sBias + s * BIAS_STAGE_BYTES, bp, bsq, m0, s * BLOCK_N, Sq, Sk, tid);
#endif
		}
		cp_async_commit();
	}

	// Q fragments of this warp's 16 rows, kept for the whole loop.
	cp_async_wait<STAGES - 1>();
	__syncthreads();
	u32 qf[KSTEPS][4];
	{
		const int r = warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
#pragma unroll
		for (int kk = 0; kk < KSTEPS; ++kk) {
			const int c = kk * 2 + (lane >> 4);
			ldsm_x4(sQ + 2 * swz(r, c), qf[kk][0], qf[kk][1], qf[kk][2], qf[kk][3]);
		}
	}

	float acc[DTILES][4];
#pragma unroll
	for (int d = 0; d < DTILES; ++d) acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.f;
	float mrow[2] = {-INF, -INF}; // running max, in scale*log2(e) units
	float lrow[2] = {0.f, 0.f};   // this thread's part of the running sum

	const int row0 = m0 + warp * 16 + g; // this thread's rows: row0, row0 + 8
	const int wlo = m0 + warp * 16, whi = wlo + 15;

	// Per-lane parts of the ldmatrix addresses (the row's low 3 bits are
	// lane & 7 for every matrix, so the swizzle XOR is fixed per lane).
	const int kr = (lane & 7) + (lane >> 4) * 8, kc = (lane >> 3) & 1; // K: keys x dims
	const int vr = (lane & 7) + ((lane >> 3) & 1) * 8, vc = lane >> 4; // V: keys x dims (trans)

	for (int j = 0; j < ntiles; ++j) {
		cp_async_wait<STAGES - 2>();
		__syncthreads();
		{
			const int jn = j + STAGES - 1;
			if (jn < ntiles) {
				u32 st = sKV + (jn % STAGES) * stage_bytes;
				load_rows<BLOCK_N>(st, kp, kss, jn * BLOCK_N, Sk, tid);
				load_rows<BLOCK_N>(st + BLOCK_N * HEAD_DIM * 2, vp, vss, jn * BLOCK_N, Sk, tid);
#if HAS_BIAS && BIAS_SMEM
				load_bias(sBias + (jn % STAGES) * BIAS_STAGE_BYTES, bp, bsq, m0, jn * BLOCK_N, Sq, Sk, tid);
#endif
			}
			cp_async_commit();
		}
		const int n0 = j * BLOCK_N;
		// A warp whose rows see none of this tile's keys skips it.
		if (wlo >= Sq || (causal && n0 > whi + causal_off)) continue;

#if HAS_BIAS
		// This thread's bias elements of the tile, loaded ahead of Q K^T;
		// zero past the last query or key (scores never used, or masked).
		float bv[NTILES][4];
#if BIAS_SMEM
		// From the tile staged with K_j and V_j (zero past Sq and Sk): a
		// 4-byte load of the two keys of e and e + 1.
		{
			const u16 *sb = smem + (BLOCK_M * HEAD_DIM + STAGES * 2 * BLOCK_N * HEAD_DIM) +
			                (j % STAGES) * (BLOCK_M * BROW) + (warp * 16 + g) * BROW + 2 * t;
#pragma unroll
			for (int n = 0; n < NTILES; ++n) {
#pragma unroll
				for (int r = 0; r < 2; ++r) {
					const u32 w = *(const u32 *)&sb[r * 8 * BROW + n * 8];
					bv[n][2 * r] = bias_float((u16)(w & 0xffffu));
					bv[n][2 * r + 1] = bias_float((u16)(w >> 16));
				}
			}
		}
#elif BIAS_PAIRS
		// Keys contiguous and pairs aligned (tier3's biasPairs): the two
		// adjacent keys of e and e + 1 in one load.
#pragma unroll
		for (int n = 0; n < NTILES; ++n) {
#pragma unroll
			for (int r = 0; r < 2; ++r) {
				const int key = n0 + n * 8 + 2 * t;
				const int row = row0 + r * 8;
				float x = 0.f, y = 0.f;
				if (row < Sq && key < Sk) {
					const bias_t *e = bp + (i64)row * bsq + key;
#if BIAS_F32
					const float2 w = *(const float2 *)e;
					x = w.x; y = w.y;
#else
					const u32 w = *(const u32 *)e;
					x = bias_float((u16)(w & 0xffffu)); y = bias_float((u16)(w >> 16));
#endif
				}
				bv[n][2 * r] = x; bv[n][2 * r + 1] = y;
			}
		}
#else
#pragma unroll
		for (int n = 0; n < NTILES; ++n) {
#pragma unroll
			for (int e = 0; e < 4; ++e) {
				ACC_KEY_ROW(n, e);
				bv[n][e] = row < Sq && key < Sk ? bias_float(bp[(i64)row * bsq + (i64)key * bsk]) : 0.f;
			}
		}
#endif
#endif

		const u32 sK = sKV + (j % STAGES) * stage_bytes;
		const u32 sV = sK + BLOCK_N * HEAD_DIM * 2;

		float s[NTILES][4];
#pragma unroll
		for (int n = 0; n < NTILES; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
		for (int kk = 0; kk < KSTEPS; ++kk) {
#pragma unroll
			for (int np = 0; np < NTILES / 2; ++np) {
				u32 b0, b1, b2, b3;
				ldsm_x4(sK + 2 * swz(np * 16 + kr, kk * 2 + kc), b0, b1, b2, b3);
				mma16816(s[2 * np], qf[kk], b0, b1);
				mma16816(s[2 * np + 1], qf[kk], b2, b3);
			}
		}

#if HAS_BIAS
		// In units of q.k: S * scale = scale q.k + bias.
#pragma unroll
		for (int n = 0; n < NTILES; ++n) {
#pragma unroll
			for (int e = 0; e < 4; ++e) s[n][e] = fmaf(bv[n][e], inv_scale, s[n][e]);
		}
#endif

		// Mask keys past Sk, and causal keys past the diagonal.
		if (n0 + BLOCK_N > Sk || (causal && n0 + BLOCK_N - 1 > wlo + causal_off)) {
#pragma unroll
			for (int n = 0; n < NTILES; ++n) {
#pragma unroll
				for (int e = 0; e < 4; ++e) {
					ACC_KEY_ROW(n, e);
					if (key >= Sk || (causal && key > row + causal_off)) s[n][e] = -INF;
				}
			}
		}

		// Online softmax over the two rows this thread holds.
		float corr[2];
#pragma unroll
		for (int r = 0; r < 2; ++r) {
			float mx = -INF;
#pragma unroll
			for (int n = 0; n < NTILES; ++n) mx = fmaxf(mx, fmaxf(s[n][2 * r], s[n][2 * r + 1]));
			mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
			mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
			const float mnew = fmaxf(mrow[r], mx * scale_log2);
			const float muse = mnew == -INF ? 0.f : mnew;
			corr[r] = fast_exp2(mrow[r] - muse);
			mrow[r] = mnew;
			float sum = 0.f;
#pragma unroll
			for (int n = 0; n < NTILES; ++n) {
				s[n][2 * r] = fast_exp2(fmaf(s[n][2 * r], scale_log2, -muse));
				s[n][2 * r + 1] = fast_exp2(fmaf(s[n][2 * r + 1], scale_log2, -muse));
				sum += s[n][2 * r] + s[n][2 * r + 1];
			}
			lrow[r] = lrow[r] * corr[r] + sum;
		}
#pragma unroll
		for (int d = 0; d < DTILES; ++d) {
			acc[d][0] *= corr[0];
			acc[d][1] *= corr[0];
			acc[d][2] *= corr[1];
			acc[d][3] *= corr[1];
		}

		// O += P V.
#pragma unroll
		for (int kk = 0; kk < PSTEPS; ++kk) {
			u32 pa[4];
			pa[0] = pack2(s[2 * kk][0], s[2 * kk][1]);
			pa[1] = pack2(s[2 * kk][2], s[2 * kk][3]);
			pa[2] = pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]);
			pa[3] = pack2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
			for (int dp = 0; dp < DTILES / 2; ++dp) {
				u32 b0, b1, b2, b3;
				ldsm_x4_t(sV + 2 * swz(kk * 16 + vr, dp * 2 + vc), b0, b1, b2, b3);
				mma16816(acc[2 * dp], pa, b0, b1);
				mma16816(acc[2 * dp + 1], pa, b2, b3);
			}
		}
	}
	cp_async_wait<0>();

	// Epilogue: normalise, stage this warp's rows in its own part of the Q
	// tile (its Q fragments are in registers), then store 16-byte chunks.
	float inv[2];
#pragma unroll
	for (int r = 0; r < 2; ++r) {
		float l = lrow[r];
		l += __shfl_xor_sync(0xffffffffu, l, 1);
		l += __shfl_xor_sync(0xffffffffu, l, 2);
		inv[r] = l > 0.f ? 1.f / l : 0.f;
		const int row = row0 + r * 8;
		if (lse != 0 && t == 0 && row < Sq) {
			// No visible key: +inf, as flash attention writes.
			lse[b * lsb + h * lsh + row] = l > 0.f ? (mrow[r] + fast_log2(l)) * 0.69314718055994531f : INF;
		}
	}
	u16 *so = smem;
#pragma unroll
	for (int d = 0; d < DTILES; ++d) {
		const int r = warp * 16 + g;
		*(u32 *)&so[swz(r, d) + 2 * t] = pack2(acc[d][0] * inv[0], acc[d][1] * inv[0]);
		*(u32 *)&so[swz(r + 8, d) + 2 * t] = pack2(acc[d][2] * inv[1], acc[d][3] * inv[1]);
	}
	__syncwarp();
	u16 *op = o + b * osb + h * osh;
#pragma unroll
	for (int i = lane; i < 16 * CHUNKS; i += 32) {
		const int r = i / CHUNKS, c = i % CHUNKS;
		const int row = wlo + r;
		if (row < Sq) {
			uint4 val = *(const uint4 *)&so[swz(warp * 16 + r, c)];
			*(uint4 *)&op[(i64)row * oss + c * 8] = val;
		}
	}
}
