/*
 * chart.c -- a chart of one run, or of several overlaid, as SVG: CPU (and
 * GPU utilization) in the top panel with a line at the machine's capacity,
 * the process count in a thin strip when the counts group was read, memory
 * (RSS, PSS when known, GPU memory, and the exact peaks with their scope) in
 * the next, and, when the I/O group was read, the bytes read and written so
 * far in a last one, over elapsed time up to the run's end.  Phases (marks)
 * are labelled bands in a strip above the panels and shaded through them.
 *
 * One renderer serves the live run (--plot) and saved samples files
 * (resmon plot): both feed a chart_series sample by sample.
 *
 * The series (chart_series.h) is the model; this file only draws it.
 */
#include "chart.h"
#include "chart_series.h"
#include "run_result.h"
#include "text_output.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int chart_cpus_available(void)
{
    for (int cpus = 1024; cpus <= 1 << 20; cpus *= 4) {
        cpu_set_t *set = CPU_ALLOC((size_t)cpus);
        if (!set)
            return 0;
        size_t size = CPU_ALLOC_SIZE((size_t)cpus);
        int rc = sched_getaffinity(0, size, set), count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
        CPU_FREE(set);
        if (rc == 0 || errno != EINVAL)
            return count;
    }
    return 0;
}

/* ---- drawing ------------------------------------------------------------ */

enum {
    WIDTH = 960, LEFT = 84, RIGHT = 28, PANEL_H = 183, STRIP_H = 64, PANEL_GAP = 40, BOTTOM = 58,
    PHASE_ROW_H = 18, RUN_LINE_H = 17
};
#define PLOT_W (WIDTH - LEFT - RIGHT)
#define LABEL_H 13 /* a level label's height, px */

/* Colours of a single run's series, and of the marks around them. */
#define CPU_COLOR "#2563eb"
#define GPU_UTIL_COLOR "#d97706"
#define RSS_COLOR "#059669"
#define PSS_COLOR "#c2410c"
#define GPU_MEM_COLOR "#9333ea"
#define IO_READ_COLOR "#0891b2"
#define IO_WRITTEN_COLOR "#be185d"
#define NPROCS_COLOR "#475569"
#define PEAK_COLOR "#dc2626"
#define TREE_PEAK_COLOR "#7f1d1d"
#define CAPACITY_COLOR "#334155"
#define PHASE_COLOR "#64748b"
#define STYLE_ONLY_COLOR "#475569" /* a legend's line style, with several runs */

/* Overlaid runs: one colour each (distinct for the colour-blind as far as
 * eight go), then the colours again with a dash. */
static const char *const RUN_COLORS[] = {"#2563eb", "#dc2626", "#059669", "#d97706",
                                         "#7c3aed", "#0891b2", "#db2777", "#4b5563"};
#define RUN_COLOR_COUNT (sizeof RUN_COLORS / sizeof *RUN_COLORS)

/* A round step giving about `target` intervals over range: 1, 2, 2.5 or 5 x 10^k. */
static double nice_step(double range, int target)
{
    if (!(range > 0))
        return 1;
    double raw = range / target, magnitude = pow(10, floor(log10(raw))), f = raw / magnitude;
    double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
    return nice * magnitude;
}

typedef struct axis {
    double max, step;
} axis;

/* The axis's top: the first round tick above top with a little head room,
 * or top itself where that is past the largest double (a field of 1e308
 * made it infinite, and the tick loop never ended, writing until the disk
 * was full). */
static double axis_top(double top, double step)
{
    double rounded = ceil(top * 1.05 / step) * step;
    return isfinite(rounded) ? rounded : top;
}

/* A value axis: round ticks, a little head room above the data. */
static axis make_axis(double data_max, double floor_max)
{
    axis a;
    double top = data_max > floor_max ? data_max : floor_max;
    a.step = nice_step(top, 5);
    a.max = axis_top(top, a.step);
    return a;
}

/* How many steps the ticks of an axis take from 0 (the last at or just past
 * its top): counted, not summed, so that no value -- a top near the largest
 * double, a step lost in rounding -- makes a loop that does not end. */
static int tick_steps(double top, double step)
{
    double steps = step > 0 ? floor(top / step + 0.5) : 0;
    return steps >= 0 && steps <= 100 ? (int)steps : steps > 100 ? 100 : 0;
}

/* The time axis ends where the run ends; its ticks are round. */
static axis make_time_axis(double end)
{
    axis a = {end > 1e-3 ? end : 1e-3, 0};
    a.step = nice_step(a.max, 6);
    return a;
}

