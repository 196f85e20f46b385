package tier3

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/nvrtc"
)

// The elementwise family's kernels compiled with NVRTC (no GPU needed;
// skipped without NVRTC).

// ewCompileCase is one kernel to compile.
type ewCompileCase struct {
	name, file, code, fn string
	defs                 map[string]string
}

// ewCompileCases lists a kernel for every op with every operand kind and
// vector width it may get, the casts between all dtypes, gathers and
// arange.
func ewCompileCases() []ewCompileCase {
	var cs []ewCompileCase
	add := func(name string, defs map[string]string) {
		cs = append(cs, ewCompileCase{name: name, file: "elementwise.cu", code: ewSource, fn: "kr_ew", defs: defs})
	}
	dtypesFor := func(def ewOpDef) []string {
		switch def.result {
		case ewIntegral:
			return []string{"bool", "i64", "i32"}
		case ewToFloat:
			return []string{"f16", "bf16", "f32", "f64"}
		}
		return []string{"f16", "f32", "f64", "i64", "i32", "bool"}
	}
	for name, def := range ewOps {
		for _, dt := range dtypesFor(def) {
			if dt == "bool" && (name == "neg" || name == "sub" || name == "rsub") {
				continue
			}
			code := def.code
			if name == "gelu" {
				code = "GELU_TANH" // GELU compiles in the loop below
			}
			out := dt
			if def.result == ewToBool {
				out = "bool"
			}
			defs := map[string]string{"EW_OP": "EW_" + code, "EW_CT": ewCType(dt), "EW_DO": ewCodes[out],
				"EW_VEC": "8", "EW_UNROLL": "2"}
			kinds := []string{"EW_KT", "EW_KB", "EW_KC"}
			for k := 1; k <= 3; k++ {
				n := fmt.Sprint(k)
				defs["EW_D"+n], defs["EW_K"+n] = ewCodes[dt], "EW_KN"
				if k <= def.n {
					defs["EW_K"+n] = kinds[(k-1)%3]
				}
			}
			add(name+"/"+dt, defs)
		}
	}
	add("gelu/f16", map[string]string{"EW_OP": "EW_GELU", "EW_CT": "float", "EW_DO": "EW_F16", "EW_D1": "EW_F16",
		"EW_D2": "EW_BOOL", "EW_D3": "EW_BOOL", "EW_K1": "EW_KT", "EW_K2": "EW_KN", "EW_K3": "EW_KN", "EW_IDX64": "1"})
	for _, code := range []string{"DIV_TRUNC", "DIV_FLOOR"} {
		for _, dt := range []string{"f32", "i64"} {
			add(code+"/"+dt, map[string]string{"EW_OP": "EW_" + code, "EW_CT": ewCType(dt), "EW_DO": ewCodes[dt],
				"EW_D1": ewCodes[dt], "EW_D2": ewCodes[dt], "EW_D3": "EW_BOOL", "EW_K1": "EW_KT", "EW_K2": "EW_KC", "EW_K3": "EW_KN"})
		}
	}
	all := []string{"bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"}
	for _, from := range all {
		for _, to := range all {
			add("copy/"+from+"-"+to, map[string]string{"EW_OP": "EW_COPY", "EW_CT": ewCType(from), "EW_DO": ewCodes[to],
				"EW_D1": ewCodes[from], "EW_D2": "EW_BOOL", "EW_D3": "EW_BOOL", "EW_K1": "EW_KT", "EW_K2": "EW_KN", "EW_K3": "EW_KN",
				"EW_VEC": "4", "EW_UNROLL": "2", "EW_FLAT": "1"})
		}
		cs = append(cs, ewCompileCase{name: "arange/" + from, file: "fill.cu", code: ewFillSource, fn: "kr_arange",
			defs: map[string]string{"EW_DO": ewCodes[from]}})
	}
	for _, raw := range []string{"u8", "i16", "i32", "i64"} {
		for _, idx := range []string{"i32", "i64"} {
			for _, vec := range []string{"1", "2", "16"} {
				cs = append(cs, ewCompileCase{name: "gather/" + raw + "/" + idx + "/" + vec, file: "index.cu", code: ewIndexSource, fn: "kr_gather",
					defs: map[string]string{"EW_DS": ewCodes[raw], "EW_DI": ewCodes[idx], "EW_VEC": vec, "EW_UNROLL": "2"}})
			}
		}
	}
	// The faithful kernels (faithful.go): PyTorch's generic, vectorized
	// and unrolled loops, and cat's batched copy.
	pt := func(name, fn, vec, ept string, flat bool) {
		defs := map[string]string{"EW_OP": "EW_ADD", "EW_CT": "float", "EW_DO": "EW_F16", "EW_D1": "EW_F16",
			"EW_D2": "EW_F16", "EW_D3": "EW_BOOL", "EW_K1": "EW_KT", "EW_K2": "EW_KT", "EW_K3": "EW_KN",
			"EW_VEC": vec, "EW_PT_NT": "128", "EW_PT_EPT": ept}
		if flat {
			defs["EW_FLAT"] = "1"
		}
		cs = append(cs, ewCompileCase{name: name, file: "elementwise.cu", code: ewSource, fn: fn, defs: defs})
	}
	pt("pt/generic/add/f16", "kr_ew_pt_generic", "1", "4", false)
	pt("pt/vectorized8/add/f16", "kr_ew_pt_lin", "8", "8", true)
	pt("pt/unrolled/add/f16", "kr_ew_pt_lin", "1", "4", true)
	for _, c := range []struct{ name, ct, from, to string }{
		{"float", "float", "f16", "f32"}, {"long", "long long", "bool", "i64"}, {"bool", "bool", "i64", "bool"},
	} {
		for _, call := range []bool{false, true} {
			defs := map[string]string{"EW_OP": "EW_COPY", "EW_CT": ewCType(c.from), "EW_DO": ewCodes[c.to], "EW_D1": ewCodes[c.from],
				"EW_D2": "EW_BOOL", "EW_D3": "EW_BOOL", "EW_K1": "EW_KT", "EW_K2": "EW_KN", "EW_K3": "EW_KN",
				"EW_VEC": "1", "EW_PT_NT": "128", "EW_PT_EPT": "4", "EW_FLAT": "1", "EW_PT_DYN": c.ct}
			name := "pt/dyncopy/" + c.name
			if call {
				defs["EW_PT_DYN_CALL"] = "1"
				name += "/call"
			}
			cs = append(cs, ewCompileCase{name: name, file: "elementwise.cu", code: ewSource, fn: "kr_ew_pt_dyncopy", defs: defs})
		}
	}
	for _, b := range []string{"1", "2", "4", "8"} {
		cs = append(cs, ewCompileCase{name: "pt/cat/" + b, file: "cat.cu", code: ewCatSource, fn: "kr_cat_pt",
			defs: map[string]string{"EW_CAT_BYTES": b, "EW_CAT_DIMS": "4", "EW_CAT_BATCH": "2"}})
	}
	// The most parameters a launch takes: ptCatBatch inputs of
	// ptCatMaxDims dimensions, 64-bit indices.
	for _, b := range []string{"2"} {
		cs = append(cs, ewCompileCase{name: "pt/cat/max/" + b, file: "cat.cu", code: ewCatSource, fn: "kr_cat_pt",
			defs: map[string]string{"EW_CAT_BYTES": b, "EW_CAT_DIMS": fmt.Sprint(ptCatMaxDims),
				"EW_CAT_BATCH": fmt.Sprint(ptCatBatch), "EW_IDX64": "1"}})
	}
	// PyTorch's parameter layout, as traced: 64 inputs, 64 records.
	for _, b := range []string{"2", "8"} {
		cs = append(cs, ewCompileCase{name: "pt/catmeta/" + b, file: "cat.cu", code: ewCatSource, fn: "kr_cat_ptmeta",
			defs: map[string]string{"EW_CAT_BYTES": b, "EW_CAT_DIMS": "4", "EW_CAT_PT_N": "64", "EW_CAT_PT_S": "64"}})
	}
	return cs
}

