/* Builds against the installed resmon and checks one window end to end. */
#include <resmon.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    resmon_monitor *m = resmon_monitor_new(NULL);
    if (!m || resmon_monitor_start(m) != 0 || resmon_monitor_stop(m) != 0)
        return 1;
    resmon_summary s = resmon_monitor_summary(m);
    char json[512];
    resmon_summary_to_json(&s, json, sizeof json);
    resmon_summary back;
    int ok = s.num_samples == 2 && resmon_summary_from_json(json, strlen(json), &back, NULL, 0) == 0 &&
             back.num_samples == 2 && resmon_version() == RESMON_VERSION_NUMBER;
    printf("%s %s\n", ok ? "ok" : "FAILED", json);
    resmon_monitor_free(m);
    return ok ? 0 : 1;
}
