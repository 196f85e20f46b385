package rmsnorm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/whatif"
	"github.com/kreplay/kreplay/workload"
)

// specDir holds the specs of issue 46's check (scripts/gpu/whatif-fused-check.sh).
var specDir = filepath.Join("..", "..", "..", "scripts", "gpu", "specs", "whatif")

// kernels is fused_model.py's KERNELS: rmsnorm_fused.cu's kernel per dtype.
var kernels = map[string]string{"f16": "rmsnorm_fused", "bf16": "rmsnorm_fused_bf16"}

// fusedArgs is fused_model.py's command args.
type fusedArgs struct {
	Mode  string `json:"mode"`
	Model struct {
		Config map[string]any `json:"config"`
	} `json:"model"`
}

func readPair(t *testing.T, family string) (unfused, fused *workload.Spec) {
	t.Helper()
	for i, mode := range []string{"unfused", "fused"} {
		s, err := workload.ReadSpec(filepath.Join(specDir, family+"-"+mode+"-prefill.json"))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			unfused = s
		} else {
			fused = s
		}
	}
	return unfused, fused
}

func argsOf(t *testing.T, s *workload.Spec) fusedArgs {
	t.Helper()
	var a fusedArgs
	if err := json.Unmarshal(s.Command.Args, &a); err != nil {
		t.Fatalf("%s: command.args: %v", s.Name, err)
	}
	return a
}

// TestWhatIfSpecs: each family's unfused and fused specs run
// fused_model.py from this folder, differ only in their names, description
// and mode, carry a model that parses as a runnable model spec with the
// same dtype, attention and workload, and name a dtype that
// rmsnorm_fused.cu has a kernel for; the families are of two model types.
func TestWhatIfSpecs(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(specDir, "*-unfused-prefill.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no specs in %s: %v", specDir, err)
	}
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	names := map[string]bool{}
	for _, p := range paths {
		family := strings.TrimSuffix(filepath.Base(p), "-unfused-prefill.json")
		t.Run(family, func(t *testing.T) {
			u, f := readPair(t, family)
			for _, s := range []*workload.Spec{u, f} {
				if s.Command == nil || s.Model != nil {
					t.Fatalf("%s: want a command spec", s.Name)
				}
				if got := s.Command.Argv; len(got) != 2 || got[1] != "fused_model.py" {
					t.Errorf("%s: argv %q, want [python3 fused_model.py]", s.Name, got)
				}
				if s.Command.Dir != here {
					t.Errorf("%s: dir %s, want %s", s.Name, s.Command.Dir, here)
				}
				if err := s.Capturable(); err != nil {
					t.Error(err)
				}
				if names[s.Name] {
					t.Errorf("workload name %s twice", s.Name)
				}
				names[s.Name] = true
				if !strings.HasSuffix(s.Name, "_prefill") || s.Workload.Kind != workload.Prefill {
					t.Errorf("%s: want a prefill", s.Name)
				}
				if s.Compile != nil || s.Parallel != nil {
					t.Errorf("%s: fused_model.py refuses compile and parallel", s.Name)
				}
			}
			ua, fa := argsOf(t, u), argsOf(t, f)
			if ua.Mode != "unfused" || fa.Mode != "fused" {
				t.Errorf("modes %q and %q, want unfused and fused", ua.Mode, fa.Mode)
			}
			if !reflect.DeepEqual(ua.Model, fa.Model) {
				t.Errorf("the two models differ:\n%v\n%v", ua.Model, fa.Model)
			}
			// Everything else is the same spec.
			uc, fc := *u, *f
			uc.Name, uc.Description, fc.Name, fc.Description = "", "", "", ""
			uc.Command, fc.Command = nil, nil
			if !reflect.DeepEqual(uc, fc) {
				t.Errorf("the specs differ beyond name, description and mode:\n%+v\n%+v", uc, fc)
			}
			if !strings.Contains(u.Name, "unfused") || strings.Replace(u.Name, "unfused", "fused", 1) != f.Name {
				t.Errorf("names %s and %s: want the fused one's the unfused one's with fused for unfused", u.Name, f.Name)
			}
			// The command's model as a model spec: what runner.py builds.
			m, err := json.Marshal(map[string]any{"version": 1, "model": fa.Model, "dtype": f.DType,
				"attention": f.Attention, "workload": f.Workload})
			if err != nil {
				t.Fatal(err)
			}
			ms, err := workload.ParseSpec(m, filepath.Join(specDir, family+"-model.json"))
			if err != nil {
				t.Fatalf("the command's model as a spec: %v", err)
			}
			if err := ms.Runnable(); err != nil {
				t.Error(err)
			}
			mt, _ := fa.Model.Config["model_type"].(string)
			types[mt] = true
			name, ok := kernels[f.DType]
			if !ok {
				t.Fatalf("dtype %s: rmsnorm_fused.cu has kernels for f16 and bf16", f.DType)
			}
			if _, err := whatif.LoadKernel("rmsnorm_fused.cu", name); err != nil {
				t.Error(err)
			}
		})
	}
	if _, err := os.Stat("fused_model.py"); err != nil {
		t.Error(err)
	}
	if len(types) < 2 {
		t.Errorf("model types %v: issue 46 wants two families", types)
	}
}
