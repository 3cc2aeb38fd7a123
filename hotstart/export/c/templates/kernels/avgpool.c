typedef struct {
    int c, ih, iw, oh, ow, kh, kw, sh, sw, pt, pl, pb, pr, count_include_pad, e0, ye;
    uint32_t ym;
    int32_t y_zero, act_min, act_max;
} hs_avgpool_t;

/* Average pooling, as onnxruntime computes it (hs_avg_f32): border windows divide by the values
 * they hold (count_include_pad=0) or by their padded size (count_include_pad=1). */
static void hs_avgpool(const hs_avgpool_t *p, const int8_t *x, const int64_t *deq, int8_t *y)
{
    for (int ch = 0; ch < p->c; ++ch) {
        const int8_t *xc = x + (int32_t)ch * p->ih * p->iw;
        for (int oy = 0; oy < p->oh; ++oy) {
            const int y0 = oy * p->sh - p->pt, y1p = y0 + p->kh < p->ih + p->pb ? y0 + p->kh : p->ih + p->pb;
            const int ya = y0 < 0 ? 0 : y0, yb = y0 + p->kh < p->ih ? y0 + p->kh : p->ih;
            for (int ox = 0; ox < p->ow; ++ox) {
                const int x0 = ox * p->sw - p->pl, x1p = x0 + p->kw < p->iw + p->pr ? x0 + p->kw : p->iw + p->pr;
                const int xa = x0 < 0 ? 0 : x0, xb = x0 + p->kw < p->iw ? x0 + p->kw : p->iw;
                const int n = p->count_include_pad ? (y1p - y0) * (x1p - x0) : (yb - ya) * (xb - xa);
                const int32_t v = hs_avg_f32(xc, p->iw, ya, yb, xa, xb, n, deq, p->e0, p->ym, p->ye);
                y[((int32_t)ch * p->oh + oy) * p->ow + ox] = hs_clamp(v + p->y_zero, p->act_min, p->act_max);
            }
        }
    }
}
