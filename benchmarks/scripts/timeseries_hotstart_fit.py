"""hotstart on the series workload (scripts/_series.py), through the public API."""
from _milestones import EpochClock, mark, result
import _series

args = _series.parse_args()
from hotstart import TSClassificationSingle, datasets, tasklearner
from hotstart.learner import Callback
from hotstart.models.inception_time import InceptionTime

mark("imported")
clock = EpochClock()


class EpochEnd(Callback):
    def after_epoch(self):
        clock.epoch_end(_series.series_per_epoch(len(train[0]), args.bs))


data, blocks = datasets.load("ItalyPowerDemand")
train = data.split("train")
learner = tasklearner(TSClassificationSingle(blocks), train, validdata=train, backbone=InceptionTime(1, nf=args.nf),
                      batch_size=args.bs, seed=0, progress=False, callbacks=[EpochEnd()])
mark("ready")
learner.fit_one_cycle(args.epochs, lr_max=args.lr)
mark("fit_end")
last = learner.history[-1]
result(accuracy=float(last.get("accuracy", float("nan"))), train_loss=float(last["train_loss"]))