// ewCompileDefault names the cases compiled by default: one of each kind
// of kernel (all of them take minutes; set KREPLAY_EW_COMPILE_ALL=1).
var ewCompileDefault = []string{
	"add/f16", "mul/i64", "eq/i64", "bitwise_and/bool", "where/f16", "masked_fill/f32", "gelu_tanh/bf16", "gelu/f16",
	"pow/i32", "sin/f64", "DIV_FLOOR/i64", "copy/f16-f32", "copy/f32-bf16", "copy/i64-bool", "copy/bool-f64",
	"copy/f64-f16", "arange/i64", "arange/f32", "gather/i16/i64/16", "gather/u8/i32/1",
	"pt/generic/add/f16", "pt/vectorized8/add/f16", "pt/unrolled/add/f16", "pt/dyncopy/float", "pt/dyncopy/long/call", "pt/cat/2", "pt/cat/8", "pt/cat/max/2",
	"pt/catmeta/2",
}

// TestEwKernelsCompile compiles kernel variants with NVRTC where the
// library is installed (no GPU needed) and checks that none keeps a large
// stack frame (a local copy of the parameters would) or spills much.
func TestEwKernelsCompile(t *testing.T) {
	arch := nvrtcArch(t)
	cases := ewCompileCases()
	if os.Getenv("KREPLAY_EW_COMPILE_ALL") == "" {
		cases = slices.DeleteFunc(cases, func(c ewCompileCase) bool { return !slices.Contains(ewCompileDefault, c.name) })
		if len(cases) != len(ewCompileDefault) {
			t.Errorf("%d default cases found, want %d", len(cases), len(ewCompileDefault))
		}
	}
	for _, c := range cases {
		src := ewSources(c.file, c.code, c.defs)
		opts := append(src.options(arch), "--ptxas-options=-v")
		res, err := nvrtc.Compile(src.Code, src.Name, opts)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		fn := false
		for _, l := range strings.Split(res.Log, "\n") {
			if strings.Contains(l, "warning") {
				t.Logf("%s: %s", c.name, l) // wording varies with the NVRTC version
			}
			if strings.Contains(l, "Function properties for "+c.fn) {
				fn = true
				continue
			}
			if fn && strings.Contains(l, "stack frame") {
				// sin and cos keep a small frame for huge arguments; a
				// copy of the parameters would take hundreds of bytes.
				var frame, spill int
				fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "ptxas")), ". %d bytes stack frame, %d bytes spill stores", &frame, &spill)
				if frame >= 128 || spill > 64 {
					t.Errorf("%s: %s", c.name, strings.TrimSpace(l))
				} else if frame > 0 {
					t.Logf("%s: %s", c.name, strings.TrimSpace(l))
				}
				fn = false
			}
		}
	}
	t.Logf("%d kernels compiled for sm_%d", len(cases), arch)
}
