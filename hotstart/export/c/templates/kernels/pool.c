typedef struct {
    int c, ih, iw, oh, ow, kh, kw, sh, sw, pt, pl, pb, pr, avg, count_include_pad, requant;
    int32_t x_zero, y_zero, act_min, act_max;
} hs_pool_t;

/* Max pooling (padding never wins) or average pooling; an average over n values is rescaled by
 * mult[n - 1], shift[n - 1], so border windows divide by what they hold (count_include_pad=0)
 * or by their padded size (count_include_pad=1), as torch and onnxruntime do. */
static void hs_pool(const hs_pool_t *p, const int8_t *x, const int32_t *mult, const int8_t *shift, int8_t *y)
{
    for (int ch = 0; ch < p->c; ++ch) {
        const int8_t *xc = x + (int32_t)ch * p->ih * p->iw;
        for (int oy = 0; oy < p->oh; ++oy) {
            const int y0 = oy * p->sh - p->pt, y1p = y0 + p->kh < p->ih + p->pb ? y0 + p->kh : p->ih + p->pb;
            const int ya = y0 < 0 ? 0 : y0, yb = y0 + p->kh < p->ih ? y0 + p->kh : p->ih;
            for (int ox = 0; ox < p->ow; ++ox) {
                const int x0 = ox * p->sw - p->pl, x1p = x0 + p->kw < p->iw + p->pr ? x0 + p->kw : p->iw + p->pr;
                const int xa = x0 < 0 ? 0 : x0, xb = x0 + p->kw < p->iw ? x0 + p->kw : p->iw;
                int32_t v;
                if (p->avg) {
                    int32_t sum = 0;
                    for (int iy = ya; iy < yb; ++iy)
                        for (int ix = xa; ix < xb; ++ix)
                            sum += (int32_t)xc[iy * p->iw + ix] - p->x_zero;
                    const int n = p->count_include_pad ? (y1p - y0) * (x1p - x0) : (yb - ya) * (xb - xa);
                    v = hs_requant(sum, mult[n - 1], shift[n - 1]) + p->y_zero;
                } else {
                    int32_t m = -128;
                    for (int iy = ya; iy < yb; ++iy)
                        for (int ix = xa; ix < xb; ++ix)
                            if (xc[iy * p->iw + ix] > m)
                                m = xc[iy * p->iw + ix];
                    v = p->requant ? hs_requant(m - p->x_zero, mult[0], shift[0]) + p->y_zero : m;
                }
                y[((int32_t)ch * p->oh + oy) * p->ow + ox] = hs_clamp(v, p->act_min, p->act_max);
            }
        }
    }
}
