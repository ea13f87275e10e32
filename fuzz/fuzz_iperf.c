/* fuzz_iperf.c — outputs of iperf 2 (CSV or the text report) through
 * hv_parse_tool_runs(); fuzz_tool_output() checks what parsers.h promises. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_tool_output("iperf", data, size);
}
