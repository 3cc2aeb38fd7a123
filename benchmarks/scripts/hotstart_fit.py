"""hotstart: the workload through the public API (tasklearner + fit_one_cycle)."""
from _milestones import EpochClock, mark, result
import _data

args = _data.parse_args()
from hotstart import Image, Label, ImageClassificationSingle, tasklearner
from hotstart.learner import Callback

mark("imported")
clock = EpochClock()


class EpochEnd(Callback):
    def after_epoch(self):
        clock.epoch_end(_data.images_per_epoch(len(data[0]), args.bs))


if args.data == "digits":
    from hotstart import datasets

    data, blocks = datasets.load("digits")
    if args.n:
        data = data.subset(list(range(args.n)))
    task = ImageClassificationSingle(blocks, size=(args.size, args.size), augment={"flip": 0.0})
elif args.data == "folder":  # JPEG files, decoded every epoch
    from hotstart import datasets

    data, blocks = datasets.ImageFolders(_data.folder_path(args.n, args.classes))
    task = ImageClassificationSingle(blocks, size=(args.size, args.size))
else:
    images, labels, classes = _data.synthetic(args.n, args.image_size or args.size, args.classes)
    data = (images, labels)
    task = ImageClassificationSingle((Image(), Label(classes)), size=(args.size, args.size))
options = {} if args.workers is None else {"num_workers": args.workers}  # default: hotstart's own choice
if args.cache:
    options["cache"] = args.cache
learner = tasklearner(task, data, backbone=args.backbone, batch_size=args.bs, seed=0, progress=False,
                      compile=args.compile, callbacks=[EpochEnd()], **options)
mark("ready")
learner.fit_one_cycle(args.epochs, lr_max=args.lr)
mark("fit_end")
last = learner.history[-1]
result(accuracy=float(last.get("accuracy", float("nan"))), train_loss=float(last["train_loss"]),
       num_workers=[learner.train_loader.num_workers, learner.valid_loader.num_workers])
