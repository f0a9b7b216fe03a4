/*
 * metric_fields.c -- the metric list (metric_list.h) as a table, and the
 * public introspection of it (resmon_metric_count, resmon_metric_info) and
 * of the group list (resmon_metric_group_count, resmon_metric_group_info).
 */
#include "metric_fields.h"
#include "metric_list.h"
#include "struct_size.h"

#include <errno.h>

#define RM__UNIT_MIB "MiB"
#define RM__UNIT_BYTES "bytes"
#define RM__UNIT_SECONDS "seconds"
#define RM__UNIT_COUNT "count"

#define FIELD(group, sample_field, summary_field, fold, unit, column, prometheus, help, words, ...)                \
    {sizeof(resmon_metric),                                                                                       \
     #sample_field,                                                                                               \
     #summary_field,                                                                                              \
     column,                                                                                                      \
     RM__UNIT_##unit,                                                                                             \
     prometheus,                                                                                                  \
     help,                                                                                                        \
     words,                                                                                                       \
     offsetof(resmon_sample, sample_field),                                                                       \
     offsetof(resmon_summary, summary_field),                                                                     \
     group,                                                                                                       \
     RESMON_FOLD_##fold},

const rm__metric_field rm__metric_fields[] = {RM__METRIC_LIST(FIELD)};

const size_t rm__metric_field_count = sizeof rm__metric_fields / sizeof *rm__metric_fields;
_Static_assert(sizeof rm__metric_fields / sizeof *rm__metric_fields == RM__METRIC_COUNT, "RM__METRIC_COUNT counts the list");

#define GROUP(bit, name, command_name, words, files) {sizeof(resmon_metric_group), name, command_name, words, files, bit, 0},
static const resmon_metric_group groups[] = {RM__METRIC_GROUP_LIST(GROUP)};
#define GROUP_COUNT (sizeof groups / sizeof *groups)

#define GROUP_BIT(bit, ...) | (bit)
_Static_assert((0 RM__METRIC_GROUP_LIST(GROUP_BIT)) == RESMON_METRIC_ALL, "RESMON_METRIC_ALL is every group's bit");

size_t resmon_metric_group_count(void)
{
    return GROUP_COUNT;
}

int resmon_metric_group_info(size_t index, resmon_metric_group *out, size_t out_size)
{
    if (!out || out_size < RM__SIZE_THROUGH(resmon_metric_group, reserved))
        return -EINVAL;
    if (index >= GROUP_COUNT)
        return -ERANGE;
    resmon_metric_group info = groups[index];
    info.struct_size = rm__out_size(out_size, sizeof info);
    rm__copy_struct_out(out, out_size, &info, sizeof info);
    return 0;
}

size_t resmon_metric_count(void)
{
    return rm__metric_field_count;
}

int resmon_metric_info(size_t index, resmon_metric *out, size_t out_size)
{
    if (!out || out_size < RM__SIZE_THROUGH(resmon_metric, fold))
        return -EINVAL;
    if (index >= rm__metric_field_count)
        return -ERANGE;
    resmon_metric info = rm__metric_fields[index];
    info.struct_size = rm__out_size(out_size, sizeof info);
    rm__copy_struct_out(out, out_size, &info, sizeof info);
    return 0;
}
