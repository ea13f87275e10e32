/* fuzz_iperf3.c — outputs of iperf3 (-J JSON of a client or a server) through
 * hv_parse_tool_runs(); fuzz_tool_output() checks what parsers.h promises. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_tool_output("iperf3", data, size);
}
