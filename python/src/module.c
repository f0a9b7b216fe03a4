/*
 * module.c -- the resmon._resmon extension module: errors, summaries in and
 * out of C, the GPU list, and module set-up.
 */
#include "binding.h"
#include "figure_list.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <string.h>

PyObject *rmpy_raise(int rc, const char *detail)
{
    int err = rc < 0 ? -rc : rc;
    const char *message = detail && *detail ? detail : resmon_strerror(rc);
    if (err == ENOMEM)
        return PyErr_NoMemory();
    if (err == EINVAL) {
        PyErr_SetString(PyExc_ValueError, message);
        return NULL;
    }
    PyObject *args = Py_BuildValue("(is)", err, message);
    if (args) {
        PyErr_SetObject(PyExc_OSError, args); /* OSError(errno, text) picks the subclass */
        Py_DECREF(args);
    }
    return NULL;
}

int rmpy_integer_argument(PyObject *value, const char *name, long long min, long long max, long long *out)
{
    if (PyBool_Check(value) || !PyIndex_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be an integer, got %R", name, value);
        return -1;
    }
    int overflow = 0;
    long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (number == -1 && PyErr_Occurred())
        return -1;
    if (overflow || number < min || number > max) {
        PyErr_Format(PyExc_ValueError, "%s must be between %lld and %lld, got %R", name, min, max, value);
        return -1;
    }
    *out = number;
    return 0;
}

int rmpy_real_argument(PyObject *value, const char *name, double *out)
{
    double number = PyFloat_AsDouble(value);
    if (number == -1.0 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s is too large, got %R", name, value);
        }
        return -1;
    }
    *out = number;
    return 0;
}

/* ---- summaries ---------------------------------------------------------- */

/* The enums' words come from the library (resmon_hwm_scope_name, ...), so
 * they are spelled once; these adapt each to an int for get_choice. */
static const char *hwm_scope_word(int value)
{
    return resmon_hwm_scope_name((resmon_hwm_scope)value);
}

static const char *energy_source_word(int value)
{
    return resmon_energy_source_name((resmon_energy_source)value);
}

/* Adds key: value to dict and drops the caller's reference to value. */
static int put_item(PyObject *dict, const char *key, PyObject *value)
{
    if (!value)
        return -1;
    int rc = PyDict_SetItemString(dict, key, value);
    Py_DECREF(value);
    return rc;
}

static int put_number(PyObject *dict, const char *key, double value)
{
    if (isnan(value))
        return PyDict_SetItemString(dict, key, Py_None);
    return put_item(dict, key, PyFloat_FromDouble(value));
}

static int put_name(PyObject *dict, const char *key, const char *name)
{
    if (!name)
        return PyDict_SetItemString(dict, key, Py_None);
    return put_item(dict, key, PyUnicode_FromString(name));
}

/* The summary's figures from the library's figure list (figure_list.h), in
 * the order of resmon_summary_to_json: the base and GPU ones before the
 * metric groups', each with the word that follows it there (hwm_scope after
 * hwm_rss_mb, gpu_energy_source after gpu_energy_j); the cgroup's after,
 * with cgroup_version and cgroup_error besides. */
