package workload

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SpecVersion is the version of the workload spec format.
const SpecVersion = 1

// Spec is a workload spec: what runs, for capture and for the full-model
// run. It is read from JSON (ReadSpec, ParseSpec), strictly: an unknown
// field is an error. A parsed spec is resolved: the model's config is
// inline and every path is absolute, so it runs wherever it is read again
// (a bundle stores it so).
//
// Either Model (a Hugging Face causal LM, built by kreplay's runner) or
// Command (the user's own program, served through kreplay_runner) says
// what runs.
type Spec struct {
	Version int `json:"version"`
	// Name is the workload's name: the name of its signature sets,
	// benchmarks and bundle (default: derived, e.g. "llama-7b_prefill").
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`

	Model   *Model   `json:"model,omitempty"`
	Command *Command `json:"command,omitempty"`

	// DType is the model's dtype: f16 (default), bf16 or f32.
	DType string `json:"dtype"`
	// Attention is the attention implementation transformers gets
	// (attn_implementation): eager, sdpa, flex_attention,
	// flash_attention_2 or flash_attention_3 where installed; "" leaves
	// transformers' default.
	Attention string `json:"attention,omitempty"`
	// Compile, when set, runs the model through torch.compile.
	Compile *Compile `json:"compile,omitempty"`
	// Linear "fp8" replaces every nn.Linear but the LM head with an FP8
	// one (torch._scaled_mm with per-tensor scales), "fp8-rowwise" with
	// one scaled per row of the activation and per output channel of the
	// weight (float32 [M,1] and [1,N], fast accumulation, as rowwise FP8
	// recipes run it); "" keeps the model's.
	Linear string `json:"linear,omitempty"`

	Workload Inference `json:"workload"`
	// Devices are the CUDA device indices (default [0]). Without
	// Parallel the workload runs on the first; with it, rank r runs on
	// Devices[r].
	Devices []int `json:"devices"`
	// Parallel, when set, runs the workload in one process per rank
	// (Capturable), one rank per device.
	Parallel *Parallel `json:"parallel,omitempty"`
	// Seed seeds the random weights and inputs (default 0).
	Seed int64 `json:"seed"`
}

// Parallel is how a workload is split over its devices.
type Parallel struct {
	// Tensor is the tensor-parallel size: the number of ranks, one per
	// device, from 1 to MaxTensorParallel; it equals len(Spec.Devices).
	Tensor int `json:"tensor"`
}

// MaxTensorParallel is the largest tensor-parallel size a spec takes (the
// GPUs of one host).
const MaxTensorParallel = 8

// Model is a Hugging Face causal LM. As written, one of Builtin (a model
// kreplay knows), Config (a config.json: a path relative to the spec file,
// or the object inline) or Dir (a model directory holding config.json and
// maybe weights) names it; resolved, Config holds the config object, and
// Builtin or Dir, where given, say where it came from.
type Model struct {
	Builtin string          `json:"builtin,omitempty"`
	Config  json.RawMessage `json:"config"`
	Dir     string          `json:"dir,omitempty"`
	// Weights are "random" (default: drawn from the seed, as the shipped
	// traces' were) or "pretrained" (loaded from Dir).
	Weights string `json:"weights,omitempty"`
}

// Command is the user's own program, which speaks the runner protocol
// (internal/runner's kreplay_runner.py).
type Command struct {
	// Argv is the program and its arguments; Argv[0] is looked up in PATH.
	Argv []string `json:"argv"`
	// Dir is its working directory (as written, relative to the spec
	// file; default the spec file's directory).
	Dir string `json:"dir,omitempty"`
	// Args are free-form arguments (an object, default {}) the program's
	// build(spec) reads.
	Args json.RawMessage `json:"args"`
}

// Compile is torch.compile's configuration.
type Compile struct {
	// Mode is torch.compile's mode: default, reduce-overhead,
	// max-autotune or max-autotune-no-cudagraphs.
	Mode      string `json:"mode"`
	Fullgraph bool   `json:"fullgraph,omitempty"`
	// Dynamic is torch.compile's dynamic; nil leaves its default.
	Dynamic *bool `json:"dynamic,omitempty"`
}

// Inference is what one inference does: a prefill (a forward pass over
// Batch sequences of Seq tokens, no KV cache) or a greedy generate (Batch
// prompts of Prompt tokens, exactly NewTokens new tokens each).
type Inference struct {
	Kind      string `json:"kind"`
	Batch     int    `json:"batch"`
	Seq       int    `json:"seq,omitempty"`
	Prompt    int    `json:"prompt,omitempty"`
	NewTokens int    `json:"new_tokens,omitempty"`
}

// Kinds of inference.
const (
	Prefill  = "prefill"
	Generate = "generate"
)

// The values the spec's enumerations take.
var (
	DTypes       = []string{"f16", "bf16", "f32"}
	Attentions   = []string{"eager", "sdpa", "flex_attention", "flash_attention_2", "flash_attention_3"}
	CompileModes = []string{"default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"}
	Linears      = []string{"fp8", "fp8-rowwise"}
)

// maxTokens bounds batch x sequence, to catch a typo before the GPU does.
const maxTokens = 1 << 28

// ReadSpec reads and resolves a spec file.
func ReadSpec(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSpec(data, path)
}

// ParseSpec parses and resolves a spec; file names it in errors, and its
// directory is where relative paths start.
func ParseSpec(data []byte, file string) (*Spec, error) {
	p := &specParser{file: file, base: filepath.Dir(file)}
	s, err := p.spec(data)
	if err != nil {
		return nil, err
	}
	if err := p.validate(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Runnable says why the full-model runner, one process (Measure), cannot
// run s, or nil: a model on several devices, or any spec with ranks
// (World > 1), which only Capture runs.
func (s *Spec) Runnable() error {
	if s.World() > 1 {
		return fmt.Errorf("workload %s: %d ranks on devices %v: a full-model run here is one process; kreplay capture runs the ranks", s.Name, s.World(), s.Devices)
	}
	return s.Capturable()
}

// Capturable says why Capture cannot run s, or nil: a model on several
// devices without "parallel", which says how to split it.
func (s *Spec) Capturable() error {
	if s.Model != nil && len(s.Devices) > 1 && s.Parallel == nil {
		return fmt.Errorf(`workload %s: devices %v: kreplay's runner runs a model on one GPU unless the spec says "parallel": {"tensor": %d}`, s.Name, s.Devices, len(s.Devices))
	}
	return nil
}

