"""Issue 46's comparison: kreplay whatif's predicted saving, made from the
unfused bundle alone, against the measured difference of two captures of
one model, unfused and with rmsnorm_fused.cu really in place
(fused_model.py; scripts/gpu/whatif-fused-check.sh runs it).

    python3 whatif_compare.py [-design timeline|default] [-report FUSED.jsonl] [-json OUT.json] WHATIF.json UNFUSED_BUNDLE FUSED_BUNDLE

Two designs of the prediction are read from whatif.json's "prediction",
and both are judged and recorded (compare.json's "designs"); -design
picks the compared one, whose verdict is the exit status:
- timeline (the default): the timeline design (prediction.timeline_design,
  whatif/design.go), fixed before its judging runs: the timeline check's
  measured time saving, and for energy the unfused bundle's measured mean
  power times that saving when the measured run draws at least 95% of the
  power limit, else the timeline check's energy saving;
- default: the one kreplay whatif's own timeline check compares
  (whatif.Prediction.Saving and the energy beside it: the at-the-cap models
  where they ran, else the power limit's first order when the baseline is
  at it, else the in-context saving, else the kernels' own).
The measured saving is the unfused bundle's measured run less the fused
one's (measured.json: wall time and GPU energy per inference). Acceptance:
the time within TIME_TOL, the energy within ENERGY_TOL of the measured
saving. Exit status 0 when accepted, 1 when not, 2 when an input is
missing or unreadable (or the usage is wrong).
"""
import json
import os
import sys

TIME_TOL = 0.10
ENERGY_TOL = 0.15


def predicted(p):
    """The default design: the saving kreplay whatif's timeline check
    compares, from its JSON's "prediction": (ns, where from) and (J, where
    from); J is None where not predicted."""
    if p.get("removed"):
        t = (p["removed"]["saving_ns"], "at the cap, from the plain and removed timelines (prediction.removed)")
    elif p.get("again"):
        t = (p["again"]["saving_ns"], "at the cap, from the plain and again timelines (prediction.again)")
    elif p.get("cap"):
        t = (p["cap"]["saving_ns"], "at the cap, calibrated on the plain timeline (prediction.cap)")
    elif p.get("at_limit"):
        t = (p["limit_saving_ns"], "the power limit's first order (prediction.limit_saving_ns)")
    elif p.get("in_context"):
        t = (p["in_context"]["saving_ns"], "in context: Rotating replays (prediction.in_context)")
    else:
        t = (p["saving_ns"], "the kernels' own replays (prediction.saving_ns)")
    in_context = p.get("in_context") and not (p.get("removed") or p.get("again") or p.get("cap") or p.get("at_limit"))
    if p.get("removed"):
        e = (p["removed"].get("saving_j"), "prediction.removed")
    elif p.get("again"):
        e = (p["again"].get("saving_j"), "prediction.again")
    elif p.get("cap"):
        e = (p["cap"].get("saving_j"), "prediction.cap")
    elif in_context and p["in_context"].get("energy"):
        e = (p["in_context"].get("saving_j"), "prediction.in_context")
    elif p.get("energy"):
        e = (p.get("saving_j"), "prediction.saving_j")
    else:
        e = (None, "not predicted: " + (p.get("no_energy") or "run kreplay whatif with -energy"))
    return t, e


def predicted_timeline(p):
    """The timeline design's saving, from whatif.json's "prediction":
    (ns, where from) and (J, where from); either is None, its "from"
    saying why, where the design gives no figure."""
    d = p.get("timeline_design")
    if not d:
        why = p.get("timeline_design_error") or "not in whatif.json (a kreplay from before the design)"
        return (None, "timeline design not given: " + why), (None, "timeline design not given: " + why)
    t = (d.get("saving_ns"), "the timeline check's measured saving (prediction.timeline_design)")
    if not d.get("energy"):
        return t, (None, "not given: " + (d.get("no_energy") or "no reason recorded"))
    where = "at or above" if d.get("power_limited") else "under"
    return t, (d.get("saving_j"), f"prediction.timeline_design, {d.get('energy_rule')}: the measured run's "
                                  f"{d.get('mean_power_w') or 0:.0f} W {where} 95% of the {d.get('power_limit_w') or 0:.0f} W limit")


DESIGNS = {"timeline": predicted_timeline, "default": predicted}


