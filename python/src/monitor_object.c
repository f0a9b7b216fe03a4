/*
 * monitor_object.c -- resmon._resmon.Monitor, one resmon_monitor.
 *
 * The sampler is the library's own C thread: it never takes the GIL, so a
 * monitor without a Python GPU profiler costs Python code nothing per sample.
 * Every call that may wait (start waits for the first sample, stop joins the
 * sampler, free may wait for a GPU call) releases the GIL, which a Python GPU
 * profiler on the GPU thread may need meanwhile.  Because the GIL is released
 * there, a per-object mutex keeps two Python threads from running start, stop
 * or free on the same monitor at once, as the library requires.
 *
 * fork: the child of a process whose monitor has a window open inherits the
 * monitor's memory but none of its threads, and possibly locks those threads
 * held.  Such a monitor is orphaned in the child: stop is a no-op there,
 * reading it raises RuntimeError, and it is never freed (a small leak that
 * cannot deadlock).  The same holds for a fork while another thread is inside
 * start or stop (which hold lifecycle_lock, and may be half way through the
 * library's start): lifecycle_calls counts those calls from before the lock
 * is taken until after it is released, so the child sees either no call or
 * one it must not wait for.  A monitor with no open window and no call in
 * progress works in the child.
 *
 * Garbage collection: the library holds a reference to a Python GPU profiler
 * (retain/release) for as long as the monitor exists, so the monitor reports
 * it in tp_traverse, and tp_clear frees the monitor, which stops its sampler
 * and drops that reference: a monitor in a reference cycle through its
 * profiler is collected like any other object.  Monitor is a heap type
 * (rmpy_monitor_spec): each instance holds a reference to its type, visited
 * in tp_traverse and dropped in tp_dealloc.
 */
#include "binding.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    PyObject_HEAD
    resmon_monitor *monitor;
    PyObject *profiler;             /* the Python GPU profiler the library holds a reference to, or NULL */
    pthread_mutex_t lifecycle_lock; /* serialises start, stop and free */
    _Atomic pid_t window_pid;       /* process that opened the window; 0 when closed */
    atomic_int lifecycle_calls;     /* start and stop calls in progress (see the top of this file) */
    _Atomic pid_t lifecycle_pid;    /* the process they run in */
} monitor_object;

/* The window was opened, or a start or stop is in progress, in another
 * process: this is a forked child, and those threads are not here. */
static int orphaned(const monitor_object *self)
{
    pid_t me = getpid(), window = atomic_load(&self->window_pid);
    if (window != 0 && window != me)
        return 1;
    return atomic_load(&self->lifecycle_calls) > 0 && atomic_load(&self->lifecycle_pid) != me;
}

/* Brackets start and stop, around the lock (see the top of this file). */
static void lifecycle_begin(monitor_object *self)
{
    atomic_store(&self->lifecycle_pid, getpid());
    atomic_fetch_add(&self->lifecycle_calls, 1);
}

static void lifecycle_end(monitor_object *self)
{
    atomic_fetch_sub(&self->lifecycle_calls, 1);
}

static PyObject *raise_orphaned(const monitor_object *self)
{
    PyErr_Format(PyExc_RuntimeError,
                 "this monitor was sampling in process %d when it forked; its sampler does not exist in this "
                 "child process -- create a new ResourceMonitor here",
                 (int)self->window_pid);
    return NULL;
}

/* Opens the built-in GPU backend named by spec and hands it to opts; the
 * monitor keeps it open, so the caller closes its own hold right after
 * resmon_monitor_new. */
static int open_builtin_gpu(const char *spec, resmon_gpu **gpu, resmon_options *opts)
{
    char err[RESMON_ERR_MAX];
    int rc;
    Py_BEGIN_ALLOW_THREADS /* NVML's initialisation can take a while */
    rc = resmon_gpu_open(gpu, spec, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        rmpy_raise(rc, err);
        return -1;
    }
    opts->gpu_profiler = resmon_gpu_profiler_of(*gpu);
    return 0;
}

/* O& converter: None, or a path as PyUnicode_FSConverter takes it (str,
 * bytes, os.PathLike; any bytes, not only UTF-8) into a new bytes object. */
