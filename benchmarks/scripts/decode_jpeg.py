"""Per-image cost of decoding the folder workload's JPEGs (160x160, q90) to a 128x128 uint8 tensor.

    python benchmarks/scripts/decode_jpeg.py --n 300 --rounds 3

Ways compared, alternating, best round each, one thread (a DataLoader worker's view):
PIL open + convert("RGB") then PILToTensor + v2.Resize; the same with ``Image.draft("RGB",
(128, 128))`` first (JPEG DCT scaling: only shrinks by 1/2, 1/4, 1/8, so it does nothing
unless the file is at least twice the target size); torchvision.io.decode_jpeg on the file's
bytes then v2.Resize.
"""
import argparse
import json
import time

import torch
from PIL import Image
from torchvision.io import decode_jpeg, read_file
from torchvision.transforms import v2

import _data


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=300)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    torch.set_num_threads(1)
    paths = _data.folder(args.n)[0].paths
    resize = v2.Resize((128, 128), antialias=True)
    to_tensor = v2.PILToTensor()

    def pil(path):
        with Image.open(path) as im:
            return resize(to_tensor(im.convert("RGB")))

    def pil_draft(path):
        with Image.open(path) as im:
            im.draft("RGB", (128, 128))
            return resize(to_tensor(im.convert("RGB")))

    def tv(path):
        return resize(decode_jpeg(read_file(path)))

    ways = {"PIL": pil, "PIL + draft": pil_draft, "torchvision decode_jpeg": tv}
    best = {k: float("inf") for k in ways}
    for _ in range(args.rounds):
        for name, f in ways.items():
            t0 = time.perf_counter()
            for path in paths:
                f(path)
            best[name] = min(best[name], (time.perf_counter() - t0) / len(paths) * 1e3)
    print(json.dumps({"ms_per_image": best, "n": len(paths)}))


if __name__ == "__main__":
    main()
