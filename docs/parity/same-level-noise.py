# How far a ten-seed median of salsa-probe moves when its runs are changed
# the way the norm cap's same-level runs were (docs/parity/norm.md): the cap
# ended the probe a window early at the level the run had, so the decay ran
# on other mini-batches from nearly the same point. Reads the pairs that
# `bash scripts/norm.sh same TASK:N0...` prints (task, run, metric without
# and with the cap, ppl or acc) on stdin; per metric kind it prints the
# pairs' change (relative for perplexity, in points for accuracy), then for
# each DIR (a ten-seed salsa compare directory) and lr0 the median of
# salsa-probe's ten runs and the spread of that median when every run is
# changed by a change drawn from the pairs (4000 draws, fixed seed).
# Usage: bash scripts/norm.sh same ... | python3 same-level-noise.py DIR...
import random, statistics, sys
random.seed(1)
ch = {'ppl': [], 'acc': []}
for line in sys.stdin:
    t, run, a, b, kind = line.split()
    a, b = float(a), float(b)
    ch[kind].append((b - a) / a if kind == 'ppl' else b - a)
for kind, xs in ch.items():
    if xs:
        u = 100  # percent, or points
        print('%s: %d pairs, change mean %+.2f, sd %.2f, from %+.2f to %+.2f %s' % (kind, len(xs), u * statistics.mean(xs), u * statistics.pstdev(xs), u * min(xs), u * max(xs), '%' if kind == 'ppl' else 'pp'))
def final(d, col):
    return float(open(d + '/epochs.csv').read().strip().split('\n')[-1].split(',')[col])
for d in sys.argv[1:]:
    import json
    kind = 'ppl' if json.load(open(d + '/runs/salsa-probe-lr0.01-s1/run.json'))['plan']['options']['dataset'] == 'tinyshakespeare' else 'acc'
    col = 6 if kind == 'ppl' else 5
    for lr in ('0.001', '0.01', '0.1'):
        xs = [final('%s/runs/salsa-probe-lr%s-s%d' % (d, lr, s), col) for s in range(1, 11)]
        m0 = statistics.median(xs)
        sh = []
        for _ in range(4000):
            if kind == 'ppl':
                sh.append(100 * (statistics.median([x * (1 + random.choice(ch[kind])) for x in xs]) - m0) / m0)
            else:
                sh.append(100 * (statistics.median([x + random.choice(ch[kind]) for x in xs]) - m0))
        sh.sort()
        print('%s lr0 %s: median %.4g, its change sd %.2f, 90%% within %+.2f to %+.2f %s' % (d, lr, m0, statistics.pstdev(sh), sh[200], sh[3799], '%' if kind == 'ppl' else 'pp'))
