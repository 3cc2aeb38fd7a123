"""Whole-process benchmarks of hotstart against a plain PyTorch loop, fastai and Lightning.

    python -m benchmarks.run --quick                          # table + benchmarks/results/latest.json
    python -m benchmarks.run --python /path/to/other/venv/bin/python --out benchmarks/results/x.json

See benchmarks/README.md for what each figure means and the latest results.
"""
