/*
 * compare_binding.c -- _resmon.compare: `resmon compare` run in this process.
 *
 * The engine is the command's own (tools/resmon/compare.c, compiled into the
 * extension by setup.py), so `pytest --resmon-compare` and `resmon compare`
 * cannot judge differently.  It writes its report and its messages to two
 * memory streams, returned as text; nothing reaches the process's stdout or
 * stderr.  The engine touches no Python object, so it runs with the GIL
 * released (a 10 MB report takes a second or two: other threads run) and
 * asks every 10 ms of its work, taking the GIL back for it, whether a
 * signal handler raised (Ctrl-C 0.3 s into an 11 MB compare: stopped 0.15 s
 * later at a load of 11 on 2 cores, where it ran 3.5 s more before).  It
 * keeps getopt's state and its streams in globals: a lock of its own lets
 * one call run at a time, and a call waiting for it asks the same question
 * every 10 ms (lock_engine).
 */
#include "binding.h"
#include "compare.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* compare_caller.interrupted: the GIL taken back to run the signal
 * handlers; a KeyboardInterrupt (any exception a handler raises) stays set
 * for the call to return. */
static int signal_raised(void *context)
{
    PyThreadState **saved = context;
    PyEval_RestoreThread(*saved);
    int raised = PyErr_CheckSignals() < 0;
    *saved = PyEval_SaveThread();
    return raised;
}

/* One engine run at a time in the process (see above).  Taken with the GIL
 * released, so a thread waiting for it never holds the GIL that the running
 * one needs to answer compare_caller.interrupted. */
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

/* A fork() while another thread compares copies engine_lock held, by a
 * thread the child lacks: the child's first compare waited forever.  The
 * child gets it anew.  Holding it across fork() instead (as
 * python_profiler.c holds its creation_lock) would make a fork wait for a
 * whole compare, and deadlock: os.fork() holds the GIL that the compare
 * takes back every 10 ms.  The engine's globals need nothing: every run
 * sets them afresh. */
static void engine_lock_after_fork_in_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    engine_lock = fresh;
}

static int atfork_error;

/* This thread holds engine_lock: a signal handler that compares runs inside
 * the compare (compare_caller.interrupted runs the handlers), and waited for
 * the lock its own thread held, for ever. */
static _Thread_local int in_engine;

static void register_atfork(void)
{
    atfork_error = pthread_atfork(NULL, NULL, engine_lock_after_fork_in_child);
}

/* Takes engine_lock, asking every ENGINE_WAIT_CHECK_NS whether a signal
 * handler raised, as the engine itself does while it runs: Ctrl-C in a
 * thread waiting for another thread's compare (a 10 MB report: seconds)
 * waited for the whole of it.  Returns 0 with the lock held, or
 * COMPARE_INTERRUPTED (the handler's exception set) without it. */
#define ENGINE_WAIT_CHECK_NS 10000000L
static int lock_engine(compare_caller *caller)
{
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until); /* timedlock's clock; a jump makes one wait shorter or longer */
        until.tv_nsec += ENGINE_WAIT_CHECK_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        int rc = pthread_mutex_timedlock(&engine_lock, &until);
        if (rc == 0)
            return 0;
        if (rc != ETIMEDOUT && rc != EINTR) {
            /* Not for a default mutex taken by a live thread; waiting
             * without the checks is what every earlier call did. */
            pthread_mutex_lock(&engine_lock);
            return 0;
        }
        if (caller->interrupted(caller->context))
            return COMPARE_INTERRUPTED;
    }
}

/* The stream's text (invalid UTF-8, which the engine does not write, as
 * U+FFFD). */
static PyObject *stream_text(const char *buf, size_t length)
{
    return PyUnicode_DecodeUTF8(buf ? buf : "", buf ? (Py_ssize_t)length : 0, "replace");
}

/* argv for the engine: "compare" then each argument, file-system encoded
 * (a path may be bytes or str).  Returns a new list of bytes owning the
 * strings, or NULL with an exception. */
static PyObject *encoded_arguments(PyObject *args)
{
    PyObject *seq = PySequence_Fast(args, "compare() takes a sequence of arguments");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *list = PyList_New(0);
    PyObject *name = list ? PyBytes_FromString("compare") : NULL;
    if (!name || PyList_Append(list, name) < 0)
        goto fail;
    Py_CLEAR(name);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i), *bytes = NULL;
        if (!PyUnicode_FSConverter(item, &bytes))
            goto fail;
        int rc = PyList_Append(list, bytes);
        Py_DECREF(bytes);
        if (rc < 0)
            goto fail;
    }
    Py_DECREF(seq);
    return list;
fail:
    Py_XDECREF(name);
    Py_XDECREF(list);
    Py_DECREF(seq);
    return NULL;
}

PyObject *rmpy_compare(PyObject *module, PyObject *args, PyObject *kwargs)
{
    (void)module;
    static char *keywords[] = {"args", "utf8", NULL};
    PyObject *arguments;
    int utf8 = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$p:compare", keywords, &arguments, &utf8))
        return NULL;
    PyObject *list = encoded_arguments(arguments), *result = NULL;
    if (!list)
        return NULL;
    Py_ssize_t argc = PyList_GET_SIZE(list);
    char **argv = calloc((size_t)argc + 1, sizeof *argv); /* getopt permutes it: ours, not Python's */
    char *out_buf = NULL, *err_buf = NULL;
    size_t out_len = 0, err_len = 0;
    FILE *out = argv ? open_memstream(&out_buf, &out_len) : NULL;
    FILE *err = out ? open_memstream(&err_buf, &err_len) : NULL;
    if (!err) {
        if (out)
            fclose(out);
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < argc; i++)
        argv[i] = PyBytes_AS_STRING(PyList_GET_ITEM(list, i));
    static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
    pthread_once(&atfork_once, register_atfork); /* before the lock is first taken */
    if (atfork_error != 0) {
        fclose(out);
        fclose(err);
        errno = atfork_error;
        PyErr_SetFromErrno(PyExc_OSError);
        goto done;
    }
    if (in_engine) {
        fclose(out);
        fclose(err);
        PyErr_SetString(PyExc_RuntimeError, "compare() called from within this thread's compare (a signal "
                                            "handler): call it after that one returns");
        goto done;
    }
    PyThreadState *saved = PyEval_SaveThread();
    compare_caller caller = {.utf8 = utf8, .interrupted = signal_raised, .context = &saved};
    int status = lock_engine(&caller);
    if (status == 0) {
        in_engine = 1;
        status = compare_run((int)argc, argv, out, err, &caller);
        in_engine = 0;
        pthread_mutex_unlock(&engine_lock);
    }
    PyEval_RestoreThread(saved);
    /* A memory stream fails only when it cannot grow. */
    int failed = ferror(out) || ferror(err);
    failed |= fclose(out) != 0;
    failed |= fclose(err) != 0;
    if (status == COMPARE_INTERRUPTED)
        goto done; /* the handler's exception is set */
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *out_text = stream_text(out_buf, out_len);
    PyObject *err_text = out_text ? stream_text(err_buf, err_len) : NULL;
    if (err_text)
        result = Py_BuildValue("(iNN)", status, out_text, err_text);
    else
        Py_XDECREF(out_text);
done:
    free(out_buf);
    free(err_buf);
    free(argv);
    Py_DECREF(list);
    return result;
}
