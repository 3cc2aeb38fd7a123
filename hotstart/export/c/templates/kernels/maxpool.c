typedef struct {
    int c, ih, iw, oh, ow, kh, kw, sh, sw, pt, pl, requant;
    int32_t x_zero, y_zero, act_min, act_max;
} hs_maxpool_t;

/* Max pooling: padding never wins. The max of int8 codes is the answer when input and output share
 * their quantization; else it is rescaled (quantization is monotone, so max and rescale commute). */
static void hs_maxpool(const hs_maxpool_t *p, const int8_t *x, int32_t mult, int shift, int8_t *y)
{
    for (int ch = 0; ch < p->c; ++ch) {
        const int8_t *xc = x + (int32_t)ch * p->ih * p->iw;
        for (int oy = 0; oy < p->oh; ++oy) {
            const int y0 = oy * p->sh - p->pt;
            const int ya = y0 < 0 ? 0 : y0, yb = y0 + p->kh < p->ih ? y0 + p->kh : p->ih;
            for (int ox = 0; ox < p->ow; ++ox) {
                const int x0 = ox * p->sw - p->pl;
                const int xa = x0 < 0 ? 0 : x0, xb = x0 + p->kw < p->iw ? x0 + p->kw : p->iw;
                int32_t m = -128;
                for (int iy = ya; iy < yb; ++iy)
                    for (int ix = xa; ix < xb; ++ix)
                        if (xc[iy * p->iw + ix] > m)
                            m = xc[iy * p->iw + ix];
                const int32_t v = p->requant ? hs_requant(m - p->x_zero, mult, shift) + p->y_zero : m;
                y[((int32_t)ch * p->oh + oy) * p->ow + ox] = hs_clamp(v, p->act_min, p->act_max);
            }
        }
    }
}
