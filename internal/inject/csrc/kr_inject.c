/*
 * kreplay's kernel-binary recorder: a CUDA injection library.
 *
 * Loaded by the CUDA driver at cuInit through CUDA_INJECTION64_PATH, it
 * subscribes to CUPTI's callbacks and records, into the directory named by
 * KREPLAY_INJECT_DIR:
 *   modules/<hash>.cubin  every module image the process loads (CUPTI's
 *                         module-loaded callback), deduplicated by content;
 *   snaps/<hash>.bin      the first bytes of each buffer a recorded launch
 *                         points into, as they were when the kernel started;
 *   events-PID.jsonl      one JSON object per line: "M" a module loaded,
 *                         "K" a unique launch (function, shape, parameter
 *                         buffer, pointers), "L" a launch while armed (its
 *                         key and the values of its pointers), "D" the end.
 * Launches are recorded only between kr_inject_arm(1) and kr_inject_arm(0),
 * which the runner calls around one inference (ctypes); the kernels a CUDA
 * graph runs are kept when captured and recorded at the graph's armed
 * launches (kr_inject_graph.c). kr_inject_detach()
 * then unsubscribes from CUPTI, so that the profiler can subscribe in the
 * same process and trace the very kernels recorded. Every process that
 * initializes CUDA with the variable set (PyTorch's compile workers too)
 * writes its own events file; module and snapshot files are shared by
 * content hash and written through a per-process temporary name.
 *
 * No CUDA or CUPTI header is needed: the few types are declared in
 * kr_inject_types.h, from cuda.h, cupti_callbacks.h and
 * generated_cuda_meta.h of CUDA 13.0 (kreplay's tests compile a check of
 * them against the real headers where those are installed). libcupti and
 * libcuda are opened at run time.
 *
 * Build: cc -O2 -shared -fPIC -o libkr_inject.so kr_inject.c kr_inject_graph.c -ldl -lpthread
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kr_inject.h"
#include "kr_open.h"

/* ---- run-time loaded entry points ---- */
static kr_CUresult (*p_cuFuncGetName)(const char **, kr_CUfunction);
static kr_CUresult (*p_cuKernelGetFunction)(kr_CUfunction *, kr_CUkernel);
static kr_CUresult (*p_cuFuncGetParamInfo)(kr_CUfunction, size_t, size_t *, size_t *);
static kr_CUresult (*p_cuFuncGetAttribute)(int *, int, kr_CUfunction);
static kr_CUresult (*p_cuFuncGetModule)(kr_CUmodule *, kr_CUfunction);
static kr_CUresult (*p_cuKernelGetLibrary)(kr_CUlibrary *, kr_CUkernel);
static kr_CUresult (*p_cuPointerGetAttribute)(void *, int, kr_CUdeviceptr);
static kr_CUresult (*p_cuStreamIsCapturing)(kr_CUstream, int *);
static kr_CUresult (*p_cuCtxSynchronize)(void);
static kr_CUresult (*p_cuMemcpyDtoH)(void *, kr_CUdeviceptr, size_t);
static kr_CUptiResult (*p_cuptiSubscribe)(kr_CUpti_SubscriberHandle *, kr_CUpti_CallbackFunc, void *);
static kr_CUptiResult (*p_cuptiEnableDomain)(uint32_t, kr_CUpti_SubscriberHandle, int);
static kr_CUptiResult (*p_cuptiEnableCallback)(uint32_t, kr_CUpti_SubscriberHandle, int, uint32_t);
static kr_CUptiResult (*p_cuptiGetCallbackName)(int, uint32_t, const char **);
static kr_CUptiResult (*p_cuptiUnsubscribe)(kr_CUpti_SubscriberHandle);
static kr_CUptiResult (*p_cuptiFinalize)(void);

/* ---- state ---- */
#define KR_SET_BITS 16

KR_HIDDEN pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
KR_HIDDEN FILE *events;
static char outdir[3072];
static int armed;
static int detached;
static kr_CUpti_SubscriberHandle subscriber;
KR_HIDDEN uint64_t seq;
static size_t snapcap = 256 << 10;
static size_t runs_read; /* bytes read to extend snapshots of runs (keep_snap), under mu */
static uint64_t *seen; /* open-addressing set of hashes (modules, keys, snaps) */
static size_t seen_cap;
static size_t seen_n;
static __thread int busy;
KR_HIDDEN int failed;
/* The module images loaded on this thread since the load call (or launch)
 * that is under way began: how many, and the last one's hash. */
static __thread int loaded_n;
static __thread uint64_t loaded_hash;
/* handles maps a module or library handle to the hash of its image: an
 * open-addressing table of pairs, keys 0 when empty. */
static struct {
	void *h;
	uint64_t hash;
} *handles;
static size_t handles_cap, handles_n;

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}
#define FNV0 14695981039346656037ULL

