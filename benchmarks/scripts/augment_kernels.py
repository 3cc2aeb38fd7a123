"""torchvision's rotation and lighting kernels against hotstart's (encodings/image_kernels.py).

    cd benchmarks/scripts && python augment_kernels.py --size 128 --n 400 --rounds 3

One intra-op thread (as a DataLoader worker runs), a 3 x size x size uint8 image, CPU ms per call,
the best of `--rounds` rounds of `--n` calls each, the contenders alternating within a round:

- rotate: ``F.rotate(u8, angle)`` (uint8 in, uint8 out) against the float conversion,
  `rotate_nearest` and the rounding back;
- lighting: ``F.adjust_contrast(F.adjust_brightness(u8))`` against `adjust_lighting` on the float
  image (conversion and rounding included);
- both, as the training augmentation runs them after the crop.

Prints one JSON line.
"""
import argparse
import json
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=128)
    p.add_argument("--n", type=int, default=400)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()

    import torch
    import torchvision.transforms.v2.functional as F

    from hotstart.encodings.image_kernels import adjust_lighting, rotate_nearest

    torch.set_num_threads(1)
    u8 = torch.randint(0, 256, (3, args.size, args.size), dtype=torch.uint8,
                       generator=torch.Generator().manual_seed(0))
    angle, brightness, contrast = 5.3, 1.1, 0.9

    def tv_rotate():
        return F.rotate(u8, angle)

    def our_rotate():
        return rotate_nearest(u8.to(torch.float32), angle).round_().to(torch.uint8)

    def tv_lighting():
        return F.adjust_contrast(F.adjust_brightness(u8, brightness), contrast)

    def our_lighting():
        return adjust_lighting(u8.to(torch.float32), brightness, contrast, bound=255.0).round_().to(torch.uint8)

    def tv_both():
        return F.adjust_contrast(F.adjust_brightness(F.rotate(u8, angle), brightness), contrast)

    def our_both():
        y = rotate_nearest(u8.to(torch.float32), angle)
        return adjust_lighting(y, brightness, contrast, bound=255.0).round_().to(torch.uint8)

    contenders = {"torchvision_rotate": tv_rotate, "hotstart_rotate": our_rotate,
                  "torchvision_lighting": tv_lighting, "hotstart_lighting": our_lighting,
                  "torchvision_both": tv_both, "hotstart_both": our_both}
    best = {}
    for fn in contenders.values():
        fn()  # untimed: first-call allocations
    for _ in range(args.rounds):
        for name, fn in contenders.items():
            t0 = time.process_time()
            for _ in range(args.n):
                fn()
            ms = (time.process_time() - t0) / args.n * 1e3
            best[name] = min(best.get(name, ms), ms)
    out = {"args": vars(args), "cpu_ms": {k: round(v, 4) for k, v in best.items()}}
    out["ratio_torchvision_over_hotstart"] = {
        k: round(best[f"torchvision_{k}"] / best[f"hotstart_{k}"], 2) for k in ("rotate", "lighting", "both")}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