static int optional_path(PyObject *value, void *out)
{
    if (value == Py_None) {
        *(PyObject **)out = NULL;
        return 1;
    }
    return PyUnicode_FSConverter(value, out);
}

static int monitor_init(monitor_object *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"interval", "profiler", "gpu", "pid", "include_children", "max_samples", "metrics",
                               "reset_peak_mark", "cgroup_path", "cgroup_members", "memory_detail_interval", NULL};
    PyObject *interval_arg, *pid_arg = NULL, *max_samples_arg = NULL, *metrics_arg = NULL, *detail_arg = NULL;
    PyObject *profiler = Py_None;
    const char *gpu_spec = NULL;
    int include_children = 0, reset_peak_mark = 0, cgroup_members = 0;
    PyObject *cgroup_path_bytes = NULL; /* str, bytes or os.PathLike, as the file system spells it */
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OzOpOOpO&pO", keywords, &interval_arg, &profiler,
                                     &gpu_spec, &pid_arg, &include_children, &max_samples_arg, &metrics_arg,
                                     &reset_peak_mark, optional_path, &cgroup_path_bytes, &cgroup_members, &detail_arg))
        return -1;
    double interval, detail_interval = 0;
    long long pid = 0, max_samples = 0, metrics = 0;
    int bad = rmpy_real_argument(interval_arg, "interval", &interval) < 0 ||
              (pid_arg && rmpy_integer_argument(pid_arg, "pid", 0, INT32_MAX, &pid) < 0) ||
              (max_samples_arg &&
               rmpy_integer_argument(max_samples_arg, "max_samples", 0, PY_SSIZE_T_MAX, &max_samples) < 0) ||
              (metrics_arg && rmpy_integer_argument(metrics_arg, "metrics", 0, UINT_MAX, &metrics) < 0) ||
              (detail_arg && detail_arg != Py_None &&
               rmpy_real_argument(detail_arg, "memory_detail_interval", &detail_interval) < 0);
    const char *cgroup_path = cgroup_path_bytes ? PyBytes_AS_STRING(cgroup_path_bytes) : NULL;
    if (!bad && self->monitor) {
        PyErr_SetString(PyExc_RuntimeError, "Monitor is already initialised");
        bad = 1;
    }
    if (!bad && profiler != Py_None && gpu_spec) {
        PyErr_SetString(PyExc_ValueError, "give either a Python GPU profiler or a built-in GPU, not both");
        bad = 1;
    }
    if (bad) {
        Py_XDECREF(cgroup_path_bytes);
        return -1;
    }
    resmon_options opts = RESMON_OPTIONS_INIT;
    opts.sample_interval_sec = interval;
    opts.pid = (pid_t)pid;
    opts.include_children = include_children;
    opts.max_samples = (size_t)max_samples;
    opts.metrics = (unsigned)metrics; /* bits beyond RESMON_METRIC_ALL: resmon_monitor_new says -EINVAL */
    opts.reset_peak_mark = reset_peak_mark; /* 0: write nothing to any process */
    opts.cgroup_path = cgroup_path;         /* copied by resmon_monitor_new */
    opts.cgroup_members = cgroup_members;
    opts.memory_detail_interval_sec = detail_interval; /* 0: the library's 0.5 s; a bad one: -EINVAL below */
    resmon_gpu_profiler python_profiler;
    resmon_gpu *gpu = NULL;
    if (profiler != Py_None) {
        rmpy_python_profiler_table(&python_profiler, profiler);
        opts.gpu_profiler = &python_profiler;
    } else if (gpu_spec && open_builtin_gpu(gpu_spec, &gpu, &opts) < 0) {
        Py_XDECREF(cgroup_path_bytes);
        return -1;
    }
    int rc = resmon_monitor_new(&self->monitor, &opts);
    resmon_gpu_close(gpu); /* the monitor holds its own reference */
    Py_XDECREF(cgroup_path_bytes); /* copied by resmon_monitor_new */
    if (rc < 0) {
        rmpy_raise(rc, NULL);
        return -1;
    }
    if (profiler != Py_None)
        self->profiler = profiler; /* the reference retain took */
    return 0;
}

