package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report")
	asJSON := fs.Bool("json", false, "print JSON")
	plots := fs.String("plots", "", "write plots (SVG and PNG) into `DIR`")
	setsFlag := fs.String("sets", "", "signature `SETS`, comma-separated: each a SET, TRACE or BUNDLE\n(default: the generated packages' bench/*/set.json in this module, else the embedded bundle of each workload)")
	top := fs.Int("top", 15, "list the top `N` signatures by predicted time (0: all)")
	arrival := memsetArrivalFlag(fs)
	pos, err := parseArgs(fs, args, 1, -1)
	if err != nil {
		return err
	}
	if *top < 0 {
		return usagef("-top %d: want 0 or more (0: all)", *top)
	}
	in, err := predict.ReadFiles(pos)
	if err != nil {
		return err
	}
	sets, err := benchSets(*setsFlag, in, stderr)
	if err != nil {
		return err
	}
	if *top == 0 {
		*top = -1
	}
	p, err := reportWithPlots(in, sets, predict.ReportOptions{Top: *top, NoMemsetArrival: !*arrival}, *plots, "report", stderr)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		if err := enc.Encode(p); err != nil {
			return err
		}
	} else if err := p.WriteText(stdout); err != nil {
		return err
	}
	if len(p.Workloads) == 0 {
		return errors.New("no workload in the output has a signature set")
	}
	return nil
}

// reportWithPlots makes the prediction of inputs on sets (predict.Report)
// and, unless plots is "", writes its plots into that directory and tells
// stderr how many, as kreplay's command cmd.
func reportWithPlots(inputs []predict.Input, sets []*signatures.Set, opt predict.ReportOptions, plots, cmd string, stderr io.Writer) (*predict.Prediction, error) {
	p, err := predict.Report(inputs, sets, opt)
	if err != nil {
		return nil, err
	}
	if plots != "" {
		files, err := p.WritePlots(plots)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "kreplay %s: %d plots in %s\n", cmd, len(files), plots)
	}
	return p, nil
}

// benchSets loads the sets named by a -sets flag; without one, those of
// the generated packages of the module the working directory is in and,
// for each workload of the outputs in (whose readers it rewinds) that
// none of those has, the embedded bundle's of that workload.
func benchSets(flag string, in []predict.Input, stderr io.Writer) ([]*signatures.Set, error) {
	if flag != "" {
		return loadSetsFlag(flag)
	}
	paths, err := predict.FindSets(predict.ModuleRoot("."))
	if err != nil {
		return nil, err
	}
	sets, err := predict.ReadSetFiles(paths)
	if err != nil {
		return nil, err
	}
	rs, err := predict.ReadResults(in)
	rewind(in)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, s := range sets {
		have[bench.Workload(s.Source)] = true
	}
	var missing []string
	for _, w := range rs.WorkloadNames() {
		if have[w] {
			continue
		}
		emb, err := embeddedSets(w)
		if err != nil {
			return nil, err
		}
		if len(emb) == 0 {
			missing = append(missing, w)
		}
		sets = append(sets, emb...)
	}
	if len(missing) > 0 {
		fmt.Fprintf(stderr, "kreplay: no signature set of %s: neither a generated package here (bench/*/set.json) nor an embedded bundle has one; pass -sets\n",
			strings.Join(missing, ", "))
	}
	return sets, nil
}

// loadSetsFlag loads the sets a -sets flag names.
func loadSetsFlag(flag string) ([]*signatures.Set, error) {
	var sets []*signatures.Set
	for _, p := range strings.Split(flag, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		in, err := loadInput(p, signatures.Options{})
		if err != nil {
			return nil, err
		}
		sets = append(sets, in.sets...)
	}
	return sets, nil
}

// embeddedSets returns the sets of workload w (as bench.Workload names
// it) in the embedded bundles, none when no bundle has it. A bundle's
// sets are read only where its manifest's workload begins w (a rank's
// workload adds to it).
func embeddedSets(w string) ([]*signatures.Set, error) {
	var out []*signatures.Set
	for _, name := range traces.Bundles() {
		fsys, err := traces.Bundle(name)
		if err != nil {
			return nil, err
		}
		b, err := workload.OpenBundle(fsys, embeddedPrefix+name)
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(w, bench.Workload(signatures.Source{Workload: b.Manifest.Workload})) {
			continue
		}
		sets, err := b.Sets()
		if err != nil {
			return nil, err
		}
		for _, s := range sets {
			if bench.Workload(s.Source) == w {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// rewind seeks the inputs' readers back to their start, for reading
// again (predict.ReadFiles gives seekable ones).
func rewind(in []predict.Input) {
	for _, i := range in {
		if s, ok := i.Reader.(io.Seeker); ok {
			s.Seek(0, io.SeekStart)
		}
	}
}

// memsetArrivalFlag defines -memset-arrival, predict's memset arrival term
// (predict.MemsetArrivalSlope).
func memsetArrivalFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("memset-arrival", true, fmt.Sprintf("charge each memset the traced run's host launched 1.2-2.0 µs after the GPU went idle\n"+
		"%.2f x the time left to 2.0 µs more than its paced replay (an estimate: such memsets were stretched in part; false leaves it out)", predict.MemsetArrivalSlope))
}
