typedef struct {
    int in, out;
    int32_t x_zero, y_zero, act_min, act_max;
} hs_linear_t;

/* y = W x + b, W out x in (a fully connected layer). */
static void hs_linear(const hs_linear_t *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                      const int32_t *mult, const int8_t *shift, int8_t *y)
{
    for (int o = 0; o < p->out; ++o) {
        const int8_t *wo = w + (int32_t)o * p->in;
        int32_t acc = bias[o];
        for (int i = 0; i < p->in; ++i)
            acc += ((int32_t)x[i] - p->x_zero) * wo[i];
        y[o] = hs_clamp(hs_requant(acc, mult[o], shift[o]) + p->y_zero, p->act_min, p->act_max);
    }
}
