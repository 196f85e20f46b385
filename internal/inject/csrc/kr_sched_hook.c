/*
 * The schedule recorder's hook mode (docs/whole-inference.md, section 1):
 * loaded with LD_PRELOAD into the measured process, the library
 * interposes dlsym, and through it the driver's entry points, so that
 * recording needs no CUPTI.
 *
 * dlsym (this file's) calls the real one (glibc's, found with
 * dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"), else the older versions) and
 * returns what it returns, unless the name begins with "cu" and is one of
 * the recorded calls (kr_sched.c's calls[], with a _ptsz or _ptds suffix
 * or none) or cuGetProcAddress / cuGetProcAddress_v2: then it returns
 * that (call, variant)'s wrapper below, which keeps the real pointer.
 * The wrappers of cuGetProcAddress do the same to what the driver
 * returns: CUDA's runtime (libcudart, the static one in cuBLAS), NCCL
 * and Triton obtain the driver's entry points through cuGetProcAddress,
 * or through dlsym on libcuda. A lookup through cuGetProcAddress names
 * the call without its version (cuMemcpyHtoD: the table's
 * cuMemcpyHtoD_v2) and asks for the per-thread default stream's variant
 * with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM. It is wrapped when
 * the driver returns the same function as for cudaVersion 12000, the
 * signatures the wrappers take (the call's ABI unchanged since: libcudart
 * asks for cuLaunchKernel at 4000, the version that introduced it). For a
 * later version, another function is the call's later ABI: wrapped as the
 * table's name_v2 where it has one (cuCtxSynchronize asked for 13000 is
 * cuCtxSynchronize_v2), else passed through. For an earlier version,
 * another function is an older ABI, of another signature: passed through
 * unwrapped. Both are counted in kr_sched_stats.
 * A wrapper holds one real definition: a lookup that resolves the same
 * call (one name, one ABI) to another function gets the wrapper too,
 * which calls the first; such lookups are counted.
 *
 * A wrapper, disarmed, loads the armed flag (relaxed) and tail-calls the
 * real function. Armed, it lays its arguments out as the call's
 * parameter struct (the layout CUPTI hands kr_sched.c's decode), records
 * the entry (kr_enter: the arming thread's calls alone; others counted),
 * calls the real function, and records the exit and, for a query, its
 * result (kr_leave). No lock, no allocation, no system call.
 *
 * dlsym(RTLD_NEXT, name) from another library is answered as the real
 * dlsym(RTLD_NEXT, name) called from this one: the first definition
 * after this library. A second interposer of the same symbol preloaded
 * after kreplay's library (kreplay's comes first in LD_PRELOAD) so gets
 * its own definition back, not the next one's.
 *
 * Every call takes integer or pointer arguments alone; cuCtxSynchronize
 * is wrapped as taking one pointer, so that cuCtxSynchronize_v2's context
 * passes through too (an extra argument register is ignored by a
 * function of none).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kr_sched.h"
#include "kr_sched_calls.h"

#define KR_EXPORT __attribute__((visibility("default")))

typedef void *(*dlsym_fn)(void *, const char *);
typedef unsigned long long u64;

/* slot holds one (call, variant)'s real definition and decoder. */
typedef struct {
	_Atomic(void *) real;
	decoder d;
} slot;