/* seen_add returns 1 if h was new. Call with mu held. */
KR_HIDDEN int seen_add(uint64_t h) {
	if (h == 0) h = 1;
	if (seen_n * 2 >= seen_cap) {
		size_t ncap = seen_cap ? seen_cap * 2 : (1u << KR_SET_BITS);
		uint64_t *n = calloc(ncap, sizeof *n);
		if (!n) return 0;
		for (size_t i = 0; i < seen_cap; i++) {
			if (!seen[i]) continue;
			size_t j = seen[i] & (ncap - 1);
			while (n[j]) j = (j + 1) & (ncap - 1);
			n[j] = seen[i];
		}
		free(seen);
		seen = n;
		seen_cap = ncap;
	}
	size_t j = h & (seen_cap - 1);
	while (seen[j]) {
		if (seen[j] == h) return 0;
		j = (j + 1) & (seen_cap - 1);
	}
	seen[j] = h;
	seen_n++;
	return 1;
}

/* handles_put maps h to hash. Call with mu held. */
static void handles_put(void *h, uint64_t hash) {
	if (!h) return;
	if (handles_n * 2 >= handles_cap) {
		size_t ncap = handles_cap ? handles_cap * 2 : 1024;
		__typeof__(handles) n = calloc(ncap, sizeof *n);
		if (!n) return;
		for (size_t i = 0; i < handles_cap; i++) {
			if (!handles[i].h) continue;
			size_t j = ((uintptr_t)handles[i].h >> 4) & (ncap - 1);
			while (n[j].h) j = (j + 1) & (ncap - 1);
			n[j] = handles[i];
		}
		free(handles);
		handles = n;
		handles_cap = ncap;
	}
	size_t j = ((uintptr_t)h >> 4) & (handles_cap - 1);
	while (handles[j].h && handles[j].h != h) j = (j + 1) & (handles_cap - 1);
	if (!handles[j].h) handles_n++;
	handles[j].h = h;
	handles[j].hash = hash; /* a handle reused after an unload is remapped */
}

/* handles_get returns h's image hash, 0 if unknown. Call with mu held. */
static uint64_t handles_get(void *h) {
	if (!h || !handles_cap) return 0;
	size_t j = ((uintptr_t)h >> 4) & (handles_cap - 1);
	while (handles[j].h) {
		if (handles[j].h == h) return handles[j].hash;
		j = (j + 1) & (handles_cap - 1);
	}
	return 0;
}

static void write_file(const char *sub, uint64_t h, const char *ext, const void *p, size_t n) {
	char path[4096];
	snprintf(path, sizeof path, "%s/%s/%016llx.%s", outdir, sub, (unsigned long long)h, ext);
	char tmp[4160];
	snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		failed = 1;
		return;
	}
	size_t w = fwrite(p, 1, n, f);
	if (fclose(f) != 0 || w != n || rename(tmp, path) != 0) failed = 1;
}

static void hex(FILE *f, const unsigned char *p, size_t n) {
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		fputc(d[p[i] >> 4], f);
		fputc(d[p[i] & 15], f);
	}
}

/* ---- module images ---- */
static void on_module(const kr_ModuleResourceData *m) {
	if (!m || !m->pCubin || m->cubinSize == 0) return;
	uint64_t h = fnv(FNV0, m->pCubin, m->cubinSize);
	loaded_n++;
	loaded_hash = h;
	pthread_mutex_lock(&mu);
	if (seen_add(h ^ 0x6d6f64756c65ULL)) write_file("modules", h, "cubin", m->pCubin, m->cubinSize);
	fprintf(events, "{\"t\":\"M\",\"seq\":%llu,\"id\":%u,\"hash\":\"%016llx\",\"size\":%zu}\n",
	        (unsigned long long)++seq, m->moduleId, (unsigned long long)h, m->cubinSize);
	pthread_mutex_unlock(&mu);
}

/* ---- launches ---- */
/* module_of returns the hash of the image fn was loaded from (f as the
 * launch passed it: fn itself or the kernel fn was resolved from), or 0
 * when the recorder did not see that image loaded. The handle is mapped
 * at the end of the load call that returned it (on_load) or, for a module
 * the driver loads lazily, here, when loading it was this thread's doing
 * since the launch's callback began (resolve may load it). */
static uint64_t module_of(kr_CUfunction fn, kr_CUfunction f) {
	kr_CUmodule m = NULL;
	kr_CUlibrary lib = NULL;
	if (p_cuFuncGetModule && p_cuFuncGetModule(&m, fn) != 0) m = NULL;
	if (p_cuKernelGetLibrary && fn != f && p_cuKernelGetLibrary(&lib, (kr_CUkernel)f) != 0) lib = NULL;
	pthread_mutex_lock(&mu);
	uint64_t h = handles_get(m);
	if (!h) h = handles_get(lib);
	if (!h && m && loaded_n == 1) {
		h = loaded_hash;
		handles_put(m, h);
	}
	pthread_mutex_unlock(&mu);
	return h;
}

static kr_CUfunction resolve(kr_CUfunction f, const char **name) {
	*name = NULL;
	if (p_cuFuncGetName(name, f) == 0 && *name) return f;
	kr_CUfunction g = NULL;
	if (p_cuKernelGetFunction && p_cuKernelGetFunction(&g, (kr_CUkernel)f) == 0 && g &&
	    p_cuFuncGetName(name, g) == 0 && *name)
		return g;
	*name = NULL;
	return NULL;
}

