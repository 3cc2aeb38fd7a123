/* Residual add at the output's scale: (a - za) * ma + (b - zb) * mb in 64 bits, one rounding
 * (half to even, as hs_requant). */
static void hs_add(const int8_t *a, const int8_t *b, int32_t n, int32_t a_zero, int32_t b_zero,
                   int32_t mult_a, int32_t mult_b, int shift, int32_t y_zero, int32_t act_min,
                   int32_t act_max, int8_t *y)
{
    const int64_t half = (int64_t)1 << (shift - 1);
    for (int32_t i = 0; i < n; ++i) {
        const int64_t s = ((int64_t)a[i] - a_zero) * mult_a + ((int64_t)b[i] - b_zero) * mult_b;
        const int64_t q = s >> shift, rem = s - q * ((int64_t)1 << shift);
        y[i] = hs_clamp((int32_t)(q + (rem > half || (rem == half && (q & 1)))) + y_zero, act_min, act_max);
    }
}