def measured_run(bundle):
    """The measured run of a one-GPU bundle: its measured.json's only
    machine and run, as a dict with the machine's gpu and the run's
    workload added."""
    path = os.path.join(bundle, "measured.json")
    with open(path) as f:
        m = json.load(f)
    if not isinstance(m, dict) or len(m) != 1:
        raise ValueError(f"{path}: want one machine, got {list(m) if isinstance(m, dict) else type(m).__name__}")
    (machine, mm), = m.items()
    runs = mm.get("runs") if isinstance(mm, dict) else None
    if not isinstance(runs, dict) or len(runs) != 1:
        raise ValueError(f"{path}: {machine}: want one run (a one-GPU capture), got {mm if runs is None else list(runs)}")
    (name, run), = runs.items()
    for k in ("wall_s_per_iter", "energy_j_per_iter"):
        if not isinstance(run.get(k), (int, float)) or run[k] <= 0:
            raise ValueError(f"{path}: {machine}.runs.{name}.{k}: {run.get(k)!r}, want a positive number")
    return dict(run, gpu=mm.get("gpu"), machine=machine, workload=name)


def rel(pred, meas):
    """(pred - meas) / meas; None where meas is 0 or either is missing."""
    if pred is None or meas is None or meas == 0:
        return None
    return (pred - meas) / meas


def judge(pred, mt, me, event_ns=None):
    """One design's prediction against the measured savings: the
    prediction, its relative errors and whether both are within their
    tolerances (the measured time saving positive)."""
    (t_ns, t_from), (e_j, e_from) = pred
    d = dict(predicted=dict(time_ns=t_ns, time_from=t_from, energy_j=e_j, energy_from=e_from),
             time_err=rel(t_ns, mt), energy_err=rel(e_j, me))
    if event_ns is not None:
        d["event_err"] = rel(t_ns, event_ns)
    d["within"] = bool(d["time_err"] is not None and abs(d["time_err"]) <= TIME_TOL and d["energy_err"] is not None
                       and abs(d["energy_err"]) <= ENERGY_TOL and mt > 0)
    return d


def compare(whatif, unfused, fused, report=None, design="timeline"):
    """The comparison as a dict: every design's predicted saving per
    inference and relative errors ("designs"), the compared design's at the
    top level with the acceptance, the measured savings, and the
    cross-checks (the runs the what-if replaced against the norms the fused
    program replaced; the what-if's output check)."""
    if design not in DESIGNS:
        raise ValueError(f"design {design!r}: want one of {', '.join(DESIGNS)}")
    mt = (unfused["wall_s_per_iter"] - fused["wall_s_per_iter"]) * 1e9
    me = unfused["energy_j_per_iter"] - fused["energy_j_per_iter"]
    event_ns = None
    if unfused.get("event_ms_per_iter") and fused.get("event_ms_per_iter"):
        event_ns = (unfused["event_ms_per_iter"] - fused["event_ms_per_iter"]) * 1e6
    designs = {name: judge(f(whatif["prediction"]), mt, me, event_ns) for name, f in DESIGNS.items()}
    chosen = designs[design]
    r = dict(workload=whatif.get("workload"), gpu=whatif.get("gpu"),
             unfused=dict(workload=unfused["workload"], wall_ms=unfused["wall_s_per_iter"] * 1e3,
                          event_ms=unfused.get("event_ms_per_iter"), energy_j=unfused["energy_j_per_iter"],
                          median_ms_per_process=unfused.get("median_ms_per_process"), gpu=unfused.get("gpu")),
             fused=dict(workload=fused["workload"], wall_ms=fused["wall_s_per_iter"] * 1e3,
                        event_ms=fused.get("event_ms_per_iter"), energy_j=fused["energy_j_per_iter"],
                        median_ms_per_process=fused.get("median_ms_per_process"), gpu=fused.get("gpu")),
             design=design, predicted=chosen["predicted"],
             measured=dict(time_ns=mt, energy_j=me),
             time_err=chosen["time_err"], energy_err=chosen["energy_err"], time_tol=TIME_TOL, energy_tol=ENERGY_TOL)
    if event_ns is not None:
        r["measured"]["event_ns"] = event_ns
        r["event_err"] = chosen["event_err"]
    pu, pf = unfused.get("median_ms_per_process") or [], fused.get("median_ms_per_process") or []
    if pu and pf:  # the measured saving between the processes' extremes: its spread
        r["measured"]["process_range_ns"] = [(min(pu) - max(pf)) * 1e6, (max(pu) - min(pf)) * 1e6]
    notes = []
    if unfused.get("gpu") != fused.get("gpu"):
        notes.append(f"the bundles ran on different GPUs: {unfused.get('gpu')} and {fused.get('gpu')}")
    runs = len(((whatif.get("match") or {}).get("runs")) or [])
    r["whatif_runs"] = runs
    checks = [v.get("check") for v in whatif.get("variants") or []]
    r["whatif_output_check"] = bool(checks) and all(c and c["chain"]["beyond"] == 0 for c in checks)
    if not r["whatif_output_check"]:
        notes.append("the what-if's output check failed or was not done")
    if report is not None:
        fused_recs = [x for x in report if x.get("mode") == "fused"]
        r["fused_processes"] = len(fused_recs)
        r["fused_norms"] = sorted({x.get("norms") for x in fused_recs})
        r["fused_check_ok"] = bool(fused_recs) and all(x.get("ok") for x in fused_recs)
        worst = lambda k: max(((x.get("check") or {}).get(k) or 0) for x in fused_recs) if fused_recs else None  # noqa: E731
        r["fused_max_abs_err"], r["fused_max_rel_err"] = worst("max_abs_err"), worst("max_rel_err")
        if r["fused_norms"] != [runs]:
            notes.append(f"the what-if replaced {runs} runs, the fused program {r['fused_norms']} RMSNorms")
        if not r["fused_check_ok"]:
            notes.append("the fused program's first-call check failed or left no record")
    r["notes"] = notes
    checked = r["whatif_output_check"] and (report is None or r["fused_check_ok"])
    for d in designs.values():
        d["accepted"] = bool(d.pop("within") and checked)
    r["designs"] = designs
    r["accepted"] = designs[design]["accepted"]
    return r