/* params_blob copies the parameter buffer; returns its size or 0. */
static size_t params_blob(const launch *l, kr_CUfunction fn, unsigned char *blob, size_t *offs, size_t *sizes, int *np) {
	size_t total = 0;
	*np = 0;
	for (int i = 0; i < KR_MAX_PARAMS; i++) {
		size_t off, sz;
		if (p_cuFuncGetParamInfo(fn, i, &off, &sz) != 0) break;
		if (off + sz > KR_MAX_BLOB) return 0;
		offs[i] = off;
		sizes[i] = sz;
		*np = i + 1;
		if (off + sz > total) total = off + sz;
	}
	memset(blob, 0, total);
	if (l->params) {
		for (int i = 0; i < *np; i++)
			if (l->params[i]) memcpy(blob + offs[i], l->params[i], sizes[i]);
		return total;
	}
	if (l->extra) {
		void *buf = NULL;
		size_t bsz = 0;
		for (int i = 0; i < 16 && l->extra[i] != KR_LAUNCH_PARAM_END; i += 2) {
			if (l->extra[i] == KR_LAUNCH_PARAM_BUFFER_POINTER) buf = l->extra[i + 1];
			else if (l->extra[i] == KR_LAUNCH_PARAM_BUFFER_SIZE) bsz = *(size_t *)l->extra[i + 1];
		}
		if (!buf) return 0;
		if (bsz > total) total = bsz;
		if (total > KR_MAX_BLOB) return 0;
		memcpy(blob, buf, bsz < total ? bsz : total);
		return total;
	}
	return *np == 0 ? 0 : total;
}

/* device_range tells whether v points into device memory, and where that
 * allocation starts and how long it is. */
static int device_range(kr_CUdeviceptr v, kr_CUdeviceptr *base, size_t *range) {
	unsigned int mt = 0;
	if (p_cuPointerGetAttribute(&mt, KR_POINTER_ATTRIBUTE_MEMORY_TYPE, v) != 0 || mt != KR_MEMORYTYPE_DEVICE) return 0;
	if (p_cuPointerGetAttribute(base, KR_POINTER_ATTRIBUTE_RANGE_START_ADDR, v) != 0) return 0;
	return p_cuPointerGetAttribute(range, KR_POINTER_ATTRIBUTE_RANGE_SIZE, v) == 0;
}

/* scan finds the device pointers in the parameter buffer. */
static int scan(const unsigned char *blob, const size_t *offs, const size_t *sizes, int np, ptrinfo *out) {
	int n = 0;
	for (int i = 0; i < np && n < KR_MAX_PTRS; i++) {
		size_t a = (offs[i] + 7) & ~(size_t)7;
		for (size_t o = a; o + 8 <= offs[i] + sizes[i] && n < KR_MAX_PTRS; o += 8) {
			kr_CUdeviceptr v;
			memcpy(&v, blob + o, 8);
			if (v < 0x10000) continue;
			kr_CUdeviceptr base = 0;
			size_t range = 0;
			if (!device_range(v, &base, &range)) continue;
			ptrinfo *p = &out[n];
			p->poff = o;
			p->value = v;
			p->base = base;
			p->range = range;
			p->group = n;
			p->snap = 0;
			p->snaplen = 0;
			for (int j = 0; j < n; j++)
				if (out[j].base == base) {
					p->group = out[j].group;
					break;
				}
			n++;
		}
	}
	return n;
}

/* key hashes what makes a launch unique: function, shape, attributes and
 * parameters, with each pointer replaced by its allocation group and
 * whether it is the group's first pointer itself (in place). Where in an
 * allocation a tensor lies is left out: the caching allocator places the
 * tensors of each decode step elsewhere, which made nearly every call of a
 * decode unique (9,724 of 22,904), each with its snapshot. */
static uint64_t key(const char *name, const launch *l, const unsigned char *blob, size_t nb, const ptrinfo *ptrs, int nptr) {
	unsigned char tmp[KR_MAX_BLOB];
	memcpy(tmp, blob, nb);
	for (int i = 0; i < nptr; i++) {
		int64_t rel[2] = {ptrs[i].group, ptrs[i].value == ptrs[ptrs[i].group].value};
		uint64_t h = fnv(FNV0, rel, sizeof rel);
		memcpy(tmp + ptrs[i].poff, &h, 8);
	}
	uint64_t h = fnv(FNV0, name, strlen(name));
	h = fnv(h, l->grid, sizeof l->grid);
	h = fnv(h, l->block, sizeof l->block);
	h = fnv(h, &l->smem, sizeof l->smem);
	for (unsigned i = 0; i < l->nattrs; i++) h = fnv(h, &l->attrs[i], sizeof l->attrs[i]);
	if (l->module) h = fnv(h, &l->module, sizeof l->module);
	return fnv(h, tmp, nb);
}

/* find_inner adds the device pointers stored in buf (n bytes read at
 * from, the buffer of parameter pointer in) to inner, once per address;
 * past KR_MAX_INNER it counts them in *dropped. Only aligned 8-byte words
 * that look like user-space addresses above 4 GiB are asked of the driver:
 * data words (floats, indices) almost never do. */
