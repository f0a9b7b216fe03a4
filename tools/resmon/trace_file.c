/*
 * trace_file.c -- the run as a Chrome trace-event timeline (see trace_file.h).
 *
 * Events go out through a stream writer (stream_writer.c) only at event
 * boundaries (every event is one line) -- when its buffer is nearly full,
 * and at least once a second -- so the file always ends with a whole event,
 * as the samples file always ends with a whole row.  A write that fails part
 * way is cut back to the last whole event it wrote, and nothing is written
 * after it; a FIFO's reader that lags is never waited for while the run goes
 * on (nor with the lock held).  Both are reported when the file is finished.
 *
 * The separator comes before an event, not after ("[", "{...}", ",{...}"):
 * a file cut after any event becomes JSON by adding "]", which is what the
 * viewers' importers do with a trace that lacks it.
 */
#include "clocks.h"
#include "json_number.h"
#include "options.h"
#include "run_result.h"
#include "stream_writer.h"
#include "text_output.h"
#include "trace_file.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_EVENT_BYTES 8192
/* A name or command line is cut to this many bytes, an ellipsis where it
 * was cut (a command line's slice also says command_truncated and its
 * command_bytes): escaped (6 bytes a byte at most), two of them and the
 * rest fit one event. */
#define MAX_TEXT_BYTES 512

/* The viewer's processes and threads (pid and tid are ids of the trace, not
 * of the system; a real pid is an arg).  Tids are unique over the trace. */
enum {
    TRACE_PID_RUN = 1,
    TRACE_PID_PROCESSES = 2,
    TRACE_TID_PHASES = 1,
    TRACE_TID_FIRST_SLOT = 2,
};

struct trace_file {
    pthread_mutex_t lock;
    stream_writer *out;
    int gpu;
    unsigned long long events; /* written to the buffer: the first has no comma before it */
    double origin;             /* the first sample's timestamp; NAN until one came */
    double last_timestamp;     /* the latest sample's */
    size_t phases_seen;        /* phases started so far, as the monitor counts them */
    int phase_open;            /* a phase slice is open on the phases track */
    char phase_name[RESMON_PHASE_NAME_MAX];
    int64_t *slot_end_ns;      /* per slot, where its last slice ends */
    size_t slot_count, slot_cap;
};

/* ---- writing whole events ---- */

static void append(trace_file *t, const char *text, size_t n)
{
    stream_writer_append(t->out, text, n);
}

/* Writes when the buffer is nearly full and at least once a second, so a
 * killed run loses at most that. */
static void write_if_due(trace_file *t)
{
    stream_writer_write_due(t->out, MAX_EVENT_BYTES);
}

/* ---- one event, built in place ---- */

typedef struct event {
    size_t length;
    int overflow; /* did not fit: the event is dropped, never written cut */
    char text[MAX_EVENT_BYTES];
} event;

static void put(event *e, const char *text)
{
    size_t n = strlen(text);
    if (e->overflow || n >= sizeof e->text - e->length) {
        e->overflow = 1;
        return;
    }
    memcpy(e->text + e->length, text, n);
    e->length += n;
}

static void put_format_number(event *e, double value)
{
    char number[40];
    rm__json_format_double(value, number);
    put(e, number);
}

