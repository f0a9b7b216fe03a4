/*
 * procfs.c -- reading and parsing Linux /proc files (see procfs.h).
 */
#include "procfs.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parses one unsigned decimal starting at *pos (after skipping spaces),
 * advancing *pos past it.  Rejects empty fields and overflow. */
static int parse_u64(const char *buf, size_t len, size_t *pos, uint64_t *out)
{
    size_t i = *pos;
    while (i < len && buf[i] == ' ')
        i++;
    if (i >= len || buf[i] < '0' || buf[i] > '9')
        return -EINVAL;
    uint64_t value = 0;
    while (i < len && buf[i] >= '0' && buf[i] <= '9') {
        uint64_t digit = (uint64_t)(buf[i] - '0');
        /* Overflow check with constants only: this runs per digit per
         * sample, and a division per digit was 40 % of a sample's
         * user-space instructions. */
        if (value > UINT64_MAX / 10 || (value == UINT64_MAX / 10 && digit > UINT64_MAX % 10))
            return -EINVAL;
        value = value * 10 + digit;
        i++;
    }
    if (i < len && buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\0')
        return -EINVAL;
    *pos = i;
    *out = value;
    return 0;
}

/* Skips one space-separated field of any content (some stat fields are
 * negative, such as (18) priority). */
static int skip_field(const char *buf, size_t len, size_t *pos)
{
    size_t i = *pos;
    while (i < len && buf[i] == ' ')
        i++;
    size_t start = i;
    while (i < len && buf[i] != ' ' && buf[i] != '\n')
        i++;
    if (i == start)
        return -EINVAL;
    *pos = i;
    return 0;
}

int rm__parse_statm(const char *buf, size_t len, uint64_t *size_pages, uint64_t *resident_pages)
{
    size_t pos = 0;
    if (parse_u64(buf, len, &pos, size_pages) < 0)
        return -EINVAL;
    return parse_u64(buf, len, &pos, resident_pages);
}

int rm__parse_stat(const char *buf, size_t len, rm__proc_stat *out)
{
    /* (2) comm is "(name)" where name may hold anything, so the fields
     * resume after the last ')' in the text. */
    const char *close_paren = NULL;
    for (size_t i = len; i > 0; i--) {
        if (buf[i - 1] == ')') {
            close_paren = buf + i - 1;
            break;
        }
    }
    const char *open_paren = close_paren ? memchr(buf, '(', (size_t)(close_paren - buf)) : NULL;
    if (!open_paren)
        return -EINVAL;
    size_t pos = (size_t)(close_paren - buf) + 1;
    if (pos + 2 > len || buf[pos] != ' ')
        return -EINVAL;
    rm__proc_stat st = {0};
    size_t comm_len = (size_t)(close_paren - open_paren) - 1; /* the pid is digits: the first '(' opens it */
    if (comm_len >= sizeof st.comm)
        comm_len = sizeof st.comm - 1;
    memcpy(st.comm, open_paren + 1, comm_len);
    st.state = buf[pos + 1]; /* (3) state */
    if (st.state == ' ' || st.state == '\n' || st.state == '\0')
        return -EINVAL;
    pos += 2;
    uint64_t value;
    for (int field = 4; field <= 23; field++) {
        int rc;
        switch (field) {
        case 4:  /* (4) ppid */
        case 10: /* (10) minflt */
        case 11: /* (11) cminflt */
        case 12: /* (12) majflt */
        case 13: /* (13) cmajflt */
        case 14: /* (14) utime */
        case 15: /* (15) stime */
        case 16: /* (16) cutime */
        case 17: /* (17) cstime */
        case 20: /* (20) num_threads */
        case 22: /* (22) starttime */
        case 23: /* (23) vsize */
            rc = parse_u64(buf, len, &pos, &value);
            break;
        default: /* fields resmon does not use; some may be negative */
            rc = skip_field(buf, len, &pos);
            value = 0;
            break;
        }
        if (rc < 0)
            return -EINVAL;
        switch (field) {
        case 4:
            if (value > INT32_MAX)
                return -EINVAL;
            st.ppid = (pid_t)value;
            break;
        case 10: st.minflt = value; break;
        case 11: st.cminflt = value; break;
        case 12: st.majflt = value; break;
        case 13: st.cmajflt = value; break;
        case 14: st.utime = value; break;
        case 15: st.stime = value; break;
        case 16: st.cutime = value; break;
        case 17: st.cstime = value; break;
        case 20: st.num_threads = value; break;
        case 22: st.starttime = value; break;
        case 23: st.vsize = value; break;
        default: break;
        }
    }
    /* (24)-(28), to startstack: optional (a fixture's short line is still a
     * stat line); only startstack is kept. */
    for (int field = 24; field <= 28; field++) {
        if ((field == 28 ? parse_u64(buf, len, &pos, &value) : skip_field(buf, len, &pos)) < 0)
            break;
        if (field == 28)
            st.startstack = value;
    }
    *out = st;
    return 0;
}

/* Finds the line "key:" and returns the position just past the blanks that
 * follow the colon, and the line's end.  -ENOENT when no line has the key. */
static int find_keyed_line(const char *buf, size_t len, const char *key, size_t *value_pos, size_t *line_end)
{
    size_t key_len = strlen(key);
    size_t line = 0;
    while (line < len) {
        const char *nl = memchr(buf + line, '\n', len - line);
        size_t end = nl ? (size_t)(nl - buf) : len;
        if (end - line > key_len && memcmp(buf + line, key, key_len) == 0 && buf[line + key_len] == ':') {
            size_t pos = line + key_len + 1;
            while (pos < end && (buf[pos] == ' ' || buf[pos] == '\t'))
                pos++;
            *value_pos = pos;
            *line_end = end;
            return 0;
        }
        line = end + 1;
    }
    return -ENOENT;
}

int rm__parse_status_kb(const char *buf, size_t len, const char *key, uint64_t *kb)
{
    size_t pos, line_end;
    int rc = find_keyed_line(buf, len, key, &pos, &line_end);
    if (rc < 0)
        return rc;
    uint64_t value;
    if (parse_u64(buf, line_end, &pos, &value) < 0)
        return -EINVAL;
    if (line_end - pos < 3 || memcmp(buf + pos, " kB", 3) != 0)
        return -EINVAL;
    *kb = value;
    return 0;
}

int rm__parse_status_u64(const char *buf, size_t len, const char *key, uint64_t *value)
{
    size_t pos, line_end;
    int rc = find_keyed_line(buf, len, key, &pos, &line_end);
    if (rc < 0)
        return rc;
    uint64_t parsed;
    if (parse_u64(buf, line_end, &pos, &parsed) < 0 || pos != line_end)
        return -EINVAL;
    *value = parsed;
    return 0;
}

int rm__parse_io(const char *buf, size_t len, rm__proc_io *out)
{
    static const struct {
        const char *key;
        size_t offset;
    } fields[] = {
        {"rchar", offsetof(rm__proc_io, rchar)},           {"wchar", offsetof(rm__proc_io, wchar)},
        {"syscr", offsetof(rm__proc_io, syscr)},           {"syscw", offsetof(rm__proc_io, syscw)},
        {"read_bytes", offsetof(rm__proc_io, read_bytes)}, {"write_bytes", offsetof(rm__proc_io, write_bytes)},
    };
    rm__proc_io io;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        uint64_t value;
        if (rm__parse_status_u64(buf, len, fields[i].key, &value) < 0)
            return -EINVAL;
        memcpy((char *)&io + fields[i].offset, &value, sizeof value);
    }
    *out = io;
    return 0;
}