enum followed_by { FOLLOWED_BY_NOTHING, FOLLOWED_BY_HWM_SCOPE, FOLLOWED_BY_ENERGY_SOURCE };
#define FOLLOWED_BY_REQUIRED FOLLOWED_BY_NOTHING
#define FOLLOWED_BY_SEED FOLLOWED_BY_NOTHING
#define FOLLOWED_BY_UNLESS_NAN FOLLOWED_BY_NOTHING
#define FOLLOWED_BY_KNOWN FOLLOWED_BY_NOTHING
#define FOLLOWED_BY_MEASURED FOLLOWED_BY_NOTHING
#define FOLLOWED_BY_CGROUP FOLLOWED_BY_NOTHING
#define FOLLOWED_BY_HWM FOLLOWED_BY_HWM_SCOPE
#define FOLLOWED_BY_ENERGY FOLLOWED_BY_ENERGY_SOURCE
#define IS_COUNT_DOUBLE 0
#define IS_COUNT_U64 1
#define SUMMARY_FIELD(group, field, type, fold, unit, json, ...)                                                   \
    {#field, offsetof(resmon_summary, field), IS_COUNT_##type, FOLLOWED_BY_##json},
typedef struct summary_field {
    const char *key;
    size_t offset;
    int is_count;                /* a uint64_t; else a double */
    enum followed_by followed_by;
} summary_field;
static const summary_field base_fields[] = {RM__SUMMARY_FIGURES_BASE(SUMMARY_FIELD)};
static const summary_field cgroup_fields[] = {RM__SUMMARY_FIGURES_CGROUP(SUMMARY_FIELD)};
#define BASE_FIELDS (sizeof base_fields / sizeof *base_fields)
#define CGROUP_FIELDS (sizeof cgroup_fields / sizeof *cgroup_fields)

/* Adds a base or GPU figure, and the word that follows it. */
static int put_base_field(PyObject *d, const resmon_summary *s, const summary_field *f)
{
    const char *at = (const char *)s + f->offset;
    int failed;
    if (f->is_count) {
        uint64_t count;
        memcpy(&count, at, sizeof count);
        failed = put_item(d, f->key, PyLong_FromUnsignedLongLong(count));
    } else {
        double value;
        memcpy(&value, at, sizeof value);
        failed = put_number(d, f->key, value);
    }
    if (!failed && f->followed_by == FOLLOWED_BY_HWM_SCOPE)
        failed = put_name(d, "hwm_scope", resmon_hwm_scope_name(s->hwm_scope));
    else if (!failed && f->followed_by == FOLLOWED_BY_ENERGY_SOURCE)
        failed = put_name(d, "gpu_energy_source", resmon_energy_source_name(s->gpu_energy_source));
    return failed;
}

PyObject *rmpy_summary_to_dict(const resmon_summary *s)
{
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    int failed = 0;
    for (size_t i = 0; !failed && i < BASE_FIELDS; i++)
        failed = put_base_field(d, s, &base_fields[i]);
    for (size_t i = 0; !failed && i < resmon_metric_count(); i++) {
        resmon_metric m;
        double value;
        if (resmon_metric_info(i, &m, sizeof m) < 0)
            continue;
        memcpy(&value, (const char *)s + m.summary_offset, sizeof value);
        failed = put_number(d, m.summary_field, value);
    }
    /* Without a cgroup: version None, error 0, every figure None. */
    int has_cgroup = s->cgroup_version == 1 || s->cgroup_version == 2;
    if (!failed)
        failed = (has_cgroup ? put_item(d, "cgroup_version", PyLong_FromLong(s->cgroup_version))
                             : PyDict_SetItemString(d, "cgroup_version", Py_None)) ||
                 put_item(d, "cgroup_error", PyLong_FromLong(s->cgroup_error));
    for (size_t i = 0; !failed && i < CGROUP_FIELDS; i++) {
        double value;
        memcpy(&value, (const char *)s + cgroup_fields[i].offset, sizeof value);
        failed = put_number(d, cgroup_fields[i].key, has_cgroup ? value : NAN);
    }
    if (failed)
        Py_CLEAR(d);
    return d;
}

/* mapping[key] into *value (a new reference): 1, 0 when absent (*value
 * NULL, no error set), -1 when the lookup failed otherwise. */
static int lookup(PyObject *mapping, const char *key, PyObject **value)
{
    *value = PyMapping_GetItemString(mapping, key);
    if (*value)
        return 1;
    if (!PyErr_ExceptionMatches(PyExc_KeyError))
        return -1;
    PyErr_Clear();
    return 0;
}

/* mapping[key] as a double: None or absent is NAN. */
static int get_number(PyObject *mapping, const char *key, double *out)
{
    PyObject *value;
    int found = lookup(mapping, key, &value);
    *out = NAN;
    if (found <= 0)
        return found;
    int rc = value == Py_None ? 0 : rmpy_real_argument(value, key, out);
    Py_DECREF(value);
    return rc;
}

static int get_count(PyObject *mapping, const char *key, uint64_t *out)
{
    PyObject *value;
    int found = lookup(mapping, key, &value);
    *out = 0;
    if (found <= 0)
        return found;
    long long number = 0;
    int rc = value == Py_None ? 0 : rmpy_integer_argument(value, key, 0, LLONG_MAX, &number);
    *out = (uint64_t)number;
    Py_DECREF(value);
    return rc;
}

/* mapping[key] as the enum value whose word (name(value), counting up from 1
 * until NULL) it is; 0 when None or absent. */
static int get_choice(PyObject *mapping, const char *key, const char *(*name)(int value), int *out)
{
    *out = 0;
    PyObject *value;
    int found = lookup(mapping, key, &value);
    if (found <= 0)
        return found;
    int rc = 0;
    if (value != Py_None) {
        const char *text = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) : NULL;
        for (int i = 1; text && name(i); i++)
            if (strcmp(text, name(i)) == 0)
                *out = i;
        if (*out == 0) {
            PyErr_Format(PyExc_ValueError, "%s: unknown value %R", key, value);
            rc = -1;
        }
    }
    Py_DECREF(value);
    return rc;
}

