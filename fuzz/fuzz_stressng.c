/* fuzz_stressng.c — outputs of stress-ng (YAML or the --metrics log) through
 * hv_parse_tool_runs(); fuzz_tool_output() checks what parsers.h promises. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_tool_output("stress-ng", data, size);
}