/* What every drawing function needs: the stream, the time axis, the runs. */
typedef struct canvas {
    FILE *out;
    axis x;
    const chart_info *info;
    const chart_run *runs;
    size_t run_count;
    int multi; /* several runs: a colour per run, a line style per series */
} canvas;

/* Where value falls along an axis ending at max, length pixels long: the
 * fraction is held within a billion lengths either way, so every
 * coordinate written is finite (-1.79e308 on an axis of 100 made y="inf").
 * A point that far off its panel draws the same line, to the tenth of a
 * pixel written. */
static double along(double value, double max, int length)
{
    double fraction = value / max;
    fraction = fraction > 1e9 ? 1e9 : fraction < -1e9 ? -1e9 : fraction; /* NAN stays NAN */
    return fraction * length;
}

static double px_of(const canvas *cv, double t)
{
    return LEFT + along(t, cv->x.max, PLOT_W);
}

static const char *run_color(const canvas *cv, size_t run, const char *single)
{
    return cv->multi ? RUN_COLORS[run % RUN_COLOR_COUNT] : single;
}

static void draw_panel_frame(const canvas *cv, int top, int height, axis y, const char *y_label, int show_x_labels)
{
    FILE *out = cv->out;
    fprintf(out, "<rect class=\"plot-area\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#ffffff\" "
                 "stroke=\"#cbd5e1\"/>\n",
            LEFT, top, PLOT_W, height);
    /* A tick past the axis's top is not drawn: where the top is the data's
     * own (axis_top, near the largest double) the last round tick is past
     * it, and was infinite (y="-inf", attack 56a B10). */
    for (int i = 0, steps = tick_steps(y.max, y.step); i <= steps; i++) {
        double v = i * y.step;
        if (!isfinite(v) || v / y.max > 1 + 1e-9)
            break;
        double py = top + height - along(v, y.max, height);
        fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e2e8f0\"/>\n", LEFT, LEFT + PLOT_W, py, py);
        fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" class=\"tick y-tick\">%.10g</text>\n", LEFT - 8,
                py + 4, v);
    }
    for (int i = 0, steps = tick_steps(cv->x.max * (1 - 1e-9), cv->x.step); i <= steps; i++) {
        double v = i * cv->x.step;
        if (!isfinite(v) || v / cv->x.max > 1 + 1e-9)
            break; /* the time axis ends where the run ends, not on a tick (divided: x.max * (1 + 1e-9) overflows) */
        double px = px_of(cv, v);
        fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#f1f5f9\"/>\n", px, px, top, top + height);
        if (show_x_labels)
            fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" class=\"tick x-tick\">%.10g</text>\n", px,
                    top + height + 18, v);
    }
    fprintf(out, "<text transform=\"translate(%d,%d) rotate(-90)\" text-anchor=\"middle\" class=\"label\">",
            LEFT - 56, top + height / 2);
    xml_write_text(out, y_label);
    fputs("</text>\n", out);
}

/* The run's end, marked under the last panel: where the time axis stops. */
static void draw_end_tick(const canvas *cv, int bottom)
{
    double last_round = floor(cv->x.max / cv->x.step + 1e-9) * cv->x.step;
    if (cv->x.max - last_round < cv->x.step * 0.4)
        return; /* the last round tick is there already */
    int decimals = (int)fmax(1, 1 - floor(log10(cv->x.step))); /* a digit finer than the ticks */
    fprintf(cv->out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" class=\"tick x-end\">%.*f</text>\n",
            LEFT + PLOT_W, bottom + 18, decimals, cv->x.max);
}

typedef double (*point_field)(const chart_point *p);
static double field_cpu(const chart_point *p) { return p->cpu; }
static double field_rss(const chart_point *p) { return p->rss; }
static double field_gpu_util(const chart_point *p) { return p->gpu_util; }
static double field_gpu_mem(const chart_point *p) { return p->gpu_mem; }
static double field_pss(const chart_point *p) { return p->pss; }
static double field_io_read(const chart_point *p) { return p->io_read; }
static double field_io_written(const chart_point *p) { return p->io_written; }
static double field_nprocs(const chart_point *p) { return p->nprocs; }
static double field_cgroup(const chart_point *p) { return p->cgroup; }

/* How one kind of series is drawn: its id, its colour alone, its dash with
 * several runs, and its name in the legend. */
