/*
 * binding.h -- what the parts of the resmon._resmon extension share.
 *
 * The extension is a thin layer over libresmon, which is compiled into it
 * (see python/setup.py): module.c holds the module and its functions,
 * monitor_object.c the Monitor type, python_profiler.c the adapter that lets
 * the library's GPU thread call a Python GPUProfilerProtocol object.
 * The dataclasses, validation and the calibrax-compatible API live in
 * python/resmon/__init__.py.
 */
#ifndef RESMON_PY_BINDING_H
#define RESMON_PY_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "resmon.h"

/* Sets the Python exception for a negative errno from the library and
 * returns NULL: ValueError for -EINVAL, MemoryError for -ENOMEM, otherwise
 * OSError(errno, message), which Python turns into the matching subclass
 * (ProcessLookupError for ESRCH, ...).  detail, when not NULL, is the
 * library's own sentence (resmon_gpu_open's err); else resmon_strerror. */
PyObject *rmpy_raise(int rc, const char *detail);
/* An integer argument (an int or anything with __index__) in [min, max]:
 * 0 and *out, or -1 with ValueError naming it when out of range (however
 * large: never OverflowError), TypeError when not an integer. */
int rmpy_integer_argument(PyObject *value, const char *name, long long min, long long max, long long *out);
/* A real-number argument as a double: 0 and *out, or -1 with ValueError
 * naming it when it is too large for a double, TypeError when no number. */
int rmpy_real_argument(PyObject *value, const char *name, double *out);

/* Fills table with callbacks that call profiler's get_utilization,
 * get_memory_usage, get_clock_info and get_power_info on the monitor's GPU
 * thread, holding the GIL only for each call, and retain/release hooks that
 * own a reference to profiler for as long as the monitor can call it. */
void rmpy_python_profiler_table(resmon_gpu_profiler *table, PyObject *profiler);

/* Once, at module set-up: what the profiler callbacks need to keep one
 * Python thread state per GPU thread (see python_profiler.c).  0, or -1 with
 * OSError set. */
int rmpy_python_profiler_setup(void);

/* The low-level monitor type, resmon._resmon.Monitor: the spec module_exec
 * makes its heap type from (PyType_FromModuleAndSpec). */
extern PyType_Spec rmpy_monitor_spec;

/* Converts a summary to the dict of ResourceSummary's fields (None for NAN). */
PyObject *rmpy_summary_to_dict(const resmon_summary *s);

/* compare(args) -> (exit_status, stdout_text, stderr_text): `resmon compare
 * ARGS...` (tools/resmon/compare.c) with its output captured (compare_binding.c). */
PyObject *rmpy_compare(PyObject *module, PyObject *args, PyObject *kwargs);

#endif
