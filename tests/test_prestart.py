"""tests/prestart.py: a test that needs a job the background thread has not started runs it itself,
at once, rather than wait behind the jobs before it."""
import sys
import time

import prestart


@prestart.job("prestart:sleep")
def _sleep(folder):
    return prestart.Job([sys.executable, "-c", "import time; time.sleep(5)"])


@prestart.job("prestart:echo")
def _echo(folder):
    return prestart.Job([sys.executable, "-c", "import os; print(os.environ['OMP_NUM_THREADS'], os.getcwd())"])


def test_a_job_not_yet_started_runs_in_the_tests_process_at_once():
    prestart.submit("prestart:sleep", "prestart:echo")  # the background thread takes the sleep first
    start = time.perf_counter()
    run = prestart.result("prestart:echo")
    assert run.returncode == 0 and time.perf_counter() - start < 4.5  # not behind the 5 s sleep
    threads, cwd = run.stdout.split()
    assert threads == "1" and cwd == str(run.folder)  # one torch thread, in its own fresh folder
    assert any(line.lstrip().startswith("prestart:echo") and line.endswith("(the tests' process)")
               for line in prestart.summary())
