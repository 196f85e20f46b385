/*
 * kreplay's kernel-binary recorder, its CUDA graphs (kr_inject.c has the
 * rest). A kernel launched into a stream under capture runs later, in
 * every launch of the graph executable instantiated from that capture; no
 * launch call runs it. Such launches are kept per capture as they are
 * captured, armed or not (torch.compile's reduce-overhead mode captures
 * while it warms up), with the memsets captured between them; an
 * instantiation maps its executable to its capture; each armed launch of
 * the executable writes one call (L) per captured kernel, in capture
 * order, and the first time a kernel runs so, its record (K) again with
 * its buffers snapshotted: as the graph found them at its launch, with the
 * memsets captured before the kernel applied.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr_inject.h"

static kr_CUresult (*p_cuStreamGetCaptureInfo)(kr_CUstream, int *, uint64_t *, void **, const void **, size_t *);
static kr_CUresult (*p_cuStreamGetCaptureInfo3)(kr_CUstream, int *, uint64_t *, void **, const void **, const void **,
                                                size_t *);

/* graph_init finds the driver's capture query: cuStreamGetCaptureInfo_v2
 * (CUDA 12's, still exported), else _v3. Without either, no launch is
 * seen as captured. */
KR_HIDDEN void graph_init(void *cu) {
	*(void **)(&p_cuStreamGetCaptureInfo) = dlsym(cu, "cuStreamGetCaptureInfo_v2");
	if (!p_cuStreamGetCaptureInfo) *(void **)(&p_cuStreamGetCaptureInfo3) = dlsym(cu, "cuStreamGetCaptureInfo_v3");
}

/* gkernel is a launch captured into a graph, with all that write_key
 * needs: the graph's first armed launch writes its record again, with
 * snapshots (graph_launch). */
typedef struct {
	uint64_t key;
	char *name;
	launch l;
	kr_CUlaunchAttribute *attrs;
	fattrs fa;
	unsigned char *blob;
	size_t nb, *offs, *sizes;
	int np, nptr;
	ptrinfo *ptrs;
} gkernel;

/* gmemset is a memset captured into a graph after pos of its kernels. */
typedef struct {
	size_t pos;
	kr_CUdeviceptr dst;
	uint32_t value;
	unsigned width; /* bytes per element: 1, 2 or 4 */
	size_t n;       /* elements */
} gmemset;

/* gcapture is one stream capture: its launches and memsets in capture
 * order. */
struct gcapture {
	uint64_t id;  /* the capture sequence's id */
	void *graph;  /* the graph it builds */
	gkernel *k;
	size_t n, cap;
	gmemset *m;
	size_t nm, capm;
};
typedef struct gcapture gcapture;

static gcapture **captures; /* under mu */
static size_t ncaptures, capcaptures;
static struct {
	void *exec;
	size_t capture;
} *execs; /* graph executables, by the capture they were instantiated from; under mu */
static size_t nexecs, capexecs;

static void *dup_bytes(const void *p, size_t n) {
	void *d = malloc(n ? n : 1);
	if (d && n) memcpy(d, p, n);
	return d;
}

/* keep appends a captured launch to c. Call with mu held. */
KR_HIDDEN void keep(struct gcapture *c, uint64_t k, const char *name, const launch *l, fattrs fa, const unsigned char *blob,
                    size_t nb, const size_t *offs, const size_t *sizes, int np, const ptrinfo *ptrs, int nptr) {
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 64;
		gkernel *nk = realloc(c->k, ncap * sizeof *nk);
		if (!nk) {
			failed = 1;
			return;
		}
		c->k = nk;
		c->cap = ncap;
	}
	gkernel *g = &c->k[c->n++];
	g->key = k;
	g->name = strdup(name);
	g->l = *l;
	g->l.api = strdup(l->api);
	g->attrs = dup_bytes(l->attrs, l->nattrs * sizeof *l->attrs);
	g->l.attrs = g->attrs;
	g->fa = fa;
	g->blob = dup_bytes(blob, nb);
	g->nb = nb;
	g->offs = dup_bytes(offs, np * sizeof *offs);
	g->sizes = dup_bytes(sizes, np * sizeof *sizes);
	g->np = np;
	g->ptrs = dup_bytes(ptrs, nptr * sizeof *ptrs);
	g->nptr = nptr;
	if (!g->name || !g->l.api || !g->attrs || !g->blob || !g->offs || !g->sizes || !g->ptrs) failed = 1, c->n--;
}

/* capture_of returns the capture that stream s is in, creating its record
 * on the capture's first launch; NULL when s is not capturing. */
KR_HIDDEN struct gcapture *capture_of(kr_CUstream s) {
	int status = 0;
	uint64_t id = 0;
	void *graph = NULL;
	kr_CUresult r = p_cuStreamGetCaptureInfo    ? p_cuStreamGetCaptureInfo(s, &status, &id, &graph, NULL, NULL)
	                : p_cuStreamGetCaptureInfo3 ? p_cuStreamGetCaptureInfo3(s, &status, &id, &graph, NULL, NULL, NULL)
	                                            : 1;
	if (r != 0 || status != 1) return NULL;
	pthread_mutex_lock(&mu);
	gcapture *c = NULL;
	for (size_t i = ncaptures; i-- > 0;)
		if (captures[i]->id == id) {
			c = captures[i];
			break;
		}
	if (!c && ncaptures == capcaptures) {
		size_t ncap = capcaptures ? 2 * capcaptures : 16;
		gcapture **n = realloc(captures, ncap * sizeof *n);
		if (n) captures = n, capcaptures = ncap;
	}
	if (!c && ncaptures < capcaptures && (c = calloc(1, sizeof *c))) {
		c->id = id;
		c->graph = graph;
		captures[ncaptures++] = c;
	}
	pthread_mutex_unlock(&mu);
	return c ? c : NO_ROOM;
}

