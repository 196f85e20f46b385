package cupti

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/dl/dltest"
	"github.com/kreplay/kreplay/internal/kname"
)

// Offsets of the fields read from each record, from cupti_activity.h
// (CUDA 12.6: CUpti_ActivityKernel9, CUpti_ActivityMemcpy5,
// CUpti_ActivityMemset4, CUpti_ActivityMemcpyPtoP4; the same in CUDA
// 13.0's CUpti_ActivityKernel10, Memcpy6 and Memset4).
var headerOffsets = map[string]int64{
	"kernel.registersPerThread": 6, "kernel.start": 16, "kernel.end": 24, "kernel.deviceId": 40,
	"kernel.contextId": 44, "kernel.streamId": 48, "kernel.gridX": 52, "kernel.gridY": 56,
	"kernel.gridZ": 60, "kernel.blockX": 64, "kernel.blockY": 68, "kernel.blockZ": 72,
	"kernel.staticSharedMemory": 76, "kernel.dynamicSharedMemory": 80, "kernel.correlationId": 92,
	"kernel.name":     104,
	"memcpy.copyKind": 4, "memcpy.srcKind": 5, "memcpy.dstKind": 6, "memcpy.bytes": 8,
	"memcpy.start": 16, "memcpy.end": 24, "memcpy.deviceId": 32, "memcpy.contextId": 36,
	"memcpy.streamId": 40, "memcpy.correlationId": 44,
	"p2p.bytes": 8, "p2p.start": 16, "p2p.end": 24, "p2p.streamId": 40, "p2p.srcDeviceId": 44,
	"p2p.dstDeviceId": 52, "p2p.correlationId": 60,
	"memset.value": 4, "memset.bytes": 8, "memset.start": 16, "memset.end": 24,
	"memset.deviceId": 32, "memset.contextId": 36, "memset.streamId": 40,
	"memset.correlationId": 44, "memset.memoryKind": 50,
	"api.cbid": 4, "api.start": 8, "api.end": 16, "api.threadId": 28, "api.correlationId": 32,
}

func TestDeclaredOffsets(t *testing.T) {
	got := declaredLayout()
	if len(got) != len(headerOffsets) {
		t.Errorf("declared %d offsets, expected %d", len(got), len(headerOffsets))
	}
	for k, want := range headerOffsets {
		if g, ok := got[k]; !ok || g != want {
			t.Errorf("%s: declared %d (present %v), header %d", k, g, ok, want)
		}
	}
}

type rawRecord []byte

func (r rawRecord) u8(off int, v uint8)   { r[off] = v }
func (r rawRecord) u16(off int, v uint16) { binary.LittleEndian.PutUint16(r[off:], v) }
func (r rawRecord) u32(off int, v uint32) { binary.LittleEndian.PutUint32(r[off:], v) }
func (r rawRecord) u64(off int, v uint64) { binary.LittleEndian.PutUint64(r[off:], v) }

// record returns a rawRecord of n bytes holding fields, each an offset,
// a width in bytes (1, 2, 4 or 8) and a value, written little-endian.
func record(n int, fields [][3]uint64) rawRecord {
	r := make(rawRecord, n)
	for _, f := range fields {
		off := int(f[0])
		switch f[1] {
		case 1:
			r.u8(off, uint8(f[2]))
		case 2:
			r.u16(off, uint16(f[2]))
		case 4:
			r.u32(off, uint32(f[2]))
		case 8:
			r.u64(off, f[2])
		default:
			panic("bad field width")
		}
	}
	return r
}

