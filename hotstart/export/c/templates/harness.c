/* Host harness for a hotstart C export: reads raw images and prints one line per image,
 *   label logit_0 logit_1 ... logit_{n-1}
 * Each image is HOTSTART_INPUT_BYTES bytes (H x W x C uint8, see the header), back to back, from
 * the file named on the command line or from standard input.
 *
 *   cc -std=c99 -Wall -Werror -O2 -o harness harness.c @MODEL_C@
 *   ./harness images.raw
 */
#include <stdio.h>

#include "@MODEL_H@"

int main(int argc, char **argv)
{
    static uint8_t image[HOTSTART_INPUT_BYTES];
    int8_t logits[HOTSTART_NUM_CLASSES];
    FILE *f = argc > 1 ? fopen(argv[1], "rb") : stdin;
    if (f == NULL) {
        fprintf(stderr, "harness: cannot open %s\n", argv[1]);
        return 2;
    }
    while (fread(image, 1, sizeof image, f) == sizeof image) {
        int label = hotstart_predict(image, logits);
        printf("%d", label);
        for (int i = 0; i < HOTSTART_NUM_CLASSES; ++i)
            printf(" %d", logits[i]);
        printf("\n");
    }
    return 0;
}