int rm__parse_net_dev(const char *buf, size_t len, rm__net_totals *out)
{
    rm__net_totals sum = {0};
    size_t line = 0;
    for (int header_lines = 2; header_lines > 0 && line < len; header_lines--) {
        const char *nl = memchr(buf + line, '\n', len - line);
        if (!nl)
            return -EINVAL;
        line = (size_t)(nl - buf) + 1;
    }
    while (line < len && buf[line] != '\0') {
        const char *nl = memchr(buf + line, '\n', len - line);
        size_t end = nl ? (size_t)(nl - buf) : len;
        const char *colon = memchr(buf + line, ':', end - line);
        if (!colon)
            return -EINVAL;
        /* "name: rx bytes packets errs drop fifo frame compressed multicast,
         *  then tx bytes packets ..." */
        size_t pos = (size_t)(colon - buf) + 1;
        uint64_t values[10];
        for (size_t i = 0; i < 10; i++)
            if (parse_u64(buf, end, &pos, &values[i]) < 0)
                return -EINVAL;
        sum.rx_bytes += values[0];
        sum.rx_packets += values[1];
        sum.tx_bytes += values[8];
        sum.tx_packets += values[9];
        line = end + 1;
    }
    *out = sum;
    return 0;
}

int rm__parse_pid_list(const char *buf, size_t len, int (*visit)(pid_t pid, void *user), void *user)
{
    size_t pos = 0;
    for (;;) {
        while (pos < len && (buf[pos] == ' ' || buf[pos] == '\n'))
            pos++;
        if (pos >= len || buf[pos] == '\0')
            return 0;
        uint64_t value;
        if (parse_u64(buf, len, &pos, &value) < 0 || value == 0 || value > INT32_MAX)
            return -EINVAL;
        int rc = visit((pid_t)value, user);
        if (rc != 0)
            return rc;
    }
}