static PyObject *monitor_new_object(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)args;
    (void)kwargs;
    monitor_object *self = (monitor_object *)type->tp_alloc(type, 0);
    if (self)
        pthread_mutex_init(&self->lifecycle_lock, NULL);
    return (PyObject *)self;
}

/* Frees the library's monitor, which stops its sampler and drops its
 * reference to the profiler (release).  An orphaned monitor is left as it is
 * (see the top of this file). */
static void free_monitor(monitor_object *self)
{
    if (!self->monitor || orphaned(self))
        return;
    resmon_monitor *monitor = self->monitor;
    self->monitor = NULL;
    self->profiler = NULL;
    /* Without the GIL: free may wait (at most 200 ms) for the GPU thread,
     * which may be waiting for the GIL to finish a Python profiler call or to
     * delete its thread state as it ends. */
    Py_BEGIN_ALLOW_THREADS
    resmon_monitor_free(monitor);
    Py_END_ALLOW_THREADS
}

static int monitor_traverse(monitor_object *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self)); /* a heap type: each instance holds a reference to it */
    Py_VISIT(self->profiler);
    return 0;
}

static int monitor_clear(monitor_object *self)
{
    free_monitor(self);
    return 0;
}

static void monitor_dealloc(monitor_object *self)
{
    PyObject_GC_UnTrack(self);
    PyTypeObject *type = Py_TYPE(self);
    int destroy_lock = !orphaned(self);
    free_monitor(self);
    if (destroy_lock)
        pthread_mutex_destroy(&self->lifecycle_lock);
    type->tp_free((PyObject *)self);
    Py_DECREF(type); /* the instance's reference to its heap type */
}

static int check_initialised(const monitor_object *self)
{
    if (self->monitor)
        return 0;
    PyErr_SetString(PyExc_RuntimeError, "Monitor.__init__ was not called");
    return -1;
}

/* resmon_monitor_stop without the GIL, under the lifecycle lock. */
static int stop_window(monitor_object *self)
{
    int rc;
    lifecycle_begin(self);
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&self->lifecycle_lock);
    rc = resmon_monitor_stop(self->monitor);
    if (rc == 0)
        atomic_store(&self->window_pid, 0);
    pthread_mutex_unlock(&self->lifecycle_lock);
    Py_END_ALLOW_THREADS
    lifecycle_end(self);
    return rc;
}

/* Returns once the first sample is taken, which may be up to 200 ms (a GPU
 * reading).  A signal that arrives meanwhile (Ctrl-C) raises here, after the
 * window has been closed again: an exception from start never leaves a
 * sampler running. */
static PyObject *monitor_start(monitor_object *self, PyObject *unused)
{
    (void)unused;
    if (check_initialised(self) < 0)
        return NULL;
    if (orphaned(self))
        return raise_orphaned(self);
    int rc;
    lifecycle_begin(self);
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&self->lifecycle_lock);
    rc = resmon_monitor_start(self->monitor);
    if (rc == 0)
        atomic_store(&self->window_pid, getpid());
    pthread_mutex_unlock(&self->lifecycle_lock);
    Py_END_ALLOW_THREADS
    lifecycle_end(self);
    if (rc < 0)
        return rmpy_raise(rc, NULL);
    if (PyErr_CheckSignals() < 0) {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        stop_window(self); /* its only failure, -EDEADLK, cannot happen on a Python thread */
        PyErr_Restore(type, value, traceback);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *monitor_stop(monitor_object *self, PyObject *unused)
{
    (void)unused;
    if (check_initialised(self) < 0)
        return NULL;
    if (orphaned(self))
        Py_RETURN_NONE; /* nothing samples in this process; see the top of this file */
    int rc = stop_window(self);
    if (rc < 0)
        return rmpy_raise(rc, NULL);
    Py_RETURN_NONE;
}

static PyObject *optional_number(double value)
{
    if (isnan(value))
        Py_RETURN_NONE;
    return PyFloat_FromDouble(value);
}

/* A sample as a tuple: resmon_sample's first eight fields, then each metric of
 * the library's list (resmon_metric_info, in its order; None when unknown),
 * then cgroup_mem_mb. */
static PyObject *sample_tuple(const resmon_sample *s, const size_t *metric_offsets, size_t metric_count)
{
    PyObject *tuple = PyTuple_New((Py_ssize_t)(8 + metric_count + 1));
    if (!tuple)
        return NULL;
    const double base[8] = {s->timestamp, s->cpu_percent, s->rss_mb, s->gpu_util,
                            s->gpu_mem_mb, s->gpu_clock_mhz, s->gpu_power_w, s->gpu_proc_mem_mb};
    for (size_t i = 0; i < 8 + metric_count; i++) {
        double value = base[i < 8 ? i : 0];
        if (i >= 8)
            memcpy(&value, (const char *)s + metric_offsets[i - 8], sizeof value);
        PyObject *item = i < 3 ? PyFloat_FromDouble(value) : optional_number(value);
        if (!item) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, (Py_ssize_t)i, item);
    }
    PyObject *cgroup = optional_number(s->cgroup_mem_mb);
    if (!cgroup) {
        Py_DECREF(tuple);
        return NULL;
    }
    PyTuple_SET_ITEM(tuple, (Py_ssize_t)(8 + metric_count), cgroup);
    return tuple;
}

