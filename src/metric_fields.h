/*
 * metric_fields.h -- the one list of the metric-group fields that a sample
 * and a summary share (resmon_options.metrics): where each lives in both
 * structs, how the summary folds the samples' values, and its JSON key.  The
 * summary and its JSON read this list, so a field cannot be added to one and
 * forgotten in the other.
 */
#ifndef RESMON_METRIC_FIELDS_H
#define RESMON_METRIC_FIELDS_H

#include "resmon.h"

#include <stddef.h>
#include <string.h>

typedef enum rm__metric_fold {
    RM__FOLD_PEAK, /* the largest sampled value (a level: memory, counts) */
    RM__FOLD_LAST  /* the last sample's value (a total since the window began) */
} rm__metric_fold;

typedef struct rm__metric_field {
    const char *summary_key; /* the summary's field and JSON key */
    size_t sample_offset;    /* a double in resmon_sample */
    size_t summary_offset;   /* a double in resmon_summary */
    rm__metric_fold fold;
} rm__metric_field;

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
