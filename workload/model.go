package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Weights of a model.
const (
	RandomWeights     = "random"
	PretrainedWeights = "pretrained"
)

// builtin is a model kreplay knows by name: the shapes of the shipped
// traces, as internal/runner's runner.py built them before specs.
type builtin struct {
	config    string // the config.json object
	attention string // the attention implementation the traces show
}

var builtins = map[string]builtin{
	"bloom-560m": {`{"model_type": "bloom", "vocab_size": 250880, "hidden_size": 1024, "n_layer": 24, "n_head": 16}`, "eager"},
	"llama-7b": {`{"model_type": "llama", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, ` +
		`"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 2048}`, "sdpa"},
}

// Builtins lists the built-in model names.
func Builtins() []string { return sortedKeys(builtins) }

// model reads "model" and resolves it: the config inline, the directory
// absolute.
func (p *specParser) model(raw json.RawMessage) (*Model, error) {
	obj, err := p.object("model", raw, "builtin", "config", "dir", "weights")
	if err != nil {
		return nil, err
	}
	m := &Model{}
	for _, f := range []struct {
		key string
		dst *string
	}{{"builtin", &m.Builtin}, {"dir", &m.Dir}} {
		if raw, ok := obj[f.key]; ok {
			if *f.dst, err = p.str("model."+f.key, raw); err != nil {
				return nil, err
			}
		}
	}
	if raw, ok := obj["weights"]; ok {
		if m.Weights, err = p.oneOf("model.weights", raw, []string{RandomWeights, PretrainedWeights}); err != nil {
			return nil, err
		}
	}
	if m.Dir != "" {
		if m.Dir, err = filepath.Abs(p.path(m.Dir)); err != nil {
			return nil, p.errf("model.dir", "%v", err)
		}
	}
	if m.Weights == PretrainedWeights && m.Dir == "" {
		return nil, p.errf("model.weights", `"pretrained" needs "dir", the model directory that holds them`)
	}
	if m.Builtin != "" && m.Dir != "" {
		return nil, p.errf("model", `"builtin" and "dir" both name the model: give one`)
	}
	craw, hasConfig := obj["config"]
	switch {
	case hasConfig:
		m.Config, err = p.config(craw)
	case m.Builtin != "":
		b, ok := builtins[m.Builtin]
		if !ok {
			return nil, p.errf("model.builtin", "%q is not a built-in model (%s)", m.Builtin, strings.Join(Builtins(), ", "))
		}
		m.Config = compact(json.RawMessage(b.config))
	case m.Dir != "":
		m.Config, err = p.configFile("model.dir", filepath.Join(m.Dir, "config.json"))
	default:
		return nil, p.errf("model", `say which model: "builtin", "config" (a config.json, or the object inline) or "dir" (a model directory)`)
	}
	if err != nil {
		return nil, err
	}
	if m.Builtin != "" {
		if _, ok := builtins[m.Builtin]; !ok {
			return nil, p.errf("model.builtin", "%q is not a built-in model (%s)", m.Builtin, strings.Join(Builtins(), ", "))
		}
	}
	if m.Weights == PretrainedWeights && !hasConfig {
		if err := p.hasWeights(m.Dir); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// config reads "model.config": a path to a config.json (relative to the
// spec file) or the object itself.
func (p *specParser) config(raw json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '"' {
		path, err := p.str("model.config", raw)
		if err != nil {
			return nil, err
		}
		if path == "" {
			return nil, p.errf("model.config", "empty path")
		}
		p.modelName = configName(path)
		return p.configFile("model.config", p.path(path))
	}
	return p.configObject("model.config", raw)
}

// configFile reads a config.json.
func (p *specParser) configFile(field, path string) (json.RawMessage, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, p.errf(field, "config file %s does not exist", path)
	}
	if err != nil {
		return nil, p.errf(field, "%v", err)
	}
	cfg, err := p.configObject(field, data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return cfg, nil
}

// configObject checks a config object: JSON, an object, with a
// model_type string.
func (p *specParser) configObject(field string, raw json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return nil, p.errf(field, "want a config.json path or object, got %s", short(raw))
	}
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(t, &cfg); err != nil {
		return nil, p.errf(field, "not a JSON object: %v", err)
	}
	mt, ok := cfg["model_type"]
	var s string
	if !ok || json.Unmarshal(mt, &s) != nil || s == "" {
		return nil, p.errf(field, `no "model_type": transformers needs it to build the model (e.g. "llama")`)
	}
	return compact(t), nil
}

// hasWeights checks that dir holds weight files.
func (p *specParser) hasWeights(dir string) error {
	for _, pat := range []string{"*.safetensors", "*.bin", "*.safetensors.index.json", "*.pt"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pat)); len(m) > 0 {
			return nil
		}
	}
	return p.errf("model.weights", `"pretrained", but %s holds no weights (*.safetensors, *.bin)`, dir)
}

// modelType is a config's model_type, or "".
func modelType(cfg json.RawMessage) string {
	var c struct {
		ModelType string `json:"model_type"`
	}
	json.Unmarshal(cfg, &c)
	return c.ModelType
}

// configInt returns the first of keys the config holds as an integer.
func configInt(cfg json.RawMessage, keys ...string) (key string, n int64, ok bool) {
	var c map[string]json.RawMessage
	if json.Unmarshal(cfg, &c) != nil {
		return "", 0, false
	}
	for _, k := range keys {
		var f float64
		if raw, ok := c[k]; ok && json.Unmarshal(raw, &f) == nil && f == float64(int64(f)) {
			return k, int64(f), true
		}
	}
	return "", 0, false
}

