/*
 * test_gpu_cuda_visible.c -- CUDA_VISIBLE_DEVICES as the CUDA runtime reads
 * it, on a table of devices instead of NVML: the CUDA programming guide's
 * examples ("0,2,-1,1" is devices 0 and 2), UUIDs and unique prefixes, both
 * MIG forms, strtoul's reading of an index ("1gpu2" is 1; "0-2" is 0, no
 * range), a device named twice (CUDA then sees none), and a query that fails.
 */
#include "gpu_cuda_visible.h"
#include "test_util.h"

/* The node: three GPUs in CUDA's order, and one MIG instance (2/0) of GPU 0. */
static const char *const gpus[] = {
    "GPU-aaaa1111-d72c-4106-c12f-20bd9faed9f6",
    "GPU-aaaa2222-d72c-4106-c12f-20bd9faed9f6",
    "GPU-bbbb3333-d72c-4106-c12f-20bd9faed9f6",
};
#define GPU_COUNT 3
static const char mig[] = "MIG-11b2c3d4-0000-4000-8000-000000000001";

typedef struct node {
    int queries;         /* how many entries were asked about */
    int index_error;     /* nonzero: indices fail with this (CUDA's order unknown) */
} node;

/* The GPU a UUID or unique prefix names; -1 when none or several. */
static int gpu_by_uuid(const char *uuid)
{
    int found = -1, matches = 0;
    for (int i = 0; i < GPU_COUNT; i++)
        if (strncmp(gpus[i], uuid, strlen(uuid)) == 0)
            found = i, matches++;
    return matches == 1 ? found : -1;
}

static int resolve(void *ctx, const rm__cuda_entry *entry, char uuid[RM__CUDA_UUID_MAX])
{
    node *n = ctx;
    n->queries++;
    const char *found = NULL;
    int g;
    switch (entry->kind) {
    case RM__CUDA_INDEX:
        if (n->index_error)
            return n->index_error;
        found = entry->index < GPU_COUNT ? gpus[entry->index] : NULL;
        break;
    case RM__CUDA_UUID:
        if (strcmp(entry->uuid, mig) == 0)
            found = mig;
        else if ((g = gpu_by_uuid(entry->uuid)) >= 0)
            found = gpus[g];
        break;
    case RM__CUDA_MIG_INSTANCE:
        if (gpu_by_uuid(entry->uuid) == 0 && entry->gpu_instance == 2 && entry->compute_instance == 0)
            found = mig;
        break;
    }
    if (!found)
        return -ENOENT;
    snprintf(uuid, RM__CUDA_UUID_MAX, "%s", found);
    return 0;
}

/* The devices CUDA sees for value, as a string of their positions ("0,2";
 * "m" for the MIG instance; "" for none). */
static const char *seen(const char *value, node *n, size_t cap)
{
    static char out[64];
    char uuids[8][RM__CUDA_UUID_MAX];
    size_t count = 99;
    rm__cuda_query query = {.ctx = n, .resolve = resolve};
    assert_int_equal(rm__cuda_visible_devices(value, &query, uuids, cap, &count), 0);
    out[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        char one[4] = "m";
        for (int g = 0; g < GPU_COUNT; g++)
            if (strcmp(uuids[i], gpus[g]) == 0)
                snprintf(one, sizeof one, "%d", g);
        if (strcmp(one, "m") == 0)
            assert_string_equal(uuids[i], mig);
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? "," : "", one);
    }
    return out;
}

#define ASSERT_SEEN(value, expected)                                                            \
    do {                                                                                        \
        node n_ = {0};                                                                          \
        const char *got_ = seen(value, &n_, 8);                                                 \
        if (strcmp(got_, expected) != 0) {                                                      \
            print_error("CUDA_VISIBLE_DEVICES='%s': saw '%s', expected '%s'\n", value, got_,    \
                        expected);                                                              \
            fail();                                                                             \
        }                                                                                       \
    } while (0)

static void indices_in_the_order_given(void **state)
{
    (void)state;
    ASSERT_SEEN("0", "0");
    ASSERT_SEEN("2,1", "2,1");
    ASSERT_SEEN(" 1 ,\t0\t", "1,0");
    ASSERT_SEEN("+1", "1");
}

/* The programming guide's example: devices before the invalid index only. */
static void the_first_invalid_entry_ends_the_list(void **state)
{
    (void)state;
    ASSERT_SEEN("0,2,-1,1", "0,2");
    ASSERT_SEEN("0,3,1", "0");          /* no device 3 on this node */
    ASSERT_SEEN("0,NoDevFiles,1", "0");
    ASSERT_SEEN("1,,0", "1");           /* an empty entry names nothing */
    ASSERT_SEEN("1,", "1");
    ASSERT_SEEN("0,99999999999,1", "0"); /* beyond any unsigned */
}

/* "", "-1" and "NoDevFiles" are how jobs hide every GPU. */
static void hiding_every_gpu(void **state)
{
    (void)state;
    const char *values[] = {"", "-1", "NoDevFiles", " ", ",0", "-0", "none"};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ASSERT_SEEN(values[i], "");
}

/* CUDA reads an index as strtoul does: its leading digits. */
static void an_index_is_its_leading_digits(void **state)
{
    (void)state;
    ASSERT_SEEN("1gpu2,2ampere", "1,2");
    ASSERT_SEEN("0-2", "0");   /* no ranges: the leading 0 */
    ASSERT_SEEN("0-2,1", "0,1");
    ASSERT_SEEN("2.5", "2");
}

