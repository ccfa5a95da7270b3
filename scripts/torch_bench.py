#!/usr/bin/python3
"""PyTorch CPU reference benchmark: time of one training step.

ONLY for side-by-side measurements against the Go engine. The salsa project
itself never needs Python; nothing in the build or the tests uses this file.

Install (Debian 12; PyTorch 1.13, CPU only):

    apt-get update -qq && apt-get install -y -qq python3-torch libopenblas0-openmp

libopenblas0-openmp matters: python3-torch alone pulls in the netlib reference
BLAS (libblas3), with which every GEMM is 10-25x slower (mlp ~100 ms/step
instead of ~4). Check with
    update-alternatives --display libblas.so.3-x86_64-linux-gnu
that the link points to openblas-openmp.

Debian's package is installed for the system interpreter, so run it with
/usr/bin/python3 explicitly (a `python3` on PATH may be a pyenv interpreter
without torch):

    PYTHONUNBUFFERED=1 /usr/bin/python3 scripts/torch_bench.py \
        --models mlp,cnn,resnet20,lstm --threads 1,2 --steps 10 --rounds 3

One step = forward + loss + backward (+ clip_grad_norm_ for the LSTMs) +
torch.optim.SGD(lr=0.01, momentum=0.9, dampening=0.9, weight_decay=wd), i.e.
the "dampened heavy ball" h <- 0.9 h + 0.1 g (PyTorch seeds h with g on the
very first step; irrelevant for timing). Data is random, of the right shape,
from a fixed seed.

Models (the Go side builds exactly the same ones):
  mlp        flatten, 784-512-512-10, ReLU; input [B,1,28,28]; wd 1e-4
  cnn        conv3x3 32 (pad 1) ReLU maxpool2; conv3x3 64 (pad 1) ReLU
             maxpool2; flatten; dense 128 ReLU; dense 10; [B,1,28,28]; wd 1e-4
  resnet20   He et al. 2016 CIFAR ResNet-20 (16/32/64, 3 blocks per stage,
             1x1 conv+BN projection shortcuts at the stride-2 blocks);
             input [B,1,28,28] (default) or [B,3,32,32] (--resnet20-input
             32x32x3); wd 5e-4
  resnet18   kuangliu pytorch-cifar ResNet-18 (3x3 stem, no max-pool,
             64/128/256/512 x 2 blocks); input [B,3,32,32]; wd 5e-4
  lstm       char LM: Embedding(65,256), dropout 0.2, 2-layer LSTM(256,256,
             dropout 0.2), dropout 0.2, Linear(256,65) tied to the embedding;
             tokens int64 [T=64, B] (seq-first); hidden carried (detached);
             CE over all tokens; clip 0.25; wd 0
  lstm-paper WikiText-2 "large" LM: vocab 33278, emb 1500, 2-layer LSTM 1500,
             dropout 0.65, tied; BPTT 35, batch 20; clip 0.25; wd 0

Default batch: 128 for image models, 32 for lstm, 20 for lstm-paper
(--batch overrides it for every model).

Schedule: for every (model, thread count), --warmup untimed steps are run
right before each timed chunk of --steps steps (after torch.set_num_threads);
rounds are interleaved (round 1 of every config, then round 2, ...). The
reported figure is the median over rounds of the per-step mean of a chunk.

Output (stdout):
  # torch <version> ...                     header comment lines
  params: model=M n=<count>                 trainable parameters (tied
                                            weights counted once)
  bench: model=M engine=pytorch-Nt kind=plain ms_per_step=X   per thread count
  bench: model=M engine=pytorch kind=plain ms_per_step=X      min over threads
"""

import argparse
import platform
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

IMAGE_MODELS = ("mlp", "cnn", "resnet20", "resnet18")
ALL_MODELS = IMAGE_MODELS + ("lstm", "lstm-paper")


