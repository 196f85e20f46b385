/*
 * Private declarations for the run-time loaded CUPTI library (activity
 * API only). No CUDA or CUPTI header is needed at build time.
 *
 * Activity records are read through the prefix structs below, which
 * mirror the leading fields of the real records. Offsets were read from
 * cupti_activity.h of CUDA 12.6 (CUpti_ActivityKernel9, Memcpy5,
 * Memset4, MemcpyPtoP4 there; Kernel4..8, Memcpy/Memcpy3/4,
 * Memset/Memset2/3 in cupti_activity_deprecated.h; CUpti_ActivityAPI,
 * unchanged since CUDA 4) and checked against bindgen output of CUDA
 * 13.0's header (CUpti_ActivityKernel10, Memcpy6, Memset4): every
 * version of a record kind shares this prefix.
 * The records are packed with 8-byte alignment (PACKED_ALIGNMENT).
 */
#ifndef KREPLAY_CUPTI_SHIM_H
#define KREPLAY_CUPTI_SHIM_H

#include <stddef.h>
#include <stdint.h>

#define KR_PACKED __attribute__((__packed__)) __attribute__((aligned(8)))

/* CUpti_ActivityKernel4 .. CUpti_ActivityKernel11 (kinds KERNEL = 3 and
 * CONCURRENT_KERNEL = 10). */
typedef struct KR_PACKED {
	int32_t kind;                            /*   0 CUpti_ActivityKind */
	uint8_t cacheConfig;                     /*   4 union { both; config } */
	uint8_t sharedMemoryConfig;              /*   5 */
	uint16_t registersPerThread;             /*   6 */
	int32_t partitionedGlobalCacheRequested; /*   8 enum */
	int32_t partitionedGlobalCacheExecuted;  /*  12 enum */
	uint64_t start;                          /*  16 ns */
	uint64_t end;                            /*  24 ns */
	uint64_t completed;                      /*  32 ns */
	uint32_t deviceId;                       /*  40 */
	uint32_t contextId;                      /*  44 */
	uint32_t streamId;                       /*  48 */
	int32_t gridX;                           /*  52 */
	int32_t gridY;                           /*  56 */
	int32_t gridZ;                           /*  60 */
	int32_t blockX;                          /*  64 */
	int32_t blockY;                          /*  68 */
	int32_t blockZ;                          /*  72 */
	int32_t staticSharedMemory;              /*  76 */
	int32_t dynamicSharedMemory;             /*  80 */
	uint32_t localMemoryPerThread;           /*  84 */
	uint32_t localMemoryTotal;               /*  88 */
	uint32_t correlationId;                  /*  92 */
	int64_t gridId;                          /*  96 */
	const char *name;                        /* 104 mangled, owned by CUPTI */
} kr_kernel_prefix;

/* CUpti_ActivityMemcpy, Memcpy3 .. Memcpy6 (kind MEMCPY = 1). */
typedef struct KR_PACKED {
	int32_t kind;           /*  0 */
	uint8_t copyKind;       /*  4 CUpti_ActivityMemcpyKind */
	uint8_t srcKind;        /*  5 CUpti_ActivityMemoryKind */
	uint8_t dstKind;        /*  6 CUpti_ActivityMemoryKind */
	uint8_t flags;          /*  7 */
	uint64_t bytes;         /*  8 */
	uint64_t start;         /* 16 */
	uint64_t end;           /* 24 */
	uint32_t deviceId;      /* 32 */
	uint32_t contextId;     /* 36 */
	uint32_t streamId;      /* 40 */
	uint32_t correlationId; /* 44 */
} kr_memcpy_prefix;

/* CUpti_ActivityMemcpyPtoP .. PtoP4 (kind MEMCPY2 = 22). */
typedef struct KR_PACKED {
	int32_t kind;           /*  0 */
	uint8_t copyKind;       /*  4 */
	uint8_t srcKind;        /*  5 */
	uint8_t dstKind;        /*  6 */
	uint8_t flags;          /*  7 */
	uint64_t bytes;         /*  8 */
	uint64_t start;         /* 16 */
	uint64_t end;           /* 24 */
	uint32_t deviceId;      /* 32 */
	uint32_t contextId;     /* 36 */
	uint32_t streamId;      /* 40 */
	uint32_t srcDeviceId;   /* 44 */
	uint32_t srcContextId;  /* 48 */
	uint32_t dstDeviceId;   /* 52 */
	uint32_t dstContextId;  /* 56 */
	uint32_t correlationId; /* 60 */
} kr_p2p_prefix;

/* CUpti_ActivityMemset, Memset2 .. Memset4 (kind MEMSET = 2). */
typedef struct KR_PACKED {
	int32_t kind;           /*  0 */
	uint32_t value;         /*  4 */
	uint64_t bytes;         /*  8 */
	uint64_t start;         /* 16 */
	uint64_t end;           /* 24 */
	uint32_t deviceId;      /* 32 */
	uint32_t contextId;     /* 36 */
	uint32_t streamId;      /* 40 */
	uint32_t correlationId; /* 44 */
	uint16_t flags;         /* 48 */
	uint16_t memoryKind;    /* 50 CUpti_ActivityMemoryKind */
} kr_memset_prefix;

