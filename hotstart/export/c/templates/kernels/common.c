/* Requantization with one rounding (CMSIS-NN's CMSIS_NN_USE_SINGLE_ROUNDING): acc * mult / 2^shift,
 * rounded half up. The product needs 64 bits; `>>` of a negative int64 is an arithmetic shift on
 * gcc, clang and the Arm compilers (C99 leaves it to the implementation). */
static int32_t hs_requant(int32_t acc, int32_t mult, int shift)
{
    const int64_t p = (int64_t)acc * mult + ((int64_t)1 << (shift - 1));
    return (int32_t)(p >> shift);
}

static int8_t hs_clamp(int32_t v, int32_t lo, int32_t hi)
{
    return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
}

static int hs_argmax(const int8_t *v, int n)
{
    int best = 0;
    for (int i = 1; i < n; ++i)
        if (v[i] > v[best])
            best = i;
    return best;
}
