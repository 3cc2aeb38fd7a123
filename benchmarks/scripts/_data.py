"""The benchmark workloads' data and arguments, shared by every contender script.

numpy + PIL only, so the cost of importing it is the same for every contender. Every script gets
the same images (fixed seed) and the same 80/20 split sizes.
"""
import argparse
import importlib.util
from pathlib import Path

IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
GRAY_MEAN, GRAY_STD = (0.5,), (0.25,)  # hotstart's defaults for 1-channel images


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--data", choices=["synthetic", "digits", "folder", "jpegdigits"], default="synthetic",
                   help="jpegdigits: the time-to-accuracy folder (scripts/_jpeg_digits.py), --n files, 80/20 in "
                        "train/ and valid/ folders")
    p.add_argument("--preload", action="store_true",
                   help="plain only: decode and resize every image once, train on tensors (the compute bound)")
    p.add_argument("--expert", action="store_true",
                   help="plain only: the expert's loop (bf16 autocast, channels_last, fused AdamW, persistent workers)")
    p.add_argument("--n", type=int, default=100, help="number of images (digits: first n, 0 = all)")
    p.add_argument("--size", type=int, default=64, help="input size (square) the model sees")
    p.add_argument("--image_size", "--image-size", type=int, default=None,
                   help="synthetic images' own size (default: --size); they are resized to --size")
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--bs", type=int, default=16)
    p.add_argument("--backbone", default="resnet18")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--compile", action="store_true", help="hotstart only: tasklearner(compile=True)")
    p.add_argument("--workers", type=int, default=None,
                   help="DataLoader worker processes (default: hotstart's own choice for hotstart, 0 for the others)")
    p.add_argument("--persistent", action="store_true", help="persistent_workers=True (with --workers > 0)")
    p.add_argument("--cache", default=None, help='hotstart only: tasklearner(cache=...), e.g. "resized"')
    p.add_argument("--seed", type=int, default=0, help="the run's seed: weights, shuffling, augmentation "
                                                       "(the train/valid split stays fixed)")
    p.add_argument("--defaults", action="store_true",
                   help="hotstart only: its own defaults for batch size and learning rate (--bs, --lr ignored)")
    return p.parse_args(argv)