/* The kept samples as tuples in resmon_sample's field order.  The count can
 * grow between sizing the buffer and copying into it: copy again until the
 * buffer held them all. */
static PyObject *monitor_samples(monitor_object *self, PyObject *unused)
{
    (void)unused;
    if (check_initialised(self) < 0)
        return NULL;
    if (orphaned(self))
        return raise_orphaned(self);
    resmon_sample *buffer = NULL;
    size_t capacity = 0;
    ssize_t count;
    for (;;) {
        count = resmon_monitor_get_samples(self->monitor, buffer, capacity, sizeof *buffer);
        if (count < 0 || (size_t)count <= capacity)
            break;
        capacity = (size_t)count + (size_t)count / 4 + 16;
        resmon_sample *grown = PyMem_Realloc(buffer, capacity * sizeof *buffer);
        if (!grown) {
            PyMem_Free(buffer);
            return PyErr_NoMemory();
        }
        buffer = grown;
    }
    if (count < 0) {
        PyMem_Free(buffer);
        return rmpy_raise((int)count, NULL);
    }
    /* one distinct double of resmon_sample per metric: the sample's size bounds them */
    size_t metric_count = resmon_metric_count(), offsets[sizeof(resmon_sample) / sizeof(double)];
    if (metric_count > sizeof offsets / sizeof *offsets)
        metric_count = sizeof offsets / sizeof *offsets;
    for (size_t i = 0; i < metric_count; i++) {
        resmon_metric m;
        offsets[i] = resmon_metric_info(i, &m, sizeof m) == 0 ? m.sample_offset : offsetof(resmon_sample, gpu_util);
    }
    PyObject *list = PyList_New(count);
    for (ssize_t i = 0; list && i < count; i++) {
        PyObject *item = sample_tuple(&buffer[i], offsets, metric_count);
        if (!item)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, item);
    }
    PyMem_Free(buffer);
    return list;
}

static PyObject *monitor_summary(monitor_object *self, PyObject *unused)
{
    (void)unused;
    if (check_initialised(self) < 0)
        return NULL;
    if (orphaned(self))
        return raise_orphaned(self);
    resmon_summary s;
    int rc = resmon_monitor_get_summary(self->monitor, &s, sizeof s);
    if (rc < 0)
        return rmpy_raise(rc, NULL);
    return rmpy_summary_to_dict(&s);
}

/* Whether UTF-8 text holds a C0 control, DEL or a C1 control (U+0080 to
 * U+009F, encoded 0xC2 0x80-0x9F): the characters a phase name may not hold. */
static int has_control_character(const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return 1;
    return 0;
}

/* mark(name) -> bool: resmon_monitor_mark.  True when the phase will
 * begin, False when it was refused (the window holds RESMON_MAX_PHASES,
 * marks wait for the sampler, or the window is closing: stop has begun);
 * ValueError for a bad name, RuntimeError
 * when no window is open. */
