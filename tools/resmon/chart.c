/*
 * chart.c -- a chart of the run as SVG: CPU (and GPU utilization) in the top
 * panel, memory (RSS, PSS when known, and GPU memory) in the middle one, and,
 * when the I/O group was read, the bytes read and written so far in a third,
 * over elapsed time.
 *
 * The series is thinned evenly as the run grows so memory stays constant on
 * day-long runs: at most CHART_MAX_POINTS points, each covering `stride`
 * samples; when full, neighbours merge pairwise and the stride doubles.  A
 * point keeps the mean of CPU and GPU utilization (a rate: its mean is what
 * was used) and the maximum of memory (a level: a chart must not hide a peak)
 * and of the I/O totals (they only grow, so the maximum is the latest).
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHART_MAX_POINTS 2048
#define BYTES_PER_MIB 1048576.0

typedef struct chart_point {
    double t, cpu, rss, gpu_util, gpu_mem;
    double pss, io_read, io_written; /* NAN when not read; I/O in MiB */
} chart_point;

struct chart_series {
    chart_point points[CHART_MAX_POINTS];
    size_t count;
    size_t stride;          /* samples per point */
    chart_point pending;    /* the point being filled */
    size_t pending_samples;
    size_t gpu_util_samples, gpu_mem_samples; /* in pending */
    int any_gpu_util, any_gpu_mem, any_pss, any_io;
};

chart_series *chart_series_new(void)
{
    chart_series *c = calloc(1, sizeof *c);
    if (c)
        c->stride = 1;
    return c;
}

void chart_series_free(chart_series *c)
{
    free(c);
}

static double max_known(double a, double b)
{
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return a > b ? a : b;
}

static double mean_known(double a, double b)
{
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return (a + b) / 2;
}

static void halve(chart_series *c)
{
    size_t out = 0;
    for (size_t i = 0; i + 1 < c->count; i += 2) {
        chart_point a = c->points[i], b = c->points[i + 1];
        c->points[out++] = (chart_point){a.t,
                                         (a.cpu + b.cpu) / 2,
                                         max_known(a.rss, b.rss),
                                         mean_known(a.gpu_util, b.gpu_util),
                                         max_known(a.gpu_mem, b.gpu_mem),
                                         max_known(a.pss, b.pss),
                                         max_known(a.io_read, b.io_read),
                                         max_known(a.io_written, b.io_written)};
    }
    if (c->count % 2)
        c->points[out++] = c->points[c->count - 1];
    c->count = out;
    c->stride *= 2;
}

static void flush_pending(chart_series *c)
{
    if (c->pending_samples == 0)
        return;
    if (c->count == CHART_MAX_POINTS)
        halve(c);
    chart_point p = c->pending;
    p.cpu /= (double)c->pending_samples;
    p.gpu_util = c->gpu_util_samples ? p.gpu_util / (double)c->gpu_util_samples : NAN;
    if (!c->gpu_mem_samples)
        p.gpu_mem = NAN;
    c->points[c->count++] = p;
    c->pending_samples = c->gpu_util_samples = c->gpu_mem_samples = 0;
}

void chart_series_add(chart_series *c, const resmon_sample *s, double elapsed_sec)
{
    chart_point *p = &c->pending;
    if (c->pending_samples == 0)
        *p = (chart_point){elapsed_sec, 0, s->rss_mb, 0, 0, NAN, NAN, NAN};
    p->cpu += s->cpu_percent;
    p->rss = s->rss_mb > p->rss ? s->rss_mb : p->rss;
    p->pss = max_known(p->pss, s->pss_mb);
    p->io_read = max_known(p->io_read, s->io_rchar / BYTES_PER_MIB);
    p->io_written = max_known(p->io_written, s->io_wchar / BYTES_PER_MIB);
    c->any_pss |= !isnan(s->pss_mb);
    c->any_io |= !isnan(s->io_rchar) || !isnan(s->io_wchar);
    if (!isnan(s->gpu_util)) {
        p->gpu_util += s->gpu_util;
        c->gpu_util_samples++;
        c->any_gpu_util = 1;
    }
    if (!isnan(s->gpu_mem_mb)) {
        p->gpu_mem = c->gpu_mem_samples ? (s->gpu_mem_mb > p->gpu_mem ? s->gpu_mem_mb : p->gpu_mem) : s->gpu_mem_mb;
        c->gpu_mem_samples++;
        c->any_gpu_mem = 1;
    }
    if (++c->pending_samples >= c->stride)
        flush_pending(c);
}

