"""A plain PyTorch + timm loop doing the same work: the floor the others are measured against.

Same augmentation as hotstart's defaults (random resized crop 0.7-1.0, flip, rotate +-10 degrees,
brightness/contrast +-0.2), same optimizer and schedule (scripts/_plain_loop.py), the workers of
`--workers` (default 0).

`--preload` is the compute bound of the folder workload: every image decoded and resized once,
before the "ready" milestone, to the float tensor the model sees (validation's resize +
normalize, no augmentation); the same model, batch size, shuffling and number of batches, with
nothing left to load but slicing tensors (in the main process: a worker would only add copies).

`--expert` is the expert's loop of the time-to-accuracy benchmark (benchmarks/tta.py): this same
script with what an expert switches on by hand (_plain_loop.Speedups): bf16 autocast where the CPU
has bf16 units (AMX or AVX-512 BF16, read from /proc/cpuinfo: elsewhere bf16 is emulated, about 5x
slower on this project's AVX2 machine, and no expert would turn it on), channels_last model and
batches, fused AdamW, and persistent DataLoader workers (with `--workers` > 0: the workers are not
started again every epoch).
"""
from _milestones import mark, result
from _plain_loop import PLAIN, Speedups, fit
import _data

args = _data.parse_args()
import timm
import torch
from torch.utils.data import DataLoader
import torchvision.transforms.v2  # noqa: F401  (loaded before the "imported" milestone, as before)

mark("imported")
torch.manual_seed(args.seed)
images, labels, classes = _data.load(args)
train_ds, valid_ds = _data.torchvision_datasets(args, images, labels, classes)
if args.expert:
    args.persistent = True
workers = _data.loader_kwargs(args)
if args.preload:
    from torch.utils.data import TensorDataset

    def in_memory(idx):
        _, resize_only = _data.torchvision_datasets(args, images, labels, classes)  # resize + normalize
        resize_only.idx = idx
        xs, ys = zip(*(resize_only[i] for i in range(len(resize_only))))
        return TensorDataset(torch.stack(xs), torch.tensor(ys))

    train_ds, valid_ds = in_memory(train_ds.idx), in_memory(valid_ds.idx)
    workers = {}

train_dl = DataLoader(train_ds, batch_size=args.bs, shuffle=True, drop_last=True, **workers)
valid_dl = DataLoader(valid_ds, batch_size=args.bs, **workers)
model = timm.create_model(args.backbone, pretrained=False, num_classes=len(classes), in_chans=1 if args.data == "digits" else 3)
speedups = Speedups(bf16=_data.cpu_has_bf16(), channels_last=True, fused_adamw=True) if args.expert else PLAIN
accuracy, train_loss = fit(model, train_dl, valid_dl, epochs=args.epochs, lr=args.lr,
                           images_per_epoch=len(train_dl) * args.bs + len(valid_ds), speedups=speedups)
result(accuracy=accuracy, train_loss=train_loss, expert=args.expert, bf16=speedups.bf16)
