/* metric_natures.h — what says a metric cannot be negative, as one list
 * that the C check and its SQL twin are both made from.
 *
 * HV_METRIC_NATURES(UNIT, NAME) expands UNIT(unit, nature) for each unit
 * naming a quantity that cannot be negative, and NAME(suffix, nature) for
 * each name ending that says the same of a metric without a unit
 * (imports of hand-made files, site benchmarks). A unit ending in "/s" is
 * a rate whatever its numerator, and needs no entry. Both arguments are
 * string literals without quotes or backslashes, so they can be pasted
 * into SQL.
 *
 * Readers: hv_metric_value_check() (lib/result.c), the check every door
 * applies to a value before it is stored, and HV_SQL_METRIC_OK
 * (server/db_values.h), the same check in SQL for what the database
 * already holds. Adding a unit here changes both. */
#ifndef HV_METRIC_NATURES_H
#define HV_METRIC_NATURES_H

#define HV_METRIC_NATURES(UNIT, NAME)                                                              \
    UNIT("ns", "time")                                                                             \
    UNIT("us", "time")                                                                             \
    UNIT("ms", "time")                                                                             \
    UNIT("s", "time")                                                                              \
    UNIT("bytes", "size")                                                                          \
    UNIT("B", "size")                                                                              \
    UNIT("KiB", "size")                                                                            \
    UNIT("MiB", "size")                                                                            \
    UNIT("GiB", "size")                                                                            \
    UNIT("KB", "size")                                                                             \
    UNIT("MB", "size")                                                                             \
    UNIT("GB", "size")                                                                             \
    UNIT("count", "count")                                                                         \
    UNIT("%", "percentage")                                                                        \
    UNIT("score", "score")                                                                         \
    UNIT("IOPS", "rate")                                                                           \
    NAME(".mbps", "rate")                                                                          \
    NAME(".gbps", "rate")                                                                          \
    NAME(".iops", "rate")                                                                          \
    NAME(".score", "score")                                                                        \
    NAME("_us", "time")                                                                            \
    NAME("_ms", "time")                                                                            \
    NAME("_ns", "time")                                                                            \
    NAME(".bytes", "size")

#endif