/* ---- drawing ------------------------------------------------------------ */

enum { WIDTH = 960, PANEL_H = 183, LEFT = 84, RIGHT = 28, TOP = 78, PANEL_GAP = 58, BOTTOM = 58 };
#define PLOT_W (WIDTH - LEFT - RIGHT)
#define PANEL_TOP(index) (TOP + (index) * (PANEL_H + PANEL_GAP))
#define CHART_HEIGHT(panels) (PANEL_TOP(panels) - PANEL_GAP + BOTTOM)

static const char *const CPU_COLOR = "#2563eb", *const GPU_UTIL_COLOR = "#d97706", *const RSS_COLOR = "#059669",
                         *const GPU_MEM_COLOR = "#9333ea", *const PEAK_COLOR = "#dc2626",
                         *const PSS_COLOR = "#c2410c", *const IO_READ_COLOR = "#0891b2",
                         *const IO_WRITTEN_COLOR = "#be185d";

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

static axis make_axis(double data_max, double floor_max)
{
    axis a;
    double top = data_max > floor_max ? data_max : floor_max;
    a.step = nice_step(top, 5);
    a.max = ceil(top * 1.05 / a.step) * a.step;
    return a;
}

static void draw_panel_frame(FILE *out, int top, axis y, axis x, const char *y_label, int show_x_labels)
{
    fprintf(out, "<g class=\"panel\">\n");
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#ffffff\" stroke=\"#cbd5e1\"/>\n", LEFT, top,
            PLOT_W, PANEL_H);
    for (double v = 0; v <= y.max + y.step / 2; v += y.step) {
        double py = top + PANEL_H - v / y.max * PANEL_H;
        fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e2e8f0\"/>\n", LEFT, LEFT + PLOT_W, py, py);
        fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" class=\"tick\">%g</text>\n", LEFT - 8, py + 4, v);
    }
    for (double v = 0; v <= x.max + x.step / 2; v += x.step) {
        double px = LEFT + v / x.max * PLOT_W;
        fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#f1f5f9\"/>\n", px, px, top, top + PANEL_H);
        if (show_x_labels)
            fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" class=\"tick\">%g</text>\n", px,
                    top + PANEL_H + 18, v);
    }
    fprintf(out, "<text transform=\"translate(%d,%d) rotate(-90)\" text-anchor=\"middle\" class=\"label\">",
            LEFT - 56, top + PANEL_H / 2);
    xml_write_text(out, y_label);
    fputs("</text>\n</g>\n", out);
}

typedef double (*point_field)(const chart_point *p);
static double field_cpu(const chart_point *p) { return p->cpu; }
static double field_rss(const chart_point *p) { return p->rss; }
static double field_gpu_util(const chart_point *p) { return p->gpu_util; }
static double field_gpu_mem(const chart_point *p) { return p->gpu_mem; }
static double field_pss(const chart_point *p) { return p->pss; }
static double field_io_read(const chart_point *p) { return p->io_read; }
static double field_io_written(const chart_point *p) { return p->io_written; }

static void draw_series(FILE *out, const chart_series *c, point_field field, const char *id, const char *color,
                        int top, axis y, axis x, int filled)
{
    fprintf(out, "<polyline id=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" stroke-linejoin=\"round\" points=\"",
            id, color);
    double first_x = NAN, last_x = NAN;
    for (size_t i = 0; i < c->count; i++) {
        double v = field(&c->points[i]);
        if (isnan(v))
            continue;
        double px = LEFT + c->points[i].t / x.max * PLOT_W, py = top + PANEL_H - v / y.max * PANEL_H;
        fprintf(out, "%.1f,%.1f ", px, py);
        if (isnan(first_x))
            first_x = px;
        last_x = px;
    }
    fputs("\"/>\n", out);
    if (filled && !isnan(first_x)) { /* a light area under a memory level */
        fprintf(out, "<polygon fill=\"%s\" fill-opacity=\"0.10\" stroke=\"none\" points=\"%.1f,%d ", color, first_x,
                top + PANEL_H);
        for (size_t i = 0; i < c->count; i++) {
            double v = field(&c->points[i]);
            if (!isnan(v))
                fprintf(out, "%.1f,%.1f ", LEFT + c->points[i].t / x.max * PLOT_W, top + PANEL_H - v / y.max * PANEL_H);
        }
        fprintf(out, "%.1f,%d\"/>\n", last_x, top + PANEL_H);
    }
}

