/*
 * test_errors.c -- every errno resmon can return has words in
 * RESMON_ERRNO_MAP, so resmon_strerror never answers "unknown error" for one
 * of the library's own failures.
 *
 * The library's errors come from two places: codes written in its sources
 * ("return -ENODEV", "errno = EINVAL"), which this test finds by reading
 * src/ itself, so that a new code without words fails here; and errors of the
 * system calls it makes, passed through as -errno, listed below.
 */
#include "resmon.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef RESMON_SOURCE_DIR
#error "RESMON_SOURCE_DIR must name the library's src/ directory"
#endif

/* Errors of openat/read/pread/write on /proc and /sys files,
 * clock_getcpuclockid and pthread_create that resmon returns as they come. */
static const int passed_through[] = {
    EACCES, EPERM,  ENOENT,       ENOTDIR, EISDIR, ELOOP, ENAMETOOLONG, EMFILE,
    ENFILE, ENOMEM, EIO,          EINVAL,  ESRCH,  EAGAIN, ESPIPE,
};

static int has_words(int err)
{
    return strcmp(resmon_strerror(-err), "unknown error") != 0;
}

/* The errno value whose symbolic name is name, or 0.  glibc names each value
 * once (strerrorname_np), so the aliases in the C library's headers are
 * spelled here. */
static int errno_value(const char *name)
{
    static const struct {
        const char *alias, *canonical;
    } aliases[] = {{"ENOTSUP", "EOPNOTSUPP"}, {"EWOULDBLOCK", "EAGAIN"}, {"EDEADLOCK", "EDEADLK"}};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(name, aliases[i].alias) == 0)
            name = aliases[i].canonical;
    for (int value = 1; value < 4096; value++) {
        const char *known = strerrorname_np(value);
        if (known && strcmp(known, name) == 0)
            return value;
    }
    return 0;
}

static int is_identifier_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* Length of the errno name at text ("E" then capitals and digits), or 0. */
static size_t errno_name_length(const char *text)
{
    if (text[0] != 'E')
        return 0;
    size_t n = 1;
    while ((text[n] >= 'A' && text[n] <= 'Z') || (text[n] >= '0' && text[n] <= '9'))
        n++;
    return n > 1 && !is_identifier_char(text[n]) ? n : 0;
}

typedef struct scan_result {
    unsigned names_found;
    unsigned failures;
} scan_result;

/* Checks every "-ENAME" and "errno = ENAME" in text, printing each failure
 * when report is nonzero. */
static void check_codes_in(const char *file, const char *text, int report, scan_result *result)
{
    for (const char *p = text; *p; p++) {
        const char *name = NULL;
        if (p[0] == '-' && (p == text || !is_identifier_char(p[-1])))
            name = p + 1;
        else if (strncmp(p, "errno = ", 8) == 0 && (p == text || !is_identifier_char(p[-1])))
            name = p + 8;
        size_t len = name ? errno_name_length(name) : 0;
        if (!len)
            continue;
        char symbol[32];
        if (len >= sizeof symbol)
            continue;
        memcpy(symbol, name, len);
        symbol[len] = '\0';
        result->names_found++;
        int value = errno_value(symbol);
        const char *problem = !value ? "is not an errno name this test knows"
                              : !has_words(value) ? "has no words in RESMON_ERRNO_MAP" : NULL;
        if (problem) {
            if (report)
                print_error("%s: %s %s\n", file, symbol, problem);
            result->failures++;
        }
    }
}

static char *read_whole(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    size_t n;
    while (text && (n = fread(text + len, 1, cap - 1 - len, f)) > 0) {
        len += n;
        if (len == cap - 1) {
            char *grown = realloc(text, cap * 2);
            if (!grown) {
                free(text);
                text = NULL;
                break;
            }
            text = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (text)
        text[len] = '\0';
    return text;
}

static void every_errno_in_the_sources_has_words(void **state)
{
    (void)state;
    DIR *dir = opendir(RESMON_SOURCE_DIR);
    assert_non_null(dir);
    scan_result result = {0, 0};
    unsigned files = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t len = strlen(e->d_name);
        if (len < 3 || (strcmp(e->d_name + len - 2, ".c") != 0 && strcmp(e->d_name + len - 2, ".h") != 0))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", RESMON_SOURCE_DIR, e->d_name);
        char *text = read_whole(path);
        assert_non_null(text);
        check_codes_in(e->d_name, text, 1, &result);
        free(text);
        files++;
    }
    closedir(dir);
    assert_true(files >= 10);             /* it read the library, not an empty folder */
    assert_true(result.names_found >= 50); /* and found the codes in it */
    assert_int_equal(result.failures, 0);
}

static void the_scan_catches_a_code_without_words(void **state)
{
    (void)state;
    scan_result result = {0, 0};
    check_codes_in("example", "return -ENOLINK; errno = EBADMSG; x = a-EINVAL;", 0, &result);
    assert_int_equal(result.names_found, 2); /* a-EINVAL is a subtraction */
    assert_int_equal(result.failures, 2);
}

static void errors_of_system_calls_have_words(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof passed_through / sizeof passed_through[0]; i++) {
        if (!has_words(passed_through[i]))
            print_error("%s has no words\n", strerrorname_np(passed_through[i]));
        assert_true(has_words(passed_through[i]));
    }
}

