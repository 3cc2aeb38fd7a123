"""A plain PyTorch loop on the series workload (scripts/_series.py): the floor hotstart is measured against."""
from _milestones import EpochClock, mark, result
import _series

args = _series.parse_args()
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from hotstart.datasets.ts_format import read_ts  # the same file and model; nothing of the learner
from hotstart.datasets.timeseries_builtin import series_files
from hotstart.models.inception_time import InceptionTime

mark("imported")
torch.manual_seed(0)
f = read_ts(series_files("ItalyPowerDemand")[0])
x = np.stack(f.series)
x = ((x - x.mean()) / x.std()).astype(np.float32)  # one channel: the training split's mean and std
classes = sorted(set(f.labels))
y = np.array([classes.index(v) for v in f.labels])
ds = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
train_dl = DataLoader(ds, batch_size=args.bs, shuffle=True, drop_last=True)
valid_dl = DataLoader(ds, batch_size=args.bs)
backbone = InceptionTime(1, nf=args.nf)
model = torch.nn.Sequential(backbone, torch.nn.Linear(backbone.num_features, len(classes)))
opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.99), eps=1e-5, weight_decay=0.01)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.epochs * len(train_dl),
                                            pct_start=0.25, div_factor=25.0, final_div_factor=1e5 / 25.0,
                                            base_momentum=0.85, max_momentum=0.95)
mark("ready")
clock = EpochClock()
for epoch in range(args.epochs):
    model.train()
    for xb, yb in train_dl:
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for xb, yb in valid_dl:
            correct += (model(xb).argmax(1) == yb).sum().item()
            total += len(yb)
    clock.epoch_end(_series.series_per_epoch(len(ds), args.bs))
mark("fit_end")
result(accuracy=correct / total, train_loss=loss.item())
