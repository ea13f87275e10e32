/* plancheck.c — how long plan validation takes, for bench/abuse_plan.sh:
 * reads a plan (a JSON file), validates it with hv_plan_parse() as the
 * server does (no registered targets to look up), and prints the verdict,
 * the number of errors and the time taken.
 *
 *   build/bench/plancheck PLAN.json [RUNS]
 *
 * Prints one line: "verdict V errors N seconds S" (S the fastest of RUNS
 * runs, default 3). */
#include "plan.h"
#include "timeutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: plancheck PLAN.json [RUNS]\n");
        return 2;
    }
    json_error_t e;
    json_t *doc = json_load_file(argv[1], JSON_REJECT_DUPLICATES, &e);
    if (doc == NULL) {
        fprintf(stderr, "plancheck: %s: %s (line %d)\n", argv[1], e.text, e.line);
        return 2;
    }
    int runs = argc == 3 ? atoi(argv[2]) : 3;
    double best = -1;
    enum hv_plan_verdict v = HV_PLAN_VALID;
    size_t n_errors = 0;
    for (int r = 0; r < (runs > 0 ? runs : 1); r++) {
        json_t *errors = json_array();
        struct hv_plan plan;
        double t0 = hv_monotonic();
        v = hv_plan_parse(doc, 1, NULL, &plan, errors);
        double t = hv_monotonic() - t0;
        if (v == HV_PLAN_VALID)
            hv_plan_free(&plan);
        n_errors = json_array_size(errors);
        json_decref(errors);
        best = best < 0 || t < best ? t : best;
    }
    printf("verdict %d errors %zu seconds %.4f\n", (int)v, n_errors, best);
    json_decref(doc);
    return 0;
}
