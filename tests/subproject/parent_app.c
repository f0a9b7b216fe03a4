/* Says whether the parent's own asserts are compiled in (they vanish when a
 * subproject forces a build type with -DNDEBUG) and uses resmon once. */
#include <assert.h>
#include <resmon.h>
#include <stdio.h>

int main(void)
{
    resmon_monitor *m = NULL;
    int ok = resmon_monitor_new(&m, NULL) == 0 && resmon_monitor_start(m) == 0 && resmon_monitor_stop(m) == 0;
    resmon_monitor_free(m);
#ifdef NDEBUG
    puts("asserts off");
#else
    puts("asserts on");
#endif
    return ok ? 0 : 1;
}