/* A time in microseconds from nanoseconds, exactly: "1234.567". */
static void put_microseconds(event *e, int64_t ns)
{
    char text[40];
    snprintf(text, sizeof text, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
    put(e, text);
}

/* Text from outside (a command line, a phase's name) as a JSON string: the
 * command's one writer of such strings, cut to MAX_TEXT_BYTES with an
 * ellipsis where it was cut.  Returns 1 when it cut. */
static int put_string(event *e, const char *text)
{
    char cut[MAX_TEXT_BYTES + 1];
    int was_cut = text_cut(cut, sizeof cut, text);
    size_t room = sizeof e->text - e->length;
    FILE *f = e->overflow ? NULL : fmemopen(e->text + e->length, room, "w");
    if (!f) {
        e->overflow = 1;
        return was_cut;
    }
    json_write_string(f, cut);
    int failed = fflush(f) != 0 || ferror(f);
    long n = ftell(f);
    fclose(f);
    if (failed || n < 0 || (size_t)n >= room)
        e->overflow = 1;
    else
        e->length += (size_t)n;
    return was_cut;
}

/* Starts an event: name, category, phase type, pid and tid. */
static void event_begin(event *e, const char *name, const char *category, const char *phase, int pid, int tid)
{
    char fields[160];
    e->length = 0;
    e->overflow = 0;
    put(e, "{\"name\":");
    put_string(e, name);
    snprintf(fields, sizeof fields, ",\"cat\":\"%s\",\"ph\":\"%s\",\"pid\":%d,\"tid\":%d", category, phase, pid,
             tid);
    put(e, fields);
}

static void put_ts(event *e, const char *key, int64_t ns)
{
    put(e, ",\"");
    put(e, key);
    put(e, "\":");
    put_microseconds(e, ns);
}

/* Ends the event ("}" and the line) and appends it, after a comma unless it
 * is the first. */
static void event_end(trace_file *t, event *e)
{
    put(e, "}\n");
    if (e->overflow)
        return;
    if (t->events++ > 0)
        append(t, ",", 1);
    append(t, e->text, e->length);
}

/* A metadata event naming a process or thread (its sort index too). */
static void name_track(trace_file *t, const char *what, int pid, int tid, const char *name, int sort_index)
{
    event e;
    char key[32];
    snprintf(key, sizeof key, "%s_name", what);
    event_begin(&e, key, "__metadata", "M", pid, tid);
    put(&e, ",\"ts\":0,\"args\":{\"name\":");
    put_string(&e, name);
    put(&e, "}");
    event_end(t, &e);
    snprintf(key, sizeof key, "%s_sort_index", what);
    event_begin(&e, key, "__metadata", "M", pid, tid);
    snprintf(key, sizeof key, "%d", sort_index);
    put(&e, ",\"ts\":0,\"args\":{\"sort_index\":");
    put(&e, key);
    put(&e, "}");
    event_end(t, &e);
}

/* ---- the run's time ---- */

/* Nanoseconds after the run's first sample; never below 0 (a process that
 * began before the first sample starts the timeline). */
static int64_t trace_ns(const trace_file *t, double timestamp)
{
    double ns = (timestamp - t->origin) * 1e9;
    return isnan(ns) || ns < 0 ? 0 : (int64_t)llround(ns);
}

trace_file *trace_file_open(int fd, const char *title, int gpu)
{
    trace_file *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (!(t->out = stream_writer_new(fd))) {
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    t->gpu = gpu;
    t->origin = NAN;
    t->last_timestamp = NAN;
    append(t, "[\n", 2);
    name_track(t, "process", TRACE_PID_RUN, TRACE_TID_PHASES, title, 0);
    name_track(t, "thread", TRACE_PID_RUN, TRACE_TID_PHASES, "phases", 0);
    name_track(t, "process", TRACE_PID_PROCESSES, TRACE_TID_FIRST_SLOT, "processes", 1);
    return t;
}

/* ---- samples: counters and phases ---- */

static void counter(trace_file *t, int64_t ns, const char *name, const char *series, double value)
{
    if (isnan(value) || isinf(value))
        return; /* not measured at this sample: no point, never a 0 */
    event e;
    event_begin(&e, name, "counter", "C", TRACE_PID_RUN, TRACE_TID_PHASES);
    put_ts(&e, "ts", ns);
    put(&e, ",\"args\":{\"");
    put(&e, series);
    put(&e, "\":");
    put_format_number(&e, value);
    put(&e, "}");
    event_end(t, &e);
}

static void phase_edge(trace_file *t, const char *phase_type, int64_t ns)
{
    event e;
    event_begin(&e, t->phase_name, "phase", phase_type, TRACE_PID_RUN, TRACE_TID_PHASES);
    put_ts(&e, "ts", ns);
    event_end(t, &e);
}

/* Phases [t->phases_seen, n) of the window's: the open one ends where the
 * first of them starts; each (but the time before the first mark, which
 * has no name) begins at its own first sample.  Several marks at one sample
 * make phases of 0 s, each a slice of its own. */
static void phases_add(trace_file *t, const resmon_phase *phases, size_t n)
{
    for (size_t i = t->phases_seen; i < n; i++) {
        int64_t at = trace_ns(t, phases[i].start_timestamp);
        if (t->phase_open)
            phase_edge(t, "E", at);
        t->phase_open = phases[i].name[0] != '\0';
        snprintf(t->phase_name, sizeof t->phase_name, "%s", phases[i].name);
        if (t->phase_open)
            phase_edge(t, "B", at);
    }
    if (n > t->phases_seen)
        t->phases_seen = n;
}

/* The phases that started since the last sample. */
static void phases_update(trace_file *t, const resmon_monitor *m)
{
    char name[RESMON_PHASE_NAME_MAX];
    int count = m ? resmon_monitor_phase(m, name, sizeof name) : 0;
    if (count <= 0 || (size_t)count <= t->phases_seen)
        return;
    resmon_phase *phases = calloc((size_t)count, sizeof *phases);
    if (!phases)
        return; /* tried again at the next sample */
    ssize_t got = resmon_monitor_get_phases(m, phases, (size_t)count, sizeof *phases);
    phases_add(t, phases, got < 0 ? 0 : (size_t)got < (size_t)count ? (size_t)got : (size_t)count);
    free(phases);
}

void trace_file_sample(trace_file *t, const resmon_sample *s, const resmon_monitor *m)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    if (isnan(t->origin))
        t->origin = s->timestamp;
    t->last_timestamp = s->timestamp;
    int64_t ns = trace_ns(t, s->timestamp);
    phases_update(t, m);
    counter(t, ns, "CPU", "percent", s->cpu_percent);
    counter(t, ns, "RSS (tree)", "MiB", s->rss_mb);
    counter(t, ns, "cgroup memory", "MiB", s->cgroup_mem_mb);
    if (t->gpu) {
        counter(t, ns, "GPU utilisation", "percent", s->gpu_util);
        counter(t, ns, "GPU memory", "MiB", s->gpu_mem_mb);
        counter(t, ns, "GPU power", "W", s->gpu_power_w);
    }
    write_if_due(t);
    pthread_mutex_unlock(&t->lock);
}

/* ---- processes ---- */

/* The first slot free at start_ns (every slice on it ends by then), now
 * busy until end_ns; a new slot, named, when none is.  -1 when out of memory. */
static long slot_take(trace_file *t, int64_t start_ns, int64_t end_ns)
{
    for (size_t i = 0; i < t->slot_count; i++)
        if (t->slot_end_ns[i] <= start_ns) {
            t->slot_end_ns[i] = end_ns;
            return (long)i;
        }
    if (t->slot_count == t->slot_cap) {
        size_t cap = t->slot_cap ? t->slot_cap * 2 : 16;
        int64_t *grown = realloc(t->slot_end_ns, cap * sizeof *grown);
        if (!grown)
            return -1;
        t->slot_end_ns = grown;
        t->slot_cap = cap;
    }
    size_t slot = t->slot_count++;
    t->slot_end_ns[slot] = end_ns;
    char name[48];
    snprintf(name, sizeof name, "slot %zu", slot + 1);
    name_track(t, "thread", TRACE_PID_PROCESSES, TRACE_TID_FIRST_SLOT + (int)slot, name, (int)slot);
    return (long)slot;
}

/* A count or id: "1234", never "1234.0"; nothing when absent (< 0). */
static void put_arg_integer(event *e, const char *key, long long value)
{
    char text[80];
    if (value < 0)
        return;
    snprintf(text, sizeof text, ",\"%s\":%lld", key, value);
    put(e, text);
}

static void put_arg_number(event *e, const char *key, double value)
{
    if (isnan(value) || isinf(value))
        return;
    put(e, ",\"");
    put(e, key);
    put(e, "\":");
    put_format_number(e, value);
}

static void process_slice(trace_file *t, const trace_process *p)
{
    if (isnan(t->origin))
        t->origin = p->start_timestamp; /* before any sample: the timeline starts here */
    int running = isnan(p->end_timestamp);
    int64_t start = trace_ns(t, p->start_timestamp);
    int64_t end = trace_ns(t, running ? t->last_timestamp : p->end_timestamp);
    if (end < start)
        end = start;
    long slot = slot_take(t, start, end);
    if (slot < 0)
        return;
    event e;
    event_begin(&e, p->name && *p->name ? p->name : "?", "process", "X", TRACE_PID_PROCESSES,
                TRACE_TID_FIRST_SLOT + (int)slot);
    put_ts(&e, "ts", start);
    put_ts(&e, "dur", end - start);
    put(&e, ",\"args\":{\"source\":");
    put_string(&e, p->source ? p->source : "unknown");
    put_arg_integer(&e, "pid", p->pid > 0 ? p->pid : -1);
    put_arg_integer(&e, "ppid", p->ppid > 0 ? p->ppid : -1);
    if (p->command_line) {
        put(&e, ",\"command\":");
        if (put_string(&e, p->command_line)) { /* the whole line's length, and a word that it was cut */
            put_arg_integer(&e, "command_bytes", (long long)strlen(p->command_line));
            put(&e, ",\"command_truncated\":true");
        }
    }
    put_arg_number(&e, "cpu_sec", p->cpu_sec);
    put_arg_number(&e, "peak_rss_mb", p->peak_rss_mb);
    put_arg_integer(&e, "exit_code", p->exit_code); /* or the signal: never "137" for SIGKILL */
    put_arg_integer(&e, "signal", p->term_signal > 0 ? p->term_signal : -1);
    if (running)
        put(&e, ",\"running_at_end\":true");
    if (p->start_timestamp < t->origin)
        put(&e, ",\"started_before_trace\":true");
    put(&e, "}");
    event_end(t, &e);
}

void trace_file_processes(trace_file *t, const trace_process *processes, size_t count)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < count; i++)
        process_slice(t, &processes[i]);
    write_if_due(t);
    pthread_mutex_unlock(&t->lock);
}