/* Reads a base or GPU figure, and the word that follows it. */
static int get_base_field(PyObject *fields, resmon_summary *s, const summary_field *f, int *hwm_scope,
                          int *energy_source)
{
    char *at = (char *)s + f->offset;
    if (f->is_count) {
        uint64_t count;
        if (get_count(fields, f->key, &count))
            return -1;
        memcpy(at, &count, sizeof count);
    } else {
        double value;
        if (get_number(fields, f->key, &value))
            return -1;
        memcpy(at, &value, sizeof value);
    }
    if (f->followed_by == FOLLOWED_BY_HWM_SCOPE)
        return get_choice(fields, "hwm_scope", hwm_scope_word, hwm_scope);
    if (f->followed_by == FOLLOWED_BY_ENERGY_SOURCE)
        return get_choice(fields, "gpu_energy_source", energy_source_word, energy_source);
    return 0;
}

static PyObject *summary_to_json(PyObject *module, PyObject *fields)
{
    (void)module;
    resmon_summary s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    int hwm_scope = 0, energy_source = 0;
    for (size_t i = 0; i < BASE_FIELDS; i++)
        if (get_base_field(fields, &s, &base_fields[i], &hwm_scope, &energy_source))
            return NULL;
    for (size_t i = 0; i < resmon_metric_count(); i++) {
        resmon_metric m;
        double value;
        if (resmon_metric_info(i, &m, sizeof m) < 0)
            continue;
        if (get_number(fields, m.summary_field, &value))
            return NULL;
        memcpy((char *)&s + m.summary_offset, &value, sizeof value);
    }
    uint64_t cgroup_version;
    if (get_count(fields, "cgroup_version", &cgroup_version))
        return NULL;
    if (cgroup_version > 2) {
        PyErr_Format(PyExc_ValueError, "cgroup_version: 1, 2 or None, got %llu", (unsigned long long)cgroup_version);
        return NULL;
    }
    s.cgroup_version = (int32_t)cgroup_version;
    for (size_t i = 0; i < CGROUP_FIELDS; i++) {
        double value;
        if (get_number(fields, cgroup_fields[i].key, &value))
            return NULL;
        memcpy((char *)&s + cgroup_fields[i].offset, &value, sizeof value);
    }
    s.hwm_scope = (resmon_hwm_scope)hwm_scope;
    s.gpu_energy_source = (resmon_energy_source)energy_source;
    char small[1024];
    int len = resmon_summary_to_json(&s, small, sizeof small);
    if (len < 0)
        return rmpy_raise(len, NULL);
    if ((size_t)len < sizeof small)
        return PyUnicode_FromStringAndSize(small, len);
    char *big = PyMem_Malloc((size_t)len + 1);
    if (!big)
        return PyErr_NoMemory();
    resmon_summary_to_json(&s, big, (size_t)len + 1);
    PyObject *text = PyUnicode_FromStringAndSize(big, len);
    PyMem_Free(big);
    return text;
}