static void draw_legend(FILE *out, int top, const char *const *names, const char *const *colors, int n)
{
    int x = LEFT + PLOT_W - 12;
    for (int i = n - 1; i >= 0; i--) {
        int width = 26 + 7 * (int)strlen(names[i]);
        x -= width;
        fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>\n", x, x + 16,
                top + 14, top + 14, colors[i]);
        fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"legend\">", x + 21, top + 18);
        xml_write_text(out, names[i]);
        fputs("</text>\n", out);
        x -= 10;
    }
}

/* The largest value of one field over the points, NAN-aware. */
static double field_max(const chart_series *c, point_field field)
{
    double top = NAN;
    for (size_t i = 0; i < c->count; i++)
        top = max_known(top, field(&c->points[i]));
    return top;
}

static void draw_title(FILE *out, const char *title, const run_result *r, double exact_peak)
{
    fprintf(out, "<text x=\"%d\" y=\"30\" class=\"title\">", LEFT);
    char shown[96];
    size_t len = strlen(title);
    if (len < sizeof shown) {
        xml_write_text(out, title);
    } else { /* a long command line: cut on a character boundary, mark the cut */
        size_t cut = sizeof shown - 4;
        while (cut > 0 && ((unsigned char)title[cut] & 0xC0) == 0x80)
            cut--;
        memcpy(shown, title, cut);
        memcpy(shown + cut, "\xe2\x80\xa6", 4); /* ellipsis */
        xml_write_text(out, shown);
    }
    fprintf(out, "</text>\n<text x=\"%d\" y=\"52\" class=\"subtitle\">wall %.2f s \xc2\xb7 mean CPU %.0f %% \xc2\xb7 "
                 "peak RSS %.1f MiB sampled",
            LEFT, r->wall_sec, r->summary.mean_cpu_percent, r->summary.peak_rss_mb);
    if (!isnan(exact_peak))
        fprintf(out, ", %.1f MiB exact", exact_peak);
    fprintf(out, " \xc2\xb7 %llu sample%s every %g s</text>\n", (unsigned long long)r->summary.num_samples,
            r->summary.num_samples == 1 ? "" : "s",
            r->summary.duration_sec > 0 && r->summary.num_samples > 1
                ? round(r->summary.duration_sec / (double)(r->summary.num_samples - 1) * 1e4) / 1e4
                : 0.0);
}

static void draw_cpu_panel(FILE *out, const chart_series *c, int top, axis x)
{
    axis cpu = make_axis(max_known(field_max(c, field_cpu), field_max(c, field_gpu_util)), 100);
    draw_panel_frame(out, top, cpu, x, c->any_gpu_util ? "CPU and GPU utilization (%)" : "CPU (%)", 0);
    draw_series(out, c, field_cpu, "series-cpu", CPU_COLOR, top, cpu, x, 0);
    if (c->any_gpu_util)
        draw_series(out, c, field_gpu_util, "series-gpu-util", GPU_UTIL_COLOR, top, cpu, x, 0);
    const char *names[] = {"CPU %", "GPU util %"}, *colors[] = {CPU_COLOR, GPU_UTIL_COLOR};
    draw_legend(out, top, names, colors, c->any_gpu_util ? 2 : 1);
}

/* RSS counts a page shared by N processes N times; PSS once (1/N each), so
 * the two lines apart show how much of a tree's RSS is shared. */