typedef struct series_style {
    point_field field;
    const char *id, *color, *dash, *name;
    const char *width; /* NULL: the usual */
} series_style;

static void series_id(const canvas *cv, const series_style *st, size_t run, char *id, size_t cap)
{
    if (cv->multi)
        snprintf(id, cap, "%s-%zu", st->id, run + 1);
    else
        snprintf(id, cap, "%s", st->id);
}

/* A polyline of one field; `steps` holds each value until the next point
 * (a count), `filled` shades the area under it (a memory level). */
static void draw_series(const canvas *cv, size_t run, const series_style *st, int top, int height, axis y,
                        int steps, int filled)
{
    FILE *out = cv->out;
    const chart_series *c = cv->runs[run].series;
    const char *color = run_color(cv, run, st->color);
    char id[64];
    series_id(cv, st, run, id, sizeof id);
    fprintf(out, "<polyline id=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" stroke-linejoin=\"round\"", id,
            color, st->width ? st->width : steps ? "1.3" : "1.8");
    if (cv->multi && st->dash)
        fprintf(out, " stroke-dasharray=\"%s\"", st->dash);
    fputs(" points=\"", out);
    double first_x = NAN, last_x = NAN, last_y = NAN;
    for (size_t i = 0; i < c->count; i++) {
        double v = st->field(&c->points[i]);
        if (isnan(v))
            continue;
        double px = px_of(cv, c->points[i].t), py = top + height - along(v, y.max, height);
        if (steps && !isnan(last_y))
            fprintf(out, "%.1f,%.1f ", px, last_y);
        fprintf(out, "%.1f,%.1f ", px, py);
        if (isnan(first_x))
            first_x = px;
        last_x = px;
        last_y = py;
    }
    fputs("\"/>\n", out);
    if (filled && !cv->multi && !isnan(first_x)) {
        fprintf(out, "<polygon fill=\"%s\" fill-opacity=\"0.10\" stroke=\"none\" points=\"%.1f,%d ", color, first_x,
                top + height);
        for (size_t i = 0; i < c->count; i++) {
            double v = st->field(&c->points[i]);
            if (!isnan(v))
                fprintf(out, "%.1f,%.1f ", px_of(cv, c->points[i].t), top + height - along(v, y.max, height));
        }
        fprintf(out, "%.1f,%d\"/>\n", last_x, top + height);
    }
}

/* A panel's legend, right-aligned just above its frame: with one run each
 * series in its colour, with several each series in its line style. */
static void draw_legend(const canvas *cv, int top, const series_style *const *styles, int n)
{
    FILE *out = cv->out;
    int x = LEFT + PLOT_W;
    for (int i = n - 1; i >= 0; i--) {
        int width = 26 + 7 * (int)strlen(styles[i]->name);
        x -= width;
        const char *color = cv->multi ? STYLE_ONLY_COLOR : styles[i]->color;
        fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"", x, x + 16, top - 10,
                top - 10, color);
        if (cv->multi && styles[i]->dash)
            fprintf(out, " stroke-dasharray=\"%s\"", styles[i]->dash);
        fprintf(out, "/>\n<text x=\"%d\" y=\"%d\" class=\"legend\">", x + 21, top - 6);
        xml_write_text(out, styles[i]->name);
        fputs("</text>\n", out);
        x -= 10;
    }
}

/* The largest value of one field over every run's points, NAN-aware. */
static double field_max(const canvas *cv, point_field field)
{
    double top = NAN;
    for (size_t r = 0; r < cv->run_count; r++)
        for (size_t i = 0; i < cv->runs[r].series->count; i++)
            top = chart_max_known(top, field(&cv->runs[r].series->points[i]));
    return top;
}

static int any_run(const canvas *cv, size_t flag_offset)
{
    for (size_t r = 0; r < cv->run_count; r++) {
        int flag;
        memcpy(&flag, (const char *)cv->runs[r].series + flag_offset, sizeof flag);
        if (flag)
            return 1;
    }
    return 0;
}
#define ANY(cv, member) any_run(cv, offsetof(chart_series, member))

/* A level across the panel with its name and scope written on it, so that
 * a figure of another scope than the curve's cannot be read as a ceiling
 * the curve breaks through. */
static double level_y(double value, axis y, int top, int height)
{
    return top + height - along(value, y.max, height);
}

/* Where a level's label goes by itself: above its line, or below it near the
 * panel's top. */
static double level_label_y(double py, int top)
{
    return py - top < 16 ? py + 13 : py - 4;
}

