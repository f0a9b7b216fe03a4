/*
 * gpu_error_fits.c -- the README sizes resmon_gpu_open's error buffer with
 * RESMON_ERR_MAX: the longest message resmon writes there ("auto" finding no
 * GPU, one reason per backend) must fit whole.  It is compared with the same
 * call into a buffer four times larger.  Run with RESMON_SYSFS_ROOT at an
 * empty directory, so only NVML can find a GPU; exits 77 (skipped) if it does.
 */
#include <resmon.h>

#include <stdio.h>
#include <string.h>

static int open_auto(char *err, size_t cap)
{
    resmon_gpu *gpu = NULL;
    int rc = resmon_gpu_open(&gpu, "auto", err, cap);
    resmon_gpu_close(gpu);
    return rc;
}

int main(void)
{
    char err[RESMON_ERR_MAX];
    char roomy[4 * RESMON_ERR_MAX];
    int rc = open_auto(err, sizeof err);
    if (rc == 0) {
        puts("a GPU was found: no error message to measure");
        return 77;
    }
    if (open_auto(roomy, sizeof roomy) != rc || strcmp(err, roomy) != 0) {
        fprintf(stderr, "gpu_error_fits: RESMON_ERR_MAX (%d) cuts the message of %zu bytes: %s\n",
                RESMON_ERR_MAX, strlen(roomy), roomy);
        return 1;
    }
    printf("gpu_error_fits: %zu of %d bytes: %s\n", strlen(err), RESMON_ERR_MAX, err);
    return 0;
}
