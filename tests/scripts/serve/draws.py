"""Print, as one JSON line, one draw from every module-level random generator that is loaded.

tests/test_serve.py runs this twice in the server: each generator must give another number in each
run, as in two ``python draws.py`` runs. The scan finds generators that hotstart.serve.fresh_random
does not know about too.
"""
import json
import random
import sys

import numpy as np
import torch


def draw(gen):
    if isinstance(gen, random.Random):
        return gen.random()
    if isinstance(gen, np.random.RandomState):
        return float(gen.random_sample())
    if isinstance(gen, np.random.Generator):
        return float(gen.random())
    if isinstance(gen, torch.Generator) and gen.device.type == "cpu":
        return torch.rand(1, generator=gen).item()
    return None


draws = {}
seen = set()
for name, module in list(sys.modules.items()):
    if name == "__main__":
        continue
    for attr, value in list(getattr(module, "__dict__", {}).items()):
        if id(value) in seen or isinstance(value, random.SystemRandom):
            continue
        got = draw(value)
        if got is not None:
            seen.add(id(value))
            draws[f"{name}.{attr}"] = got
draws["torch.rand"] = torch.rand(1).item()
draws["numpy.random.rand"] = float(np.random.rand())
draws["random.random"] = random.random()
print(json.dumps(draws))