/* RESMON_PROC_ROOT naming a regular file: the start fails with the open's
 * own reason, which the table can say. */
static void a_proc_root_that_is_a_file_is_not_a_directory(void **state)
{
    (void)state;
    char path[] = "/tmp/resmon-proc-root-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    setenv("RESMON_PROC_ROOT", path, 1);
    resmon_monitor *m = NULL;
    int created = resmon_monitor_new(&m, NULL);
    unsetenv("RESMON_PROC_ROOT");
    assert_int_equal(created, 0);
    int rc = resmon_monitor_start(m);
    resmon_monitor_free(m);
    unlink(path);
    assert_int_equal(rc, -ENOTDIR);
    assert_string_equal(resmon_strerror(rc), "not a directory");
}

/* Lowers the descriptor limit, soft and hard (the library raises a soft
 * limit to the hard one on EMFILE, since 0.4.1), and fills every free slot
 * with /dev/null except free_count.  In a child of its own: a hard limit,
 * once lowered, may not come back.  0, or 1 when it could not. */
static int leave_free_descriptors(int free_count)
{
    int highest = test_highest_descriptor(2);
    struct rlimit lowered;
    if (getrlimit(RLIMIT_NOFILE, &lowered) != 0)
        return 1;
    lowered.rlim_cur = lowered.rlim_max = (rlim_t)highest + 1 + 16;
    if (setrlimit(RLIMIT_NOFILE, &lowered) != 0)
        return 1;
    static int fds[4096]; /* every slot below the limit may be free */
    size_t count = 0;
    int fd;
    errno = 0;
    while (count < 4096 && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
        fds[count++] = fd;
    if (errno != EMFILE || count < (size_t)free_count)
        return 1;
    for (int i = 0; i < free_count; i++)
        close(fds[--count]);
    return 0;
}

/* What the window of an_exact_peak_that_cannot_be_read_says_why saw, sent
 * from its child. */
typedef struct starved_window {
    int placed, start_rc, stop_rc, hwm_is_nan, hwm_error;
    size_t num_samples;
} starved_window;

/* Three free descriptors are what start needs (the /proc directory, the
 * process's directory and its statm), none is left to reset or read the
 * kernel's high-water mark: the window still runs, and the summary says why
 * its exact peak is unknown. */
static void an_exact_peak_that_cannot_be_read_says_why(void **state)
{
    (void)state;
    resmon_monitor *m = test_monitor_new(NULL);
    assert_non_null(m);
    int report[2];
    assert_int_equal(pipe2(report, O_CLOEXEC), 0);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        starved_window w = {0};
        close(report[0]);
        w.placed = leave_free_descriptors(3) == 0;
        if (w.placed) {
            w.start_rc = resmon_monitor_start(m);
            w.stop_rc = resmon_monitor_stop(m);
            resmon_summary s = test_summary(m);
            w.num_samples = s.num_samples;
            w.hwm_is_nan = isnan(s.hwm_rss_mb);
            w.hwm_error = s.hwm_error;
        }
        _exit(write(report[1], &w, sizeof w) == (ssize_t)sizeof w ? 0 : 1);
    }
    close(report[1]);
    starved_window w = {0};
    ssize_t got = read(report[0], &w, sizeof w);
    close(report[0]);
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    resmon_monitor_free(m);
    assert_int_equal(got, (ssize_t)sizeof w);
    assert_true(w.placed);
    assert_int_equal(w.start_rc, 0);
    assert_int_equal(w.stop_rc, 0);
    assert_true(w.num_samples >= 2);
    assert_true(w.hwm_is_nan);
    assert_int_equal(w.hwm_error, -EMFILE);
    assert_string_equal(resmon_strerror(w.hwm_error), "too many open files in this process");
}

/* With descriptors to spare the same window has its exact peak, and
 * hwm_error is 0 exactly when the mark covers the window. */
static void an_exact_peak_that_was_read_has_no_error(void **state)
{
    (void)state;
    resmon_monitor *m = test_monitor_new(NULL);
    assert_non_null(m);
    assert_int_equal(resmon_monitor_start(m), 0);
    assert_int_equal(resmon_monitor_stop(m), 0);
    resmon_summary s = test_summary(m);
    resmon_monitor_free(m);
    assert_true(isfinite(s.hwm_rss_mb));
    if (s.hwm_scope == RESMON_HWM_WINDOW)
        assert_int_equal(s.hwm_error, 0);
    else
        assert_true(s.hwm_error < 0 && strcmp(resmon_strerror(s.hwm_error), "unknown error") != 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_errno_in_the_sources_has_words),
        cmocka_unit_test(the_scan_catches_a_code_without_words),
        cmocka_unit_test(errors_of_system_calls_have_words),
        cmocka_unit_test(a_proc_root_that_is_a_file_is_not_a_directory),
        cmocka_unit_test(an_exact_peak_that_cannot_be_read_says_why),
        cmocka_unit_test(an_exact_peak_that_was_read_has_no_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
