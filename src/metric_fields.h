/*
 * metric_fields.h -- the metric list (metric_list.h) as a table the library
 * walks: where each metric-group field lives in resmon_sample and
 * resmon_summary, how the summary folds the samples' values, its JSON key,
 * unit and words.  The same table answers resmon_metric_count and
 * resmon_metric_info (metric_fields.c), which is how code outside the
 * library (the command, the Python binding) learns the list.
 */
#ifndef RESMON_METRIC_FIELDS_H
#define RESMON_METRIC_FIELDS_H

#include "resmon.h"

#include <stddef.h>
#include <string.h>

/* One entry per metric, in resmon_summary's order; field names and meanings
 * as in resmon_metric (resmon.h). */
typedef resmon_metric rm__metric_field;

extern const rm__metric_field rm__metric_fields[];
extern const size_t rm__metric_field_count;

static inline double rm__sample_metric(const resmon_sample *s, const rm__metric_field *f)
{
    double value;
    memcpy(&value, (const char *)s + f->sample_offset, sizeof value);
    return value;
}

static inline double rm__summary_metric_value(const resmon_summary *s, const rm__metric_field *f)
{
    double value;
    memcpy(&value, (const char *)s + f->summary_offset, sizeof value);
    return value;
}

static inline double *rm__summary_metric(resmon_summary *s, const rm__metric_field *f)
{
    return (double *)(void *)((char *)s + f->summary_offset);
}

static inline double *rm__sample_metric_slot(resmon_sample *s, const rm__metric_field *f)
{
    return (double *)(void *)((char *)s + f->sample_offset);
}

#endif
