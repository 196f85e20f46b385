import json, sys, statistics as st
d = json.load(open(sys.argv[1]))
def q(v, p): v = sorted(v); return v[int(p * (len(v) - 1))] if v else 0
for k in sorted(d, key=lambda k: (k.split('/',1)[1], k)):
    rs = d[k]
    durs, gaps = [], []
    for i, r in enumerate(rs):
        if r["k"] != "set" or i == 0: continue
        durs.append(r["End"] - r["Start"]); gaps.append(r["Start"] - rs[i-1]["End"])
    durs, gaps = durs[len(durs)//10:], gaps[len(gaps)//10:]
    near = [x for x, g in zip(durs, gaps) if g < 200]
    far = [x for x, g in zip(durs, gaps) if g >= 1000]
    print(f"{k:28s} n={len(durs):4d} dur med {q(durs,.5):5d} p10 {q(durs,.1):5d} p90 {q(durs,.9):5d} | gap med {q(gaps,.5):6d} | gap<200ns: n={len(near):4d} med {q(near,.5):5d} | gap>=1us: n={len(far):4d} med {q(far,.5):5d}")
