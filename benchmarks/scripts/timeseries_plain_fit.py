"""A plain PyTorch loop on the series workload (scripts/_series.py): the floor hotstart is measured against."""
from _milestones import mark, result
from _plain_loop import fit
import _series

args = _series.parse_args()
import numpy as np
import torch
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
accuracy, train_loss = fit(model, train_dl, valid_dl, epochs=args.epochs, lr=args.lr,
                           images_per_epoch=_series.series_per_epoch(len(ds), args.bs))
result(accuracy=accuracy, train_loss=train_loss)