static void draw_level(const canvas *cv, const char *id, double value, axis y, int top, int height, const char *color,
                       const char *dash, const char *text, double label_y)
{
    FILE *out = cv->out;
    double py = level_y(value, y, top, height);
    fprintf(out, "<line id=\"%s\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.2\" "
                 "stroke-dasharray=\"%s\" data-value=\"%g\"/>\n",
            id, LEFT, LEFT + PLOT_W, py, py, color, dash, value);
    fprintf(out, "<text id=\"%s-label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\" class=\"level\" fill=\"%s\">", id,
            LEFT + PLOT_W - 6, label_y, color);
    xml_write_text(out, text);
    fputs("</text>\n", out);
}

/* Writes text as XML, cut on a character boundary to fewer than max bytes
 * with an ellipsis where it was cut. */
static void write_cut(FILE *out, const char *text, size_t max)
{
    char shown[128];
    text_cut(shown, max < sizeof shown ? max : sizeof shown, text);
    xml_write_text(out, shown);
}

static void draw_title(const canvas *cv)
{
    fprintf(cv->out, "<text x=\"%d\" y=\"30\" class=\"title\">", LEFT);
    write_cut(cv->out, cv->info->title, 96); /* a long command line */
    fputs("</text>\n", cv->out);
}

/* Without a subtitle, a line per run: its colour, its name, its figures. */
/* v with decimals places, as a reader reads a figure -- but in %g beyond
 * 1e12: a hand-made file's 1.79e308 was printed as 309 digits (attack 67
 * F16). */
static const char *figure_text(char *buf, size_t cap, double v, int decimals)
{
    if (fabs(v) < 1e12)
        snprintf(buf, cap, "%.*f", decimals, v);
    else
        snprintf(buf, cap, "%.4g", v);
    return buf;
}

static int draw_run_lines(const canvas *cv, int y)
{
    FILE *out = cv->out;
    if (cv->info->subtitle) {
        fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"subtitle\">", LEFT, y);
        xml_write_text(out, cv->info->subtitle);
        fputs("</text>\n", out);
        return y + RUN_LINE_H;
    }
    for (size_t r = 0; r < cv->run_count; r++, y += RUN_LINE_H) {
        const chart_series *c = cv->runs[r].series;
        fprintf(out, "<g class=\"run-legend\" id=\"run-legend-%zu\">\n<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"9\" "
                     "fill=\"%s\"/>\n<text x=\"%d\" y=\"%d\" class=\"subtitle\"><tspan class=\"run-label\">",
                r + 1, LEFT, y - 9, RUN_COLORS[r % RUN_COLOR_COUNT], LEFT + 20, y);
        xml_write_text(out, cv->runs[r].label);
        char end[32], cpu[32], rss[32];
        fprintf(out, "</tspan> \xc2\xb7 %s s \xc2\xb7 mean CPU %s %% \xc2\xb7 peak RSS %s MiB sampled \xc2\xb7 "
                     "%zu sample%s</text>\n</g>\n",
                figure_text(end, sizeof end, cv->runs[r].end_sec, 2),
                figure_text(cpu, sizeof cpu, c->samples ? c->cpu_sum / (double)c->samples / CHART_SUM_SCALE : 0.0, 0),
                figure_text(rss, sizeof rss, c->rss_max, 1), c->samples, c->samples == 1 ? "" : "s");
    }
    return y;
}

static int has_named_phase(const chart_series *c)
{
    for (size_t i = 0; i < c->phase_count; i++)
        if (c->phases[i].name[0])
            return 1;
    return 0;
}

/* Phase i of a run, from its start to the next one's (or the run's end). */
static double phase_end(const canvas *cv, size_t run, size_t i)
{
    const chart_series *c = cv->runs[run].series;
    return i + 1 < c->phase_count ? c->phases[i + 1].start : cv->runs[run].end_sec;
}

