/* fuzz_sysbench.c — outputs of sysbench (text of the cpu or memory test) through
 * hv_parse_tool_runs(); fuzz_tool_output() checks what parsers.h promises. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_tool_output("sysbench", data, size);
}
