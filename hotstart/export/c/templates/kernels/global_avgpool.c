/* Mean over H x W per channel: the sum, rescaled by s_x / (s_y * H * W). */
static void hs_global_avgpool(const int8_t *x, int c, int hw, int32_t x_zero, int32_t y_zero,
                              int32_t mult, int shift, int32_t act_min, int32_t act_max, int8_t *y)
{
    for (int ch = 0; ch < c; ++ch) {
        int32_t sum = 0;
        for (int i = 0; i < hw; ++i)
            sum += (int32_t)x[ch * hw + i] - x_zero;
        y[ch] = hs_clamp(hs_requant(sum, mult, shift) + y_zero, act_min, act_max);
    }
}
