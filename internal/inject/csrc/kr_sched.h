/*
 * What the schedule recorder's two units share: the recorder and its
 * records (kr_sched.c) and the driver entry points it interposes in hook
 * mode (kr_sched_hook.c). Internal: nothing here is exported from the
 * library.
 */
#ifndef KR_SCHED_H
#define KR_SCHED_H

#include <stdatomic.h>
#include <stdint.h>

#include "kr_sched_types.h"

#define KR_HIDDEN __attribute__((visibility("hidden")))

/* decoder says how to read one call's parameters (kr_sched.c). Words are
 * 8-byte slots of the call's parameter struct (generated_cuda_meta.h:
 * every field these decoders read takes one). */
typedef struct {
	uint8_t op;
	int8_t stream; /* word of the stream; -1: none (a synchronous call) */
	int8_t bytes;  /* word of the byte count, memset's N or Width */
	int8_t dst, src; /* words of a copy's pointers; -1: none */
	char dside, sside; /* a copy's sides: 'H', 'D', or '?' (asked at flush) */
	uint8_t elem;  /* a memset's element size */
	uint8_t ptsz;  /* a _ptsz/_ptds variant: its stream 0 is the per-thread one */
} decoder;

/* kr_decode_name finds the decoder of a driver call's name (with its
 * _ptsz or _ptds suffix, which sets ptsz); 0 when the call is not
 * recorded. */
KR_HIDDEN int kr_decode_name(const char *name, decoder *out);

/* kr_armed is non-zero while the recorder records. */
KR_HIDDEN extern atomic_int kr_armed;

/* kr_hooked counts the driver entry points kr_sched_hook.c interposed
 * (0: the recorder runs on CUPTI's callbacks). */
KR_HIDDEN extern atomic_int kr_hooked;

/* kr_hook_old counts the entry points that got a function of another
 * ABI than the wrappers' (CUDA 12.0's: an older one, or a later one
 * without a _v2 in the table), passed through unwrapped; kr_hook_second the lookups that resolved a wrapped call to
 * another definition than its wrapper's first (served by the wrapper,
 * which calls the first). */
KR_HIDDEN extern atomic_llong kr_hook_old, kr_hook_second;

/* kr_enter records the entry of a call of the arming thread whose
 * parameters, laid out as the call's parameter struct, are at params:
 * it returns the record's index + 1, for kr_leave, or 0 when the call is
 * not recorded (another thread's, counted; past the buffer's end,
 * counted as lost). kr_leave records the call's exit and result. */
KR_HIDDEN uint64_t kr_enter(const decoder *d, const void *params);
KR_HIDDEN void kr_leave(uint64_t i, kr_CUresult result);

/* kr_hook_driver_sym returns the symbol name of the driver library whose
 * entry points were interposed (kr_sched_hook.c), or NULL; weak, so that
 * kr_sched.c links alone. */
KR_HIDDEN void *kr_hook_driver_sym(const char *name) __attribute__((weak));

#endif /* KR_SCHED_H */