/* A row of labelled bands per run with phases; returns the y below them. */
static int draw_phase_strip(const canvas *cv, int y)
{
    FILE *out = cv->out;
    for (size_t r = 0; r < cv->run_count; r++) {
        const chart_series *c = cv->runs[r].series;
        if (!has_named_phase(c))
            continue;
        const char *color = run_color(cv, r, PHASE_COLOR);
        if (cv->multi) { /* whose phases: the run's name, cut to fit the margin */
            fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"tick\">", LEFT - 6, y + 12);
            write_cut(out, cv->runs[r].label, 12);
            fputs("</text>\n", out);
        }
        for (size_t i = 0, shown = 0; i < c->phase_count; i++) {
            if (!c->phases[i].name[0])
                continue; /* before the first mark, when it has no name */
            double x0 = px_of(cv, c->phases[i].start), x1 = px_of(cv, phase_end(cv, r, i));
            fprintf(out, "<g class=\"phase\"><rect class=\"phase-band\" data-run=\"%zu\" data-start=\"%g\" "
                         "data-end=\"%g\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" "
                         "fill-opacity=\"%s\" stroke=\"#ffffff\"><title>",
                    r + 1, c->phases[i].start, phase_end(cv, r, i), x0, y, x1 - x0, PHASE_ROW_H - 2, color,
                    shown++ % 2 ? "0.32" : "0.20");
            xml_write_text(out, c->phases[i].name);
            fputs("</title></rect>\n", out);
            size_t fits = (size_t)((x1 - x0 - 6) / 6.5); /* characters at 11 px (bytes, for ASCII) */
            if (fits >= 2) {
                fprintf(out, "<text class=\"phase-label\" x=\"%.1f\" y=\"%d\">", x0 + 3, y + 12);
                write_cut(out, c->phases[i].name, fits + 1 < 4 ? 4 : fits + 1);
                fputs("</text>\n", out);
            }
            fputs("</g>\n", out);
        }
        if (c->phases_dropped)
            fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"tick\">+%zu more phase%s</text>\n",
                    LEFT + PLOT_W, y + PHASE_ROW_H + 10, c->phases_dropped, c->phases_dropped == 1 ? "" : "s");
        y += PHASE_ROW_H + (c->phases_dropped ? 12 : 0);
    }
    return y;
}

/* Phases through a panel: every other one shaded when one run has them,
 * and a line where each begins. */
static void draw_phase_shading(const canvas *cv, int top, int height)
{
    size_t with_phases = 0;
    for (size_t r = 0; r < cv->run_count; r++)
        with_phases += (size_t)has_named_phase(cv->runs[r].series);
    for (size_t r = 0; r < cv->run_count; r++) {
        const chart_series *c = cv->runs[r].series;
        if (!has_named_phase(c))
            continue;
        for (size_t i = 0, shown = 0; i < c->phase_count; i++) {
            if (!c->phases[i].name[0])
                continue;
            double x0 = px_of(cv, c->phases[i].start), x1 = px_of(cv, phase_end(cv, r, i));
            if (with_phases == 1 && shown % 2 == 0)
                fprintf(cv->out, "<rect class=\"phase-shade\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                                 "fill=\"#94a3b8\" fill-opacity=\"0.10\"/>\n",
                        x0, top, x1 - x0, height);
            shown++;
            fprintf(cv->out, "<line class=\"phase-start\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" "
                             "stroke-opacity=\"0.6\" stroke-dasharray=\"2 3\"/>\n",
                    x0, x0, top, top + height, run_color(cv, r, PHASE_COLOR));
        }
    }
}

static void draw_cpu_panel(const canvas *cv, int top)
{
    static const series_style cpu = {field_cpu, "series-cpu", CPU_COLOR, NULL, "CPU %", NULL},
                              gpu = {field_gpu_util, "series-gpu-util", GPU_UTIL_COLOR, "6 3", "GPU util %", NULL};
    double data_top = chart_max_known(chart_max_known(field_max(cv, field_cpu), field_max(cv, field_gpu_util)), 100);
    /* The capacity line is drawn when it fits a scale the data can still be
     * read on (within 4 x the data's top); else it is named as off the scale. */
    double capacity = cv->info->cpus * 100.0;
    int capacity_drawn = cv->info->cpus > 0 && capacity <= 4 * data_top;
    axis y = make_axis(capacity_drawn ? chart_max_known(data_top, capacity) : data_top, 100);
    int any_gpu = ANY(cv, any_gpu_util);
    fprintf(cv->out, "<g class=\"panel\" id=\"panel-cpu\">\n");
    draw_panel_frame(cv, top, PANEL_H, y, any_gpu ? "CPU and GPU utilization (%)" : "CPU (%)", 0);
    draw_phase_shading(cv, top, PANEL_H);
    if (cv->info->cpus > 0) {
        char text[160];
        snprintf(text, sizeof text, "capacity %.0f %% = %d CPU%s (%s)%s", capacity, cv->info->cpus,
                 cv->info->cpus == 1 ? "" : "s", cv->info->cpus_source ? cv->info->cpus_source : "given",
                 capacity_drawn ? "" : ", off the scale");
        if (capacity_drawn) {
            draw_level(cv, "cpu-capacity", capacity, y, top, PANEL_H, CAPACITY_COLOR, "4 3", text,
                       level_label_y(level_y(capacity, y, top, PANEL_H), top));
        } else {
            fprintf(cv->out, "<text id=\"cpu-capacity-label\" x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"level\" "
                             "fill=\"%s\">",
                    LEFT + PLOT_W - 6, top + 14, CAPACITY_COLOR);
            xml_write_text(cv->out, text);
            fputs("</text>\n", cv->out);
        }
    }
    for (size_t r = 0; r < cv->run_count; r++) {
        draw_series(cv, r, &cpu, top, PANEL_H, y, 0, 0);
        if (cv->runs[r].series->any_gpu_util)
            draw_series(cv, r, &gpu, top, PANEL_H, y, 0, 0);
    }
    const series_style *legend[] = {&cpu, &gpu};
    draw_legend(cv, top, legend, any_gpu ? 2 : 1);
    fputs("</g>\n", cv->out);
}