// validate checks what spans fields: sizes against the model's positions,
// FP8's dimensions, the name.
func (p *specParser) validate(s *Spec) error {
	if m := s.Model; m != nil {
		if s.Attention == "" && m.Builtin != "" {
			s.Attention = builtins[m.Builtin].attention
		}
		w := s.Workload
		if k, n, ok := configInt(m.Config, "max_position_embeddings", "n_positions"); ok {
			if tokens := w.Seq + w.Prompt + w.NewTokens; int64(tokens) > n {
				return p.errf("workload", "%d tokens per sequence, but the model's %s is %d", tokens, k, n)
			}
		}
		if s.Linear != "" {
			for _, k := range []string{"hidden_size", "n_embd", "d_model", "intermediate_size", "n_inner", "ffn_dim", "head_dim"} {
				if _, n, ok := configInt(m.Config, k); ok && n%16 != 0 {
					return p.errf("linear", `%q: the model's %s is %d, not a multiple of 16, as torch._scaled_mm needs`, s.Linear, k, n)
				}
			}
		}
	}
	if s.Name == "" {
		s.Name = s.derivedName(p.modelName)
	}
	if !nameRE.MatchString(s.Name) {
		return p.errf("name", "%q: a workload name is letters, digits, '.', '_', '+' and '-' (at most 100, not starting with a symbol)", s.Name)
	}
	return nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$`)

// derivedName is the default workload name: the model (configFile names
// a config given by its path), variants that differ from the shipped
// traces' (dtype, FP8, torch.compile), and the kind, e.g.
// "llama-7b_prefill" or "Llama-3-8B-bf16-compiled_generate".
func (s *Spec) derivedName(configFile string) string {
	var base string
	switch {
	case s.Command != nil:
		base = commandName(s.Command.Argv)
	case s.Model.Builtin != "":
		base = s.Model.Builtin
	case s.Model.Dir != "":
		base = filepath.Base(s.Model.Dir)
	case configFile != "":
		base = configFile
	default:
		base = inlineName(s.Model.Config)
	}
	if s.Model != nil {
		if s.DType != "f16" {
			base += "-" + s.DType
		}
		if s.Linear != "" {
			base += "-" + s.Linear
		}
		if s.Compile != nil {
			base += "-compiled"
		}
	}
	return sanitize(base) + "_" + s.Workload.Kind
}

// configName names a model by its config file: the file's name without
// .json, or its directory's for a config.json.
func configName(path string) string {
	base := filepath.Base(path)
	if base == "config.json" {
		if d := filepath.Base(filepath.Dir(path)); d != "." && d != "/" {
			return d
		}
	}
	return strings.TrimSuffix(base, ".json")
}

// commandName is the script a command runs (its first *.py argument), or
// the program.
func commandName(argv []string) string {
	if i := slices.IndexFunc(argv, func(a string) bool { return strings.HasSuffix(a, ".py") }); i >= 0 {
		return strings.TrimSuffix(filepath.Base(argv[i]), ".py")
	}
	return filepath.Base(argv[0])
}

// inlineName names an inline config by its _name_or_path, else its
// model_type.
func inlineName(cfg json.RawMessage) string {
	var c struct {
		Name string `json:"_name_or_path"`
	}
	json.Unmarshal(cfg, &c)
	if c.Name != "" {
		return filepath.Base(strings.TrimRight(c.Name, "/"))
	}
	return modelType(cfg)
}

// sanitize keeps the characters a workload name may hold.
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '+', r == '-':
			return r
		}
		return '-'
	}, s)
	s = strings.TrimLeft(s, "._+-")
	if s == "" {
		s = "model"
	}
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// Builtin returns the resolved spec of a built-in model's workload with
// the shapes of the shipped traces: prefill is batch 4 x 512 tokens,
// generate a prompt of 32 tokens and 16 new ones at batch 1; f16, random
// weights, seed 0, device 0.
func Builtin(model, kind string) (*Spec, error) {
	if _, ok := builtins[model]; !ok {
		return nil, fmt.Errorf("%q is not a built-in model (%s)", model, strings.Join(Builtins(), ", "))
	}
	w := `{"kind": "prefill", "batch": 4, "seq": 512}`
	switch kind {
	case Prefill:
	case Generate:
		w = `{"kind": "generate", "batch": 1, "prompt": 32, "new_tokens": 16}`
	default:
		return nil, fmt.Errorf("unknown kind %q (%s, %s)", kind, Prefill, Generate)
	}
	return ParseSpec([]byte(fmt.Sprintf(`{"version": 1, "model": {"builtin": %q}, "workload": %s}`, model, w)), "builtin:"+model)
}

// FromName returns the spec of a workload named as the shipped traces'
// file names name them, "MODEL_KIND" with a built-in MODEL
// ("bloom-560m_prefill", "llama-7b_generate"): Builtin's. It is how a
// trace without a bundle still gets its full-model run.
func FromName(name string) (*Spec, error) {
	i := strings.LastIndex(name, "_")
	if i < 0 {
		return nil, fmt.Errorf("workload %q: no spec, and the name is not MODEL_prefill or MODEL_generate of a built-in model", name)
	}
	s, err := Builtin(name[:i], name[i+1:])
	if err != nil {
		return nil, fmt.Errorf("workload %q: no spec, and not a built-in model's: %v", name, err)
	}
	return s, nil
}