def pct(x):
    return "n/a" if x is None else f"{100 * x:+.1f}%"


def lines(r):
    """The comparison as text."""
    u, f, p, m = r["unfused"], r["fused"], r["predicted"], r["measured"]
    out = [f"{r['workload']} on {r['gpu']}: the what-if replaced {r['whatif_runs']} runs; its output check "
           f"{'passed' if r['whatif_output_check'] else 'FAILED or not done'}"]
    if "fused_norms" in r:
        out.append(f"fused program: {r['fused_norms']} RMSNorms replaced in {r['fused_processes']} processes, first-call check "
                   f"{'passed' if r['fused_check_ok'] else 'FAILED'} (max |err| {r['fused_max_abs_err']}, "
                   f"{r['fused_max_rel_err']} of max |y|)")
    out.append(f"measured: unfused {u['wall_ms']:.3f} ms, {u['energy_j']:.3f} J; fused {f['wall_ms']:.3f} ms, "
               f"{f['energy_j']:.3f} J per inference (per-process medians, ms: {u['median_ms_per_process']} and "
               f"{f['median_ms_per_process']})")
    rng = m.get("process_range_ns")
    pt = "n/a" if p["time_ns"] is None else f"{p['time_ns'] / 1e3:.1f} us"
    out.append(f"time saving: predicted {pt} ({p['time_from']}), measured {m['time_ns'] / 1e3:.1f} us"
               + (f" (between processes {rng[0] / 1e3:.1f} to {rng[1] / 1e3:.1f} us)" if rng else "")
               + f": error {pct(r['time_err'])} (tolerance {100 * r['time_tol']:.0f}%)")
    if "event_ns" in m:
        out.append(f"  (on the GPU's clock, CUDA events: measured {m['event_ns'] / 1e3:.1f} us, error {pct(r.get('event_err'))})")
    ej = "n/a" if p["energy_j"] is None else f"{p['energy_j']:.4f} J"
    out.append(f"energy saving: predicted {ej} ({p['energy_from']}), measured {m['energy_j']:.4f} J: error "
               f"{pct(r['energy_err'])} (tolerance {100 * r['energy_tol']:.0f}%)")
    for name, d in r["designs"].items():
        dp = d["predicted"]
        t = "n/a" if dp["time_ns"] is None else f"{dp['time_ns'] / 1e3:.1f} us"
        e = "n/a" if dp["energy_j"] is None else f"{dp['energy_j']:.4f} J"
        why = "" if dp["time_ns"] is not None and dp["energy_j"] is not None else \
            f" ({dp['time_from'] if dp['time_ns'] is None else dp['energy_from']})"
        out.append(f"design {name}{' (compared)' if name == r['design'] else ''}: time {t}, error {pct(d['time_err'])}; "
                   f"energy {e}, error {pct(d['energy_err'])}: {'accepted' if d['accepted'] else 'not accepted'}{why}")
    out += ["note: " + n for n in r["notes"]]
    out.append(("ACCEPTED" if r["accepted"] else "NOT ACCEPTED") + f" (design {r['design']})")
    return out


def read_report(path):
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def main(argv):
    args, report, out, design = [], None, None, "timeline"
    it = iter(argv)
    for a in it:
        if a == "-report":
            report = next(it, None)
        elif a == "-json":
            out = next(it, None)
        elif a == "-design":
            design = next(it, None)
        else:
            args.append(a)
    if len(args) != 3 or (report is None and "-report" in argv) or (out is None and "-json" in argv) or design not in DESIGNS:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        with open(args[0]) as f:
            w = json.load(f)
        unf, fus = measured_run(args[1]), measured_run(args[2])
        rep = read_report(report) if report and os.path.exists(report) else ([] if report else None)
        r = compare(w, unf, fus, rep, design)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"whatif_compare: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines(r)))
    if out:
        with open(out, "w") as f:
            json.dump(r, f, indent=2)
    return 0 if r["accepted"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