/* How many processes the tree had: a thin strip under the CPU, since it
 * is what explains a CPU curve above 100 %. */
static void draw_nprocs_panel(const canvas *cv, int top)
{
    static const series_style procs = {field_nprocs, "series-nprocs", NPROCS_COLOR, NULL, "processes", NULL};
    double data_top = chart_max_known(field_max(cv, field_nprocs), 1);
    axis y = {0, nice_step(data_top, 2)};
    y.step = y.step < 1 ? 1 : round(y.step);
    y.max = axis_top(data_top, y.step);
    fprintf(cv->out, "<g class=\"panel\" id=\"panel-nprocs\">\n");
    draw_panel_frame(cv, top, STRIP_H, y, "Processes", 0);
    draw_phase_shading(cv, top, STRIP_H);
    for (size_t r = 0; r < cv->run_count; r++)
        if (cv->runs[r].series->any_nprocs)
            draw_series(cv, r, &procs, top, STRIP_H, y, 1, 0);
    const series_style *legend[] = {&procs};
    draw_legend(cv, top, legend, 1);
    fputs("</g>\n", cv->out);
}

/* RSS counts a page shared by N processes N times; PSS once (1/N each), so
 * the two lines apart show how much of a tree's RSS is shared.  The exact
 * peaks are of their own scopes, written on their lines: the largest single
 * process's (wait4's ru_maxrss, or VmHWM) lies below the tree's sum whenever
 * two processes overlap; the whole tree's (a cgroup's memory.peak) bounds
 * the sampled curve from above. */
