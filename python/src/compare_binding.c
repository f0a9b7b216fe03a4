/*
 * compare_binding.c -- _resmon.compare: `resmon compare` run in this process.
 *
 * The engine is the command's own (tools/resmon/compare.c, compiled into the
 * extension by setup.py), so `pytest --resmon-compare` and `resmon compare`
 * cannot judge differently.  It writes its report and its messages to two
 * memory streams, returned as text; nothing reaches the process's stdout or
 * stderr.  The GIL is held throughout: the engine keeps getopt's state and
 * its streams in globals, so one call runs at a time.
 */
#include "binding.h"
#include "compare.h"

#include <stdio.h>
#include <stdlib.h>

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

PyObject *rmpy_compare(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *list = encoded_arguments(args), *result = NULL;
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
    int status = compare_run((int)argc, argv, out, err);
    /* A memory stream fails only when it cannot grow. */
    int failed = ferror(out) || ferror(err);
    failed |= fclose(out) != 0;
    failed |= fclose(err) != 0;
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
