/*
 * python_profiler.c -- a Python GPUProfilerProtocol object as a
 * resmon_gpu_profiler.
 *
 * The library calls these callbacks on the monitor's own GPU thread
 * ("resmon-gpu"), never on the sampler thread, so CPU/RSS samples never wait
 * for Python.  Each callback takes the GIL for the one method call it makes
 * (through the thread state the GPU thread keeps for its whole life, see
 * below) and converts the result; anything unexpected -- an exception, a value that
 * is not a real number, a result that is not a mapping, a missing key --
 * becomes a failed reading (that field NAN, i.e. None, in that sample).  The
 * library itself turns NaN, infinite and negative values into NAN.
 *
 * Lifetime: retain takes a reference to the profiler when the monitor is
 * created; release drops it once the monitor will never call it again.
 * release can run on the GPU thread after the Monitor object is gone (a call
 * was still in flight when it was freed), and so possibly while the
 * interpreter is finalising or after it has finalised: then the reference is
 * leaked, because taking the GIL of a finalised interpreter crashes or hangs.
 */
#include "binding.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>

/* Whether this thread may take the GIL.  There remains a window between the
 * check and PyGILState_Ensure in which finalisation can begin; CPython then
 * ends the calling (GPU) thread inside PyGILState_Ensure instead of letting it
 * run Python code, which the library survives (free no longer waits for it). */
