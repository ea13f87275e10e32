/* db_values.h — the rule for metric values (hv_metric_value_check,
 * lib/result.h) written in SQL, for the values the database already
 * holds.
 *
 * Every door refuses a value no measurement can have, but rows stored by
 * an older version, or by hand, may hold one: 1e200, 1.7e308, a negative
 * score, NaN or Infinity. A statement that computes on metric values
 * (means, deviations, logarithms) reads only those HV_SQL_METRIC_OK keeps,
 * so it cannot overflow, and counts the others (HV_SQL_METRIC_EXCLUDED)
 * to say so in its answer. The list of units and name endings comes from
 * lib/metric_natures.h and the bound from HV_METRIC_MAX_ABS, as the C
 * check's do, so the two cannot drift apart. */
#ifndef HV_SERVER_DB_VALUES_H
#define HV_SERVER_DB_VALUES_H

#include "metric_natures.h"
#include "result.h"

#define HV_SQL_STR_(x) #x
#define HV_SQL_STR(x)  HV_SQL_STR_(x)

#define HV_SQL_UNIT_(unit, nature)   ", '" unit "'"
#define HV_SQL_NAME_(suffix, nature) " OR right(m.name, length('" suffix "')) = '" suffix "'"
#define HV_SQL_NONE_(text, nature)

/* The bound, the units and the name endings of the rule, as SQL. */
#define HV_SQL_MAX_ABS_ HV_SQL_STR(HV_METRIC_MAX_ABS) "::float8"
#define HV_SQL_UNITS_   "('/s'" HV_METRIC_NATURES(HV_SQL_UNIT_, HV_SQL_NONE_) ")"
#define HV_SQL_NAMES_   "(false" HV_METRIC_NATURES(HV_SQL_NONE_, HV_SQL_NAME_) ")"
#define HV_SQL_NONNEG_                                                                             \
    "(m.unit LIKE '%/s' OR m.unit IN " HV_SQL_UNITS_ " OR (m.unit = '' AND " HV_SQL_NAMES_ "))"

/** Whether the metric row m (its columns name, unit — '' when it has
 *  none — and value) holds a value hv_metric_value_check() accepts: an SQL
 *  boolean, never NULL. NaN and the infinities fail the bounds (in
 *  PostgreSQL NaN sorts above every number). */
#define HV_SQL_METRIC_OK                                                                           \
    "(m.value BETWEEN -" HV_SQL_MAX_ABS_ " AND " HV_SQL_MAX_ABS_                                   \
    " AND (m.value >= 0 OR NOT " HV_SQL_NONNEG_ "))"

/** Why a value is left out, as answers that count them say it. */
#define HV_SQL_EXCLUDED_REASON                                                                     \
    "values no measurement can have (not finite, beyond " HV_SQL_STR(                              \
        HV_METRIC_MAX_ABS) " in magnitude, or negative for a metric that cannot be) are left out"

#endif
