"""A user's "startup package": registers its own warmup workloads the same way hotstart does."""
from hotstart import Image, Label, ImageClassificationSingle
from hotstart.warmup import Registry

registry = Registry()


@registry.workload(size=(16, 16), batch_size=4, steps=2, compile=False, description="user workload (eager)")
def user_tiny():
    return ImageClassificationSingle((Image(channels=1), Label(["a", "b", "c"])), size=(16, 16))


@registry.workload(size=(16, 16), batch_size=4, steps=1, compile=True, description="user workload (compiled)")
def user_tiny_compiled():
    return ImageClassificationSingle((Image(channels=1), Label(["a", "b"])), size=(16, 16))


@registry.workload(size=(16, 16), batch_size=4, compile=False)
def user_broken():
    raise RuntimeError("this workload is broken on purpose")