static int find_inner(const unsigned char *buf, size_t n, kr_CUdeviceptr from, int in, const ptrinfo *ptrs, innerptr *inner,
                      int ninner, int *dropped) {
	for (size_t o = (8 - from % 8) % 8; o + 8 <= n; o += 8) {
		uint64_t v;
		memcpy(&v, buf + o, 8);
		if (v < (1ULL << 32) || v >= (1ULL << 47) || v % 2) continue;
		kr_CUdeviceptr base = 0;
		size_t range = 0;
		if (!device_range(v, &base, &range)) continue;
		int dup = 0;
		for (int k = 0; k < ninner && !dup; k++) dup = ptrs[inner[k].in].value + inner[k].at == from + o;
		if (dup) continue;
		if (ninner == KR_MAX_INNER) {
			(*dropped)++;
			continue;
		}
		inner[ninner++] = (innerptr){.in = in, .at = o, .value = v, .base = base, .range = range};
	}
	return ninner;
}

/* window is how many of the n bytes kept at pointer i are searched for
 * pointers: its own (up to the next pointer into the same allocation, as
 * the replay fills them), at most KR_INNER_SCAN. */
static size_t window(const ptrinfo *ptrs, int nptr, int i, size_t n) {
	if (n > KR_INNER_SCAN) n = KR_INNER_SCAN;
	for (int j = 0; j < nptr; j++)
		if (ptrs[j].base == ptrs[i].base && ptrs[j].value > ptrs[i].value && ptrs[j].value - ptrs[i].value < n)
			n = ptrs[j].value - ptrs[i].value;
	return n;
}

/* mostly_runs reports whether at least half of the 8-byte words of the
 * first n bytes of buf (at most 64 KiB of them) repeat the word before. */
static int mostly_runs(const unsigned char *buf, size_t n) {
	if (n > (64 << 10)) n = 64 << 10;
	size_t words = n / 8, same = 0;
	for (size_t i = 1; i < words; i++) same += memcmp(buf + 8 * i, buf + 8 * (i - 1), 8) == 0;
	return words > 1 && 2 * same >= words;
}

/* keep_snap copies *n bytes at v (as the kernel will find them: with the
 * memsets captured before it applied, given a capture c) and writes them
 * under their hash, once; false when they could not be read. Of a buffer
 * with rest bytes past v whose first *n bytes are mostly runs, it keeps up
 * to KR_RUNS_CAP (*n grows to that), while the process has read less than
 * KR_RUNS_BUDGET for such extensions. */
static int keep_snap(unsigned char *buf, kr_CUdeviceptr v, size_t rest, size_t *n, const struct gcapture *c, size_t upto,
                     uint64_t *hash) {
	if (*n == 0 || p_cuMemcpyDtoH(buf, v, *n) != 0) return 0;
	if (c) apply_memsets(c, upto, v, buf, *n);
	unsigned char *data = buf;
	size_t m = rest < KR_RUNS_CAP ? rest : KR_RUNS_CAP;
	int extend = 0;
	if (rest > *n && snapcap < KR_RUNS_CAP && mostly_runs(buf, *n)) {
		pthread_mutex_lock(&mu);
		if (runs_read + m <= KR_RUNS_BUDGET) runs_read += m, extend = 1;
		pthread_mutex_unlock(&mu);
	}
	if (extend) {
		unsigned char *big = malloc(m);
		if (big && p_cuMemcpyDtoH(big, v, m) == 0) {
			if (c) apply_memsets(c, upto, v, big, m);
			data = big, *n = m;
		} else {
			free(big);
		}
	}
	uint64_t h = fnv(FNV0, data, *n);
	*hash = h;
	pthread_mutex_lock(&mu);
	if (seen_add(h ^ 0x736e6170ULL)) write_file("snaps", h, "bin", data, *n);
	pthread_mutex_unlock(&mu);
	if (data != buf) free(data);
	return 1;
}

/* snapshot copies the first bytes of each distinct pointer's buffer, as
 * the kernel will find them, after the work queued before it; with a
 * capture c, with what the memsets captured before its kernel upto
 * (capture order) set there applied (apply_memsets). The device pointers
 * each pointer's own bytes hold (window) go into inner, each with a
 * snapshot of its own; it returns how many, and how many did not fit in
 * *dropped. */
