package workload

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const llamaConfig = `{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "max_position_embeddings": 2048, "_name_or_path": "meta/Llama-2-7b"}`

// specDir writes a spec's neighbours: a config file and a model directory
// (with and without weights).
func specDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, data string) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("configs/llama.json", llamaConfig)
	write("configs/notjson.json", "{not json")
	write("configs/notype.json", `{"hidden_size": 8}`)
	write("configs/odd.json", `{"model_type": "gpt2", "n_embd": 1000, "n_positions": 1024}`)
	write("Llama-3-8B/config.json", llamaConfig)
	write("Llama-3-8B/model.safetensors", "weights")
	write("noweights/config.json", llamaConfig)
	write("infer.py", "")
	return dir
}

func parse(t testing.TB, dir, spec string) (*Spec, error) {
	t.Helper()
	return ParseSpec([]byte(spec), filepath.Join(dir, "spec.json"))
}

// Specs that parse, and what they resolve to.
func TestParseSpec(t *testing.T) {
	dir := specDir(t)
	ptrue := true
	for _, tc := range []struct {
		name, spec string
		check      func(t *testing.T, s *Spec)
	}{
		{"builtin defaults", `{"version": 1, "model": {"builtin": "llama-7b"}, "workload": {"kind": "prefill", "batch": 4, "seq": 512}}`,
			func(t *testing.T, s *Spec) {
				want := &Spec{Version: 1, Name: "llama-7b_prefill", DType: "f16", Attention: "sdpa", Devices: []int{0},
					Model:    &Model{Builtin: "llama-7b", Config: compact(json.RawMessage(builtins["llama-7b"].config))},
					Workload: Inference{Kind: Prefill, Batch: 4, Seq: 512}}
				if !reflect.DeepEqual(s, want) {
					t.Errorf("got %+v\nwant %+v", s, want)
				}
			}},
		{"bloom generate", `{"version": 1, "model": {"builtin": "bloom-560m"}, "workload": {"kind": "generate", "prompt": 32, "new_tokens": 16}}`,
			func(t *testing.T, s *Spec) {
				if s.Name != "bloom-560m_generate" || s.Attention != "eager" || s.Workload != (Inference{Kind: Generate, Batch: 1, Prompt: 32, NewTokens: 16}) {
					t.Errorf("%+v", s)
				}
			}},
		{"config path", `{"version": 1, "model": {"config": "configs/llama.json"}, "dtype": "bf16", "linear": "fp8",
			"compile": {"mode": "max-autotune", "dynamic": true}, "workload": {"kind": "prefill", "batch": 2, "seq": 128}, "devices": [3], "seed": 9}`,
			func(t *testing.T, s *Spec) {
				if s.Name != "llama-bf16-fp8-compiled_prefill" || s.Device() != 3 || s.Seed != 9 || s.Attention != "" ||
					!reflect.DeepEqual(s.Compile, &Compile{Mode: "max-autotune", Dynamic: &ptrue}) || modelType(s.Model.Config) != "llama" {
					t.Errorf("%+v %+v", s, s.Compile)
				}
			}},
		{"inline config", `{"version": 1, "name": "mine", "model": {"config": {"model_type": "gpt2", "n_embd": 768}}, "attention": "flex_attention", "workload": {"kind": "prefill", "seq": 8}}`,
			func(t *testing.T, s *Spec) {
				if s.Name != "mine" || string(s.Model.Config) != `{"model_type":"gpt2","n_embd":768}` || s.Workload.Batch != 1 {
					t.Errorf("%+v", s)
				}
			}},
		{"inline config named", `{"version": 1, "model": {"config": ` + llamaConfig + `}, "workload": {"kind": "generate", "prompt": 8, "new_tokens": 8}}`,
			func(t *testing.T, s *Spec) {
				if s.Name != "Llama-2-7b_generate" {
					t.Errorf("name %q", s.Name)
				}
			}},
		{"config.json named by its directory", `{"version": 1, "model": {"config": "Llama-3-8B/config.json"}, "workload": {"kind": "prefill", "seq": 8}}`,
			func(t *testing.T, s *Spec) {
				if s.Name != "Llama-3-8B_prefill" || s.Model.Dir != "" {
					t.Errorf("%+v", s)
				}
			}},
		{"model dir", `{"version": 1, "model": {"dir": "Llama-3-8B", "weights": "pretrained"}, "workload": {"kind": "prefill", "seq": 8}}`,
			func(t *testing.T, s *Spec) {
				if s.Model.Dir != filepath.Join(dir, "Llama-3-8B") || s.Name != "Llama-3-8B_prefill" || modelType(s.Model.Config) != "llama" {
					t.Errorf("%+v", s.Model)
				}
			}},
		{"command", `{"version": 1, "command": {"argv": ["python3", "infer.py", "-x"], "args": {"prompt": "hi"}}, "workload": {"kind": "generate", "batch": 2, "prompt": 4, "new_tokens": 4}, "devices": [0, 1]}`,
			func(t *testing.T, s *Spec) {
				if s.Name != "infer_generate" || s.Command.Dir != dir || string(s.Command.Args) != `{"prompt":"hi"}` || s.Runnable() != nil {
					t.Errorf("%+v %v", s.Command, s.Runnable())
				}
			}},
		{"several devices recorded", `{"version": 1, "model": {"builtin": "llama-7b"}, "workload": {"kind": "prefill", "seq": 8}, "devices": [0, 1]}`,
			func(t *testing.T, s *Spec) {
				if err := s.Runnable(); err == nil || !strings.Contains(err.Error(), "devices [0 1]: kreplay's runner runs a model on one GPU") {
					t.Errorf("Runnable: %v", err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parse(t, dir, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
			// The resolved spec reads back as itself, from anywhere.
			js, err := s.JSON()
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseSpec(js, filepath.Join(t.TempDir(), "elsewhere", "spec.json"))
			if err != nil {
				t.Fatalf("resolved spec does not read back: %v\n%s", err, js)
			}
			if !reflect.DeepEqual(back, s) {
				t.Errorf("read back\n%+v, was\n%+v", back, s)
			}
		})
	}
}

// Bad specs: each error names the file and the field at fault.
func TestParseSpecErrors(t *testing.T) {
	dir := specDir(t)
	const w = `"workload": {"kind": "prefill", "batch": 1, "seq": 8}`
	const m = `"model": {"builtin": "llama-7b"}`
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"not json", `{"version": 1,`, "spec.json: unexpected end of JSON input"},
		{"not an object", `[1]`, "want an object, got [1]"},
		{"unknown field", `{"version": 1, ` + m + `, ` + w + `, "dtpye": "f16"}`, `spec.json: unknown field "dtpye" (want version, name,`},
		{"unknown nested field", `{"version": 1, "model": {"builtin": "llama-7b", "weigths": "random"}, ` + w + `}`, `spec.json: model: unknown field "weigths"`},
		{"unknown workload field", `{"version": 1, ` + m + `, "workload": {"kind": "prefill", "seq": 8, "sequence": 9}}`, `workload: unknown field "sequence"`},
		{"unknown compile field", `{"version": 1, ` + m + `, ` + w + `, "compile": {"mode": "default", "backend": "eager"}}`, `compile: unknown field "backend"`},
		{"no version", `{` + m + `, ` + w + `}`, "spec.json: version: missing (want 1)"},
		{"bad version", `{"version": 2, ` + m + `, ` + w + `}`, "version: 2 is not a version this kreplay reads"},
		{"bad dtype", `{"version": 1, ` + m + `, ` + w + `, "dtype": "fp16"}`, `spec.json: dtype: "fp16" is not one of f16, bf16, f32`},
		{"dtype not a string", `{"version": 1, ` + m + `, ` + w + `, "dtype": 16}`, `dtype: want a string, got 16`},
		{"bad attention", `{"version": 1, ` + m + `, ` + w + `, "attention": "flash"}`, `attention: "flash" is not one of eager, sdpa, flex_attention`},
		{"bad compile mode", `{"version": 1, ` + m + `, ` + w + `, "compile": {"mode": "fast"}}`, `compile.mode: "fast" is not one of default, reduce-overhead`},
		{"compile not an object", `{"version": 1, ` + m + `, ` + w + `, "compile": true}`, `compile: want an object, got true`},
		{"bad linear", `{"version": 1, ` + m + `, ` + w + `, "linear": "int8"}`, `linear: "int8" is not one of fp8, fp8-rowwise`},
		{"no model", `{"version": 1, ` + w + `}`, `neither "model" nor "command"`},
		{"model and command", `{"version": 1, ` + m + `, "command": {"argv": ["x"]}, ` + w + `}`, `both "model" and "command"`},
		{"empty model", `{"version": 1, "model": {}, ` + w + `}`, `model: say which model`},
		{"unknown builtin", `{"version": 1, "model": {"builtin": "gpt-5"}, ` + w + `}`, `model.builtin: "gpt-5" is not a built-in model (bloom-560m, llama-7b)`},
		{"missing config file", `{"version": 1, "model": {"config": "configs/nope.json"}, ` + w + `}`, "model.config: config file " + filepath.Join(dir, "configs/nope.json") + " does not exist"},
		{"config not json", `{"version": 1, "model": {"config": "configs/notjson.json"}, ` + w + `}`, "model.config: not a JSON object"},
		{"config without model_type", `{"version": 1, "model": {"config": "configs/notype.json"}, ` + w + `}`, `no "model_type"`},
		{"inline config not an object", `{"version": 1, "model": {"config": 7}, ` + w + `}`, `model.config: want a config.json path or object, got 7`},
		{"missing model dir", `{"version": 1, "model": {"dir": "nodir"}, ` + w + `}`, "model.dir: config file " + filepath.Join(dir, "nodir", "config.json") + " does not exist"},
		{"pretrained without weights", `{"version": 1, "model": {"dir": "noweights", "weights": "pretrained"}, ` + w + `}`, "holds no weights"},
		{"pretrained without dir", `{"version": 1, "model": {"builtin": "llama-7b", "weights": "pretrained"}, ` + w + `}`, `"pretrained" needs "dir"`},
		{"bad weights", `{"version": 1, "model": {"builtin": "llama-7b", "weights": "zeros"}, ` + w + `}`, `model.weights: "zeros" is not one of random, pretrained`},
		{"no workload", `{"version": 1, ` + m + `}`, "workload: missing"},
		{"bad kind", `{"version": 1, ` + m + `, "workload": {"kind": "train", "seq": 8}}`, `workload.kind: "train" is not one of prefill, generate`},
		{"no kind", `{"version": 1, ` + m + `, "workload": {"seq": 8}}`, "workload.kind: missing"},
		{"no seq", `{"version": 1, ` + m + `, "workload": {"kind": "prefill", "batch": 2}}`, "workload.seq: missing: prefill needs batch, seq"},
		{"no new tokens", `{"version": 1, ` + m + `, "workload": {"kind": "generate", "prompt": 2}}`, "workload.new_tokens: missing"},
		{"size of the other kind", `{"version": 1, ` + m + `, "workload": {"kind": "prefill", "seq": 8, "prompt": 4}}`, "workload.prompt: not a size of prefill (batch, seq)"},
		{"zero batch", `{"version": 1, ` + m + `, "workload": {"kind": "prefill", "batch": 0, "seq": 8}}`, "workload.batch: 0 is not a size"},
		{"fractional seq", `{"version": 1, ` + m + `, "workload": {"kind": "prefill", "seq": 8.5}}`, "workload.seq: want an integer, got 8.5"},
		{"too many tokens", `{"version": 1, "model": {"config": {"model_type": "x"}}, "workload": {"kind": "prefill", "batch": 65536, "seq": 65536}}`, "tokens in one inference"},
		{"longer than the positions", `{"version": 1, ` + m + `, "workload": {"kind": "prefill", "seq": 4096}}`, "4096 tokens per sequence, but the model's max_position_embeddings is 2048"},
		{"fp8 dims", `{"version": 1, "model": {"config": "configs/odd.json"}, "linear": "fp8", ` + w + `}`, `linear: "fp8": the model's n_embd is 1000, not a multiple of 16`},
		{"fp8-rowwise dims", `{"version": 1, "model": {"config": "configs/odd.json"}, "linear": "fp8-rowwise", ` + w + `}`, `linear: "fp8-rowwise": the model's n_embd is 1000, not a multiple of 16`},
		{"empty devices", `{"version": 1, ` + m + `, ` + w + `, "devices": []}`, "devices: empty"},
		{"negative device", `{"version": 1, ` + m + `, ` + w + `, "devices": [-1]}`, "devices[0]: -1 is not a device index"},
		{"duplicate device", `{"version": 1, ` + m + `, ` + w + `, "devices": [1, 1]}`, "devices[1]: device 1 is listed twice"},
		{"devices not a list", `{"version": 1, ` + m + `, ` + w + `, "devices": 0}`, "devices: want a list of device indices"},
		{"negative seed", `{"version": 1, ` + m + `, ` + w + `, "seed": -3}`, "seed: -3 is negative"},
		{"bad name", `{"version": 1, "name": "my model/1", ` + m + `, ` + w + `}`, `name: "my model/1": a workload name is`},
		{"empty argv", `{"version": 1, "command": {"argv": []}, ` + w + `}`, "command.argv: empty"},
		{"argv not strings", `{"version": 1, "command": {"argv": ["python3", 3]}, ` + w + `}`, "command.argv: want a list of strings"},
		{"args not an object", `{"version": 1, "command": {"argv": ["x"], "args": [1]}, ` + w + `}`, "command.args: want an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, dir, tc.spec)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), filepath.Join(dir, "spec.json")+": ") {
				t.Errorf("error %q, want %q after the file name", err, tc.want)
			}
		})
	}
}

func TestReadSpecMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.json")
	if _, err := ReadSpec(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v", err)
	}
}

// Builtin and FromName give the shipped traces' workloads.
func TestBuiltinSpecs(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Inference
		err  string
	}{
		{"bloom-560m_prefill", Inference{Kind: Prefill, Batch: 4, Seq: 512}, ""},
		{"bloom-560m_generate", Inference{Kind: Generate, Batch: 1, Prompt: 32, NewTokens: 16}, ""},
		{"llama-7b_prefill", Inference{Kind: Prefill, Batch: 4, Seq: 512}, ""},
		{"llama-7b-tp2_prefill", Inference{}, `not a built-in model's: "llama-7b-tp2" is not a built-in model`},
		{"bloom-560m_train", Inference{}, `unknown kind "train"`},
		{"nounderscore", Inference{}, "not MODEL_prefill"},
	} {
		s, err := FromName(tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s.Name != tc.name || s.Workload != tc.want || s.DType != "f16" || s.Seed != 0 || s.Device() != 0 {
			t.Errorf("%s: %+v", tc.name, s)
		}
	}
}

// The specs the GPU scripts run (scripts/gpu/specs and its folders but
// whatif/, whose command specs examples/whatif/rmsnorm tests) parse, each
// a model spec kreplay capture runs (and a one-GPU one runnable here too)
// whose name is its own.
func TestScriptSpecs(t *testing.T) {
	var paths []string
	for _, dir := range []string{"", "inference", "tp", "families"} {
		ps, err := filepath.Glob(filepath.Join("..", "scripts", "gpu", "specs", dir, "*.json"))
		if err != nil || len(ps) == 0 {
			t.Fatalf("no specs in scripts/gpu/specs/%s: %v", dir, err)
		}
		paths = append(paths, ps...)
	}
	for _, p := range paths {
		s, err := ReadSpec(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if err := s.Capturable(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		if err := s.Runnable(); err != nil && s.World() == 1 {
			t.Errorf("%s: %v", p, err)
		}
		if s.Name == "" || s.Model == nil {
			t.Errorf("%s: name %q, model %v", p, s.Name, s.Model)
		}
	}
}

func TestSummary(t *testing.T) {
	s, err := FromName("llama-7b_prefill")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Summary(), "built-in llama-7b, random weights, f16, sdpa attention; prefill: batch 4 x 512 tokens; device 0"; got != want {
		t.Errorf("Summary %q, want %q", got, want)
	}
}

// FuzzParseSpec: any input either fails with an error naming the file, or
// parses to a spec that is valid and reads back as itself.
func FuzzParseSpec(f *testing.F) {
	for _, seed := range []string{
		`{"version": 1, "model": {"builtin": "llama-7b"}, "workload": {"kind": "prefill", "batch": 4, "seq": 512}}`,
		`{"version": 1, "model": {"builtin": "bloom-560m"}, "workload": {"kind": "generate", "prompt": 32, "new_tokens": 16}, "devices": [0, 1]}`,
		`{"version": 1, "name": "x", "model": {"config": {"model_type": "gpt2", "n_embd": 768, "n_positions": 1024}}, "dtype": "bf16", "linear": "fp8",
		  "compile": {"mode": "reduce-overhead", "fullgraph": true, "dynamic": null}, "attention": "sdpa", "workload": {"kind": "prefill", "seq": 8}, "seed": 3}`,
		`{"version": 1, "command": {"argv": ["python3", "a.py"], "dir": "/tmp", "args": {"k": [1, 2]}}, "workload": {"kind": "generate", "batch": 2, "prompt": 1, "new_tokens": 1}}`,
		`{"version": 1, "model": {"config": "nope.json"}, "workload": {"kind": "prefill", "seq": 8}}`,
		`{"version": 1, "model": {"dir": "m", "weights": "pretrained"}, "workload": {"kind": "prefill", "seq": 8}}`,
		`{"version": 1.0, "model": {"builtin": "llama-7b", "config": {"model_type": "llama"}}, "workload": {"kind": "prefill", "seq": 1e3}}`,
		`{}`, `[]`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	file := filepath.Join(dir, "spec.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSpec(data, file)
		if err != nil {
			if !strings.HasPrefix(err.Error(), file+": ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if s.Version != SpecVersion || (s.Model == nil) == (s.Command == nil) || len(s.Devices) == 0 || !nameRE.MatchString(s.Name) {
			t.Fatalf("invalid spec parsed: %+v", s)
		}
		js, err := s.JSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseSpec(js, filepath.Join(dir, "b", "spec.json"))
		if err != nil {
			t.Fatalf("resolved spec does not read back: %v\n%s", err, js)
		}
		js2, _ := back.JSON()
		if !bytes.Equal(js, js2) {
			t.Fatalf("resolved spec changes when read back:\n%s\n%s", js, js2)
		}
	})
}

// The README's example spec parses (with a config beside it).
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "### Your own workload")
	if !ok {
		t.Fatal("README has no section on your own workload")
	}
	// The first indented block of the section.
	var block []string
	for _, line := range strings.Split(after, "\n") {
		if rest, ok := strings.CutPrefix(line, "    "); ok {
			block = append(block, rest)
		} else if len(block) > 0 {
			break
		}
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "llama3-8b"), 0o755)
	os.WriteFile(filepath.Join(dir, "llama3-8b", "config.json"), []byte(`{"model_type": "llama", "hidden_size": 4096, "max_position_embeddings": 8192}`), 0o644)
	s, err := ParseSpec([]byte(strings.Join(block, "\n")), filepath.Join(dir, "llama3-8b.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(block, "\n"))
	}
	if s.Name != "llama3-8b-bf16_prefill" || s.Compile == nil || s.Workload.Seq != 2048 || modelType(s.Model.Config) != "llama" {
		t.Errorf("%+v", s)
	}
}