/* KR_WRAPPER defines variant v's wrapper of fn (v 1: _ptsz/_ptds). */
#define KR_WRAPPER(fn, v, n, ...)                                                                          \
	static kr_CUresult w_##fn##v(KR_DECL##n(__VA_ARGS__)) {                                            \
		kr_CUresult (*real)(__VA_ARGS__) =                                                         \
		    (kr_CUresult(*)(__VA_ARGS__))atomic_load_explicit(&s_##fn[v].real, memory_order_relaxed); \
		if (!atomic_load_explicit(&kr_armed, memory_order_relaxed)) return real(KR_ARGS##n);       \
		struct {                                                                                   \
			KR_FLD##n(__VA_ARGS__)                                                             \
		} p = {KR_ARGS##n};                                                                        \
		uint64_t i = kr_enter(&s_##fn[v].d, &p);                                                  \
		kr_CUresult r = real(KR_ARGS##n);                                                          \
		kr_leave(i, r);                                                                            \
		return r;                                                                                  \
	}
#define KR_HOOK(fn, n, ...)   \
	static slot s_##fn[2]; \
	KR_WRAPPER(fn, 0, n, __VA_ARGS__) KR_WRAPPER(fn, 1, n, __VA_ARGS__)
KR_CALLS(KR_HOOK)

/* hooks is the table of the wrappers, by the call's name. */
#define KR_ENTRY(fn, n, ...) {#fn, s_##fn, {(void *)w_##fn##0, (void *)w_##fn##1}},
static const struct {
	const char *name;
	slot *s;
	void *w[2];
} hooks[] = {KR_CALLS(KR_ENTRY)};
#define KR_NHOOKS (sizeof hooks / sizeof hooks[0])

/* fill_decoders fills every slot's decoder at load; wrap fills one
 * looked up earlier (by another library's constructor). */
__attribute__((constructor)) static void fill_decoders(void) {
	for (size_t i = 0; i < KR_NHOOKS; i++)
		for (int v = 0; v < 2; v++)
			if (kr_decode_name(hooks[i].name, &hooks[i].s[v].d)) hooks[i].s[v].d.ptsz = (uint8_t)v;
}

/* ---- cuGetProcAddress ---- */
#define KR_PTDS_FLAG 2 /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
#define KR_MIN_VERSION 12000

typedef kr_CUresult (*gpa_fn)(const char *, void **, int, u64);
typedef kr_CUresult (*gpa2_fn)(const char *, void **, int, u64, int *);
static _Atomic(void *) real_gpa, real_gpa2;
static _Atomic(dlsym_fn) real_dlsym_p;
static _Atomic(void *) any_real; /* a wrapped definition: where the driver is */

static void *from_proc(const char *sym, void *p, int version, u64 flags);

/* gpa and gpa2 wrap cuGetProcAddress and cuGetProcAddress_v2: what the
 * driver returns goes through from_proc. */
static kr_CUresult gpa(const char *sym, void **pfn, int version, u64 flags) {
	kr_CUresult r = ((gpa_fn)atomic_load_explicit(&real_gpa, memory_order_relaxed))(sym, pfn, version, flags);
	if (r == KR_SUCCESS && pfn && *pfn) *pfn = from_proc(sym, *pfn, version, flags);
	return r;
}

static kr_CUresult gpa2(const char *sym, void **pfn, int version, u64 flags, int *status) {
	kr_CUresult r = ((gpa2_fn)atomic_load_explicit(&real_gpa2, memory_order_relaxed))(sym, pfn, version, flags, status);
	if (r == KR_SUCCESS && pfn && *pfn) *pfn = from_proc(sym, *pfn, version, flags);
	return r;
}

/* install returns wrapper w holding real definition p in *real. When
 * *real holds another definition already, w still serves the lookup,
 * calling the first (counted): both are the driver's function of one
 * name and one ABI (the exported symbol and the one cuGetProcAddress
 * hands out may be different addresses), and a lookup passed through
 * would leave its caller's calls unrecorded. */
static void *install(_Atomic(void *) *real, void *p, void *w) {
	void *none = NULL;
	if (atomic_compare_exchange_strong(real, &none, p)) {
		atomic_store(&any_real, p);
		atomic_fetch_add(&kr_hooked, 1);
		return w;
	}
	if (none != p) atomic_fetch_add(&kr_hook_second, 1);
	return w;
}

/* find returns the index in hooks of name's first n bytes, or -1. */
static int find(const char *name, size_t n) {
	for (size_t i = 0; i < KR_NHOOKS; i++)
		if (!strncmp(hooks[i].name, name, n) && hooks[i].name[n] == 0) return (int)i;
	return -1;
}

/* find_v2 returns the index in hooks of sym's first n bytes with _v2
 * appended, or -1. */
static int find_v2(const char *sym, size_t n) {
	char v2[64];
	if (n >= 60) return -1;
	memcpy(v2, sym, n);
	memcpy(v2 + n, "_v2", 4);
	return find(v2, n + 3);
}

/* wrap returns the wrapper of hooks[i]'s variant v holding p. */
static void *wrap(int i, int v, void *p) {
	slot *s = &hooks[i].s[v];
	if (!s->d.op) return p; /* no decoder (fill_decoders): not recorded */
	return install(&s->real, p, hooks[i].w[v]);
}

/* current returns the driver's definition of sym for cudaVersion 12000
 * with flags, the ABI the wrappers take; NULL when it has none. */
static void *current(const char *sym, u64 flags) {
	void *q = NULL;
	gpa2_fn g2 = (gpa2_fn)atomic_load(&real_gpa2);
	gpa_fn g = (gpa_fn)atomic_load(&real_gpa);
	if (g2) return g2(sym, &q, KR_MIN_VERSION, flags, NULL) == KR_SUCCESS ? q : NULL;
	if (g) return g(sym, &q, KR_MIN_VERSION, flags) == KR_SUCCESS ? q : NULL;
	return NULL;
}

/* from_proc is what a cuGetProcAddress lookup of sym returns: a wrapper
 * of the call sym names (the table's name, or its _v2) holding p. */
static void *from_proc(const char *sym, void *p, int version, u64 flags) {
	if (sym[0] != 'c' || sym[1] != 'u') return p;
	int getproc = !strcmp(sym, "cuGetProcAddress") || !strcmp(sym, "cuGetProcAddress_v2");
	size_t n = strlen(sym);
	int i = getproc ? -1 : find(sym, n);
	if (i < 0 && !getproc) i = find_v2(sym, n);
	if (i < 0 && !getproc) return p;
	if (getproc) /* 12.0 on, or asked as such: the _v2 signature; 11.3 to 12.0: the first */
		return version >= KR_MIN_VERSION || p == current(sym, flags) ? install(&real_gpa2, p, (void *)gpa2)
		                                                             : install(&real_gpa, p, (void *)gpa);
	if (p != current(sym, flags)) { /* another ABI than 12.0's */
		int j = version > KR_MIN_VERSION ? find_v2(sym, n) : -1;
		if (j < 0) {
			atomic_fetch_add(&kr_hook_old, 1);
			return p;
		}
		i = j; /* a later ABI the table names _v2 (cuCtxSynchronize in 13.0) */
	}
	return wrap(i, (flags & KR_PTDS_FLAG) != 0, p);
}

/* from_dlsym is what a dlsym lookup of name returns: the wrapper of the
 * call name names, exactly (with a _ptsz or _ptds suffix: the variant),
 * holding p. */
static void *from_dlsym(const char *name, void *p) {
	if (!strcmp(name, "cuGetProcAddress")) return install(&real_gpa, p, (void *)gpa);
	if (!strcmp(name, "cuGetProcAddress_v2")) return install(&real_gpa2, p, (void *)gpa2);
	size_t n = strlen(name);
	int v = n > 5 && (!strcmp(name + n - 5, "_ptsz") || !strcmp(name + n - 5, "_ptds"));
	int i = find(name, v ? n - 5 : n);
	return i < 0 ? p : wrap(i, v, p);
}

/* ---- dlsym ---- */

static dlsym_fn real_dlsym(void) {
	dlsym_fn f = atomic_load_explicit(&real_dlsym_p, memory_order_relaxed);
	if (f) return f;
	static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", NULL};
	for (int i = 0; versions[i] && !f; i++) f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
	if (!f) {
		fputs("kreplay schedule recorder: cannot find the real dlsym (dlvsym)\n", stderr);
		return NULL;
	}
	atomic_store(&real_dlsym_p, f);
	return f;
}

/* dlsym is the interposer (see the top of the file). */
KR_EXPORT void *dlsym(void *handle, const char *name) {
	dlsym_fn f = real_dlsym();
	if (!f) return NULL;
	void *p = f(handle, name);
	if (!p || name[0] != 'c' || name[1] != 'u') return p;
	return from_dlsym(name, p);
}

/* kr_hook_driver_sym: kr_sched.h. */
void *kr_hook_driver_sym(const char *name) {
	void *p = atomic_load(&any_real);
	Dl_info info;
	if (!p || !dladdr(p, &info) || !info.dli_fname) return NULL;
	void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h) return NULL;
	dlsym_fn f = real_dlsym();
	void *s = f ? f(h, name) : NULL;
	dlclose(h);
	return s;
}
