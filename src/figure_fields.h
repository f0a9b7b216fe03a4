/*
 * figure_fields.h -- the figure list (figure_list.h) as tables the summary
 * JSON writer (summary_json.c) and reader (summary_json_read.c) walk: each
 * base, GPU and cgroup figure of resmon_summary with its key, where it
 * lives and when it is written.
 */
#ifndef RESMON_FIGURE_FIELDS_H
#define RESMON_FIGURE_FIELDS_H

#include "resmon.h"

#include <stddef.h>

/* figure_list.h's JSON column. */
typedef enum rm__figure_json {
    RM__FIGURE_JSON_REQUIRED,
    RM__FIGURE_JSON_SEED,
    RM__FIGURE_JSON_UNLESS_NAN,
    RM__FIGURE_JSON_KNOWN,
    RM__FIGURE_JSON_MEASURED,
    RM__FIGURE_JSON_HWM,
    RM__FIGURE_JSON_ENERGY,
    RM__FIGURE_JSON_CGROUP
} rm__figure_json;

typedef struct rm__summary_figure {
    const char *key;     /* the field's name, the JSON key */
    size_t offset;       /* in resmon_summary */
    int is_u64;          /* a uint64_t count; else a double */
    rm__figure_json json;
} rm__summary_figure;

typedef struct rm__summary_figures {
    const rm__summary_figure *figures;
    size_t count;
} rm__summary_figures;

/* Before the metric groups' keys, and after them ("cgroup_version" first). */
extern const rm__summary_figures rm__summary_figures_base;
extern const rm__summary_figures rm__summary_figures_cgroup;

#endif
