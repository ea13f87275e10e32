/* fault.h — named fault points for crash tests.
 *
 * A process started with HVBENCH_FAULT=POINT:ACTION stops at the first
 * time it reaches the point named POINT, as a crash there would:
 *   kill   raise SIGKILL (nothing after the point runs, nothing is flushed)
 *   stop   raise SIGSTOP (the test acts — kills the server, cancels the
 *          plan — then sends SIGCONT and the process goes on)
 *   hang   the thread that arrives blocks for good (pause(2) in a loop),
 *          as a call that never returns would; the others go on
 * Without the variable, or at any other point, hv_fault() does nothing but
 * compare a string once. The points are listed in docs/worker.md ("Fault
 * points"); tests/integration/test_chaos.sh drives them.
 *
 * Contract: only the first arrival at the named point acts, whichever
 * thread arrives; the variable is read at the first call. */
#ifndef HV_FAULT_H
#define HV_FAULT_H

/** Acts when point is the one HVBENCH_FAULT names and it is reached for
 *  the first time (see above); logs the point before acting. */
void hv_fault(const char *point);

#endif