static PyObject *monitor_mark(monitor_object *self, PyObject *arg)
{
    if (check_initialised(self) < 0)
        return NULL;
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "a phase name must be a str, got %.100s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    Py_ssize_t len;
    const char *name = PyUnicode_AsUTF8AndSize(arg, &len);
    if (!name)
        return NULL;
    if ((size_t)len != strlen(name) || len < 1 || len >= RESMON_PHASE_NAME_MAX) {
        PyErr_Format(PyExc_ValueError, "a phase name is 1 to %d bytes of UTF-8, got %zd", RESMON_PHASE_NAME_MAX - 1,
                     len);
        return NULL;
    }
    if (orphaned(self) || !resmon_monitor_running(self->monitor)) {
        PyErr_SetString(PyExc_RuntimeError, "mark: the monitor is not running");
        return NULL;
    }
    int rc = resmon_monitor_mark(self->monitor, name);
    if (rc == -ENOSPC || rc == -EAGAIN)
        Py_RETURN_FALSE;
    if (rc == -EINVAL && has_control_character(name)) {
        PyErr_SetString(PyExc_ValueError, "a phase name has no control characters");
        return NULL;
    }
    if (rc == -EINVAL && resmon_monitor_running(self->monitor))
        Py_RETURN_FALSE; /* a good name refused while running: the window is closing (stop has begun) */
    if (rc == -EINVAL) {
        PyErr_SetString(PyExc_RuntimeError, "mark: the monitor is not running");
        return NULL;
    }
    if (rc < 0)
        return rmpy_raise(rc, NULL);
    Py_RETURN_TRUE;
}

/* phase() -> str: the current phase's name ("" before the first mark). */
static PyObject *monitor_phase(monitor_object *self, PyObject *unused)
{
    (void)unused;
    if (check_initialised(self) < 0)
        return NULL;
    if (orphaned(self))
        return raise_orphaned(self);
    char name[RESMON_PHASE_NAME_MAX];
    int rc = resmon_monitor_phase(self->monitor, name, sizeof name);
    if (rc < 0)
        return rmpy_raise(rc, NULL);
    return PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "replace");
}

/* phases() -> [(name, start_sec, summary dict)]: resmon_monitor_get_phases. */
static PyObject *monitor_phases(monitor_object *self, PyObject *unused)
{
    (void)unused;
    if (check_initialised(self) < 0)
        return NULL;
    if (orphaned(self))
        return raise_orphaned(self);
    resmon_phase *phases = PyMem_Malloc(RESMON_MAX_PHASES * sizeof *phases);
    if (!phases)
        return PyErr_NoMemory();
    ssize_t n = resmon_monitor_get_phases(self->monitor, phases, RESMON_MAX_PHASES, sizeof *phases);
    if (n < 0) {
        PyMem_Free(phases);
        return rmpy_raise((int)n, NULL);
    }
    if (n > RESMON_MAX_PHASES)
        n = RESMON_MAX_PHASES;
    PyObject *list = PyList_New(n);
    for (ssize_t i = 0; list && i < n; i++) {
        PyObject *summary = rmpy_summary_to_dict(&phases[i].summary);
        PyObject *item = summary ? Py_BuildValue("(s#dN)", phases[i].name, (Py_ssize_t)strlen(phases[i].name),
                                                 phases[i].start_sec, summary)
                                 : NULL;
        if (!item)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, item);
    }
    PyMem_Free(phases);
    return list;
}

/* processes() -> (seen, [(pid, ppid, comm, start_sec, end_sec, cpu_sec,
 * peak_rss_mb, end, source)]) or None: resmon_monitor_get_processes, None
 * for a monitor of one process (-ENOTSUP) and while the window is open
 * (-EBUSY: the sampler still writes them). */
