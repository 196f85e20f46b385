package cupti

/*
#include <stdlib.h>
#include "cupti_shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// Kind is a CUpti_ActivityKind.
type Kind int32

// CUpti_ActivityKind values (cupti_activity.h, CUDA 12.6; unchanged in
// 13.0). Records of KindMemcpy, KindMemset, KindKernel,
// KindConcurrentKernel, KindMemcpy2 and KindDriver are decoded; others
// are counted in Stats.Ignored.
const (
	KindMemcpy           Kind = 1  // CUPTI_ACTIVITY_KIND_MEMCPY
	KindMemset           Kind = 2  // CUPTI_ACTIVITY_KIND_MEMSET
	KindKernel           Kind = 3  // CUPTI_ACTIVITY_KIND_KERNEL (serializes kernels)
	KindDriver           Kind = 4  // CUPTI_ACTIVITY_KIND_DRIVER
	KindRuntime          Kind = 5  // CUPTI_ACTIVITY_KIND_RUNTIME
	KindConcurrentKernel Kind = 10 // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
	KindMemcpy2          Kind = 22 // CUPTI_ACTIVITY_KIND_MEMCPY2 (peer to peer)
)

// String returns the enumerator name.
func (k Kind) String() string {
	switch k {
	case KindMemcpy:
		return "CUPTI_ACTIVITY_KIND_MEMCPY"
	case KindMemset:
		return "CUPTI_ACTIVITY_KIND_MEMSET"
	case KindKernel:
		return "CUPTI_ACTIVITY_KIND_KERNEL"
	case KindDriver:
		return "CUPTI_ACTIVITY_KIND_DRIVER"
	case KindRuntime:
		return "CUPTI_ACTIVITY_KIND_RUNTIME"
	case KindConcurrentKernel:
		return "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"
	case KindMemcpy2:
		return "CUPTI_ACTIVITY_KIND_MEMCPY2"
	}
	return fmt.Sprintf("CUpti_ActivityKind(%d)", int32(k))
}

// MemcpyKind is a CUpti_ActivityMemcpyKind, the direction of a copy.
type MemcpyKind uint8

// CUpti_ActivityMemcpyKind values (cupti_activity.h, CUDA 12.6).
const (
	MemcpyUnknown MemcpyKind = 0
	MemcpyHtoD    MemcpyKind = 1
	MemcpyDtoH    MemcpyKind = 2
	MemcpyHtoA    MemcpyKind = 3
	MemcpyAtoH    MemcpyKind = 4
	MemcpyAtoA    MemcpyKind = 5
	MemcpyAtoD    MemcpyKind = 6
	MemcpyDtoA    MemcpyKind = 7
	MemcpyDtoD    MemcpyKind = 8
	MemcpyHtoH    MemcpyKind = 9
	MemcpyPtoP    MemcpyKind = 10
)

var memcpyKindNames = [...]string{"UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA", "ATOD", "DTOA", "DTOD", "HTOH", "PTOP"}

// String returns the short name, e.g. "HTOD".
func (k MemcpyKind) String() string {
	if int(k) < len(memcpyKindNames) {
		return memcpyKindNames[k]
	}
	return fmt.Sprintf("MemcpyKind(%d)", uint8(k))
}

// MemoryKind is a CUpti_ActivityMemoryKind.
type MemoryKind uint16

// CUpti_ActivityMemoryKind values (cupti_activity.h, CUDA 12.6).
const (
	MemoryUnknown       MemoryKind = 0
	MemoryPageable      MemoryKind = 1
	MemoryPinned        MemoryKind = 2
	MemoryDevice        MemoryKind = 3
	MemoryArray         MemoryKind = 4
	MemoryManaged       MemoryKind = 5
	MemoryDeviceStatic  MemoryKind = 6
	MemoryManagedStatic MemoryKind = 7
)

var memoryKindNames = [...]string{"UNKNOWN", "PAGEABLE", "PINNED", "DEVICE", "ARRAY", "MANAGED", "DEVICE_STATIC", "MANAGED_STATIC"}

// String returns the short name, e.g. "DEVICE".
func (k MemoryKind) String() string {
	if int(k) < len(memoryKindNames) {
		return memoryKindNames[k]
	}
	return fmt.Sprintf("MemoryKind(%d)", uint16(k))
}

// FlagFlushForced is CUPTI_ACTIVITY_FLAG_FLUSH_FORCED.
const FlagFlushForced = 1

// Record is one decoded activity. Which fields are set depends on Kind.
type Record struct {
	Kind          Kind
	Start, End    uint64 // GPU timestamps in ns (CUPTI clock)
	DeviceID      uint32
	ContextID     uint32
	StreamID      uint32
	CorrelationID uint32 // links the activity to the API call that issued it

	// Kernels (KindKernel, KindConcurrentKernel).
	Name                string   // as CUPTI reports it: Itanium-mangled for C++ kernels
	Grid, Block         [3]int32 // launch dimensions
	RegistersPerThread  uint16
	StaticSharedMemory  int32 // bytes per block
	DynamicSharedMemory int32 // bytes per block

	// Memcpy, memset and peer copies.
	Bytes       uint64
	CopyKind    MemcpyKind // memcpy direction
	SrcKind     MemoryKind // memcpy source memory
	DstKind     MemoryKind // memcpy destination memory
	MemoryKind  MemoryKind // memset target memory
	MemsetValue uint32
	SrcDeviceID uint32 // KindMemcpy2 only
	DstDeviceID uint32 // KindMemcpy2 only

	// Driver API calls (KindDriver): Start and End are the call's enter
	// and return on the host, on the same clock as the GPU's records, and
	// CorrelationID is that of the kernel, copy or memset it issued.
	CallbackID uint32 // CUpti_CallbackId of the call (CUPTI_DRIVER_TRACE_CBID_*)
	ThreadID   uint32 // the host thread that made the call
}

// Duration returns End-Start in nanoseconds (0 if End precedes Start).
func (r Record) Duration() uint64 {
	if r.End < r.Start {
		return 0
	}
	return r.End - r.Start
}

// Stats counts what the callbacks saw since the process started.
type Stats struct {
	Buffers    uint64 // completed buffers processed
	Records    uint64 // records queued for Drain
	Ignored    uint64 // records of kinds the package does not decode
	Dropped    uint64 // records CUPTI dropped (cuptiActivityGetNumDroppedRecords)
	Lost       uint64 // records or buffers lost to allocation failure or the queue limit
	BadBuffers uint64 // buffers whose record walk ended with an error
}

var (
	actMu      sync.Mutex
	registered bool
)

// Enable loads CUPTI if needed, registers the buffer callbacks once, and
// enables each activity kind (cuptiActivityEnable). Typical kinds are
// KindConcurrentKernel, KindMemcpy and KindMemset; KindKernel serializes
// all kernels and is meant for exact per-kernel timing.
func Enable(kinds ...Kind) error {
	if err := Load(); err != nil {
		return err
	}
	actMu.Lock()
	defer actMu.Unlock()
	if !registered {
		if err := check("cuptiActivityRegisterCallbacks", C.kr_cupti_register()); err != nil {
			return err
		}
		registered = true
	}
	for _, k := range kinds {
		if err := check("cuptiActivityEnable", C.kr_cuptiActivityEnable(C.int(k))); err != nil {
			return fmt.Errorf("%w (kind %v)", err, k)
		}
	}
	return nil
}

// Disable disables each activity kind (cuptiActivityDisable). Records
// already buffered are still delivered by Flush.
func Disable(kinds ...Kind) error {
	if err := Load(); err != nil {
		return err
	}
	for _, k := range kinds {
		if err := check("cuptiActivityDisable", C.kr_cuptiActivityDisable(C.int(k))); err != nil {
			return fmt.Errorf("%w (kind %v)", err, k)
		}
	}
	return nil
}

// Flush makes CUPTI deliver every buffered record, including those in
// partly filled buffers (cuptiActivityFlushAll with
// CUPTI_ACTIVITY_FLAG_FLUSH_FORCED). Synchronize the device first:
// records of work still running may be incomplete. When Flush returns,
// the records are in the queue that Drain empties.
func Flush() error {
	if err := Load(); err != nil {
		return err
	}
	return check("cuptiActivityFlushAll", C.kr_cuptiActivityFlushAll(FlagFlushForced))
}

// Drain returns and removes the queued records, oldest buffer first. It
// needs no library, so it returns nil before anything was enabled.
func Drain() []Record {
	var recs *C.kr_record
	n := int(C.kr_cupti_take(&recs))
	if n == 0 {
		C.kr_cupti_free(recs, 0)
		return nil
	}
	defer C.kr_cupti_free(recs, C.size_t(n))
	src := unsafe.Slice(recs, n)
	out := make([]Record, n)
	for i := range src {
		r := &src[i]
		o := &out[i]
		o.Kind = Kind(r.kind)
		o.Start, o.End = uint64(r.start), uint64(r.end)
		o.DeviceID, o.ContextID = uint32(r.deviceId), uint32(r.contextId)
		o.StreamID, o.CorrelationID = uint32(r.streamId), uint32(r.correlationId)
		if r.name != nil {
			o.Name = C.GoString(r.name)
		}
		for j := 0; j < 3; j++ {
			o.Grid[j], o.Block[j] = int32(r.grid[j]), int32(r.block[j])
		}
		o.RegistersPerThread = uint16(r.registers)
		o.StaticSharedMemory, o.DynamicSharedMemory = int32(r.staticShared), int32(r.dynamicShared)
		o.Bytes = uint64(r.bytes)
		o.CopyKind = MemcpyKind(r.copyKind)
		o.SrcKind, o.DstKind = MemoryKind(r.srcKind), MemoryKind(r.dstKind)
		o.MemoryKind = MemoryKind(r.memoryKind)
		o.MemsetValue = uint32(r.value)
		o.SrcDeviceID, o.DstDeviceID = uint32(r.srcDeviceId), uint32(r.dstDeviceId)
		o.CallbackID, o.ThreadID = uint32(r.cbid), uint32(r.threadId)
	}
	return out
}

// GetStats returns the callbacks' counters.
func GetStats() Stats {
	var s C.kr_stats
	C.kr_cupti_stats(&s)
	return Stats{
		Buffers: uint64(s.buffers), Records: uint64(s.records), Ignored: uint64(s.ignored),
		Dropped: uint64(s.dropped), Lost: uint64(s.lost), BadBuffers: uint64(s.bad_buffers),
	}
}

// SetQueueLimit caps how many records wait for Drain (default 1<<24);
// records beyond it are counted in Stats.Lost.
func SetQueueLimit(n int) {
	if n < 0 {
		n = 0
	}
	C.kr_cupti_set_limit(C.size_t(n))
}

// decodeRaw feeds one raw CUPTI record through the callback's decoder;
// used by tests with synthetic records. When nameOff >= 0 a C copy of
// name is stored as the pointer at that offset.
func decodeRaw(raw []byte, name string, nameOff int) bool {
	p := C.malloc(C.size_t(len(raw)))
	defer C.free(p)
	copy(unsafe.Slice((*byte)(p), len(raw)), raw)
	if nameOff >= 0 && nameOff+8 <= len(raw) {
		cs := C.CString(name)
		defer C.free(unsafe.Pointer(cs))
		*(**C.char)(unsafe.Add(p, nameOff)) = cs
	}
	return C.kr_cupti_decode(p) == 1
}

// declaredLayout returns the offsets of the package's record prefix
// declarations, keyed "kernel.start" and so on.
func declaredLayout() map[string]int64 {
	m := map[string]int64{}
	for _, e := range unsafe.Slice(C.kr_cupti_layout_ptr(), int(C.kr_cupti_layout_n)) {
		m[C.GoString(e.key)] = int64(e.value)
	}
	return m
}