def synthetic(n, size, classes=10, seed=0):
    """(PIL RGB images, labels "0".."classes-1", classes): random pixels from a fixed numpy seed."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, size=(n, size, size, 3), dtype=np.uint8)
    labels = [str(int(c)) for c in rng.integers(0, classes, n)]
    return [Image.fromarray(a) for a in pixels], labels, [str(c) for c in range(classes)]


def digits(n=0):
    """(PIL "L" 8x8 images, int labels, classes 0..9): hotstart's built-in digits file, read with
    numpy (so the plain loop does not import hotstart)."""
    import numpy as np
    from PIL import Image

    spec = importlib.util.find_spec("hotstart")  # locates the package without importing it
    # without hotstart (fastai's own venv): this repository's copy
    package = Path(spec.origin).parent if spec else Path(__file__).resolve().parents[2] / "hotstart"
    path = package / "datasets" / "data" / "digits.npz"
    with np.load(path, allow_pickle=False) as npz:
        images, targets = npz["images"], npz["targets"]
    if n:
        images, targets = images[:n], targets[:n]
    return [Image.fromarray(a) for a in images], [int(t) for t in targets], list(range(10))


FOLDER_SIZE, FOLDER_QUALITY, FOLDER_SEED = 160, 90, 0


def folder_path(n, classes=10):
    """A folder of `n` JPEG files, ``<class>/<i>.jpg``, written once (atomically: into a temporary
    sibling, then renamed) under the system temp dir, from a fixed seed.

    Photograph-like size and entropy: each image is an 8x8 digit of the class upscaled to
    160x160 (bicubic), tinted with a random colour on a random smooth colour gradient, with
    Gaussian noise (sigma 18) on every pixel, saved at JPEG quality 90 (about 10-14 kB a file,
    as a 160x160 photo): decoding costs what it costs for real photographs, not flat colours."""
    import os
    import tempfile

    import numpy as np
    from PIL import Image

    root = Path(tempfile.gettempdir()) / f"hotstart-bench-folder-{n}-{classes}-{FOLDER_SIZE}-q{FOLDER_QUALITY}-s{FOLDER_SEED}"
    if root.is_dir():
        return root
    digit_images, digit_labels, _ = digits()
    by_class = {c: [im for im, t in zip(digit_images, digit_labels) if t == c] for c in range(classes)}
    rng = np.random.default_rng(FOLDER_SEED)
    tmp = Path(tempfile.mkdtemp(prefix=root.name + ".", dir=root.parent))
    yy, xx = np.mgrid[0:FOLDER_SIZE, 0:FOLDER_SIZE] / FOLDER_SIZE
    for i in range(n):
        c = i % classes
        src = by_class[c][int(rng.integers(len(by_class[c])))]
        shape = np.asarray(src.resize((FOLDER_SIZE, FOLDER_SIZE), Image.BICUBIC), dtype=np.float32) / 16.0
        a, b = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
        background = a * (1 - xx[..., None]) + b * yy[..., None] * 0.5
        ink = rng.uniform(0, 255, 3)
        mix = np.clip(shape, 0, 1)[..., None]
        pixels = background * (1 - mix) + ink * mix + rng.normal(0, 18, (FOLDER_SIZE, FOLDER_SIZE, 3))
        out = tmp / str(c)
        out.mkdir(exist_ok=True)
        Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(out / f"{i:05d}.jpg", quality=FOLDER_QUALITY)
    try:
        os.rename(tmp, root)
    except OSError:  # another run wrote it first
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return root


class FolderImages:
    """The folder's images, opened and decoded at each access as torchvision's ImageFolder does
    (``PIL.Image.open(path).convert("RGB")``): the plain and Lightning loops decode every epoch."""

    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        from PIL import Image

        with open(self.paths[i], "rb") as f:
            return Image.open(f).convert("RGB")


def folder(n, classes=10):
    """(FolderImages, labels, classes) in ImageFolder's order (sorted class folders, sorted files)."""
    root = folder_path(n, classes)
    names = sorted((p.name for p in root.iterdir() if p.is_dir()), key=lambda s: (len(s), s))
    paths, labels = [], []
    for c in names:
        for f in sorted((root / c).glob("*.jpg")):
            paths.append(str(f))
            labels.append(c)
    return FolderImages(paths), labels, names