static int interpreter_alive(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsInitialized() && !Py_IsFinalizing();
#else
    return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

/* One Python thread state per foreign thread, for the thread's whole life.
 *
 * PyGILState_Ensure on a thread that has no thread state creates one, and the
 * matching Release deletes it: a GPU thread calling a Python profiler that way
 * created and deleted a thread state per callback.  Creating one takes
 * CPython's runtime lock (HEAD_LOCK) without the GIL, and an os.fork() in
 * another thread at that moment leaves the lock held in the child, where
 * PyOS_AfterFork_Child then waits for it forever (CPython gh-112275, fixed in
 * 3.12.1 and 3.11.8; Debian 12's 3.11.2 has it: 1 child in ~1000 forks hung
 * under ASan).  So a thread without a thread state gets one here, once: it is
 * created under creation_lock, which a pthread_atfork handler holds across
 * every fork() -- no fork can land inside the creation -- and deleted when the
 * thread ends (the key's destructor).  Every later PyGILState_Ensure on that
 * thread finds it and only takes the GIL.  Deleting needs no such care: it
 * runs with the GIL held, which os.fork() holds too. */
static pthread_key_t thread_state_key;
static pthread_mutex_t creation_lock = PTHREAD_MUTEX_INITIALIZER;

static void before_fork(void)
{
    pthread_mutex_lock(&creation_lock);
}

static void after_fork(void)
{
    pthread_mutex_unlock(&creation_lock); /* in the parent and the child: the forking thread holds it */
}

/* At the end of a thread that got its thread state here.  After (or during)
 * finalisation the state belongs to a dead interpreter: it is left alone.  A
 * finalisation that begins between the check and PyEval_RestoreThread ends
 * this thread inside it, as CPython ends any thread that takes the GIL then. */
static void end_thread_state(void *value)
{
    PyThreadState *state = value;
    if (!interpreter_alive())
        return;
    PyEval_RestoreThread(state);
    PyThreadState_Clear(state);
    PyThreadState_DeleteCurrent();
}

static int setup_error;

static void setup_once(void)
{
    setup_error = pthread_key_create(&thread_state_key, end_thread_state);
    if (setup_error == 0 && (setup_error = pthread_atfork(before_fork, after_fork, after_fork)) != 0)
        pthread_key_delete(thread_state_key);
}

int rmpy_python_profiler_setup(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, setup_once);
    if (setup_error != 0) {
        errno = setup_error;
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    return 0;
}

/* Gives this thread a Python thread state if it has none (see above); 0, or
 * -ENOMEM.  Without the GIL. */
static int ensure_thread_state(void)
{
    if (PyGILState_GetThisThreadState())
        return 0; /* a Python thread, or a GPU thread after its first call */
    pthread_mutex_lock(&creation_lock);
    PyThreadState *state = PyThreadState_New(PyInterpreterState_Main());
    pthread_mutex_unlock(&creation_lock);
    if (!state)
        return -ENOMEM;
    if (pthread_setspecific(thread_state_key, state) != 0) {
        end_thread_state(state);
        return -ENOMEM;
    }
    return 0;
}

/* A real number: float, int (not bool), or anything with __float__ such as
 * NumPy and JAX scalars.  Returns 0 and sets *out, or -EINVAL. */
static int real_number(PyObject *value, double *out)
{
    if (PyFloat_Check(value)) {
        *out = PyFloat_AS_DOUBLE(value);
        return 0;
    }
    if (PyBool_Check(value))
        return -EINVAL;
    if (!PyLong_Check(value) &&
        !(Py_TYPE(value)->tp_as_number && Py_TYPE(value)->tp_as_number->nb_float))
        return -EINVAL;
    double number = PyFloat_AsDouble(value);
    if (number == -1.0 && PyErr_Occurred())
        return -EINVAL;
    *out = number;
    return 0;
}

/* mapping[key] as a real number; -ENOENT when absent, -EINVAL otherwise. */
static int mapping_number(PyObject *mapping, const char *key, double *out)
{
    PyObject *value = PyMapping_GetItemString(mapping, key);
    if (!value)
        return -ENOENT;
    int rc = real_number(value, out);
    Py_DECREF(value);
    return rc;
}

/* Two readings from a dict such as {"gpu_clock_mhz": ..., "mem_clock_mhz": ...}:
 * the first is the one the sample needs; the second may be absent (NAN). */
static int mapping_pair(PyObject *result, const char *first_key, const char *second_key, double *first,
                        double *second)
{
    if (!PyMapping_Check(result) || PyUnicode_Check(result) || PyBytes_Check(result))
        return -EINVAL;
    int rc = mapping_number(result, first_key, first);
    if (rc < 0)
        return rc;
    if (mapping_number(result, second_key, second) < 0) {
        PyErr_Clear();
        *second = NAN;
    }
    return 0;
}

typedef int (*result_reader)(PyObject *result, void *out);

/* Calls profiler.method() with the GIL held for just that call and reads its
 * result; never lets an exception escape into the library's thread. */
static int call_profiler(void *ctx, const char *method, result_reader read, void *out)
{
    if (!interpreter_alive() || ensure_thread_state() < 0)
        return -ENODEV;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *result = PyObject_CallMethod((PyObject *)ctx, method, NULL);
    int rc = result ? read(result, out) : -EIO;
    Py_XDECREF(result);
    if (PyErr_Occurred())
        PyErr_Clear(); /* the failure is the NAN in this sample, not an error of the run */
    PyGILState_Release(gil);
    return rc;
}

static int read_utilization(PyObject *result, void *out)
{
    return real_number(result, out);
}

static int read_memory(PyObject *result, void *out)
{
    resmon_gpu_memory *memory = out;
    return mapping_pair(result, "gpu_memory_used_mb", "gpu_memory_total_mb", &memory->gpu_memory_used_mb,
                        &memory->gpu_memory_total_mb);
}

static int read_clocks(PyObject *result, void *out)
{
    resmon_gpu_clocks *clocks = out;
    return mapping_pair(result, "gpu_clock_mhz", "mem_clock_mhz", &clocks->gpu_clock_mhz, &clocks->mem_clock_mhz);
}

static int read_power(PyObject *result, void *out)
{
    resmon_gpu_power *power = out;
    return mapping_pair(result, "power_draw_w", "power_limit_w", &power->power_draw_w, &power->power_limit_w);
}

static int get_utilization(void *ctx, double *percent)
{
    return call_profiler(ctx, "get_utilization", read_utilization, percent);
}

static int get_memory_usage(void *ctx, resmon_gpu_memory *out)
{
    return call_profiler(ctx, "get_memory_usage", read_memory, out);
}

static int get_clock_info(void *ctx, resmon_gpu_clocks *out)
{
    return call_profiler(ctx, "get_clock_info", read_clocks, out);
}

static int get_power_info(void *ctx, resmon_gpu_power *out)
{
    return call_profiler(ctx, "get_power_info", read_power, out);
}

static void retain(void *ctx)
{
    PyGILState_STATE gil = PyGILState_Ensure(); /* resmon_monitor_new runs with the GIL: re-entrant */
    Py_INCREF((PyObject *)ctx);
    PyGILState_Release(gil);
}

static void release(void *ctx)
{
    if (!interpreter_alive() || ensure_thread_state() < 0)
        return; /* leak rather than touch a dead interpreter */
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF((PyObject *)ctx);
    PyGILState_Release(gil);
}

void rmpy_python_profiler_table(resmon_gpu_profiler *table, PyObject *profiler)
{
    resmon_gpu_profiler init = RESMON_GPU_PROFILER_INIT;
    *table = init;
    table->ctx = profiler;
    table->get_utilization = get_utilization;
    table->get_memory_usage = get_memory_usage;
    table->get_clock_info = get_clock_info;
    table->get_power_info = get_power_info;
    table->retain = retain;
    table->release = release;
}
