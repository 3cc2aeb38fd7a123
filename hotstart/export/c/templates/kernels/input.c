/* H x W x C uint8 pixels -> C x H x W int8 codes: table[c][v] is onnxruntime's QuantizeLinear of
 * (v / 255 - mean[c]) / std[c], computed at export. */
static void hs_input(const uint8_t *image, const int8_t *table, int8_t *y, int c, int hw)
{
    for (int ch = 0; ch < c; ++ch)
        for (int i = 0; i < hw; ++i)
            y[ch * hw + i] = table[ch * 256 + image[i * c + ch]];
}