/* ---- the end ---- */

static const char *last_part(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* The command resmon ran, as its wait4 knows it (with what it reaped). */
static void command_slice(trace_file *t, const cli_options *o, const run_result *r)
{
    char *line = words_joined(o->argc, o->argv); /* whole: put_string cuts it, and says so */
    trace_process p = {
        .pid = (int)r->command_pid,
        .ppid = (int)getpid(),
        .name = last_part(o->argv[0]),
        .command_line = line,
        .start_timestamp = r->command_start_timestamp,
        .end_timestamp = r->command_end_timestamp > 0 ? r->command_end_timestamp : NAN,
        .cpu_sec = r->have_rusage ? r->rusage_cpu_sec : NAN,
        .peak_rss_mb = r->have_rusage ? r->rusage_maxrss_mb : NAN,
        .exit_code = r->have_exit && !r->term_signal ? r->exit_status : -1,
        .term_signal = r->have_exit ? r->term_signal : 0,
        .source = r->have_rusage ? "wait4, with the processes it reaped" : NULL,
    };
    process_slice(t, &p);
    free(line);
}

void trace_file_finish(trace_file *t, const cli_options *o, const run_result *r, reader_wait *wait,
                       stream_outcome *outcome)
{
    memset(outcome, 0, sizeof *outcome);
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    if (r && r->phases) /* a mark the window's last sample took after its callback: a phase of 0 s there */
        phases_add(t, r->phases, r->phase_count);
    if (o && r && r->command_start_timestamp > 0)
        command_slice(t, o, r);
    if (t->phase_open && !isnan(t->last_timestamp))
        phase_edge(t, "E", trace_ns(t, t->last_timestamp));
    t->phase_open = 0;
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_destroy(&t->lock); /* the last call: nothing else writes now */
    if (o && r) {
        stream_writer_append_last(t->out, "]\n", 2); /* after an overflow too: the array ends */
        stream_writer_close(t->out, wait, outcome); /* may wait for a FIFO's reader: no lock held */
    } else {
        stream_writer_discard(t->out);
    }
    free(t->slot_end_ns);
    free(t);
}
