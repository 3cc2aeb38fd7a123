"""A user's "startup package": registers its own warmup workloads the same way hotstart does."""
from hotstart import Image, Label, ImageClassificationSingle
from hotstart.warmup import Registry

registry = Registry()


@registry.workload(size=(16, 16), batch_size=4, steps=2, compile=False, description="user workload (eager)")
def user_tiny():
    return ImageClassificationSingle((Image(channels=1), Label(["a", "b", "c"])), size=(16, 16))


# 32x32: at batch 4 the size crosses Inductor's 4096-element reduction threshold between batch 4
# and 8 (4 * 32*32 == 4096), where a guarded graph would serve batch 4 only (tests/test_warmup.py)
COMPILED_SIZE = (32, 32)


# steps=2: compiled, it runs 4 (the fastest of the last 2 is timed), then 3 eager ones are timed; the
# manifest records both (step_s_per_sample, compiled_step_s_per_sample: compile="auto"'s measured speed-up)
@registry.workload(size=COMPILED_SIZE, batch_size=4, steps=2, compile=True, description="user workload (compiled)")
def user_tiny_compiled():
    return ImageClassificationSingle((Image(channels=1), Label(["a", "b"])), size=COMPILED_SIZE, augment={"flip": 0.0})


@registry.workload(size=(16, 16), batch_size=4, compile=False)
def user_broken():
    raise RuntimeError("this workload is broken on purpose")
