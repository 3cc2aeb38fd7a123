/* Bare-metal start-up for a Cortex-M (tested on QEMU's mps2-an386, a Cortex-M4): the vector
 * table, .data copied from flash, .bss zeroed, then main(); output and exit through Arm
 * semihosting (bkpt 0xAB), which QEMU serves with -semihosting-config enable=on,target=native. */
#include <stdint.h>

#include "cortex_m_semihosting.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss;
int main(void);

/* its own section after .bss (the zeroing of .bss must not wipe the stack it runs on); size(1)
 * counts it with bss, so the RAM figure includes it */
__attribute__((section(".stack"), aligned(8))) uint32_t hs_stack[HS_STACK_WORDS];

static int sh_call(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void hs_write(const char *s) { sh_call(0x04, s); } /* SYS_WRITE0 */

void hs_exit(int ok)
{
    /* SYS_EXIT: on AArch32, r1 holds the reason itself (not a parameter block) */
    sh_call(0x18, (const void *)(uintptr_t)(ok ? 0x20026 /* ApplicationExit */ : 0x20023 /* RunTimeError */));
    for (;;) {
    }
}

void hs_write_int(int32_t v)
{
    char buf[12], *p = buf + sizeof buf;
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    *--p = 0;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    hs_write(p);
}

void Reset_Handler(void)
{
    uint32_t *src = &_sidata, *dst = &_sdata;
    while (dst < &_edata)
        *dst++ = *src++;
    for (dst = &_sbss; dst < &_ebss; ++dst)
        *dst = 0;
    hs_exit(main() == 0);
}

static void Fault_Handler(void)
{
    hs_write("fault\n");
    hs_exit(0);
}

__attribute__((section(".vectors"), used)) const void *const hs_vectors[16] = {
    (const void *)(hs_stack + HS_STACK_WORDS), (const void *)Reset_Handler,
    (const void *)Fault_Handler, (const void *)Fault_Handler, (const void *)Fault_Handler,
    (const void *)Fault_Handler, (const void *)Fault_Handler, 0, 0, 0, 0,
    (const void *)Fault_Handler, (const void *)Fault_Handler, 0,
    (const void *)Fault_Handler, 0,
};
