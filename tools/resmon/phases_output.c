/*
 * phases_output.c -- the run's phases (marks) in the summary JSON and the
 * table.  The JSON of each phase is the library's (resmon_phases_to_json:
 * the phase's summary by resmon_summary_to_json), so it carries every
 * summary key there is.
 */
#include "phases_output.h"
#include "run_result.h"
#include "text_output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void phases_write_json(FILE *out, const run_result *r)
{
    if (r->phase_count) {
        int len = resmon_phases_to_json(r->phases, r->phase_count, sizeof *r->phases, NULL, 0);
        char *text = len > 0 ? malloc((size_t)len + 1) : NULL;
        if (text && resmon_phases_to_json(r->phases, r->phase_count, sizeof *r->phases, text, (size_t)len + 1) == len) {
            fputs(", \"phases\": ", out);
            fwrite(text, 1, (size_t)len, out);
        }
        free(text);
    }
    if (r->have_marks && (r->phase_count || r->marks_dropped))
        fprintf(out, ", \"marks_dropped\": %llu", r->marks_dropped);
}

void phases_print_table(FILE *out, const run_result *r)
{
    if (!r->phase_count && !r->marks_dropped)
        return;
    for (size_t i = 0; i < r->phase_count; i++) {
        const resmon_phase *p = &r->phases[i];
        const resmon_summary *s = &p->summary;
        fputs("  phase ", out);
        int shown = p->name[0] ? (int)strlen(p->name) : 14;
        if (p->name[0])
            print_printable(out, p->name);
        else
            fputs("(before marks)", out);
        fprintf(out, "%*s %8.3f s wall %8.3f s CPU %8.1f MiB peak RSS", shown < 16 ? 16 - shown : 1, "",
                s->duration_sec, s->cpu_time_sec, s->peak_rss_mb);
        if (!isnan(s->peak_gpu_mem_mb))
            fprintf(out, ", GPU %.1f MiB", s->peak_gpu_mem_mb);
        if (!isnan(s->mean_gpu_util))
            fprintf(out, " %.0f %%", s->mean_gpu_util);
        if (!isnan(s->gpu_energy_j))
            fprintf(out, " %.1f J", s->gpu_energy_j);
        fputc('\n', out);
    }
    if (r->marks_dropped)
        fprintf(out, "  %-16s %10llu      (names refused, a full channel, or more than %d phases)\n", "marks dropped",
                r->marks_dropped, RESMON_MAX_PHASES);
}