int rm__reset_peak_rss(int dirfd)
{
    int fd = rm__openat(dirfd, "clear_refs", O_WRONLY | O_CLOEXEC); /* EMFILE: the soft limit raised, once */
    if (fd < 0)
        return -errno;
    ssize_t n;
    do {
        n = write(fd, "5", 1);
    } while (n < 0 && errno == EINTR);
    int rc = n == 1 ? 0 : (n < 0 ? -errno : -EIO);
    close(fd);
    return rc;
}

static int parse_peak_rss(const char *buf, ssize_t n, uint64_t *bytes)
{
    if (n < 0)
        return (int)n;
    uint64_t kb;
    int rc = rm__parse_status_kb(buf, (size_t)n, "VmHWM", &kb);
    if (rc < 0)
        return rc;
    *bytes = kb * 1024u;
    return 0;
}

int rm__read_peak_rss(int dirfd, uint64_t *bytes)
{
    char buf[4096]; /* status is ~1.5 KiB; VmHWM sits in its first third */
    return parse_peak_rss(buf, rm__read_kernel_file_at(dirfd, "status", buf, sizeof buf), bytes);
}

int rm__pread_peak_rss(int fd, uint64_t *bytes)
{
    char buf[4096];
    return parse_peak_rss(buf, rm__pread_file(fd, buf, sizeof buf), bytes);
}

int rm__started_after(uint64_t starttime_ticks, long ticks_per_sec, uint64_t boottime_ns)
{
    if (ticks_per_sec <= 0)
        return 1;
    uint64_t tick_ns = 1000000000u / (uint64_t)ticks_per_sec;
    uint64_t started_ns = starttime_ticks * tick_ns;
    return started_ns + tick_ns >= boottime_ns;
}

int rm__check_proc_namespace(int proc_fd, int self_required)
{
    char target[32];
    ssize_t n = readlinkat(proc_fd, "self", target, sizeof target - 1);
    if (n < 0)
        return self_required && errno == ENOENT ? -EXDEV : 0; /* ENOENT: we are not in its namespace */
    target[n] = '\0';
    char *end;
    long pid = strtol(target, &end, 10);
    return *end == '\0' && pid == (long)getpid() ? 0 : -EXDEV;
}

const char *rm__proc_root(void)
{
    const char *root = secure_getenv("RESMON_PROC_ROOT");
    return root && *root ? root : "/proc";
}
