package cupti

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/dl/dltest"
)

// recordGroups maps each prefix declared in cupti_shim.h to the header's
// record versions that must share it, and the keys of declaredLayout to
// C field names.
var recordGroups = []struct {
	prefix  string
	structs []string
}{
	{"kernel", []string{"CUpti_ActivityKernel4", "CUpti_ActivityKernel5", "CUpti_ActivityKernel6", "CUpti_ActivityKernel7",
		"CUpti_ActivityKernel8", "CUpti_ActivityKernel9", "CUpti_ActivityKernel10", "CUpti_ActivityKernel11", "CUpti_ActivityKernel12"}},
	{"memcpy", []string{"CUpti_ActivityMemcpy", "CUpti_ActivityMemcpy3", "CUpti_ActivityMemcpy4", "CUpti_ActivityMemcpy5",
		"CUpti_ActivityMemcpy6", "CUpti_ActivityMemcpy7"}},
	{"p2p", []string{"CUpti_ActivityMemcpyPtoP", "CUpti_ActivityMemcpyPtoP2", "CUpti_ActivityMemcpyPtoP3",
		"CUpti_ActivityMemcpyPtoP4", "CUpti_ActivityMemcpyPtoP5"}},
	{"memset", []string{"CUpti_ActivityMemset", "CUpti_ActivityMemset2", "CUpti_ActivityMemset3", "CUpti_ActivityMemset4",
		"CUpti_ActivityMemset5"}},
	{"api", []string{"CUpti_ActivityAPI"}},
}

// TestHeaderLayout compiles, for every activity record version the
// installed cupti_activity.h declares, a probe printing the offset of
// each field this package reads, and compares them with cupti_shim.h.
// Versions the header lacks (removed in CUDA 13, or not yet added) are
// skipped; each record kind needs at least one. It also checks the enum
// values. It skips where the header is absent.
func TestHeaderLayout(t *testing.T) {
	if dltest.FindHeader("cupti_activity.h") == "" {
		t.Skipf("cupti_activity.h not found under %v", dltest.CUDARoots())
	}
	declared := declaredLayout()
	dir := t.TempDir()
	for _, g := range recordGroups {
		var fields []string
		for k := range declared {
			if strings.HasPrefix(k, g.prefix+".") {
				fields = append(fields, strings.TrimPrefix(k, g.prefix+"."))
			}
		}
		checked := 0
		for _, st := range g.structs {
			var b strings.Builder
			b.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <cupti_activity.h>\nint main(void) {\n")
			for _, f := range fields {
				fmt.Fprintf(&b, "  printf(\"%s %%ld\\n\", (long)offsetof(%s, %s));\n", f, st, f)
			}
			b.WriteString("  return 0;\n}\n")
			out, err := dltest.CompileAndRun(dir, b.String())
			if err != nil {
				if strings.Contains(err.Error(), st) && !strings.Contains(err.Error(), "no member named") {
					continue // this header has no such record version
				}
				t.Fatalf("%s: %v", st, err)
			}
			vals, err := dltest.ParseValues(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fields {
				if got, want := vals[f], declared[g.prefix+"."+f]; got != want {
					t.Errorf("offsetof(%s, %s) = %d in the header, %d in cupti_shim.h", st, f, got, want)
				}
			}
			checked++
			t.Logf("%s matches the %s prefix", st, g.prefix)
		}
		if checked == 0 {
			t.Errorf("no %s record version compiled", g.prefix)
		}
	}

	consts := map[string]int64{
		"CUPTI_ACTIVITY_KIND_MEMCPY": int64(KindMemcpy), "CUPTI_ACTIVITY_KIND_MEMSET": int64(KindMemset),
		"CUPTI_ACTIVITY_KIND_KERNEL": int64(KindKernel), "CUPTI_ACTIVITY_KIND_DRIVER": int64(KindDriver),
		"CUPTI_ACTIVITY_KIND_RUNTIME": int64(KindRuntime), "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL": int64(KindConcurrentKernel),
		"CUPTI_ACTIVITY_KIND_MEMCPY2":     int64(KindMemcpy2),
		"CUPTI_ACTIVITY_MEMCPY_KIND_HTOD": int64(MemcpyHtoD), "CUPTI_ACTIVITY_MEMCPY_KIND_DTOH": int64(MemcpyDtoH),
		"CUPTI_ACTIVITY_MEMCPY_KIND_DTOD": int64(MemcpyDtoD), "CUPTI_ACTIVITY_MEMCPY_KIND_HTOH": int64(MemcpyHtoH),
		"CUPTI_ACTIVITY_MEMCPY_KIND_PTOP": int64(MemcpyPtoP), "CUPTI_ACTIVITY_MEMCPY_KIND_ATOD": int64(MemcpyAtoD),
		"CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE": int64(MemoryPageable), "CUPTI_ACTIVITY_MEMORY_KIND_PINNED": int64(MemoryPinned),
		"CUPTI_ACTIVITY_MEMORY_KIND_DEVICE": int64(MemoryDevice), "CUPTI_ACTIVITY_MEMORY_KIND_MANAGED": int64(MemoryManaged),
		"CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC": int64(MemoryManagedStatic),
		"CUPTI_ACTIVITY_FLAG_FLUSH_FORCED":          FlagFlushForced,
	}
	for r, name := range resultNames {
		if r <= 35 || r == ErrorUnknown {
			consts[name] = int64(r)
		}
	}
	var b strings.Builder
	for name := range consts {
		fmt.Fprintf(&b, "  printf(\"%s %%lld\\n\", (long long)%s);\n", name, name)
	}
	vals := dltest.Probe(t, []string{"cupti_activity.h", "cupti_result.h"}, b.String())
	for name, want := range consts {
		if got, ok := vals[name]; !ok || got != want {
			t.Errorf("%s = %d in the header (printed %v), %d in package cupti", name, got, ok, want)
		}
	}
}
