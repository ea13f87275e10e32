/* tools.h — engines that run external tools (fio, iperf3, iperf 2,
 * sysbench, stress-ng, bonnie++) and the site benchmarks a worker's
 * administrator declares; their rows are hv_external_engines[]
 * (engine.h). */
#ifndef HV_WORKER_ENGINES_TOOLS_H
#define HV_WORKER_ENGINES_TOOLS_H

#include "worker/engines/engine.h"

#endif
