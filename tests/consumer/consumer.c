/* Builds against the installed resmon and checks one window end to end. */
#include <resmon.h>
#include <stdio.h>
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
    char json[1024];
    resmon_summary_to_json(&s, json, sizeof json);
    resmon_summary back;
    int ok = s.num_samples == 2 && resmon_summary_from_json(json, strlen(json), &back, sizeof back, NULL, 0) == 0 &&
             back.num_samples == 2 && resmon_version() == RESMON_VERSION_NUMBER;
    printf("%s %s\n", ok ? "ok" : "FAILED", json);
    resmon_monitor_free(m);
    return ok ? 0 : 1;
}