# ---------------------------------------------------------------- models


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 512)
        self.fc2 = nn.Linear(512, 512)
        self.fc3 = nn.Linear(512, 10)

    def forward(self, x):
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1, bias=True)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1, bias=True)
        self.fc1 = nn.Linear(64 * 7 * 7, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


class BasicBlock(nn.Module):
    """conv3x3-BN-ReLU-conv3x3-BN + shortcut, ReLU. Projection shortcut
    (1x1 conv, no bias, + BN) when stride != 1 or channels change."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                nn.BatchNorm2d(cout),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class CifarResNet(nn.Module):
    """3x3 stem conv (no bias) + BN + ReLU, no max-pool; stages of basic
    blocks, stride 2 at the first block of every stage but the first;
    global average pool; linear."""

    def __init__(self, in_ch, widths, blocks, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, widths[0], 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        layers = []
        cin = widths[0]
        for i, (w, n) in enumerate(zip(widths, blocks)):
            for j in range(n):
                stride = 2 if (i > 0 and j == 0) else 1
                layers.append(BasicBlock(cin, w, stride))
                cin = w
        self.layers = nn.Sequential(*layers)
        self.linear = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layers(x)
        x = F.adaptive_avg_pool2d(x, 1)
        x = torch.flatten(x, 1)
        return self.linear(x)


def resnet20(in_ch):
    return CifarResNet(in_ch, (16, 32, 64), (3, 3, 3))


def resnet18():
    return CifarResNet(3, (64, 128, 256, 512), (2, 2, 2, 2))


class RNNLM(nn.Module):
    """word_language_model style: encoder, dropout, nn.LSTM, dropout,
    decoder tied to the encoder weight. Seq-first tensors."""

    def __init__(self, vocab, emb, hidden, layers, dropout):
        super().__init__()
        assert emb == hidden, "tied weights need emb == hidden"
        self.vocab, self.hidden, self.layers = vocab, hidden, layers
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, layers, dropout=dropout)
        self.decoder = nn.Linear(hidden, vocab)
        self.decoder.weight = self.encoder.weight

    def forward(self, tokens, hidden):
        emb = self.drop(self.encoder(tokens))
        out, hidden = self.rnn(emb, hidden)
        out = self.drop(out)
        return self.decoder(out), hidden  # [T, B, V]

    def init_hidden(self, batch):
        z = torch.zeros(self.layers, batch, self.hidden)
        return (z, z.clone())


# ---------------------------------------------------------------- steps


class Bench:
    """Holds one model, its optimizer, its data, and does one step."""

    def __init__(self, name, batch, resnet20_input):
        self.name = name
        self.clip = None
        self.lm = False
        g = torch.Generator().manual_seed(1234)
        if name == "mlp":
            model, wd, shape = MLP(), 1e-4, (1, 28, 28)
        elif name == "cnn":
            model, wd, shape = CNN(), 1e-4, (1, 28, 28)
        elif name == "resnet20":
            if resnet20_input == "32x32x3":
                shape = (3, 32, 32)
            else:
                shape = (1, 28, 28)
            model, wd = resnet20(shape[0]), 5e-4
        elif name == "resnet18":
            model, wd, shape = resnet18(), 5e-4, (3, 32, 32)
        elif name == "lstm":
            model = RNNLM(65, 256, 256, 2, 0.2)
            wd, self.clip, self.lm, self.bptt = 0.0, 0.25, True, 64
        elif name == "lstm-paper":
            model = RNNLM(33278, 1500, 1500, 2, 0.65)
            wd, self.clip, self.lm, self.bptt = 0.0, 0.25, True, 35
        else:
            raise ValueError(name)
        self.model = model
        self.model.train()
        self.opt = torch.optim.SGD(
            model.parameters(), lr=0.01, momentum=0.9, dampening=0.9,
            weight_decay=wd)
        self.batch = batch
        if self.lm:
            v = model.vocab
            seq = torch.randint(0, v, (self.bptt + 1, batch), generator=g,
                                dtype=torch.int64)
            self.x = seq[:-1].contiguous()
            self.y = seq[1:].contiguous().view(-1)
            self.hidden = model.init_hidden(batch)
            self.shape = "tokens[%d,%d] vocab=%d" % (self.bptt, batch, v)
        else:
            self.x = torch.randn((batch,) + shape, generator=g)
            self.y = torch.randint(0, 10, (batch,), generator=g,
                                   dtype=torch.int64)
            self.shape = "input[%d,%d,%d,%d]" % ((batch,) + shape)
        self.wd = wd

    def n_params(self):
        # parameters() de-duplicates shared (tied) tensors.
        return sum(p.numel() for p in self.model.parameters() if p.requires_grad)

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        if self.lm:
            h = tuple(t.detach() for t in self.hidden)
            out, self.hidden = self.model(self.x, h)
            loss = F.cross_entropy(out.view(-1, self.model.vocab), self.y)
        else:
            loss = F.cross_entropy(self.model(self.x), self.y)
        loss.backward()
        if self.clip is not None:
            nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.opt.step()
        return loss


# ---------------------------------------------------------------- main


def blas_in_use():
    """The BLAS library actually mapped (Linux only), e.g. to catch the
    slow netlib reference BLAS."""
    try:
        import os
        libs = set()
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if "blas" in os.path.basename(path):
                    libs.add(os.path.realpath(path))
        return ", ".join(sorted(libs)) or "none found"
    except OSError:
        return "unknown"


def parse_list(s, conv=str):
    return [conv(t) for t in s.split(",") if t.strip()]


def main():
    try:
        sys.stdout.reconfigure(line_buffering=True)
    except AttributeError:
        pass
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="mlp,cnn,resnet20,lstm",
                    help="comma list of " + ",".join(ALL_MODELS))
    ap.add_argument("--batch", type=int, default=0,
                    help="batch for every model (default: 128 image, "
                         "32 lstm, 20 lstm-paper)")
    ap.add_argument("--threads", default="1",
                    help="comma list of torch.set_num_threads values")
    ap.add_argument("--steps", type=int, default=10,
                    help="timed steps per round")
    ap.add_argument("--rounds", type=int, default=3,
                    help="interleaved rounds; the median is reported")
    ap.add_argument("--warmup", type=int, default=2,
                    help="untimed steps before each timed chunk")
    ap.add_argument("--resnet20-input", default="28x28x1",
                    choices=("28x28x1", "32x32x3"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    models = parse_list(args.models)
    for m in models:
        if m not in ALL_MODELS:
            ap.error("unknown model %r (want %s)" % (m, ",".join(ALL_MODELS)))
    threads = parse_list(args.threads, int)
    if not threads or min(threads) < 1:
        ap.error("bad --threads")
    if args.steps < 1 or args.rounds < 1 or args.warmup < 0:
        ap.error("bad --steps/--rounds/--warmup")

    torch.manual_seed(args.seed)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass

    print("# torch %s python %s %s; intra-op threads default %d; "
          "mkldnn %s" % (torch.__version__, platform.python_version(),
                         platform.machine(), torch.get_num_threads(),
                         torch.backends.mkldnn.is_available()), flush=True)
    print("# blas: %s" % blas_in_use(), flush=True)
    print("# steps=%d rounds=%d warmup=%d threads=%s"
          % (args.steps, args.rounds, args.warmup,
             ",".join(map(str, threads))), flush=True)

    benches = []
    for m in models:
        if args.batch > 0:
            b = args.batch
        else:
            b = {"lstm": 32, "lstm-paper": 20}.get(m, 128)
        bench = Bench(m, b, args.resnet20_input)
        benches.append(bench)
        print("# model=%s batch=%d %s wd=%g" % (m, b, bench.shape, bench.wd),
              flush=True)
        print("params: model=%s n=%d" % (m, bench.n_params()), flush=True)

    times = {(b.name, t): [] for b in benches for t in threads}
    for r in range(args.rounds):
        for b in benches:
            for t in threads:
                torch.set_num_threads(t)
                for _ in range(args.warmup):
                    b.step()
                t0 = time.perf_counter()
                for _ in range(args.steps):
                    loss = b.step()
                float(loss)  # make sure the step really finished
                ms = (time.perf_counter() - t0) * 1e3 / args.steps
                times[(b.name, t)].append(ms)
                print("# round=%d model=%s threads=%d ms_per_step=%.3f "
                      "loss=%.4f" % (r + 1, b.name, t, ms, float(loss)),
                      flush=True)

    for b in benches:
        best = None
        for t in threads:
            med = statistics.median(times[(b.name, t)])
            print("bench: model=%s engine=pytorch-%dt kind=plain "
                  "ms_per_step=%.3f" % (b.name, t, med), flush=True)
            best = med if best is None else min(best, med)
        print("bench: model=%s engine=pytorch kind=plain ms_per_step=%.3f"
              % (b.name, best), flush=True)


if __name__ == "__main__":
    main()
