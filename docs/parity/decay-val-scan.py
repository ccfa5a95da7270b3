# which salsa-probe runs could the decay-val rule change: an epoch end e
# (not the last) at or after the second one of the decay where the metric
# is worse than its best since the decay's first epoch end.
# Usage: python3 decay-val-scan.py DIR... prints, per compare directory,
# the count of such runs, the count of runs, and their names.
import csv,glob,os,sys
def runs(d):
    return sorted(glob.glob(d+'/runs/salsa-probe-lr*-s*/epochs.csv'))
for d in sys.argv[1:]:
    fl=[]; n=0
    for f in runs(d):
        rows=list(csv.DictReader(open(f)))
        if not rows: continue
        text=rows[0]['test_ppl'] not in ('','NaN','nan')
        lr=[float(r['lr']) for r in rows]
        m=[float(r['val_loss']) if text else -float(r['val_acc']) for r in rows]
        E=len(rows); ds=0
        for i in range(1,E):
            if lr[i]>lr[i-1]*1.0001: ds=i
        n+=1
        if ds+1>=E: continue
        best=m[ds+1]; fe=None
        for e in range(ds+2,E-1):
            if m[e]>=best: fe=e+1; break
            best=min(best,m[e])
        if fe: fl.append(os.path.basename(os.path.dirname(f)))
    print(os.path.basename(d), len(fl), n, ' '.join(fl))
