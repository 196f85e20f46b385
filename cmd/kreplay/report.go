package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/signatures"
)

func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	plots := fs.String("plots", "", "write plots (SVG and PNG) into `DIR`")
	setsFlag := fs.String("sets", "", "signature `SETS`, comma-separated: SET.json, TRACE, BUNDLE or embedded:NAME\n(default: the generated packages' bench/*/set.json in this module)")
	top := fs.Int("top", 15, "list the top `N` signatures by predicted time")
	arrival := memsetArrivalFlag(fs)
	pos, err := parseArgs(fs, args, 1, -1)
	if err != nil {
		return err
	}
	sets, err := benchSets(*setsFlag, stderr)
	if err != nil {
		return err
	}
	in, err := predict.ReadFiles(pos)
	if err != nil {
		return err
	}
	if *top == 0 {
		*top = -1
	}
	p, err := predict.Report(in, sets, predict.ReportOptions{Top: *top, NoMemsetArrival: !*arrival})
	if err != nil {
		return err
	}
	if *plots != "" {
		files, err := p.WritePlots(*plots)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "kreplay report: %d plots in %s\n", len(files), *plots)
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

// benchSets loads the sets named by a -sets flag, or else those of the
// generated packages of the module the working directory is in.
func benchSets(flag string, stderr io.Writer) ([]*signatures.Set, error) {
	if flag == "" {
		paths, err := predict.FindSets(predict.ModuleRoot("."))
		if err != nil {
			return nil, err
		}
		if len(paths) == 0 {
			fmt.Fprintln(stderr, "kreplay: no generated packages (bench/*/set.json) found; pass -sets")
		}
		return predict.ReadSetFiles(paths)
	}
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

// memsetArrivalFlag defines -memset-arrival, predict's memset arrival term
// (predict.MemsetArrivalSlope).
func memsetArrivalFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("memset-arrival", true, fmt.Sprintf("charge each memset the traced run's host launched 1.2-2.0 µs after the GPU went idle\n"+
		"%.2f x the time left to 2.0 µs more than its paced replay (an estimate: such memsets were stretched in part; false leaves it out)", predict.MemsetArrivalSlope))
}