/* ---- the metric list ------------------------------------------------------ */

/* metrics() -> tuple of dicts: the library's metric list (resmon_metric_info),
 * from which the package's sample and summary fields are made. */
static PyObject *metric_list(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    size_t count = resmon_metric_count();
    PyObject *list = PyTuple_New((Py_ssize_t)count);
    for (size_t i = 0; list && i < count; i++) {
        resmon_metric m;
        int rc = resmon_metric_info(i, &m, sizeof m);
        if (rc < 0) {
            Py_CLEAR(list);
            return rmpy_raise(rc, NULL);
        }
        PyObject *item = Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:I,s:s}", "sample_field", m.sample_field,
                                       "summary_field", m.summary_field, "column", m.column, "unit", m.unit,
                                       "words", m.words, "group", (unsigned)m.group, "fold",
                                       m.fold == RESMON_FOLD_MAX ? "max" : "last");
        if (!item)
            Py_CLEAR(list);
        else
            PyTuple_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* ---- GPUs ----------------------------------------------------------------- */

static PyObject *gpu_info_dict(const resmon_gpu_info *info)
{
    PyObject *total = isnan(info->memory_total_mb) ? Py_NewRef(Py_None) : PyFloat_FromDouble(info->memory_total_mb);
    return Py_BuildValue("{s:s,s:I,s:s,s:s,s:N}", "backend", info->backend, "index", info->index, "name",
                         info->name, "id", info->id, "memory_total_mb", total);
}

