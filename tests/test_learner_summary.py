"""`learner.summary()` without a task to take the input shape from: a UsageError (the CLI prints
one line). Shapes and counts are tested in tests/test_checks.py."""
from __future__ import annotations

import io

import pytest


def test_summary_without_a_task_is_a_usage_error(make_learner):
    from hotstart.errors import UsageError

    learner = make_learner()
    learner.task = None
    with pytest.raises(UsageError, match="fixed input shape"):
        learner.summary(file=io.StringIO())