// World is the number of ranks s runs as: the tensor-parallel size, 1
// without Parallel.
func (s *Spec) World() int {
	if s.Parallel == nil || s.Parallel.Tensor < 1 {
		return 1
	}
	return s.Parallel.Tensor
}

// Device is the CUDA device the workload runs on (its first).
func (s *Spec) Device() int {
	if len(s.Devices) == 0 {
		return 0
	}
	return s.Devices[0]
}

// JSON is the resolved spec as indented JSON, as spec.json stores it.
func (s *Spec) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Summary describes s on one line: model, dtype, attention, compile,
// linear layers, inference and device.
func (s *Spec) Summary() string {
	var b strings.Builder
	switch {
	case s.Command != nil:
		fmt.Fprintf(&b, "command %q", strings.Join(s.Command.Argv, " "))
	case s.Model.Builtin != "":
		fmt.Fprintf(&b, "built-in %s", s.Model.Builtin)
	case s.Model.Dir != "":
		fmt.Fprintf(&b, "model %s", s.Model.Dir)
	default:
		fmt.Fprintf(&b, "model %s", modelType(s.Model.Config))
	}
	if s.Model != nil {
		fmt.Fprintf(&b, ", %s weights, %s", cmp.Or(s.Model.Weights, "random"), s.DType)
		if s.Attention != "" {
			fmt.Fprintf(&b, ", %s attention", s.Attention)
		}
		if s.Linear != "" {
			fmt.Fprintf(&b, ", %s linear layers", s.Linear)
		}
		if s.Compile != nil {
			fmt.Fprintf(&b, ", torch.compile mode %s", s.Compile.Mode)
		}
	}
	w := s.Workload
	if w.Kind == Generate {
		fmt.Fprintf(&b, "; generate: batch %d, prompt %d, %d new tokens", w.Batch, w.Prompt, w.NewTokens)
	} else {
		fmt.Fprintf(&b, "; prefill: batch %d x %d tokens", w.Batch, w.Seq)
	}
	if s.World() > 1 {
		fmt.Fprintf(&b, "; tensor-parallel %d on devices %v", s.World(), s.Devices)
	} else {
		fmt.Fprintf(&b, "; device %d", s.Device())
	}
	return b.String()
}

