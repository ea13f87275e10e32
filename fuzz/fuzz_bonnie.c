/* fuzz_bonnie.c — outputs of bonnie++ (CSV or the human-readable table) through
 * hv_parse_tool_runs(); fuzz_tool_output() checks what parsers.h promises. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_tool_output("bonnie", data, size);
}
