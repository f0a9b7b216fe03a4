/* Builds against the installed resmon and checks one window end to end. */
#include <resmon.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    resmon_monitor *m;
    if (resmon_monitor_new(&m, NULL) != 0)
        return 1;
    resmon_summary s;
    if (resmon_monitor_start(m) != 0 || resmon_monitor_stop(m) != 0 ||
        resmon_monitor_get_summary(m, &s, sizeof s) != 0)
        return 1;
    int need = resmon_summary_to_json(&s, NULL, 0); /* snprintf-style: the length it needs */
    char *json = need >= 0 ? malloc((size_t)need + 1) : NULL;
    if (!json || resmon_summary_to_json(&s, json, (size_t)need + 1) != need)
        return 1;
    resmon_summary back;
    int ok = s.num_samples == 2 && resmon_summary_from_json(json, strlen(json), &back, sizeof back, NULL, 0) == 0 &&
             back.num_samples == 2 && resmon_version() == RESMON_VERSION_NUMBER;
    printf("%s %s\n", ok ? "ok" : "FAILED", json);
    free(json);
    resmon_monitor_free(m);
    return ok ? 0 : 1;
}