KR_HIDDEN int snapshot(const launch *l, ptrinfo *ptrs, int nptr, const struct gcapture *c, size_t upto, innerptr *inner,
                       int *dropped) {
	int capturing = 0, ninner = 0;
	*dropped = 0;
	if (p_cuStreamIsCapturing && p_cuStreamIsCapturing(l->stream, &capturing) == 0 && capturing) return 0;
	if (p_cuCtxSynchronize() != 0) return 0;
	unsigned char *buf = malloc(snapcap);
	if (!buf) return 0;
	for (int i = 0; i < nptr; i++) {
		int dup = 0;
		for (int j = 0; j < i; j++)
			if (ptrs[j].value == ptrs[i].value) {
				ptrs[i].snap = ptrs[j].snap;
				ptrs[i].snaplen = ptrs[j].snaplen;
				dup = 1;
				break;
			}
		if (dup) continue;
		size_t rest = ptrs[i].base + ptrs[i].range - ptrs[i].value, n = rest < snapcap ? rest : snapcap;
		if (!keep_snap(buf, ptrs[i].value, rest, &n, c, upto, &ptrs[i].snap)) continue;
		ptrs[i].snaplen = n;
		ninner = find_inner(buf, window(ptrs, nptr, i, n < snapcap ? n : snapcap), ptrs[i].value, i, ptrs, inner, ninner, dropped);
	}
	for (int i = 0; i < ninner; i++) {
		innerptr *q = &inner[i];
		for (int j = 0; j < i && !q->snap; j++)
			if (inner[j].value == q->value) q->snap = inner[j].snap, q->snaplen = inner[j].snaplen;
		if (q->snap) continue;
		size_t rest = q->base + q->range - q->value, n = rest < snapcap ? rest : snapcap;
		if (keep_snap(buf, q->value, rest, &n, c, upto, &q->snap)) q->snaplen = n;
	}
	free(buf);
	return ninner;
}

/* attributes reads a function's attributes. Driver calls are made without
 * mu held: the driver may hold its own lock while it calls on_module,
 * which takes mu. */