// specParser reads a spec strictly: every error names the file and the
// field.
type specParser struct {
	file, base string
	modelName  string // the model's name from its config file's path, for the default name
}

func (p *specParser) errf(field, format string, args ...any) error {
	if field == "" {
		return fmt.Errorf("%s: %s", p.file, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("%s: %s: %s", p.file, field, fmt.Sprintf(format, args...))
}

// object reads a JSON object whose keys must be among allowed.
func (p *specParser) object(field string, raw json.RawMessage, allowed ...string) (map[string]json.RawMessage, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, p.errf(field, "want an object, got %s", short(raw))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, p.errf(field, "%v", err)
	}
	for _, k := range sortedKeys(obj) {
		if !slices.Contains(allowed, k) {
			where := "unknown field"
			if field != "" {
				where = field + ": unknown field"
			}
			return nil, p.errf("", "%s %q (want %s)", where, k, strings.Join(allowed, ", "))
		}
	}
	return obj, nil
}

func (p *specParser) str(field string, raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", p.errf(field, "want a string, got %s", short(raw))
	}
	return s, nil
}

func (p *specParser) integer(field string, raw json.RawMessage) (int64, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != float64(int64(f)) || f > 1<<53 || f < -(1<<53) {
		return 0, p.errf(field, "want an integer, got %s", short(raw))
	}
	return int64(f), nil
}

func (p *specParser) boolean(field string, raw json.RawMessage) (bool, error) {
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, p.errf(field, "want true or false, got %s", short(raw))
	}
	return b, nil
}

// oneOf reads a string that must be one of values ("" where optional).
func (p *specParser) oneOf(field string, raw json.RawMessage, values []string) (string, error) {
	s, err := p.str(field, raw)
	if err != nil {
		return "", err
	}
	if !slices.Contains(values, s) {
		return "", p.errf(field, "%q is not one of %s", s, strings.Join(values, ", "))
	}
	return s, nil
}

