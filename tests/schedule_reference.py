"""torch's OneCycleLR as the reference for hotstart's one-cycle schedule (tests only)."""
import torch


def one_cycle_lr_reference(total: int, lr_max: float, *, div: float, div_final: float, pct_start: float,
                           moms=(0.95, 0.85, 0.95)):
    """(lrs, beta1s) that OneCycleLR sets before each of `total` optimizer steps of an Adam."""
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.Adam([p], lr=lr_max)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=lr_max, total_steps=total, pct_start=pct_start, anneal_strategy="cos", div_factor=div,
        final_div_factor=div_final / div, cycle_momentum=True, base_momentum=moms[1], max_momentum=moms[0],
        three_phase=False)
    lrs, betas = [], []
    for i in range(total):
        lrs.append(opt.param_groups[0]["lr"])
        betas.append(opt.param_groups[0]["betas"][0])
        opt.step()
        if i < total - 1:
            sched.step()
    return lrs, betas
