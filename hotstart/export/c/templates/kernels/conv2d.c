typedef struct {
    int ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, pt, pl, groups;
    int32_t x_zero, y_zero, act_min, act_max;
} hs_conv_t;

/* Direct convolution, C x H x W, weights out x in/groups x kh x kw; padding reads as the input's
 * zero point (a real 0), so padded taps are skipped. */
static void hs_conv2d(const hs_conv_t *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                      const int32_t *mult, const int8_t *shift, int8_t *y)
{
    const int icg = p->ic / p->groups, ocg = p->oc / p->groups, kk = p->kh * p->kw;
    for (int oc = 0; oc < p->oc; ++oc) {
        const int8_t *wo = w + (int32_t)oc * icg * kk;
        const int8_t *xg = x + (int32_t)(oc / ocg) * icg * p->ih * p->iw;
        for (int oy = 0; oy < p->oh; ++oy) {
            const int iy0 = oy * p->sh - p->pt;
            const int ky0 = iy0 < 0 ? -iy0 : 0;
            const int ky1 = iy0 + p->kh > p->ih ? p->ih - iy0 : p->kh;
            for (int ox = 0; ox < p->ow; ++ox) {
                const int ix0 = ox * p->sw - p->pl;
                const int kx0 = ix0 < 0 ? -ix0 : 0;
                const int kx1 = ix0 + p->kw > p->iw ? p->iw - ix0 : p->kw;
                int32_t acc = bias[oc];
                for (int ci = 0; ci < icg; ++ci) {
                    const int8_t *xc = xg + (int32_t)ci * p->ih * p->iw;
                    const int8_t *wc = wo + ci * kk;
                    for (int ky = ky0; ky < ky1; ++ky) {
                        const int8_t *xr = xc + (iy0 + ky) * p->iw + ix0;
                        const int8_t *wr = wc + ky * p->kw;
                        for (int kx = kx0; kx < kx1; ++kx)
                            acc += ((int32_t)xr[kx] - p->x_zero) * wr[kx];
                    }
                }
                y[((int32_t)oc * p->oh + oy) * p->ow + ox] =
                    hs_clamp(hs_requant(acc, mult[oc], shift[oc]) + p->y_zero, p->act_min, p->act_max);
            }
        }
    }
}