/* CUpti_ActivityAPI (kind DRIVER = 4): one driver API call, its enter
 * and return on CUPTI's clock. */
typedef struct KR_PACKED {
	int32_t kind;           /*  0 */
	uint32_t cbid;          /*  4 CUpti_CallbackId */
	uint64_t start;         /*  8 ns */
	uint64_t end;           /* 16 ns */
	uint32_t processId;     /* 24 */
	uint32_t threadId;      /* 28 */
	uint32_t correlationId; /* 32 */
	uint32_t returnValue;   /* 36 */
} kr_api_prefix;

/* One record as queued for Go. Strings are malloc'ed copies. */
typedef struct {
	int32_t kind;
	uint64_t start, end;
	uint32_t deviceId, contextId, streamId, correlationId;
	char *name;
	int32_t grid[3], block[3];
	uint16_t registers;
	int32_t staticShared, dynamicShared;
	uint64_t bytes;
	uint8_t copyKind, srcKind, dstKind;
	uint16_t memoryKind;
	uint32_t value;
	uint32_t srcDeviceId, dstDeviceId;
	uint32_t cbid, threadId; /* driver API records */
} kr_record;

/* Statistics kept by the C side. */
typedef struct {
	uint64_t buffers;      /* completed buffers processed */
	uint64_t records;      /* records queued */
	uint64_t ignored;      /* records of kinds not decoded */
	uint64_t dropped;      /* reported by cuptiActivityGetNumDroppedRecords */
	uint64_t lost;         /* not queued: no buffer or queue memory, or queue full */
	uint64_t bad_buffers;  /* GetNextRecord ended with an error other than MAX_LIMIT_REACHED */
} kr_stats;

typedef void (*kr_req_fn)(uint8_t **, size_t *, size_t *);
typedef void (*kr_done_fn)(void *, uint32_t, uint8_t *, size_t, size_t);

typedef int (*kr_pfn_cuptiGetVersion)(uint32_t *);
typedef int (*kr_pfn_cuptiGetResultString)(int, const char **);
typedef int (*kr_pfn_cuptiActivityEnable)(int);
typedef int (*kr_pfn_cuptiActivityDisable)(int);
typedef int (*kr_pfn_cuptiActivityFlushAll)(uint32_t);
typedef int (*kr_pfn_cuptiActivityGetNextRecord)(uint8_t *, size_t, void **);
typedef int (*kr_pfn_cuptiActivityGetNumDroppedRecords)(void *, uint32_t, size_t *);
typedef int (*kr_pfn_cuptiActivityRegisterCallbacks)(kr_req_fn, kr_done_fn);

/* Slots of kr_cupti_fn, the function table package dl fills (cupti.go
 * lists the symbol of each); the static inline wrappers below and the
 * buffer callbacks in cupti.c call through it, after Load. */
enum {
	KR_CUPTI_cuptiGetVersion,
	KR_CUPTI_cuptiGetResultString,
	KR_CUPTI_cuptiActivityEnable,
	KR_CUPTI_cuptiActivityDisable,
	KR_CUPTI_cuptiActivityFlushAll,
	KR_CUPTI_cuptiActivityGetNextRecord,
	KR_CUPTI_cuptiActivityGetNumDroppedRecords,
	KR_CUPTI_cuptiActivityRegisterCallbacks,
	KR_CUPTI_COUNT
};

extern void *kr_cupti_fn[KR_CUPTI_COUNT];

#define KR_CUPTI(api) ((kr_pfn_##api)kr_cupti_fn[KR_CUPTI_##api])

static inline int kr_cuptiGetVersion(uint32_t *v) { return KR_CUPTI(cuptiGetVersion)(v); }
/* 1 (CUPTI_ERROR_INVALID_PARAMETER) before Load. */
static inline int kr_cuptiGetResultString(int result, const char **s) {
	return KR_CUPTI(cuptiGetResultString) ? KR_CUPTI(cuptiGetResultString)(result, s) : 1;
}
static inline int kr_cuptiActivityEnable(int kind) { return KR_CUPTI(cuptiActivityEnable)(kind); }
static inline int kr_cuptiActivityDisable(int kind) { return KR_CUPTI(cuptiActivityDisable)(kind); }
static inline int kr_cuptiActivityFlushAll(uint32_t flag) { return KR_CUPTI(cuptiActivityFlushAll)(flag); }

/* Registers cupti.c's buffer callbacks (cuptiActivityRegisterCallbacks). */
int kr_cupti_register(void);

/* Moves the queued records out; the caller frees them with kr_cupti_free. */
size_t kr_cupti_take(kr_record **out);
void kr_cupti_free(kr_record *recs, size_t n);
void kr_cupti_stats(kr_stats *s);
void kr_cupti_set_limit(size_t max_records);

/* Test hook: decodes one raw record into the queue as the completion
 * callback does; returns 1 if it was queued. */
int kr_cupti_decode(const void *raw);

/* Offsets of the prefix structs, for the header probe test. */
typedef struct {
	const char *key;
	long value;
} kr_layout_entry;
extern const kr_layout_entry kr_cupti_layout[];
extern const int kr_cupti_layout_n;
static inline const kr_layout_entry *kr_cupti_layout_ptr(void) { return kr_cupti_layout; }

#endif