static PyObject *monitor_processes(monitor_object *self, PyObject *unused)
{
    (void)unused;
    static const char *const ends[] = {"running", "exited", "left"};
    if (check_initialised(self) < 0)
        return NULL;
    if (orphaned(self))
        return raise_orphaned(self);
    resmon_process *procs = PyMem_Malloc(RESMON_MAX_PROCESSES * sizeof *procs);
    if (!procs)
        return PyErr_NoMemory();
    uint64_t seen = 0;
    ssize_t n = resmon_monitor_get_processes(self->monitor, procs, RESMON_MAX_PROCESSES, sizeof *procs, &seen);
    if (n == -ENOTSUP || n == -EBUSY) {
        PyMem_Free(procs);
        Py_RETURN_NONE;
    }
    if (n < 0) {
        PyMem_Free(procs);
        return rmpy_raise((int)n, NULL);
    }
    if (n > RESMON_MAX_PROCESSES)
        n = RESMON_MAX_PROCESSES;
    PyObject *list = PyList_New(n);
    for (ssize_t i = 0; list && i < n; i++) {
        const resmon_process *p = &procs[i];
        const char *end = (unsigned)p->end < sizeof ends / sizeof *ends ? ends[p->end] : "unknown";
        PyObject *comm = PyUnicode_DecodeUTF8(p->comm, (Py_ssize_t)strlen(p->comm), "replace");
        PyObject *item = comm ? Py_BuildValue("(iiNddddss)", (int)p->pid, (int)p->ppid, comm, p->start_sec,
                                              p->end_sec, p->cpu_sec, p->peak_rss_mb, end, "sampled")
                              : NULL;
        if (!item)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, item);
    }
    PyMem_Free(procs);
    return list ? Py_BuildValue("(KN)", (unsigned long long)seen, list) : NULL;
}

static PyObject *monitor_running(monitor_object *self, void *closure)
{
    (void)closure;
    if (check_initialised(self) < 0)
        return NULL;
    return PyBool_FromLong(!orphaned(self) && resmon_monitor_running(self->monitor));
}

static PyMethodDef monitor_methods[] = {
    {"start", (PyCFunction)monitor_start, METH_NOARGS,
     "Open a window: clear the previous one, start the sampler, return after the first sample."},
    {"stop", (PyCFunction)monitor_stop, METH_NOARGS,
     "Close the window: take the last sample and join the sampler (a no-op when not running)."},
    {"samples", (PyCFunction)monitor_samples, METH_NOARGS,
     "The kept samples, oldest first, as tuples (timestamp, cpu_percent, rss_mb, gpu_util, gpu_mem_mb, "
     "gpu_clock_mhz, gpu_power_w, gpu_proc_mem_mb, then each metric of metrics() by its sample_field)."},
    {"summary", (PyCFunction)monitor_summary, METH_NOARGS,
     "The window's summary as a dict of ResourceSummary's fields."},
    {"mark", (PyCFunction)monitor_mark, METH_O,
     "mark(name) -> bool: start the phase name (False: refused, the window is full)."},
    {"phase", (PyCFunction)monitor_phase, METH_NOARGS, "The current phase's name (\"\" before the first mark)."},
    {"phases", (PyCFunction)monitor_phases, METH_NOARGS,
     "The window's phases as tuples (name, start_sec, summary dict)."},
    {"processes", (PyCFunction)monitor_processes, METH_NOARGS,
     "(seen, [(pid, ppid, comm, start_sec, end_sec, cpu_sec, peak_rss_mb, end, source)]) of a tree's window, "
     "or None (one process, or the window still open)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef monitor_getset[] = {
    {"running", (getter)monitor_running, NULL, "True while a window is open.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot monitor_slots[] = {
    {Py_tp_doc, (void *)"Monitor(interval, profiler=None, gpu=None, pid=0, include_children=False, max_samples=0, "
                        "metrics=0, reset_peak_mark=False, cgroup_path=None, cgroup_members=False, "
                        "memory_detail_interval=None)\n\n"
                        "One libresmon monitor; resmon.ResourceMonitor is the API to use."},
    {Py_tp_new, (void *)monitor_new_object},
    {Py_tp_init, (void *)monitor_init},
    {Py_tp_dealloc, (void *)monitor_dealloc},
    {Py_tp_traverse, (void *)monitor_traverse},
    {Py_tp_clear, (void *)monitor_clear},
    {Py_tp_methods, monitor_methods},
    {Py_tp_getset, monitor_getset},
    {0, NULL},
};

/* A heap type, made per module object by module_exec (module.c).  Immutable
 * and not subclassable, as the static type it replaces was. */
PyType_Spec rmpy_monitor_spec = {
    .name = "resmon._resmon.Monitor",
    .basicsize = sizeof(monitor_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = monitor_slots,
};