static PyObject *list_gpus(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    size_t count = 0;
    resmon_gpu_info *infos = NULL;
    int rc;
    /* The count can change between two calls (hot-plug): repeat until it fits. */
    for (size_t capacity = 0;; capacity = count) {
        Py_BEGIN_ALLOW_THREADS
        rc = resmon_gpu_list(infos, capacity, sizeof *infos, &count);
        Py_END_ALLOW_THREADS
        if (rc < 0 || count <= capacity)
            break;
        PyMem_Free(infos);
        infos = PyMem_Calloc(count, sizeof *infos);
        if (!infos)
            return PyErr_NoMemory();
    }
    if (rc < 0) {
        PyMem_Free(infos);
        return rmpy_raise(rc, NULL);
    }
    PyObject *list = PyList_New((Py_ssize_t)count);
    for (size_t i = 0; list && i < count; i++) {
        PyObject *item = gpu_info_dict(&infos[i]);
        if (!item)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    PyMem_Free(infos);
    return list;
}

static PyObject *strerror_text(PyObject *module, PyObject *arg)
{
    (void)module;
    long long err;
    if (rmpy_integer_argument(arg, "errno", INT_MIN + 1, INT_MAX, &err) < 0)
        return NULL;
    return PyUnicode_FromString(resmon_strerror(err));
}

/* cgroup_fields() -> tuple of str: the summary's cgroup figures, as the
 * package's ResourceSummary fields are made from them. */
static PyObject *cgroup_field_names(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    size_t count = sizeof cgroup_fields / sizeof *cgroup_fields;
    PyObject *names = PyTuple_New((Py_ssize_t)count);
    for (size_t i = 0; names && i < count; i++) {
        PyObject *name = PyUnicode_FromString(cgroup_fields[i].key);
        if (!name) {
            Py_CLEAR(names);
            break;
        }
        PyTuple_SET_ITEM(names, (Py_ssize_t)i, name);
    }
    return names;
}

/* ---- leaf cgroups (resmon_cgroup) ---------------------------------------- */

/* A leaf cgroup is a capsule holding the resmon_cgroup; removing it (or
 * dropping the capsule) removes the leaf, moving any process still in it
 * to the parent cgroup first.  The pytest plugin makes one per test. */
#define CGROUP_CAPSULE "resmon._resmon.cgroup"
static char cgroup_removed; /* a removed leaf's capsule points here */

static void cgroup_capsule_free(PyObject *capsule)
{
    resmon_cgroup *cg = PyCapsule_GetPointer(capsule, CGROUP_CAPSULE);
    if (cg)
        resmon_cgroup_remove(cg);
}

static resmon_cgroup *cgroup_of(PyObject *capsule)
{
    resmon_cgroup *cg = PyCapsule_GetPointer(capsule, CGROUP_CAPSULE);
    if (cg == (void *)&cgroup_removed) {
        PyErr_SetString(PyExc_ValueError, "the cgroup was removed");
        return NULL;
    }
    return cg;
}

/* cgroup_create(memory_limit_bytes) -> (capsule, path bytes, version) */
static PyObject *cgroup_create(PyObject *module, PyObject *arg)
{
    (void)module;
    long long limit;
    if (rmpy_integer_argument(arg, "memory_limit_bytes", 0, LLONG_MAX, &limit) < 0)
        return NULL;
    char err[RESMON_ERR_MAX] = "";
    resmon_cgroup *cg = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = resmon_cgroup_create(&cg, (uint64_t)limit, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (rc < 0)
        return rmpy_raise(rc, err[0] ? err : NULL);
    PyObject *capsule = PyCapsule_New(cg, CGROUP_CAPSULE, cgroup_capsule_free);
    if (!capsule) {
        resmon_cgroup_remove(cg);
        return NULL;
    }
    PyObject *result = Py_BuildValue("(Ny#i)", capsule, resmon_cgroup_path(cg),
                                     (Py_ssize_t)strlen(resmon_cgroup_path(cg)), resmon_cgroup_version(cg));
    return result;
}

/* cgroup_join(capsule, pid): moves pid (0: the calling process) into the leaf. */
static PyObject *cgroup_join(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *capsule;
    int pid;
    if (!PyArg_ParseTuple(args, "Oi:cgroup_join", &capsule, &pid))
        return NULL;
    resmon_cgroup *cg = cgroup_of(capsule);
    if (!cg)
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = resmon_cgroup_join(cg, (pid_t)pid);
    Py_END_ALLOW_THREADS
    if (rc < 0)
        return rmpy_raise(rc, NULL);
    Py_RETURN_NONE;
}

/* cgroup_remove(capsule): moves what is still in the leaf to its parent and
 * removes it; None, or OSError when the directory could not be removed. */
static PyObject *cgroup_remove(PyObject *module, PyObject *capsule)
{
    (void)module;
    resmon_cgroup *cg = cgroup_of(capsule);
    if (!cg)
        return NULL;
    if (PyCapsule_SetPointer(capsule, &cgroup_removed) < 0) /* a marker: never a cgroup again */
        return NULL;
    PyCapsule_SetDestructor(capsule, NULL);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = resmon_cgroup_remove(cg);
    Py_END_ALLOW_THREADS
    if (rc < 0)
        return rmpy_raise(rc, NULL);
    Py_RETURN_NONE;
}

/* ---- the module ------------------------------------------------------------ */

static PyMethodDef module_functions[] = {
    {"summary_to_json", summary_to_json, METH_O,
     "summary_to_json(fields) -> str: resmon_summary_to_json of a mapping of ResourceSummary fields."},
    {"list_gpus", list_gpus, METH_NOARGS, "list_gpus() -> list of dict: every GPU resmon's backends find."},
    {"strerror", strerror_text, METH_O, "strerror(errno) -> str: resmon's words for an errno."},
    {"metrics", metric_list, METH_NOARGS, "metrics() -> tuple of dict: the library's metric list (resmon_metric_info)."},
    {"cgroup_fields", cgroup_field_names, METH_NOARGS,
     "cgroup_fields() -> tuple of str: the summary's cgroup figures (cgroup_path), in the JSON's order."},
    {"cgroup_create", cgroup_create, METH_O,
     "cgroup_create(memory_limit_bytes) -> (leaf, path bytes, version): resmon_cgroup_create."},
    {"cgroup_join", cgroup_join, METH_VARARGS, "cgroup_join(leaf, pid): resmon_cgroup_join (pid 0: this process)."},
    {"cgroup_remove", cgroup_remove, METH_O, "cgroup_remove(leaf): resmon_cgroup_remove."},
    {"compare", (PyCFunction)(void (*)(void))rmpy_compare, METH_VARARGS | METH_KEYWORDS,
     "compare(args, *, utf8=True) -> (exit_status, stdout_text, stderr_text): `resmon compare ARGS...`, the "
     "command's own engine, its report and messages captured; utf8: whether the text goes to a stream that takes "
     "UTF-8 (check marks), else ok:/FAIL:.  Runs without the GIL; a signal handler's exception (KeyboardInterrupt) "
     "stops it."},
    {NULL, NULL, 0, NULL},
};

/* Multi-phase initialisation (PEP 489): PyInit__resmon only returns the
 * definition; module_exec fills each module object, and the Monitor type is
 * a heap type created for it and kept in its state. */
typedef struct module_state {
    PyObject *monitor_type;
} module_state;

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    module_state *state = PyModule_GetState(module);
    if (state)
        Py_VISIT(state->monitor_type);
    return 0;
}

static int module_clear(PyObject *module)
{
    module_state *state = PyModule_GetState(module);
    if (state)
        Py_CLEAR(state->monitor_type);
    return 0;
}

static void module_free(void *module)
{
    module_clear(module);
}

/* METRIC_GROUPS: {name: RESMON_METRIC_* bit}, the names ResourceMonitor's
 * metrics= takes, from the library's group list (resmon_metric_group_info). */
static int add_metric_groups(PyObject *module)
{
    PyObject *d = PyDict_New();
    if (!d)
        return -1;
    resmon_metric_group g;
    for (size_t i = 0; resmon_metric_group_info(i, &g, sizeof g) == 0; i++)
        if (put_item(d, g.name, PyLong_FromUnsignedLong(g.bit)) < 0) {
            Py_DECREF(d);
            return -1;
        }
    int rc = PyModule_AddObjectRef(module, "METRIC_GROUPS", d);
    Py_DECREF(d);
    return rc;
}

static int module_exec(PyObject *module)
{
    module_state *state = PyModule_GetState(module);
    if (rmpy_python_profiler_setup() < 0)
        return -1;
    state->monitor_type = PyType_FromModuleAndSpec(module, &rmpy_monitor_spec, NULL);
    if (!state->monitor_type || PyModule_AddObjectRef(module, "Monitor", state->monitor_type) < 0 ||
        PyModule_AddStringConstant(module, "library_version", resmon_version_string()) < 0 ||
        add_metric_groups(module) < 0)
        return -1; /* the module is dropped, and module_free clears the state */
    return 0;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void *)module_exec},
#ifdef Py_mod_multiple_interpreters
    /* The GPU thread's Python calls run in the main interpreter, and the
     * thread-state key and fork handler are per process (python_profiler.c). */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_USED}, /* not reviewed for a free-threaded build */
#endif
    {0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT,
    .m_name = "resmon._resmon",
    .m_doc = "libresmon, compiled in: the C side of the resmon package.",
    .m_size = sizeof(module_state),
    .m_methods = module_functions,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__resmon(void)
{
    return PyModuleDef_Init(&module_definition);
}
