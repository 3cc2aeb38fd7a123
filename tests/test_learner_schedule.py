"""The one-cycle schedule equals torch's OneCycleLR at every optimizer step (issue 9, item 9)."""
import pytest
from schedule_reference import one_cycle_lr_reference

from hotstart.learner.schedule import one_cycle_at


@pytest.mark.parametrize("total,div,div_final,pct_start", [
    (20, 25.0, 1e5, 0.25), (100, 25.0, 1e5, 0.3), (7, 5.0, 1e4, 0.5), (13, 10.0, 100.0, 0.99),
    (50, 25.0, 1e5, 0.1), (3, 25.0, 1e5, 0.6)])
def test_one_cycle_at_equals_onecyclelr(total, div, div_final, pct_start):
    moms = (0.95, 0.85, 0.95)
    ref_lrs, ref_moms = one_cycle_lr_reference(total, 3e-3, div=div, div_final=div_final, pct_start=pct_start,
                                               moms=moms)
    ours = [one_cycle_at(i, total, 3e-3, div, div_final, pct_start, moms) for i in range(total)]
    assert [lr for lr, _ in ours] == pytest.approx(ref_lrs, rel=1e-9, abs=0)
    assert [m for _, m in ours] == pytest.approx(ref_moms, rel=1e-9, abs=0)
    assert ours[-1][0] == pytest.approx(3e-3 / div_final, rel=1e-9)  # the last step: the final rate exactly
    assert ours[0][0] == pytest.approx(3e-3 / div, rel=1e-9)


def test_one_schedule_implementation_is_exported():
    """`one_cycle_at` (by optimizer step, what fit_one_cycle runs) is the one one-cycle curve: the
    unused continuous `one_cycle(pct)` copy, which could drift from it, is gone from the API."""
    import hotstart.learner as L
    from hotstart.learner import schedule

    assert "one_cycle" not in L.__all__ and not hasattr(schedule, "one_cycle")
    assert all(hasattr(L, name) for name in L.__all__)