static void draw_memory_panel(FILE *out, const chart_series *c, int top, axis x, double exact_peak,
                              int show_x_labels)
{
    double mem_max = max_known(max_known(field_max(c, field_rss), field_max(c, field_gpu_mem)), exact_peak);
    axis mem = make_axis(max_known(mem_max, field_max(c, field_pss)), 1);
    draw_panel_frame(out, top, mem, x, "Memory (MiB)", show_x_labels);
    draw_series(out, c, field_rss, "series-rss", RSS_COLOR, top, mem, x, 1);
    const char *names[4] = {"RSS (tree)"}, *colors[4] = {RSS_COLOR};
    int n = 1;
    if (c->any_pss) {
        draw_series(out, c, field_pss, "series-pss", PSS_COLOR, top, mem, x, 0);
        names[n] = "PSS (shared split)";
        colors[n++] = PSS_COLOR;
    }
    if (c->any_gpu_mem) {
        draw_series(out, c, field_gpu_mem, "series-gpu-mem", GPU_MEM_COLOR, top, mem, x, 0);
        names[n] = "GPU memory";
        colors[n++] = GPU_MEM_COLOR;
    }
    if (!isnan(exact_peak)) {
        double py = top + PANEL_H - exact_peak / mem.max * PANEL_H;
        fprintf(out, "<line id=\"exact-peak\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                     "stroke-width=\"1.2\" stroke-dasharray=\"6 4\"/>\n",
                LEFT, LEFT + PLOT_W, py, py, PEAK_COLOR);
        names[n] = "exact peak (largest process)";
        colors[n++] = PEAK_COLOR;
    }
    draw_legend(out, top, names, colors, n);
}

/* Bytes through read and write system calls (rchar, wchar), page cache
 * included: what the program asked for, so a stall shows as a flat line. */
static void draw_io_panel(FILE *out, const chart_series *c, int top, axis x)
{
    axis io = make_axis(max_known(field_max(c, field_io_read), field_max(c, field_io_written)), 1);
    draw_panel_frame(out, top, io, x, "I/O so far (MiB)", 1);
    draw_series(out, c, field_io_read, "series-io-read", IO_READ_COLOR, top, io, x, 0);
    draw_series(out, c, field_io_written, "series-io-written", IO_WRITTEN_COLOR, top, io, x, 0);
    const char *names[] = {"read (calls)", "written (calls)"}, *colors[] = {IO_READ_COLOR, IO_WRITTEN_COLOR};
    draw_legend(out, top, names, colors, 2);
}

int chart_write_svg(const chart_series *series, FILE *out, const char *title, const run_result *r)
{
    chart_series c = *series; /* flush the partial point without changing the caller's */
    flush_pending(&c);
    double t_max = 0;
    for (size_t i = 0; i < c.count; i++)
        t_max = c.points[i].t > t_max ? c.points[i].t : t_max;
    double exact_peak = r->have_rusage ? r->rusage_maxrss_mb : r->summary.hwm_rss_mb;
    axis x = make_axis(t_max, 1e-3);
    int panels = c.any_io ? 3 : 2, height = CHART_HEIGHT(panels);

    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                 "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
            WIDTH, height, WIDTH, height);
    fputs("<style>.tick{font-size:11px;fill:#475569}.label{font-size:13px;fill:#1e293b}"
          ".legend{font-size:12px;fill:#1e293b}.title{font-size:17px;font-weight:bold;fill:#0f172a}"
          ".subtitle{font-size:12px;fill:#475569}</style>\n", out);
    fprintf(out, "<rect width=\"%d\" height=\"%d\" fill=\"#f8fafc\"/>\n", WIDTH, height);
    draw_title(out, title, r, exact_peak);
    draw_cpu_panel(out, &c, PANEL_TOP(0), x);
    draw_memory_panel(out, &c, PANEL_TOP(1), x, exact_peak, !c.any_io);
    if (c.any_io)
        draw_io_panel(out, &c, PANEL_TOP(2), x);
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" class=\"label\">Elapsed time (s)</text>\n",
            LEFT + PLOT_W / 2, height - 14);
    fputs("</svg>\n", out);
    return ferror(out) ? -EIO : 0;
}