/* on_memset keeps a memset captured into a graph: a kernel captured
 * after it finds its bytes set (a counter or semaphore that cuDNN's
 * attention or a cuBLAS kernel consumes), whatever the graph's previous
 * run left there when the graph's launch is snapshotted. */
KR_HIDDEN void on_memset(const char *fn, const kr_CallbackData *cd) {
	const kr_cuMemsetAsync_params *p = cd->functionParams;
	if (!p || strstr(fn, "2D")) return;
	gcapture *c = capture_of(p->stream);
	if (!c || c == NO_ROOM) return;
	gmemset m = {.dst = p->dst, .n = p->n, .width = fn[9] == '8' ? 1 : fn[9] == '1' ? 2 : 4};
	memcpy(&m.value, &p->value, m.width);
	pthread_mutex_lock(&mu);
	m.pos = c->n;
	if (c->nm == c->capm) {
		size_t ncap = c->capm ? 2 * c->capm : 16;
		gmemset *n = realloc(c->m, ncap * sizeof *n);
		if (n) c->m = n, c->capm = ncap;
	}
	if (c->nm < c->capm) c->m[c->nm++] = m;
	else failed = 1;
	pthread_mutex_unlock(&mu);
}

/* apply_memsets writes into buf (n bytes at device address at) what the
 * memsets captured into c before its kernel upto set there, in order. */
KR_HIDDEN void apply_memsets(const struct gcapture *c, size_t upto, kr_CUdeviceptr at, unsigned char *buf, size_t n) {
	for (size_t i = 0; i < c->nm && c->m[i].pos <= upto; i++) {
		const gmemset *m = &c->m[i];
		kr_CUdeviceptr lo = m->dst > at ? m->dst : at;
		kr_CUdeviceptr end = m->dst + m->n * m->width, hi = end < at + n ? end : at + n;
		for (kr_CUdeviceptr a = lo; a < hi; a++) buf[a - at] = ((const unsigned char *)&m->value)[(a - m->dst) % m->width];
	}
}

/* on_instantiate maps the executable an instantiation made (API exit) to
 * the newest capture that built its graph. */
KR_HIDDEN void on_instantiate(const kr_CallbackData *cd) {
	if (cd->callbackSite != KR_API_EXIT || !cd->functionParams) return;
	if (cd->functionReturnValue && *(const kr_CUresult *)cd->functionReturnValue != 0) return;
	const kr_instantiate_params *p = cd->functionParams;
	if (!p->exec || !*p->exec) return;
	pthread_mutex_lock(&mu);
	for (size_t i = ncaptures; i-- > 0;) {
		if (captures[i]->graph != p->graph) continue;
		if (nexecs == capexecs) {
			size_t ncap = capexecs ? 2 * capexecs : 16;
			__typeof__(execs) n = realloc(execs, ncap * sizeof *n);
			if (!n) break;
			execs = n, capexecs = ncap;
		}
		execs[nexecs].exec = *p->exec;
		execs[nexecs++].capture = i;
		break;
	}
	pthread_mutex_unlock(&mu);
}

/* graph_launch records an armed launch of a graph executable: one call
 * (L) per kernel captured into it, in capture order. The first time a
 * captured launch's key runs, its buffers are snapshotted as the graph
 * found them at its launch (what the work queued before it left, and
 * whatever the previous run left in the graph's own intermediates) and
 * its record (K) is written again with them. */
KR_HIDDEN void graph_launch(void *exec, kr_CUstream stream) {
	pthread_mutex_lock(&mu);
	gcapture *c = NULL;
	for (size_t i = nexecs; i-- > 0;)
		if (execs[i].exec == exec) {
			c = captures[execs[i].capture];
			break;
		}
	size_t n = c ? c->n : 0;
	pthread_mutex_unlock(&mu);
	if (!c) {
		pthread_mutex_lock(&mu);
		fprintf(events,
		        "{\"t\":\"L\",\"seq\":%llu,\"key\":\"\",\"stream\":%llu,"
		        "\"error\":\"a graph not captured while the recorder was loaded\"}\n",
		        (unsigned long long)++seq, (unsigned long long)(uintptr_t)stream);
		pthread_mutex_unlock(&mu);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		gkernel *g = &c->k[i];
		pthread_mutex_lock(&mu);
		int first = seen_add(g->key ^ 0x67726170ULL);
		pthread_mutex_unlock(&mu);
		static __thread innerptr inner[KR_MAX_INNER];
		int ninner = 0, dropped = 0;
		if (first) {
			launch l = g->l;
			l.stream = stream;
			ninner = snapshot(&l, g->ptrs, g->nptr, c, i, inner, &dropped);
		}
		pthread_mutex_lock(&mu);
		++seq;
		if (first)
			write_key(g->key, g->name, &g->l, g->fa, g->blob, g->nb, g->offs, g->sizes, g->np, g->ptrs, g->nptr, inner,
			          ninner, dropped);
		fprintf(events, "{\"t\":\"L\",\"seq\":%llu,\"key\":\"%016llx\",\"stream\":%llu,\"graph\":1,\"p\":[",
		        (unsigned long long)seq, (unsigned long long)g->key, (unsigned long long)(uintptr_t)stream);
		for (int j = 0; j < g->nptr; j++) fprintf(events, "%s%llu", j ? "," : "", (unsigned long long)g->ptrs[j].value);
		fprintf(events, "]}\n");
		pthread_mutex_unlock(&mu);
	}
}