static void draw_memory_panel(const canvas *cv, int top, int show_x_labels)
{
    static const series_style rss = {field_rss, "series-rss", RSS_COLOR, NULL, "RSS (tree)", NULL},
                              pss = {field_pss, "series-pss", PSS_COLOR, "2 3", "PSS (shared split)", NULL},
                              gpu = {field_gpu_mem, "series-gpu-mem", GPU_MEM_COLOR, "8 3 2 3", "GPU memory", NULL},
                              cgroup = {field_cgroup, "series-cgroup", TREE_PEAK_COLOR, "6 2", "cgroup (tree)", NULL};
    const chart_info *info = cv->info;
    double mem_max = chart_max_known(chart_max_known(field_max(cv, field_rss), field_max(cv, field_gpu_mem)),
                               chart_max_known(info->exact_peak_process_mb, info->exact_peak_tree_mb));
    mem_max = chart_max_known(mem_max, field_max(cv, field_cgroup));
    axis y = make_axis(chart_max_known(mem_max, field_max(cv, field_pss)), 1);
    fprintf(cv->out, "<g class=\"panel\" id=\"panel-memory\">\n");
    draw_panel_frame(cv, top, PANEL_H, y, "Memory (MiB)", show_x_labels);
    draw_phase_shading(cv, top, PANEL_H);
    const series_style *legend[4] = {&rss};
    int n = 1;
    if (ANY(cv, any_pss))
        legend[n++] = &pss;
    if (ANY(cv, any_gpu_mem))
        legend[n++] = &gpu;
    if (ANY(cv, any_cgroup))
        legend[n++] = &cgroup;
    for (size_t r = 0; r < cv->run_count; r++) {
        draw_series(cv, r, &rss, top, PANEL_H, y, 0, 1);
        if (cv->runs[r].series->any_pss)
            draw_series(cv, r, &pss, top, PANEL_H, y, 0, 0);
        if (cv->runs[r].series->any_gpu_mem)
            draw_series(cv, r, &gpu, top, PANEL_H, y, 0, 0);
        if (cv->runs[r].series->any_cgroup)
            draw_series(cv, r, &cgroup, top, PANEL_H, y, 0, 0);
    }
    /* The two exact levels' labels never overlap (59.7 over 56.8 MiB did):
     * when they would, the upper line's label goes above it and the lower
     * one's below, a label's height (13 px) apart at least. */
    double tree_py = isnan(info->exact_peak_tree_mb) ? NAN : level_y(info->exact_peak_tree_mb, y, top, PANEL_H);
    double proc_py = isnan(info->exact_peak_process_mb) ? NAN : level_y(info->exact_peak_process_mb, y, top, PANEL_H);
    double tree_label = level_label_y(tree_py, top), proc_label = level_label_y(proc_py, top);
    if (fabs(tree_label - proc_label) < LABEL_H) { /* false when either is NAN */
        int tree_upper = tree_py <= proc_py;
        double upper_py = tree_upper ? tree_py : proc_py, lower_py = tree_upper ? proc_py : tree_py;
        double upper_label = level_label_y(upper_py, top);
        double lower_label = fmax(lower_py + 13, upper_label + LABEL_H);
        tree_label = tree_upper ? upper_label : lower_label;
        proc_label = tree_upper ? lower_label : upper_label;
    }
    char text[160];
    if (!isnan(info->exact_peak_tree_mb)) {
        snprintf(text, sizeof text, "whole tree, exact: %.1f MiB (%s)", info->exact_peak_tree_mb,
                 info->exact_peak_tree_source ? info->exact_peak_tree_source : "cgroup");
        draw_level(cv, "exact-peak-tree", info->exact_peak_tree_mb, y, top, PANEL_H, TREE_PEAK_COLOR, "8 3", text,
                   tree_label);
    }
    if (!isnan(info->exact_peak_process_mb)) {
        snprintf(text, sizeof text, "largest single process, exact: %.1f MiB (%s)", info->exact_peak_process_mb,
                 info->exact_peak_process_source ? info->exact_peak_process_source : "kernel");
        draw_level(cv, "exact-peak", info->exact_peak_process_mb, y, top, PANEL_H, PEAK_COLOR, "2 3", text,
                   proc_label);
    }
    if (!isnan(info->exact_peak_tree_mb) && !isnan(info->exact_peak_process_mb) &&
        info->exact_peak_tree_mb < info->exact_peak_process_mb) {
        /* On a warm page cache: said where the user looks (see resmon(1)). */
        fprintf(cv->out, "<text id=\"tree-below-rss-note\" x=\"%d\" y=\"%d\" class=\"level\" fill=\"%s\">", LEFT + 6,
                top + PANEL_H - 6, TREE_PEAK_COLOR);
        xml_write_text(cv->out, TREE_BELOW_RSS_NOTE);
        fputs("</text>\n", cv->out);
    }
    draw_legend(cv, top, legend, n);
    fputs("</g>\n", cv->out);
}

/* Bytes through read and write system calls (rchar, wchar), page cache
 * included: what the program asked for, so a stall shows as a flat line. */
static void draw_io_panel(const canvas *cv, int top)
{
    /* read wide under written: equal totals (a copy) show both lines */
    static const series_style read = {field_io_read, "series-io-read", IO_READ_COLOR, NULL, "read (calls)", "4.5"},
                              written = {field_io_written, "series-io-written", IO_WRITTEN_COLOR, "6 3", "written (calls)", NULL};
    axis y = make_axis(chart_max_known(field_max(cv, field_io_read), field_max(cv, field_io_written)), 1);
    fprintf(cv->out, "<g class=\"panel\" id=\"panel-io\">\n");
    draw_panel_frame(cv, top, PANEL_H, y, "I/O so far (MiB)", 1);
    draw_phase_shading(cv, top, PANEL_H);
    for (size_t r = 0; r < cv->run_count; r++)
        if (cv->runs[r].series->any_io) {
            draw_series(cv, r, &read, top, PANEL_H, y, 0, 0);
            draw_series(cv, r, &written, top, PANEL_H, y, 0, 0);
        }
    const series_style *legend[] = {&read, &written};
    draw_legend(cv, top, legend, 2);
    fputs("</g>\n", cv->out);
}

