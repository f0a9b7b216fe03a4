/*
 * figure_fields.c -- the figure list (figure_list.h) as the summary's
 * tables (figure_fields.h).
 */
#include "figure_fields.h"
#include "figure_list.h"

#define IS_U64_DOUBLE 0
#define IS_U64_U64 1
#define FIGURE(group, field, type, fold, unit, json, ...)                                                         \
    {#field, offsetof(resmon_summary, field), IS_U64_##type, RM__FIGURE_JSON_##json},

static const rm__summary_figure base[] = {RM__SUMMARY_FIGURES_BASE(FIGURE)};
static const rm__summary_figure cgroup[] = {RM__SUMMARY_FIGURES_CGROUP(FIGURE)};

const rm__summary_figures rm__summary_figures_base = {base, sizeof base / sizeof *base};
const rm__summary_figures rm__summary_figures_cgroup = {cgroup, sizeof cgroup / sizeof *cgroup};

/* Every fold from a sample's figure names a double of resmon_sample. */
RM__SUMMARY_FIGURES_BASE(RM__FOLD_CHECK)
RM__SUMMARY_FIGURES_CGROUP(RM__FOLD_CHECK)