// spec reads the top level.
func (p *specParser) spec(data []byte) (*Spec, error) {
	obj, err := p.object("", data, "version", "name", "description", "model", "command", "dtype", "attention",
		"compile", "linear", "workload", "devices", "parallel", "seed")
	if err != nil {
		return nil, err
	}
	s := &Spec{DType: "f16", Devices: []int{0}}
	raw, ok := obj["version"]
	if !ok {
		return nil, p.errf("version", "missing (want %d)", SpecVersion)
	}
	if v, err := p.integer("version", raw); err != nil || v != SpecVersion {
		return nil, p.errf("version", "%s is not a version this kreplay reads (want %d)", short(raw), SpecVersion)
	}
	s.Version = SpecVersion
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &s.Name}, {"description", &s.Description}} {
		if raw, ok := obj[f.key]; ok {
			if *f.dst, err = p.str(f.key, raw); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range []struct {
		key    string
		dst    *string
		values []string
	}{{"dtype", &s.DType, DTypes}, {"attention", &s.Attention, Attentions}, {"linear", &s.Linear, Linears}} {
		if raw, ok := obj[f.key]; ok {
			if *f.dst, err = p.oneOf(f.key, raw, f.values); err != nil {
				return nil, err
			}
		}
	}
	if err := p.what(obj, s); err != nil {
		return nil, err
	}
	if raw, ok := obj["compile"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		if s.Compile, err = p.compile(raw); err != nil {
			return nil, err
		}
	}
	raw, ok = obj["workload"]
	if !ok {
		return nil, p.errf("workload", `missing (want {"kind": "prefill", "batch": B, "seq": S} or {"kind": "generate", "batch": B, "prompt": P, "new_tokens": N})`)
	}
	if s.Workload, err = p.inference(raw); err != nil {
		return nil, err
	}
	if raw, ok := obj["devices"]; ok {
		if s.Devices, err = p.devices(raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := obj["parallel"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		if s.Parallel, err = p.parallel(raw, s.Devices); err != nil {
			return nil, err
		}
		if err := p.splits(s); err != nil {
			return nil, err
		}
	}
	if raw, ok := obj["seed"]; ok {
		if s.Seed, err = p.integer("seed", raw); err != nil {
			return nil, err
		}
		if s.Seed < 0 {
			return nil, p.errf("seed", "%d is negative", s.Seed)
		}
	}
	return s, nil
}

// what reads the model or the command: exactly one.
func (p *specParser) what(obj map[string]json.RawMessage, s *Spec) error {
	mraw, hasModel := obj["model"]
	craw, hasCommand := obj["command"]
	var err error
	switch {
	case hasModel && hasCommand:
		return p.errf("", `both "model" and "command": give one`)
	case hasModel:
		s.Model, err = p.model(mraw)
	case hasCommand:
		s.Command, err = p.command(craw)
	default:
		return p.errf("", `neither "model" nor "command": say what runs`)
	}
	return err
}

func (p *specParser) compile(raw json.RawMessage) (*Compile, error) {
	obj, err := p.object("compile", raw, "mode", "fullgraph", "dynamic")
	if err != nil {
		return nil, err
	}
	c := &Compile{Mode: "default"}
	if raw, ok := obj["mode"]; ok {
		if c.Mode, err = p.oneOf("compile.mode", raw, CompileModes); err != nil {
			return nil, err
		}
	}
	if raw, ok := obj["fullgraph"]; ok {
		if c.Fullgraph, err = p.boolean("compile.fullgraph", raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := obj["dynamic"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		d, err := p.boolean("compile.dynamic", raw)
		if err != nil {
			return nil, err
		}
		c.Dynamic = &d
	}
	return c, nil
}

// inference reads "workload": the kind's sizes, and only those.
func (p *specParser) inference(raw json.RawMessage) (Inference, error) {
	obj, err := p.object("workload", raw, "kind", "batch", "seq", "prompt", "new_tokens")
	if err != nil {
		return Inference{}, err
	}
	var w Inference
	kraw, ok := obj["kind"]
	if !ok {
		return w, p.errf("workload.kind", "missing (want %s or %s)", Prefill, Generate)
	}
	if w.Kind, err = p.oneOf("workload.kind", kraw, []string{Prefill, Generate}); err != nil {
		return w, err
	}
	sizes := map[string]*int{"batch": &w.Batch}
	if w.Kind == Prefill {
		sizes["seq"] = &w.Seq
	} else {
		sizes["prompt"], sizes["new_tokens"] = &w.Prompt, &w.NewTokens
	}
	w.Batch = 1
	for _, k := range sortedKeys(obj) {
		if k == "kind" {
			continue
		}
		dst, ok := sizes[k]
		if !ok {
			return w, p.errf("workload."+k, "not a size of %s (%s)", w.Kind, strings.Join(sortedKeys(sizes), ", "))
		}
		n, err := p.integer("workload."+k, obj[k])
		if err != nil {
			return w, err
		}
		if n < 1 || n > maxTokens {
			return w, p.errf("workload."+k, "%d is not a size (1 to %d)", n, maxTokens)
		}
		*dst = int(n)
	}
	for _, k := range sortedKeys(sizes) {
		if _, ok := obj[k]; !ok && k != "batch" {
			return w, p.errf("workload."+k, "missing: %s needs %s", w.Kind, strings.Join(sortedKeys(sizes), ", "))
		}
	}
	if tokens := int64(w.Batch) * int64(w.Seq+w.Prompt+w.NewTokens); tokens > maxTokens {
		return w, p.errf("workload", "%d tokens in one inference: more than %d", tokens, maxTokens)
	}
	return w, nil
}

func (p *specParser) devices(raw json.RawMessage) ([]int, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, p.errf("devices", "want a list of device indices, got %s", short(raw))
	}
	if len(list) == 0 {
		return nil, p.errf("devices", "empty: want at least one device index")
	}
	var devs []int
	for i, r := range list {
		f := fmt.Sprintf("devices[%d]", i)
		n, err := p.integer(f, r)
		if err != nil {
			return nil, err
		}
		if n < 0 || n > 1<<16 {
			return nil, p.errf(f, "%d is not a device index", n)
		}
		if slices.Contains(devs, int(n)) {
			return nil, p.errf(f, "device %d is listed twice", n)
		}
		devs = append(devs, int(n))
	}
	return devs, nil
}

// parallel reads "parallel": a tensor-parallel size of 1 to
// MaxTensorParallel, one rank per device of devices (read before it).
func (p *specParser) parallel(raw json.RawMessage, devices []int) (*Parallel, error) {
	obj, err := p.object("parallel", raw, "tensor")
	if err != nil {
		return nil, err
	}
	traw, ok := obj["tensor"]
	if !ok {
		return nil, p.errf("parallel.tensor", "missing: the number of ranks, one per device (%d devices)", len(devices))
	}
	n, err := p.integer("parallel.tensor", traw)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > MaxTensorParallel {
		return nil, p.errf("parallel.tensor", "%d is not a tensor-parallel size (1 to %d)", n, MaxTensorParallel)
	}
	if int(n) != len(devices) {
		return nil, p.errf("parallel.tensor", "%d ranks, but %d devices %v: one rank runs on each device", n, len(devices), devices)
	}
	return &Parallel{Tensor: int(n)}, nil
}

// splits checks that a tensor-parallel model's heads split evenly over
// its ranks, as a colwise attention projection needs.
func (p *specParser) splits(s *Spec) error {
	if s.Model == nil || s.World() < 2 {
		return nil
	}
	for _, keys := range [][]string{{"num_attention_heads", "n_head"}, {"num_key_value_heads"}} {
		if k, n, ok := configInt(s.Model.Config, keys...); ok && n%int64(s.World()) != 0 {
			return p.errf("parallel.tensor", "%d ranks, but the model's %s is %d: its heads do not split evenly", s.World(), k, n)
		}
	}
	return nil
}

func (p *specParser) command(raw json.RawMessage) (*Command, error) {
	obj, err := p.object("command", raw, "argv", "dir", "args")
	if err != nil {
		return nil, err
	}
	c := &Command{Args: json.RawMessage("{}")}
	araw, ok := obj["argv"]
	if !ok {
		return nil, p.errf("command.argv", `missing: the program and its arguments, e.g. ["python3", "infer.py"]`)
	}
	if err := json.Unmarshal(araw, &c.Argv); err != nil {
		return nil, p.errf("command.argv", "want a list of strings, got %s", short(araw))
	}
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return nil, p.errf("command.argv", "empty: want the program and its arguments")
	}
	c.Dir = p.base
	if raw, ok := obj["dir"]; ok {
		if c.Dir, err = p.str("command.dir", raw); err != nil {
			return nil, err
		}
		c.Dir = p.path(c.Dir)
	}
	if abs, err := filepath.Abs(c.Dir); err == nil {
		c.Dir = abs
	}
	if raw, ok := obj["args"]; ok {
		var args map[string]any
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &args) != nil {
			return nil, p.errf("command.args", "want an object (free-form, for the command's build(spec)), got %s", short(raw))
		}
		c.Args = compact(raw)
	}
	return c, nil
}

// path resolves a path relative to the spec file's directory.
func (p *specParser) path(s string) string {
	if s == "" || filepath.IsAbs(s) {
		return s
	}
	return filepath.Join(p.base, s)
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func short(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if s == "" {
		return "nothing"
	}
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}
