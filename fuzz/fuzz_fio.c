/* fuzz_fio.c — outputs of fio (JSON, with or without leading warnings) through
 * hv_parse_tool_runs(); fuzz_tool_output() checks what parsers.h promises. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_tool_output("fio", data, size);
}