def jpeg_digits_counts(n):
    """(training files, validation files) of the jpegdigits folder of `n` files: 80 / 20."""
    n_valid = max(1, n // 5)
    return n - n_valid, n_valid


def jpeg_digits_root(args):
    """The jpegdigits folder of `args` (written on first use: scripts/_jpeg_digits.py)."""
    from _jpeg_digits import jpeg_digits_path

    def source():  # the digits' fixed split: validation files show handwriting training never saw
        images, labels, _ = digits()
        return (images, labels, *split(len(images)))

    return jpeg_digits_path(*jpeg_digits_counts(args.n), args.size, args.classes, source)


def jpeg_digits(args):
    """(FolderImages, labels, classes) of the jpegdigits folder: its train/ files, then its valid/
    files (`train_valid(args, n)` splits them there), each split in ImageFolder's order."""
    root = jpeg_digits_root(args)
    classes = sorted((p.name for p in (root / "train").iterdir() if p.is_dir()), key=lambda s: (len(s), s))
    paths, labels = [], []
    for part in ("train", "valid"):
        for c in classes:
            for f in sorted((root / part / c).glob("*.jpg")):
                paths.append(str(f))
                labels.append(c)
    return FolderImages(paths), labels, classes


def load(args):
    if args.data == "digits":
        return digits(args.n)
    if args.data == "folder":
        return folder(args.n, args.classes)
    if args.data == "jpegdigits":
        return jpeg_digits(args)
    return synthetic(args.n, args.image_size or args.size, args.classes)


def cpu_has_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether the CPU has bf16 matrix units (the flags ``amx_bf16`` or ``avx512_bf16``): where the
    expert's loop turns bf16 autocast on. Read by hand, not through hotstart, so that the plain
    contenders import nothing of it."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            flags = {w for line in f if line.startswith(("flags", "Features")) for w in line.split(":", 1)[1].split()}
    except OSError:
        return False
    return bool(flags & {"amx_bf16", "avx512_bf16"})


def hotstart_data(args):
    """(data, validdata, blocks) as hotstart's contenders read them: the digits through
    ``datasets.load`` split by `train_valid`, a JPEG folder through ``datasets.ImageFolders`` (its
    own train/ valid/ split; validdata None); None for the synthetic data (the caller builds it)."""
    from hotstart import datasets

    if args.data == "digits":
        data, blocks = datasets.load("digits")
        if args.n:
            data = data.subset(list(range(args.n)))
        train_idx, valid_idx = train_valid(args, len(data[0]))
        return data.subset(train_idx), data.subset(valid_idx), blocks
    if args.data in ("folder", "jpegdigits"):  # JPEG files, decoded every epoch
        root = jpeg_digits_root(args) if args.data == "jpegdigits" else folder_path(args.n, args.classes)
        data, blocks = datasets.ImageFolders(root)
        return data, None, blocks
    return None


def train_valid(args, n):
    """(train, valid) indices into `load(args)`'s samples: the jpegdigits folder's own train/ and
    valid/ files, else `split(n)`. Fixed for every seed and every contender."""
    if args.data == "jpegdigits":
        n_train, _ = jpeg_digits_counts(args.n)
        return list(range(n_train)), list(range(n_train, n))
    return split(n)


def flips(args) -> bool:
    """Whether training flips images horizontally: not digits (a mirrored 2 is no 2)."""
    return args.data not in ("digits", "jpegdigits")


def split(n, valid_pct=0.2, seed=0):
    """Train / valid indices; the same sizes as hotstart's split_random."""
    import numpy as np

    order = np.random.default_rng(seed).permutation(n)
    n_valid = min(max(1, int(round(n * valid_pct))), n - 1)
    return sorted(order[n_valid:].tolist()), sorted(order[:n_valid].tolist())


def images_per_epoch(n, bs):
    """Images one epoch touches: full training batches (drop_last) + the whole validation set."""
    train, valid = split(n)
    return (len(train) // bs) * bs + len(valid)


def loader_kwargs(args) -> dict:
    """DataLoader worker arguments for the plain, Lightning and fastai contenders: `--workers`
    (default 0) and `--persistent`, the same for every contender of a comparison."""
    workers = args.workers or 0
    return {"num_workers": workers, "persistent_workers": bool(args.persistent and workers)}


def torchvision_datasets(args, images, labels, classes):
    """(train, valid) datasets for the plain and Lightning contenders: hotstart's default
    augmentation written with ``torchvision.transforms.v2`` (crop 0.7-1.0, flip except on digits (`flips`),
    rotate 10 degrees, brightness/contrast 0.2), resize-only in validation, then normalize."""
    import torch
    from torch.utils.data import Dataset
    from torchvision.transforms import v2

    gray = args.data == "digits"
    mean, std = (GRAY_MEAN, GRAY_STD) if gray else (IMAGENET_MEAN, IMAGENET_STD)
    size = (args.size, args.size)
    train_tf = v2.Compose([v2.PILToTensor(), v2.RandomResizedCrop(size, scale=(0.7, 1.0), antialias=True),
                           v2.RandomHorizontalFlip(0.5 if flips(args) else 0.0), v2.RandomRotation(10.0),
                           v2.ColorJitter(brightness=0.2, contrast=0.2),
                           v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean, std)])
    valid_tf = v2.Compose([v2.PILToTensor(), v2.Resize(size, antialias=True),
                           v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean, std)])

    class Images(Dataset):
        def __init__(self, idx, tf):
            self.idx, self.tf = idx, tf

        def __len__(self):
            return len(self.idx)

        def __getitem__(self, i):
            j = self.idx[i]
            return self.tf(images[j]), classes.index(labels[j])

    train_idx, valid_idx = train_valid(args, len(images))
    return Images(train_idx, train_tf), Images(valid_idx, valid_tf)
