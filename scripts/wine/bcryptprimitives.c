/* Wine 8 (Debian 12's wine64) has no bcryptprimitives.dll, whose ProcessPrng Rust's
 * standard library takes its random numbers from on Windows 10 and later. This stand-in,
 * built and put into the test's Wine prefix by scripts/test-windows.sh, answers it from
 * RtlGenRandom (advapi32's SystemFunction036), which Wine has. It is never shipped: real
 * Windows has the DLL. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
