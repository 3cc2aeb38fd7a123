"""Where an epoch's training time goes, the plain loop against Lightning, on the same folder and
the same kind of DataLoader: time blocked on the loader, forward, backward, and the optimizer step.

    cd benchmarks/scripts && python lightning_phases.py --data folder --n 2000 --size 128 --bs 32 \\
        --backbone resnet10t --workers 1 --epochs 4

folder_ab.py once put Lightning 6 % ahead of the plain loop on the very DataLoaders the plain
loop reads, though their compute on in-memory tensors is level. This splits each training phase
(no validation: Lightning runs none without a validation loader) so that a lead shows where it
comes from. The two alternate epochs in one process, the order turning each round, after one
untimed round each; Lightning's phases come from its hooks, the plain loop's from timers around
the same calls. Prints one line of seconds per epoch and contender.
"""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _data  # noqa: E402
from _lightning_module import Classifier  # noqa: E402

PHASES = ("data", "forward", "backward", "step")


class TimedClassifier(Classifier):
    """The Lightning contender: Classifier with its phases timed from the hooks between them."""

    def on_train_epoch_start(self):
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.started = self.last = time.perf_counter()

    def _lap(self, phase):
        now = time.perf_counter()
        self.seconds[phase] += now - self.last
        self.last = now

    def on_train_batch_start(self, batch, batch_idx):
        self._lap("data")

    def on_before_backward(self, loss):
        self._lap("forward")

    def on_after_backward(self):
        self._lap("backward")

    def on_train_batch_end(self, outputs, batch, batch_idx):
        self._lap("step")

    def on_train_epoch_end(self):
        self.seconds["total"] = time.perf_counter() - self.started


def main():
    args = _data.parse_args()
    import pytorch_lightning as pl
    import timm
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader

    images, labels, classes = _data.load(args)
    train_ds, _ = _data.torchvision_datasets(args, images, labels, classes)

    def loader():
        return DataLoader(train_ds, batch_size=args.bs, shuffle=True, drop_last=True,
                          generator=torch.Generator().manual_seed(0), **_data.loader_kwargs(args))

    def plain_contender():
        model = timm.create_model(args.backbone, num_classes=len(classes), in_chans=3)
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.99), eps=1e-5, weight_decay=0.01)
        dl = loader()

        def epoch():
            seconds = dict.fromkeys(PHASES, 0.0)
            model.train()
            started = last = time.perf_counter()

            def lap(phase):
                nonlocal last
                now = time.perf_counter()
                seconds[phase] += now - last
                last = now
            for xb, yb in dl:
                lap("data")
                loss = F.cross_entropy(model(xb), yb)
                lap("forward")
                loss.backward()
                lap("backward")
                opt.step()
                opt.zero_grad(set_to_none=True)
                lap("step")
            seconds["total"] = time.perf_counter() - started
            return seconds
        return epoch

    def lightning_contender():
        module, dl = TimedClassifier(args.backbone, len(classes), lr=args.lr), loader()

        def epoch():
            pl.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_checkpointing=False,
                       enable_progress_bar=False, enable_model_summary=False).fit(module, dl)
            return module.seconds
        return epoch

    contenders = {"plain": plain_contender(), "lightning": lightning_contender()}
    for fn in contenders.values():
        fn()  # untimed
    names = list(contenders)
    for r in range(args.epochs):
        for name in names[r % 2:] + names[:r % 2]:
            seconds = contenders[name]()
            print(json.dumps({"round": r, "contender": name, "load": open("/proc/loadavg").read().split()[0],
                              **{k: round(v, 2) for k, v in seconds.items()}}), flush=True)


if __name__ == "__main__":
    main()
