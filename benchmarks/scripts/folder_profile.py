"""Where a hotstart epoch on the folder of JPEGs spends its CPU time: decoding, augmenting, compute.

    cd benchmarks/scripts && python folder_profile.py --n 300 --size 128 --bs 32 --backbone resnet10t

One process, hotstart's own pieces (tasklearner on `ImageFolders`, its training loader with
``num_workers=0`` so that every phase runs here and is timed here):

- decode: `load_image` of every training file (PIL open, decode, EXIF, mode);
- load + augment: one epoch of the training loader (decode, random resized crop, flip, rotate,
  lighting, collate), one intra-op thread as hotstart uses for it; augment = this less decode;
- the same with ``cache="resized"`` (the copy at the task's size, built before timing);
- compute: forward, loss, backward and AdamW step of the learner's model on batches taken from
  the loader beforehand, with torch's threads (the compute bound's work).

Each phase reports CPU seconds (``time.process_time``: this process, all its threads) and wall
seconds per image; the best of `--rounds`. Prints one JSON line.
"""
import argparse
import json
import time

import _data


def timed(fn, rounds):
    best = None
    for _ in range(rounds):
        c0, w0 = time.process_time(), time.perf_counter()
        n = fn()
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        if best is None or wall < best[1]:
            best = (cpu / n * 1e3, wall / n * 1e3)
    return {"cpu_ms": round(best[0], 3), "wall_ms": round(best[1], 3)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=300)
    p.add_argument("--size", type=int, default=128)
    p.add_argument("--bs", type=int, default=32)
    p.add_argument("--backbone", default="resnet10t")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--compute-batches", type=int, default=3)
    args = p.parse_args()

    import torch
    import torch.nn.functional as F

    from hotstart import ImageClassificationSingle, datasets, tasklearner
    from hotstart.datasets.images import load_image
    from hotstart.learner.data import set_epoch

    root = _data.folder_path(args.n)
    data, blocks = datasets.ImageFolders(root)
    task = ImageClassificationSingle(blocks, size=(args.size, args.size))
    out = {"args": vars(args), "threads": torch.get_num_threads()}
    learners = {}
    for cache in (None, "resized"):
        learners[cache] = tasklearner(task, data, backbone=args.backbone, batch_size=args.bs, seed=0, progress=False,
                                      num_workers=0, cache=cache)
    learner = learners[None]
    files = [str(p) for p in data.inputs.container]
    train_idx = learner.train_loader.dataset.inputs.indices

    def decode():
        for i in train_idx:
            load_image(files[i])
        return len(train_idx)

    def epoch(loader):
        def run():
            set_epoch(loader, 1, 0)
            n = 0
            for xb, _ in loader:
                n += len(xb)
            return n
        return run

    out["decode"] = timed(decode, args.rounds)
    out["load_augment"] = timed(epoch(learner.train_loader), args.rounds)
    out["augment"] = {k: round(out["load_augment"][k] - out["decode"][k], 3) for k in ("cpu_ms", "wall_ms")}
    out["load_augment_resized_cache"] = timed(epoch(learners["resized"].train_loader), args.rounds)

    batches = []
    for xb, yb in learner.train_loader:
        batches.append((xb, yb))
        if len(batches) == args.compute_batches:
            break
    model = learner.model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()

    def compute():
        n = 0
        for xb, yb in batches:
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            n += len(xb)
        return n

    compute()  # untimed: first-call allocations
    out["compute"] = timed(compute, args.rounds)
    per_image = out["load_augment"]["cpu_ms"] + out["compute"]["cpu_ms"]
    out["data_share_of_cpu"] = round(out["load_augment"]["cpu_ms"] / per_image, 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
