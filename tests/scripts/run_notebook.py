"""Execute a notebook top to bottom in a fresh kernel, in the current folder; print it executed.

    python run_notebook.py NOTEBOOK > executed.ipynb

Run by tests/test_notebook.py as a prestart job (tests/prestart.py), with nbclient as
notebooks/store_outputs.py runs it, a headless matplotlib and one OpenMP thread (a tiny model; a
shared machine's cores go further). The notebook is printed even when a cell fails (nbclient
stores the error output, then raises), so the test can say which cell it was.
"""
import os
import sys

import nbformat
from nbclient import NotebookClient

os.environ["MPLBACKEND"] = "Agg"
os.environ["OMP_NUM_THREADS"] = "1"
nb = nbformat.read(sys.argv[1], as_version=4)
try:
    NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": os.getcwd()}}).execute()
finally:
    sys.stdout.write(nbformat.writes(nb))