int chart_render_svg(FILE *out, const chart_info *info, const chart_run *runs, size_t count)
{
    double end = 0;
    for (size_t r = 0; r < count; r++)
        end = runs[r].end_sec > end ? runs[r].end_sec : end;
    canvas cv = {out, make_time_axis(end), info, runs, count, count > 1};
    int any_io = ANY(&cv, any_io), any_nprocs = ANY(&cv, any_nprocs);

    /* The layout, top down: title, subtitle or run lines, phase strip, panels. */
    int phase_rows = 0;
    for (size_t r = 0; r < count; r++)
        phase_rows += has_named_phase(runs[r].series) * (runs[r].series->phases_dropped ? 2 : 1);
    int header = 52 + RUN_LINE_H * (info->subtitle ? 1 : (int)count);
    int cpu_top = header + phase_rows * PHASE_ROW_H + 26;
    int procs_top = cpu_top + PANEL_H + PANEL_GAP;
    int memory_top = (any_nprocs ? procs_top + STRIP_H + PANEL_GAP : procs_top);
    int io_top = memory_top + PANEL_H + PANEL_GAP;
    int bottom = any_io ? io_top + PANEL_H : memory_top + PANEL_H, height = bottom + BOTTOM;

    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                 "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" data-end-sec=\"%g\">\n",
            WIDTH, height, WIDTH, height, cv.x.max);
    fputs("<style>.tick{font-size:11px;fill:#475569}.label{font-size:13px;fill:#1e293b}"
          ".legend{font-size:12px;fill:#1e293b}.title{font-size:17px;font-weight:bold;fill:#0f172a}"
          ".subtitle{font-size:12px;fill:#475569}.run-label{font-weight:bold;fill:#1e293b}"
          ".level{font-size:11px;stroke:#ffffff;stroke-width:3px;stroke-linejoin:round;paint-order:stroke}.phase-label{font-size:11px;fill:#0f172a}</style>\n", out);
    fprintf(out, "<rect width=\"%d\" height=\"%d\" fill=\"#f8fafc\"/>\n", WIDTH, height);
    draw_title(&cv);
    int y = draw_run_lines(&cv, 52);
    draw_phase_strip(&cv, y - 4);
    draw_cpu_panel(&cv, cpu_top);
    if (any_nprocs)
        draw_nprocs_panel(&cv, procs_top);
    draw_memory_panel(&cv, memory_top, !any_io);
    if (any_io)
        draw_io_panel(&cv, io_top);
    draw_end_tick(&cv, bottom);
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" class=\"label\">Elapsed time (s)</text>\n",
            LEFT + PLOT_W / 2, height - 14);
    fputs("</svg>\n", out);
    return ferror(out) ? -EIO : 0;
}

int chart_write_svg(const chart_series *series, FILE *out, const char *title, const run_result *r, double interval_sec)
{
    chart_series *c = malloc(sizeof *c); /* flush the partial point without changing the caller's */
    if (!c)
        return -ENOMEM;
    *c = *series;
    chart_series_finish(c);
    char subtitle[256];
    snprintf(subtitle, sizeof subtitle,
             "wall %.2f s \xc2\xb7 mean CPU %.0f %% \xc2\xb7 peak RSS %.1f MiB sampled (tree) \xc2\xb7 %llu sample%s "
             "every %g s",
             r->wall_sec, r->summary.mean_cpu_percent, r->summary.peak_rss_mb,
             (unsigned long long)r->summary.num_samples, r->summary.num_samples == 1 ? "" : "s",
             interval_sec); /* the asked interval: the measured mean read "every 0.1006 s" */
    chart_info info = {
        .title = title,
        .subtitle = subtitle,
        .cpus = chart_cpus_available(),
        .cpus_source = "resmon's affinity mask",
        .exact_peak_process_mb = r->have_rusage ? r->rusage_maxrss_mb : r->summary.hwm_rss_mb,
        .exact_peak_process_source = r->have_rusage ? "wait4" : "VmHWM",
        .exact_peak_tree_mb = r->summary.cgroup_version ? r->summary.cgroup_peak_mb : NAN,
        .exact_peak_tree_source = r->summary.cgroup_version == 2 ? "cgroup memory.peak" : "cgroup max_usage_in_bytes",
    };
    chart_run run = {c, NULL, c->t_last > r->wall_sec ? c->t_last : r->wall_sec};
    int rc = chart_render_svg(out, &info, &run, 1);
    free(c);
    return rc;
}
