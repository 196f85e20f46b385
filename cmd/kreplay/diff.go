package main

import (
	"encoding/json"
	"io"
	"slices"

	"github.com/kreplay/kreplay/predict"
)

func cmdDiff(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("diff")
	asJSON := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "list every signature, not only significant changes")
	alpha := fs.Float64("alpha", 0.05, "significance level of the Mann-Whitney U test")
	setsFlag := fs.String("sets", "", "signature `SETS` for the predicted totals, comma-separated: each a SET, TRACE or BUNDLE\n(default: the generated packages' bench/*/set.json in this module, else the embedded bundle of each workload)")
	pos, err := parseArgs(fs, args, 2, 2)
	if err != nil {
		return err
	}
	if !(*alpha > 0 && *alpha < 1) {
		return usagef("-alpha %g: want a significance level between 0 and 1", *alpha)
	}
	old, err := predict.ReadFiles(pos[:1])
	if err != nil {
		return err
	}
	cur, err := predict.ReadFiles(pos[1:])
	if err != nil {
		return err
	}
	sets, err := benchSets(*setsFlag, append(slices.Clip(old), cur...), stderr)
	if err != nil {
		return err
	}
	c, err := predict.Diff(old, cur, sets, predict.DiffOptions{Alpha: *alpha})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		return enc.Encode(c)
	}
	return c.WriteText(stdout, *all)
}