static fattrs attributes(kr_CUfunction fn) {
	fattrs a = {0};
	p_cuFuncGetAttribute(&a.regs, KR_FUNC_ATTRIBUTE_NUM_REGS, fn);
	p_cuFuncGetAttribute(&a.ssh, KR_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
	p_cuFuncGetAttribute(&a.local, KR_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn);
	p_cuFuncGetAttribute(&a.maxdyn, KR_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fn);
	p_cuFuncGetAttribute(&a.nonport, KR_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, fn);
	return a;
}

KR_HIDDEN void write_key(uint64_t k, const char *name, const launch *l, fattrs fa, const unsigned char *blob, size_t nb,
                         const size_t *offs, const size_t *sizes, int np, const ptrinfo *ptrs, int nptr,
                         const innerptr *inner, int ninner, int dropped) {
	int regs = fa.regs, ssh = fa.ssh, local = fa.local, maxdyn = fa.maxdyn, nonport = fa.nonport;
	fprintf(events, "{\"t\":\"K\",\"key\":\"%016llx\",\"seq\":%llu,\"api\":\"%s\",\"name\":\"%s\",", (unsigned long long)k,
	        (unsigned long long)seq, l->api, name);
	fprintf(events, "\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"smem\":%u,", l->grid[0], l->grid[1], l->grid[2], l->block[0],
	        l->block[1], l->block[2], l->smem);
	fprintf(events, "\"regs\":%d,\"static_smem\":%d,\"local\":%d,\"max_dyn_smem\":%d,\"non_portable_cluster\":%d,", regs, ssh,
	        local, maxdyn, nonport);
	if (l->module) fprintf(events, "\"module_hash\":\"%016llx\",", (unsigned long long)l->module);
	fprintf(events, "\"params\":[");
	for (int i = 0; i < np; i++) fprintf(events, "%s[%zu,%zu]", i ? "," : "", offs[i], sizes[i]);
	fprintf(events, "],\"blob\":\"");
	hex(events, blob, nb);
	fprintf(events, "\",\"attrs\":[");
	for (unsigned i = 0; i < l->nattrs; i++) {
		fprintf(events, "%s{\"id\":%d,\"value\":\"", i ? "," : "", l->attrs[i].id);
		hex(events, l->attrs[i].value, sizeof l->attrs[i].value);
		fprintf(events, "\"}");
	}
	fprintf(events, "],\"ptrs\":[");
	for (int i = 0; i < nptr; i++) {
		const ptrinfo *p = &ptrs[i];
		fprintf(events, "%s{\"off\":%zu,\"value\":%llu,\"base\":%llu,\"range\":%zu,\"group\":%d", i ? "," : "", p->poff,
		        (unsigned long long)p->value, (unsigned long long)p->base, p->range, p->group);
		if (p->snap) fprintf(events, ",\"snap\":\"%016llx\",\"snap_len\":%zu", (unsigned long long)p->snap, p->snaplen);
		fprintf(events, "}");
	}
	fprintf(events, "]");
	if (ninner > 0) {
		fprintf(events, ",\"inner\":[");
		for (int i = 0; i < ninner; i++) {
			const innerptr *q = &inner[i];
			fprintf(events, "%s{\"in\":%d,\"at\":%zu,\"value\":%llu,\"base\":%llu,\"range\":%zu", i ? "," : "", q->in, q->at,
			        (unsigned long long)q->value, (unsigned long long)q->base, q->range);
			if (q->snap) fprintf(events, ",\"snap\":\"%016llx\",\"snap_len\":%zu", (unsigned long long)q->snap, q->snaplen);
			fprintf(events, "}");
		}
		fprintf(events, "]");
	}
	if (dropped > 0) fprintf(events, ",\"inner_dropped\":%d", dropped);
	fprintf(events, "}\n");
}

/* on_launch records a launch: its unique record (K) the first time its
 * key is seen and, armed, the call (L); a launch into a stream under
 * capture (c) is kept for the graph's launches instead. */
static void on_launch(launch *l, struct gcapture *c) {
	const char *name;
	loaded_n = 0;
	kr_CUfunction fn = resolve(l->f, &name);
	if (!fn) {
		pthread_mutex_lock(&mu);
		fprintf(events, "{\"t\":\"L\",\"seq\":%llu,\"key\":\"\",\"stream\":%llu,\"error\":\"function has no name\"}\n",
		        (unsigned long long)++seq, (unsigned long long)(uintptr_t)l->stream);
		pthread_mutex_unlock(&mu);
		return;
	}
	static __thread unsigned char blob[KR_MAX_BLOB];
	static __thread size_t offs[KR_MAX_PARAMS], sizes[KR_MAX_PARAMS];
	static __thread ptrinfo ptrs[KR_MAX_PTRS];
	l->module = module_of(fn, l->f);
	int np = 0;
	size_t nb = params_blob(l, fn, blob, offs, sizes, &np);
	int nptr = nb ? scan(blob, offs, sizes, np, ptrs) : 0;
	uint64_t k = key(name, l, blob, nb, ptrs, nptr);
	pthread_mutex_lock(&mu);
	int fresh = seen_add(k);
	pthread_mutex_unlock(&mu);
	fattrs fa = {0};
	if (fresh || c) fa = attributes(fn);
	static __thread innerptr inner[KR_MAX_INNER];
	int ninner = 0, dropped = 0;
	if (fresh && !c) ninner = snapshot(l, ptrs, nptr, NULL, 0, inner, &dropped); /* under capture, graph_launch takes them */
	pthread_mutex_lock(&mu);
	++seq;
	if (fresh) write_key(k, name, l, fa, blob, nb, offs, sizes, np, ptrs, nptr, inner, ninner, dropped);
	if (c && c != NO_ROOM) {
		keep(c, k, name, l, fa, blob, nb, offs, sizes, np, ptrs, nptr);
	} else if (c) {
		fprintf(events, "{\"t\":\"E\",\"error\":\"no memory to keep a captured launch\"}\n");
	} else {
		fprintf(events, "{\"t\":\"L\",\"seq\":%llu,\"key\":\"%016llx\",\"stream\":%llu,\"p\":[", (unsigned long long)seq,
		        (unsigned long long)k, (unsigned long long)(uintptr_t)l->stream);
		for (int i = 0; i < nptr; i++) fprintf(events, "%s%llu", i ? "," : "", (unsigned long long)ptrs[i].value);
		fprintf(events, "]}\n");
	}
	pthread_mutex_unlock(&mu);
}

static void on_driver(const kr_CallbackData *cd) {
	if (cd->callbackSite != KR_API_ENTER || !cd->functionName) return;
	const char *fn = cd->functionName;
	if (strncmp(fn, "cuGraphLaunch", 13) == 0) {
		if (armed && cd->functionParams) {
			const kr_cuGraphLaunch_params *p = cd->functionParams;
			graph_launch(p->exec, p->stream);
		}
		return;
	}
	if (strncmp(fn, "cuMemsetD", 9) == 0) {
		on_memset(fn, cd);
		return;
	}
	if (strncmp(fn, "cuLaunch", 8) != 0) return;
	launch l = {0};
	l.api = fn;
	if (!strcmp(fn, "cuLaunchKernel") || !strcmp(fn, "cuLaunchKernel_ptsz") || !strcmp(fn, "cuLaunchCooperativeKernel") ||
	    !strcmp(fn, "cuLaunchCooperativeKernel_ptsz")) {
		const kr_cuLaunchKernel_params *p = cd->functionParams;
		int coop = strstr(fn, "Cooperative") != NULL;
		l.f = p->f;
		l.grid[0] = p->gridDimX, l.grid[1] = p->gridDimY, l.grid[2] = p->gridDimZ;
		l.block[0] = p->blockDimX, l.block[1] = p->blockDimY, l.block[2] = p->blockDimZ;
		l.smem = p->sharedMemBytes;
		l.stream = p->hStream;
		l.params = p->kernelParams;
		l.extra = coop ? NULL : p->extra;
	} else if (!strcmp(fn, "cuLaunchKernelEx") || !strcmp(fn, "cuLaunchKernelEx_ptsz")) {
		const kr_cuLaunchKernelEx_params *p = cd->functionParams;
		const kr_CUlaunchConfig *c = p->config;
		l.f = p->f;
		l.grid[0] = c->gridDimX, l.grid[1] = c->gridDimY, l.grid[2] = c->gridDimZ;
		l.block[0] = c->blockDimX, l.block[1] = c->blockDimY, l.block[2] = c->blockDimZ;
		l.smem = c->sharedMemBytes;
		l.stream = c->hStream;
		l.params = p->kernelParams;
		l.extra = p->extra;
		l.attrs = c->attrs;
		l.nattrs = c->numAttrs;
	} else {
		pthread_mutex_lock(&mu);
		if (armed)
			fprintf(events, "{\"t\":\"L\",\"seq\":%llu,\"key\":\"\",\"error\":\"%s is not recorded\"}\n",
			        (unsigned long long)++seq, fn);
		pthread_mutex_unlock(&mu);
		return;
	}
	/* A launch into a stream under capture runs in the graph's launches,
	 * armed or not (torch.compile's CUDA graphs are captured while it
	 * warms up); otherwise only armed launches are recorded. */
	struct gcapture *c = capture_of(l.stream);
	if (!armed && !c) return;
	on_launch(&l, c);
}

/* on_load maps the handle a module or library load returned to the image
 * loaded during the call, when exactly one was, and forgets what an
 * earlier handle of the same value was mapped to otherwise (a lazy load
 * loads later: then cuModuleGetFunction or the launch maps it). An unload
 * forgets its handle. It runs armed or not: most images load before the
 * recorded inference. */
static void on_load(const kr_CallbackData *cd) {
	const char *fn = cd->functionName;
	if (cd->callbackSite == KR_API_ENTER) {
		loaded_n = 0;
		if (strstr(fn, "Unload") && cd->functionParams) {
			pthread_mutex_lock(&mu);
			handles_put(((const kr_unload_params *)cd->functionParams)->handle, 0);
			pthread_mutex_unlock(&mu);
		}
		return;
	}
	if (cd->callbackSite != KR_API_EXIT || !cd->functionParams || strstr(fn, "Unload")) return;
	if (cd->functionReturnValue && *(const kr_CUresult *)cd->functionReturnValue != 0) return;
	void *h = NULL;
	if (!strcmp(fn, "cuModuleGetFunction")) {
		if (loaded_n != 1) return; /* nothing loaded here: keep what is known */
		h = ((const kr_cuModuleGetFunction_params *)cd->functionParams)->hmod;
	} else {
		void **out = ((const kr_load_params *)cd->functionParams)->handle;
		h = out ? *out : NULL;
	}
	pthread_mutex_lock(&mu);
	handles_put(h, loaded_n == 1 ? loaded_hash : 0);
	pthread_mutex_unlock(&mu);
}

static int is_load(const char *fn) {
	return fn && (strncmp(fn, "cuModuleLoad", 12) == 0 || strncmp(fn, "cuLibraryLoad", 13) == 0 ||
	              strcmp(fn, "cuModuleGetFunction") == 0 || strcmp(fn, "cuModuleUnload") == 0 ||
	              strcmp(fn, "cuLibraryUnload") == 0);
}

static void callback(void *ud, int domain, uint32_t cbid, const void *data) {
	(void)ud;
	if (detached) return;
	if (domain == KR_CB_DOMAIN_RESOURCE) {
		if (cbid == KR_CBID_RESOURCE_MODULE_LOADED) {
			const kr_ResourceData *rd = data;
			on_module(rd->resourceDescriptor);
		}
		return;
	}
	if (domain != KR_CB_DOMAIN_DRIVER_API || busy) return;
	const char *name = ((const kr_CallbackData *)data)->functionName;
	if (is_load(name)) {
		on_load(data);
		return;
	}
	if (name && strncmp(name, "cuGraphInstantiate", 18) == 0) {
		on_instantiate(data);
		return;
	}
	busy = 1;
	on_driver(data);
	busy = 0;
}

/* kr_inject_arm turns launch recording on (1) or off (0); it returns -1
 * when CUDA never initialized the recorder (no CUDA_INJECTION64_PATH). */
int kr_inject_arm(int on) {
	if (!events) return -1;
	pthread_mutex_lock(&mu);
	armed = on;
	fprintf(events, "{\"t\":\"A\",\"seq\":%llu,\"on\":%d}\n", (unsigned long long)++seq, on);
	fflush(events);
	pthread_mutex_unlock(&mu);
	return 0;
}

/* kr_inject_flush flushes events.jsonl; it returns non-zero if any write
 * failed since the start, or the recorder was never initialized. */
int kr_inject_flush(void) {
	if (!events) return -1;
	pthread_mutex_lock(&mu);
	int bad = fflush(events) != 0 || failed;
	pthread_mutex_unlock(&mu);
	return bad;
}

/* kr_inject_detach ends the recording: it disarms, flushes,
 * unsubscribes from CUPTI and detaches CUPTI from the process, so that
 * the process runs as it would without the recorder and another CUPTI
 * client (the PyTorch profiler) can attach afterwards. It returns non-zero
 * if the recorder was never initialized, a write failed, or CUPTI refused
 * to let go. */
int kr_inject_detach(void) {
	if (!events) return -1;
	pthread_mutex_lock(&mu);
	armed = 0;
	detached = 1;
	fprintf(events, "{\"t\":\"D\",\"seq\":%llu}\n", (unsigned long long)++seq);
	int bad = fflush(events) != 0 || failed;
	pthread_mutex_unlock(&mu);
	if (p_cuptiUnsubscribe && subscriber && p_cuptiUnsubscribe(subscriber) != 0) bad = 1;
	subscriber = NULL;
	/* Then CUPTI itself lets go of the process (cuptiFinalize, after a
	 * synchronize, as its documentation asks of a call outside a
	 * callback). Only unsubscribed, CUPTI stays attached and slows every
	 * launch: the measured run of an FP8 prefill took a median 23.7 ms
	 * per inference against 21.6 ms finalized or never recorded (H100,
	 * 2026-11-26). KREPLAY_INJECT_FINALIZE=0 keeps it attached. */
	const char *fin = getenv("KREPLAY_INJECT_FINALIZE");
	if (!bad && !(fin && !strcmp(fin, "0")) && p_cuptiFinalize) {
		if (p_cuCtxSynchronize() != 0 || p_cuptiFinalize() != 0) bad = 1;
	}
	return bad;
}

static int fail(const char *msg) {
	fprintf(stderr, "kreplay inject: %s\n", msg);
	if (events) {
		fprintf(events, "{\"t\":\"E\",\"error\":\"%s\"}\n", msg);
		fflush(events);
	}
	return 0;
}

/* InitializeInjection is called by the CUDA driver during cuInit. */
int InitializeInjection(void) {
	const char *dir = getenv("KREPLAY_INJECT_DIR");
	if (!dir || !*dir || strlen(dir) > 3000) return fail("KREPLAY_INJECT_DIR is not set");
	snprintf(outdir, sizeof outdir, "%s", dir);
	char path[3200];
	snprintf(path, sizeof path, "%s/modules", outdir);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/snaps", outdir);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/events-%d.jsonl", outdir, (int)getpid());
	events = fopen(path, "w");
	if (!events) return fail("cannot create its events file");
	const char *cap = getenv("KREPLAY_INJECT_SNAP_BYTES");
	if (cap && *cap) snapcap = strtoull(cap, NULL, 10);
	if (snapcap == 0) snapcap = 1;
	void *cu, *cupti;
	const char *err = kr_open_cuda(&cu, &cupti);
	if (err) return fail(err);
	KR_SYM(cu, p_cuFuncGetName, "cuFuncGetName");
	KR_SYM(cu, p_cuFuncGetParamInfo, "cuFuncGetParamInfo");
	KR_SYM(cu, p_cuFuncGetAttribute, "cuFuncGetAttribute");
	KR_SYM(cu, p_cuPointerGetAttribute, "cuPointerGetAttribute");
	KR_SYM(cu, p_cuCtxSynchronize, "cuCtxSynchronize");
	KR_SYM(cu, p_cuMemcpyDtoH, "cuMemcpyDtoH_v2");
	KR_SYM(cupti, p_cuptiSubscribe, "cuptiSubscribe");
	KR_SYM(cupti, p_cuptiEnableDomain, "cuptiEnableDomain");
	*(void **)(&p_cuKernelGetFunction) = dlsym(cu, "cuKernelGetFunction");
	*(void **)(&p_cuFuncGetModule) = dlsym(cu, "cuFuncGetModule");
	*(void **)(&p_cuKernelGetLibrary) = dlsym(cu, "cuKernelGetLibrary");
	*(void **)(&p_cuStreamIsCapturing) = dlsym(cu, "cuStreamIsCapturing");
	graph_init(cu);
	KR_SYM(cupti, p_cuptiUnsubscribe, "cuptiUnsubscribe");
	*(void **)(&p_cuptiFinalize) = dlsym(cupti, "cuptiFinalize");
	kr_CUpti_SubscriberHandle sub;
	if (p_cuptiSubscribe(&sub, callback, NULL) != 0) return fail("cuptiSubscribe failed (another CUPTI client?)");
	subscriber = sub;
	if (p_cuptiEnableDomain(1, sub, KR_CB_DOMAIN_RESOURCE) != 0) return fail("cuptiEnableDomain failed");
	/* Only the launch and load calls of the driver API: a callback on
	 * every driver call slows a framework down. Without
	 * cuptiGetCallbackName, all. */
	int enabled = 0;
	*(void **)(&p_cuptiEnableCallback) = dlsym(cupti, "cuptiEnableCallback");
	*(void **)(&p_cuptiGetCallbackName) = dlsym(cupti, "cuptiGetCallbackName");
	for (uint32_t id = 1; p_cuptiEnableCallback && p_cuptiGetCallbackName && id < 4096; id++) {
		const char *name = NULL;
		if (p_cuptiGetCallbackName(KR_CB_DOMAIN_DRIVER_API, id, &name) != 0 || !name) continue;
		if (strncmp(name, "cuLaunchKernel", 14) == 0 || strncmp(name, "cuLaunchCooperativeKernel", 25) == 0 || is_load(name) ||
		    strncmp(name, "cuGraphLaunch", 13) == 0 || strncmp(name, "cuGraphInstantiate", 18) == 0 ||
		    (strncmp(name, "cuMemsetD", 9) == 0 && strstr(name, "Async") && !strstr(name, "2D")))
			enabled += p_cuptiEnableCallback(1, sub, KR_CB_DOMAIN_DRIVER_API, id) == 0;
	}
	if (enabled == 0 && p_cuptiEnableDomain(1, sub, KR_CB_DOMAIN_DRIVER_API) != 0) return fail("cuptiEnableDomain failed");
	fprintf(events, "{\"t\":\"I\",\"pid\":%d,\"snap_bytes\":%zu}\n", (int)getpid(), snapcap);
	fflush(events);
	return 1;
}
