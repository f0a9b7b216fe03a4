/*
 * rank_test.h -- the Mann-Whitney U test (Wilcoxon rank-sum), two-sided, as
 * `resmon compare` uses it to tell a change from noise between two sets of
 * runs.  Pure arithmetic on the caller's arrays: no I/O, no global state.
 */
#ifndef RESMON_RANK_TEST_H
#define RESMON_RANK_TEST_H

#include <stddef.h>

/* The exact distribution of U is used when each side has at most this many
 * runs -- with tied values, the permutation distribution given the ties,
 * while counting it takes at most RANK_TEST_TIED_WORK_MAX steps (half a
 * millisecond a key at most: 2 runs against 50, 5 against 30 or 12 against
 * 12 stay exact, whatever ties); otherwise the normal approximation with
 * the tie correction and a continuity correction of 0.5 (as scipy.stats.
 * mannwhitneyu's "asymptotic" method), which is close where both sides are
 * that large.  Exact with ties matters where the sides are uneven: 2 runs
 * against 20 with one tie never reach p 0.01 by the approximation. */
#define RANK_TEST_EXACT_MAX 50
#define RANK_TEST_TIED_WORK_MAX 3e5

typedef struct rank_test_result {
    double u;  /* U of the first sample: its rank sum minus na(na+1)/2 */
    double p;  /* two-sided p-value, in [0, 1] */
    double p_below; /* one-sided: P(U <= u), small when the first sample runs low */
    double p_above; /* one-sided: P(U >= u), small when it runs high */
    /* The least p_below and p_above any data with these runs and ties could
     * give (the first sample wholly below, wholly above): over alpha, no
     * data could be significant that way -- the runs are too few for it,
     * or the ties too many (2 runs against 20, one tied: 2/231). */
    double p_below_min, p_above_min;
    int exact; /* 1: from the exact distribution; 0: the normal approximation */
} rank_test_result;

/* Tests whether a[0..na) and b[0..nb) come from one distribution.  The
 * arrays are not changed.  Returns 0, -EINVAL when a side is empty or a
 * value is NaN, -ENOMEM. */
int rank_test(const double *a, size_t na, const double *b, size_t nb, rank_test_result *out);

/* The smallest two-sided p-value any data can give with na and nb runs
 * (every run of one side below every run of the other, no ties):
 * 2 / C(na + nb, na), at most 1.  Below alpha the exact test can find a
 * change; where the approximation decides (ties past the exact count's
 * bound, a side over RANK_TEST_EXACT_MAX), rank_test_asymptotic_min_p must
 * be below it too. */
double rank_test_min_p(size_t na, size_t nb);

/* The smallest p the normal approximation gives with na and nb runs (the
 * sides apart, no ties): 1 run against 51 never gets under 0.096. */
double rank_test_asymptotic_min_p(size_t na, size_t nb);

/* The fewest runs a side (the same on both) for which rank_test_min_p is at
 * most alpha; 0 when none up to 1000 is (alpha <= 0). */
size_t rank_test_runs_needed(double alpha);

#endif
