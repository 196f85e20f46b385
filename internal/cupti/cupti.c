// The activity buffer callbacks and the record queue.
//
// The callbacks run on CUPTI's threads and never call into Go: completed
// buffers are decoded into a mutex-protected queue of kr_record that Go
// drains with kr_cupti_take.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_shim.h"

void *kr_cupti_fn[KR_CUPTI_COUNT]; /* filled by package dl (cupti.go) */

#define KR_BUFFER_SIZE (8u << 20)      /* 8 MiB per activity buffer */
#define KR_BUFFER_ALIGN 8              /* ACTIVITY_RECORD_ALIGNMENT */
#define KR_CUPTI_SUCCESS 0
#define KR_KIND_MEMCPY 1
#define KR_KIND_MEMSET 2
#define KR_KIND_KERNEL 3
#define KR_KIND_DRIVER 4
#define KR_KIND_CONCURRENT_KERNEL 10
#define KR_KIND_MEMCPY2 22

/* ---- record queue ---- */

static pthread_mutex_t qmu = PTHREAD_MUTEX_INITIALIZER;
static kr_record *q;
static size_t qlen, qcap;
static size_t qlimit = (size_t)1 << 24;
static kr_stats stats;

/* Appends r (taking ownership of r->name); called with qmu held. */
static int push_locked(kr_record *r) {
	if (qlen >= qlimit) {
		free(r->name);
		stats.lost++;
		return 0;
	}
	if (qlen == qcap) {
		size_t ncap = qcap ? qcap * 2 : 4096;
		kr_record *nq = realloc(q, ncap * sizeof *nq);
		if (nq == NULL) {
			free(r->name);
			stats.lost++;
			return 0;
		}
		q = nq;
		qcap = ncap;
	}
	q[qlen++] = *r;
	stats.records++;
	return 1;
}

/* Copies the fields every record prefix has (interval, device, context,
 * stream, correlation) from the prefix src into the kr_record *dst. */
#define KR_COPY_WHEN_WHERE(dst, src) \
	do { \
		(dst)->start = (src)->start; \
		(dst)->end = (src)->end; \
		(dst)->deviceId = (src)->deviceId; \
		(dst)->contextId = (src)->contextId; \
		(dst)->streamId = (src)->streamId; \
		(dst)->correlationId = (src)->correlationId; \
	} while (0)

/* Copies the copy kind, memory kinds and size of a memcpy or p2p prefix. */
#define KR_COPY_KINDS(dst, src) \
	do { \
		(dst)->copyKind = (src)->copyKind; \
		(dst)->srcKind = (src)->srcKind; \
		(dst)->dstKind = (src)->dstKind; \
		(dst)->bytes = (src)->bytes; \
	} while (0)

/* Decodes one CUPTI record; called with qmu held. */
static int decode_locked(const void *raw) {
	kr_record r;
	int32_t kind;

	memcpy(&kind, raw, sizeof kind);
	memset(&r, 0, sizeof r);
	r.kind = kind;
	switch (kind) {
	case KR_KIND_KERNEL:
	case KR_KIND_CONCURRENT_KERNEL: {
		const kr_kernel_prefix *k = raw;
		KR_COPY_WHEN_WHERE(&r, k);
		r.grid[0] = k->gridX;
		r.grid[1] = k->gridY;
		r.grid[2] = k->gridZ;
		r.block[0] = k->blockX;
		r.block[1] = k->blockY;
		r.block[2] = k->blockZ;
		r.registers = k->registersPerThread;
		r.staticShared = k->staticSharedMemory;
		r.dynamicShared = k->dynamicSharedMemory;
		if (k->name != NULL) {
			r.name = strdup(k->name);
			if (r.name == NULL) {
				stats.lost++;
				return 0;
			}
		}
		break;
	}
	case KR_KIND_MEMCPY: {
		const kr_memcpy_prefix *m = raw;
		KR_COPY_KINDS(&r, m);
		KR_COPY_WHEN_WHERE(&r, m);
		break;
	}
	case KR_KIND_MEMCPY2: {
		const kr_p2p_prefix *m = raw;
		KR_COPY_KINDS(&r, m);
		KR_COPY_WHEN_WHERE(&r, m);
		r.srcDeviceId = m->srcDeviceId;
		r.dstDeviceId = m->dstDeviceId;
		break;
	}
	case KR_KIND_MEMSET: {
		const kr_memset_prefix *m = raw;
		r.value = m->value;
		r.bytes = m->bytes;
		KR_COPY_WHEN_WHERE(&r, m);
		r.memoryKind = m->memoryKind;
		break;
	}
	case KR_KIND_DRIVER: {
		const kr_api_prefix *a = raw;
		r.start = a->start;
		r.end = a->end;
		r.correlationId = a->correlationId;
		r.cbid = a->cbid;
		r.threadId = a->threadId;
		break;
	}
	default:
		stats.ignored++;
		return 0;
	}
	return push_locked(&r);
}

int kr_cupti_decode(const void *raw) {
	int ok;
	pthread_mutex_lock(&qmu);
	ok = decode_locked(raw);
	pthread_mutex_unlock(&qmu);
	return ok;
}

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
	void *p = NULL;
	*max_records = 0;
	if (posix_memalign(&p, KR_BUFFER_ALIGN, KR_BUFFER_SIZE) != 0) {
		p = NULL;
	}
	*buffer = p;
	*size = p ? KR_BUFFER_SIZE : 0;
	if (p == NULL) {
		pthread_mutex_lock(&qmu);
		stats.lost++;
		pthread_mutex_unlock(&qmu);
	}
}

