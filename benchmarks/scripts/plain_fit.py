"""A plain PyTorch + timm loop doing the same work: the floor the others are measured against.

Same augmentation as hotstart's defaults (random resized crop 0.7-1.0, flip, rotate +-10 degrees,
brightness/contrast +-0.2), same optimizer (AdamW, betas (0.9, 0.99), eps 1e-5, wd 0.01), same
one-cycle schedule (warm-up 25%, div 25, final lr_max/1e5), num_workers 0.
"""
from _milestones import EpochClock, mark, result
import _data

args = _data.parse_args()
import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
import torchvision.transforms.v2  # noqa: F401  (loaded before the "imported" milestone, as before)

mark("imported")
torch.manual_seed(0)
images, labels, classes = _data.load(args)
train_ds, valid_ds = _data.torchvision_datasets(args, images, labels, classes)
if args.preload:  # the compute bound: every image decoded and resized once, no augmentation, no decoding
    from torch.utils.data import TensorDataset

    _, resize_only = _data.torchvision_datasets(args, images, labels, classes)  # its transform: resize + normalize
    resize_only.idx = train_ds.idx
    train_ds = TensorDataset(*(torch.stack(t) if i == 0 else torch.tensor(t) for i, t in
                               enumerate(zip(*[resize_only[i] for i in range(len(resize_only))]))))
    valid_ds = TensorDataset(*(torch.stack(t) if i == 0 else torch.tensor(t) for i, t in
                               enumerate(zip(*[valid_ds[i] for i in range(len(valid_ds))]))))

train_dl = DataLoader(train_ds, batch_size=args.bs, shuffle=True, drop_last=True)
valid_dl = DataLoader(valid_ds, batch_size=args.bs)
model = timm.create_model(args.backbone, pretrained=False, num_classes=len(classes), in_chans=1 if args.data == "digits" else 3)
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
    clock.epoch_end(len(train_dl) * args.bs + total)
mark("fit_end")
result(accuracy=correct / total, train_loss=loss.item())