static void uuids_and_unique_prefixes(void **state)
{
    (void)state;
    ASSERT_SEEN("GPU-bbbb3333-d72c-4106-c12f-20bd9faed9f6", "2");
    ASSERT_SEEN("GPU-aaaa2222", "1");
    ASSERT_SEEN("GPU-b,0", "2,0");       /* UUIDs and indices mix */
    ASSERT_SEEN("GPU-aaaa,0", "");       /* an ambiguous prefix names nothing */
    ASSERT_SEEN("GPU-,0", "");
    ASSERT_SEEN("GPU-cccc,0", "");
    ASSERT_SEEN("gpu-aaaa2222", "");     /* the prefix is case-sensitive; not an index either */
}

static void both_mig_forms(void **state)
{
    (void)state;
    ASSERT_SEEN("MIG-11b2c3d4-0000-4000-8000-000000000001", "m");
    ASSERT_SEEN("MIG-GPU-aaaa1111-d72c-4106-c12f-20bd9faed9f6/2/0", "m");
    ASSERT_SEEN("MIG-GPU-aaaa1111-d72c-4106-c12f-20bd9faed9f6/2/0,1", "m,1");
    ASSERT_SEEN("MIG-GPU-aaaa1111-d72c-4106-c12f-20bd9faed9f6/1/0", ""); /* no such instance */
    ASSERT_SEEN("MIG-GPU-aaaa1111-d72c-4106-c12f-20bd9faed9f6/2", "");
    ASSERT_SEEN("MIG-GPU-aaaa1111-d72c-4106-c12f-20bd9faed9f6/2/0x", "");
    ASSERT_SEEN("MIG-GPU-/2/0", "");
    ASSERT_SEEN("MIG-", "");
    ASSERT_SEEN("MIG-22b2c3d4", "");
}

/* A device named twice, by any of its names: CUDA sees no device at all. */
static void a_device_named_twice_hides_every_gpu(void **state)
{
    (void)state;
    ASSERT_SEEN("0,0", "");
    ASSERT_SEEN("2,1,2", "");
    ASSERT_SEEN("1,GPU-aaaa2222", "");
    ASSERT_SEEN("MIG-11b2c3d4-0000-4000-8000-000000000001,MIG-GPU-aaaa1111-d72c-4106-c12f-20bd9faed9f6/2/0", "");
    ASSERT_SEEN("0,1,-1,0", "0,1"); /* after the end of the list, nothing counts */
}

/* Entries past the end, or past the room given, are never asked about. */
static void nothing_is_asked_past_the_end(void **state)
{
    (void)state;
    node n = {0};
    assert_string_equal(seen("0,-1,1,2", &n, 8), "0");
    assert_int_equal(n.queries, 1);
    n.queries = 0;
    assert_string_equal(seen("0,1,2", &n, 2), "0,1");
    assert_int_equal(n.queries, 2);
}

/* A query that cannot answer (CUDA's order unknown) stops with its error. */
static void a_failing_query_is_returned(void **state)
{
    (void)state;
    node n = {.index_error = -EINVAL};
    char uuids[4][RM__CUDA_UUID_MAX];
    size_t count = 99;
    rm__cuda_query query = {.ctx = &n, .resolve = resolve};
    assert_int_equal(rm__cuda_visible_devices("GPU-b,1", &query, uuids, 4, &count), -EINVAL);
    assert_int_equal(count, 0);
    assert_int_equal(rm__cuda_visible_devices("GPU-b,-1,1", &query, uuids, 4, &count), 0); /* never reached */
    assert_int_equal(count, 1);
}

static void entries_parse_apart(void **state)
{
    (void)state;
    rm__cuda_entry e;
    const char *text = " MIG-GPU-aaaa1111/7/3\t";
    assert_int_equal(rm__cuda_parse_entry(text, strlen(text), &e), 0);
    assert_int_equal(e.kind, RM__CUDA_MIG_INSTANCE);
    assert_string_equal(e.uuid, "GPU-aaaa1111");
    assert_int_equal(e.gpu_instance, 7);
    assert_int_equal(e.compute_instance, 3);
    text = "12,0"; /* only the given length is read */
    assert_int_equal(rm__cuda_parse_entry(text, 2, &e), 0);
    assert_int_equal(e.kind, RM__CUDA_INDEX);
    assert_int_equal(e.index, 12);
    assert_int_equal(rm__cuda_parse_entry(text, 1, &e), 0);
    assert_int_equal(e.index, 1);
    text = "GPU-aaaa1111 ";
    assert_int_equal(rm__cuda_parse_entry(text, strlen(text), &e), 0);
    assert_int_equal(e.kind, RM__CUDA_UUID);
    assert_string_equal(e.uuid, "GPU-aaaa1111");
    char long_uuid[200] = "GPU-";
    memset(long_uuid + 4, 'a', 150);
    assert_int_equal(rm__cuda_parse_entry(long_uuid, strlen(long_uuid), &e), -EINVAL);
    assert_int_equal(rm__cuda_parse_entry("4294967295", 10, &e), 0);
    assert_int_equal(e.index, 4294967295u);
    assert_int_equal(rm__cuda_parse_entry("4294967296", 10, &e), -EINVAL);
    assert_int_equal(rm__cuda_parse_entry("", 0, &e), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(indices_in_the_order_given),
        cmocka_unit_test(the_first_invalid_entry_ends_the_list),
        cmocka_unit_test(hiding_every_gpu),
        cmocka_unit_test(an_index_is_its_leading_digits),
        cmocka_unit_test(uuids_and_unique_prefixes),
        cmocka_unit_test(both_mig_forms),
        cmocka_unit_test(a_device_named_twice_hides_every_gpu),
        cmocka_unit_test(nothing_is_asked_past_the_end),
        cmocka_unit_test(a_failing_query_is_returned),
        cmocka_unit_test(entries_parse_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