static void buffer_completed(void *ctx, uint32_t stream_id, uint8_t *buffer, size_t size, size_t valid) {
	void *rec = NULL;
	int rc;
	size_t dropped = 0;
	(void)size;

	pthread_mutex_lock(&qmu);
	stats.buffers++;
	if (buffer != NULL && valid > 0) {
		while ((rc = KR_CUPTI(cuptiActivityGetNextRecord)(buffer, valid, &rec)) == KR_CUPTI_SUCCESS) {
			decode_locked(rec);
		}
		if (rc != 12 /* CUPTI_ERROR_MAX_LIMIT_REACHED: end of buffer */) {
			stats.bad_buffers++;
		}
	}
	if (KR_CUPTI(cuptiActivityGetNumDroppedRecords)(ctx, stream_id, &dropped) == KR_CUPTI_SUCCESS) {
		stats.dropped += dropped;
	}
	pthread_mutex_unlock(&qmu);
	free(buffer);
}

int kr_cupti_register(void) {
	return KR_CUPTI(cuptiActivityRegisterCallbacks)(buffer_requested, buffer_completed);
}

size_t kr_cupti_take(kr_record **out) {
	size_t n;
	pthread_mutex_lock(&qmu);
	*out = q;
	n = qlen;
	q = NULL;
	qlen = qcap = 0;
	pthread_mutex_unlock(&qmu);
	return n;
}

void kr_cupti_free(kr_record *recs, size_t n) {
	size_t i;
	for (i = 0; i < n; i++) free(recs[i].name);
	free(recs);
}

void kr_cupti_stats(kr_stats *s) {
	pthread_mutex_lock(&qmu);
	*s = stats;
	pthread_mutex_unlock(&qmu);
}

void kr_cupti_set_limit(size_t max_records) {
	pthread_mutex_lock(&qmu);
	qlimit = max_records;
	pthread_mutex_unlock(&qmu);
}

#define KR_OFF(key, type, field) {key, (long)offsetof(type, field)}
const kr_layout_entry kr_cupti_layout[] = {
	KR_OFF("kernel.registersPerThread", kr_kernel_prefix, registersPerThread),
	KR_OFF("kernel.start", kr_kernel_prefix, start),
	KR_OFF("kernel.end", kr_kernel_prefix, end),
	KR_OFF("kernel.deviceId", kr_kernel_prefix, deviceId),
	KR_OFF("kernel.contextId", kr_kernel_prefix, contextId),
	KR_OFF("kernel.streamId", kr_kernel_prefix, streamId),
	KR_OFF("kernel.gridX", kr_kernel_prefix, gridX),
	KR_OFF("kernel.gridY", kr_kernel_prefix, gridY),
	KR_OFF("kernel.gridZ", kr_kernel_prefix, gridZ),
	KR_OFF("kernel.blockX", kr_kernel_prefix, blockX),
	KR_OFF("kernel.blockY", kr_kernel_prefix, blockY),
	KR_OFF("kernel.blockZ", kr_kernel_prefix, blockZ),
	KR_OFF("kernel.staticSharedMemory", kr_kernel_prefix, staticSharedMemory),
	KR_OFF("kernel.dynamicSharedMemory", kr_kernel_prefix, dynamicSharedMemory),
	KR_OFF("kernel.correlationId", kr_kernel_prefix, correlationId),
	KR_OFF("kernel.name", kr_kernel_prefix, name),
	KR_OFF("memcpy.copyKind", kr_memcpy_prefix, copyKind),
	KR_OFF("memcpy.srcKind", kr_memcpy_prefix, srcKind),
	KR_OFF("memcpy.dstKind", kr_memcpy_prefix, dstKind),
	KR_OFF("memcpy.bytes", kr_memcpy_prefix, bytes),
	KR_OFF("memcpy.start", kr_memcpy_prefix, start),
	KR_OFF("memcpy.end", kr_memcpy_prefix, end),
	KR_OFF("memcpy.deviceId", kr_memcpy_prefix, deviceId),
	KR_OFF("memcpy.contextId", kr_memcpy_prefix, contextId),
	KR_OFF("memcpy.streamId", kr_memcpy_prefix, streamId),
	KR_OFF("memcpy.correlationId", kr_memcpy_prefix, correlationId),
	KR_OFF("p2p.bytes", kr_p2p_prefix, bytes),
	KR_OFF("p2p.start", kr_p2p_prefix, start),
	KR_OFF("p2p.end", kr_p2p_prefix, end),
	KR_OFF("p2p.streamId", kr_p2p_prefix, streamId),
	KR_OFF("p2p.srcDeviceId", kr_p2p_prefix, srcDeviceId),
	KR_OFF("p2p.dstDeviceId", kr_p2p_prefix, dstDeviceId),
	KR_OFF("p2p.correlationId", kr_p2p_prefix, correlationId),
	KR_OFF("memset.value", kr_memset_prefix, value),
	KR_OFF("memset.bytes", kr_memset_prefix, bytes),
	KR_OFF("memset.start", kr_memset_prefix, start),
	KR_OFF("memset.end", kr_memset_prefix, end),
	KR_OFF("memset.deviceId", kr_memset_prefix, deviceId),
	KR_OFF("memset.contextId", kr_memset_prefix, contextId),
	KR_OFF("memset.streamId", kr_memset_prefix, streamId),
	KR_OFF("memset.correlationId", kr_memset_prefix, correlationId),
	KR_OFF("memset.memoryKind", kr_memset_prefix, memoryKind),
	KR_OFF("api.cbid", kr_api_prefix, cbid),
	KR_OFF("api.start", kr_api_prefix, start),
	KR_OFF("api.end", kr_api_prefix, end),
	KR_OFF("api.threadId", kr_api_prefix, threadId),
	KR_OFF("api.correlationId", kr_api_prefix, correlationId),
};
const int kr_cupti_layout_n = sizeof kr_cupti_layout / sizeof kr_cupti_layout[0];