func TestDecodeSyntheticRecords(t *testing.T) {
	Drain()
	before := GetStats()

	// CUpti_ActivityKernel9 is larger; the prefix is what counts.
	k := record(224, [][3]uint64{{0, 4, uint64(KindConcurrentKernel)}, {6, 2, 72},
		{16, 8, 1000}, {24, 8, 1750}, {40, 4, 1}, {44, 4, 2}, {48, 4, 7},
		{52, 4, 132}, {56, 4, 2}, {60, 4, 1}, {64, 4, 256}, {68, 4, 1}, {72, 4, 1},
		{76, 4, 1024}, {80, 4, 49152}, {92, 4, 99}})
	if !decodeRaw(k, "_ZN7cutlass7Kernel2I42cutlass_80_simt_sgemm_128x32_8x5_nn_align1EEvNT_6ParamsE", 104) {
		t.Fatal("kernel record not queued")
	}

	m := record(80, [][3]uint64{{0, 4, uint64(KindMemcpy)}, {4, 1, uint64(MemcpyHtoD)},
		{5, 1, uint64(MemoryPageable)}, {6, 1, uint64(MemoryDevice)}, {8, 8, 6144},
		{16, 8, 2000}, {24, 8, 2100}, {32, 4, 1}, {40, 4, 7}, {44, 4, 100}})
	if !decodeRaw(m, "", -1) {
		t.Fatal("memcpy record not queued")
	}

	s := record(72, [][3]uint64{{0, 4, uint64(KindMemset)}, {4, 4, 0xab}, {8, 8, 4096},
		{16, 8, 3000}, {24, 8, 3010}, {40, 4, 7}, {44, 4, 101}, {50, 2, uint64(MemoryDevice)}})
	if !decodeRaw(s, "", -1) {
		t.Fatal("memset record not queued")
	}

	p := record(88, [][3]uint64{{0, 4, uint64(KindMemcpy2)}, {4, 1, uint64(MemcpyPtoP)},
		{8, 8, 512}, {44, 4, 0}, {52, 4, 1}, {60, 4, 102}})
	if !decodeRaw(p, "", -1) {
		t.Fatal("p2p record not queued")
	}

	api := make(rawRecord, 40)
	api.u32(0, uint32(KindRuntime))
	if decodeRaw(api, "", -1) {
		t.Fatal("runtime API record was queued")
	}

	recs := Drain()
	if len(recs) != 4 {
		t.Fatalf("drained %d records, want 4: %+v", len(recs), recs)
	}
	kr := recs[0]
	if kr.Kind != KindConcurrentKernel || kr.Name != "_ZN7cutlass7Kernel2I42cutlass_80_simt_sgemm_128x32_8x5_nn_align1EEvNT_6ParamsE" ||
		kr.Start != 1000 || kr.End != 1750 || kr.Duration() != 750 || kr.DeviceID != 1 || kr.ContextID != 2 ||
		kr.StreamID != 7 || kr.Grid != [3]int32{132, 2, 1} || kr.Block != [3]int32{256, 1, 1} ||
		kr.RegistersPerThread != 72 || kr.StaticSharedMemory != 1024 || kr.DynamicSharedMemory != 49152 ||
		kr.CorrelationID != 99 {
		t.Errorf("kernel record %+v", kr)
	}
	if kname.BaseName(kr.Name) != "cutlass::Kernel2" {
		t.Errorf("BaseName of the kernel = %q", kname.BaseName(kr.Name))
	}
	mr := recs[1]
	if mr.Kind != KindMemcpy || mr.CopyKind != MemcpyHtoD || mr.SrcKind != MemoryPageable ||
		mr.DstKind != MemoryDevice || mr.Bytes != 6144 || mr.Start != 2000 || mr.End != 2100 ||
		mr.DeviceID != 1 || mr.StreamID != 7 || mr.CorrelationID != 100 {
		t.Errorf("memcpy record %+v", mr)
	}
	sr := recs[2]
	if sr.Kind != KindMemset || sr.MemsetValue != 0xab || sr.Bytes != 4096 || sr.Start != 3000 ||
		sr.End != 3010 || sr.StreamID != 7 || sr.CorrelationID != 101 || sr.MemoryKind != MemoryDevice {
		t.Errorf("memset record %+v", sr)
	}
	pr := recs[3]
	if pr.Kind != KindMemcpy2 || pr.CopyKind != MemcpyPtoP || pr.Bytes != 512 || pr.DstDeviceID != 1 || pr.CorrelationID != 102 {
		t.Errorf("p2p record %+v", pr)
	}
	after := GetStats()
	if after.Records-before.Records != 4 || after.Ignored-before.Ignored != 1 {
		t.Errorf("stats before %+v after %+v", before, after)
	}
	if Drain() != nil {
		t.Error("second Drain returned records")
	}
}

func TestQueueLimit(t *testing.T) {
	Drain()
	SetQueueLimit(1)
	defer SetQueueLimit(1 << 24)
	before := GetStats()
	m := make(rawRecord, 64)
	m.u32(0, uint32(KindMemcpy))
	if !decodeRaw(m, "", -1) || decodeRaw(m, "", -1) {
		t.Fatal("queue limit not applied")
	}
	if lost := GetStats().Lost - before.Lost; lost != 1 {
		t.Errorf("lost %d, want 1", lost)
	}
	if n := len(Drain()); n != 1 {
		t.Errorf("drained %d", n)
	}
}

func TestEnumStrings(t *testing.T) {
	checks := []struct{ got, want string }{
		{KindConcurrentKernel.String(), "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"},
		{KindMemcpy.String(), "CUPTI_ACTIVITY_KIND_MEMCPY"},
		{Kind(77).String(), "CUpti_ActivityKind(77)"},
		{MemcpyDtoH.String(), "DTOH"},
		{MemcpyKind(99).String(), "MemcpyKind(99)"},
		{MemoryPinned.String(), "PINNED"},
		{Success.String(), "CUPTI_SUCCESS"},
		{ErrorInvalidKind.String(), "CUPTI_ERROR_INVALID_KIND"},
		{ErrorInsufficientPrivileges.String(), "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"},
		{Result(46).String(), "CUPTI_ERROR_INVALID_CHIP_NAME"},
		{ErrorUnknown.String(), "CUPTI_ERROR_UNKNOWN"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if Path() == "" {
		if got := Result(500).String(); got != "CUPTI_ERROR_500" {
			t.Errorf("unknown result = %q", got)
		}
	}
	err := error(&Error{Func: "cuptiActivityEnable", Result: ErrorNotCompatible})
	if err.Error() != "cuptiActivityEnable: CUPTI_ERROR_NOT_COMPATIBLE" {
		t.Errorf("Error() = %q", err)
	}
	if r, ok := ResultOf(err); !ok || r != ErrorNotCompatible {
		t.Errorf("ResultOf = %v %v", r, ok)
	}
}

func TestCandidates(t *testing.T) {
	c := Candidates()
	if c[0] != "libcupti.so.13" || c[1] != "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13" {
		t.Errorf("candidates start %q", c[:2])
	}
	if len(c) != len(Sonames)*(1+len(Dirs)) {
		t.Errorf("%d candidates", len(c))
	}
}

func TestLoadFailure(t *testing.T) {
	dltest.CheckLibrary(t, &lib, "cuptiGetVersion")
	if err := Load(); err == nil {
		t.Skipf("libcupti is installed (%s)", Path())
	}
	err := Enable(KindConcurrentKernel)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "libcupti.so.13") ||
		!strings.Contains(err.Error(), "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12") {
		t.Errorf("Enable without CUPTI: %v", err)
	}
	for _, f := range []func() error{Flush, func() error { return Disable(KindMemcpy) }, func() error { _, err := Version(); return err }} {
		if err := f(); !errors.Is(err, ErrNotFound) {
			t.Errorf("call without CUPTI: %v", err)
		}
	}
	if Drain() != nil {
		t.Error("Drain without CUPTI returned records")
	}
}
