// Device-side random fill for replay inputs: every element is a hash of its
// index and a seed (splitmix64), so buffers of any size are random and not
// periodic, and filling gigabytes takes milliseconds.
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;

__device__ u64 kr_mix(u64 x) {
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

// kr_f2h converts to IEEE half bits, rounding to nearest even.
__device__ u16 kr_f2h(float f) {
	u32 b = __float_as_uint(f);
	u32 sign = (b >> 16) & 0x8000u;
	int e = (int)((b >> 23) & 0xff) - 127 + 15;
	u32 m = b & 0x7fffffu;
	if ((b & 0x7fffffffu) == 0) return (u16)sign;
	if (e >= 31) return (u16)(sign | 0x7c00u);
	if (e <= 0) {
		if (e < -10) return (u16)sign;
		m |= 0x800000u;
		u32 sh = (u32)(14 - e);
		u32 h = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
		if (rem > half || (rem == half && (h & 1u))) h++;
		return (u16)(sign | h);
	}
	u32 h = sign | ((u32)e << 10) | (m >> 13), rem = m & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
	return (u16)h;
}

// kind: 0 f16, 1 bf16, 2 f32, 3 f64, 4 i64, 5 i32, 6 bool, 7 bytes,
// 8 float8_e4m3fn, 9 float8_e5m2 (any finite code: a NaN or Inf code is
// moved to its neighbour, the largest finite value of its sign).
extern "C" __global__ void kr_fill(void *p, u64 n, u64 seed, int kind) {
	for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
		u64 r = kr_mix(seed ^ (i * 0xd1b54a32d192ed03ULL));
		float u = (float)(r >> 40) * (1.0f / 8388608.0f) - 1.0f; // [-1, 1)
		switch (kind) {
		case 0: ((u16 *)p)[i] = kr_f2h(u); break;
		case 1: ((u16 *)p)[i] = (u16)(__float_as_uint(u) >> 16); break;
		case 2: ((float *)p)[i] = u; break;
		case 3: ((double *)p)[i] = (double)u; break;
		case 4: ((long long *)p)[i] = (long long)(r % 1000); break;
		case 5: ((int *)p)[i] = (int)(r % 1000); break;
		case 6: ((unsigned char *)p)[i] = (unsigned char)(r & 1); break;
		case 8: ((unsigned char *)p)[i] = (unsigned char)((r & 0x7f) == 0x7f ? r - 1 : r); break;
		case 9: ((unsigned char *)p)[i] = (unsigned char)((r & 0x7c) == 0x7c ? (r & 0x80) | 0x7b : r); break;
		default: ((unsigned char *)p)[i] = (unsigned char)r; break;
		}
	}
}
