/* build_id.h — which build of the server this process runs: what kept
 * forms of an answer (report digests, report answers) are keyed by, so
 * that code changed in any way (a statistics fix, a new section) never
 * reads what other code computed. */
#ifndef HV_SERVER_BUILD_ID_H
#define HV_SERVER_BUILD_ID_H

/** Longest text hv_build_id() returns, with its NUL. */
#define HV_BUILD_ID_MAX 80

/** "exe:" and the SHA-256 of the server's executable (/proc/self/exe) as 64
 *  hex digits; when it cannot be read, "process:PID:START" (this process
 *  alone: nothing kept by another is ever taken for its own). Computed
 *  once, on the first call (reading the executable, a few MiB); the same
 *  static string every time after. Thread safe. */
const char *hv_build_id(void);

#endif
