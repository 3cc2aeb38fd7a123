/* Elementwise rescale and clamp: a ReLU that onnxruntime left standing, or new quantization. */
static void hs_requantize(const int8_t *x, int32_t n, int32_t x_zero, int32_t mult, int shift,
                          int32_t y_zero, int32_t act_min, int32_t act_max, int8_t *y)
{
    for (int32_t i = 0; i < n; ++i)
        y[i] = hs_clamp(hs_requant((int32_t)x[i] - x_zero, mult, shift) + y_zero, act_min, act_max);
}
