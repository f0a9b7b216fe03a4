/*
 * rank_test.c -- the two-sided Mann-Whitney U test (see rank_test.h).
 *
 * Exact, untied: the number of orderings of na + nb untied values giving
 * each U is the coefficient list of the Gaussian binomial [na+nb choose
 * na]_q, built as prod_{i=1..na} (1 - q^(nb+i)) / (1 - q^i): a
 * multiplication and a division by a polynomial per factor, each one pass
 * over na*nb + 1 coefficients.
 * Exact, tied: the permutation distribution of U given the tie groups
 * (exact_tied), counted group by group.
 * Approximate: z = (|U - na nb / 2| - 0.5) / sigma, sigma^2 = na nb / 12 x
 * ((n + 1) - sum(t^3 - t) / (n (n - 1))) over the tie groups t; p = erfc(z /
 * sqrt 2), as scipy.stats.mannwhitneyu(method="asymptotic").
 */
#include "rank_test.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ranked {
    double value;
    int first; /* 1: from a */
} ranked;

static int compare_ranked(const void *x, const void *y)
{
    double a = ((const ranked *)x)->value, b = ((const ranked *)y)->value;
    return (a > b) - (a < b);
}

/* The one-sided tails of an exact distribution: counts[i] ways to a value
 * of i (U, or 2U with ties), at its value; and the least tail any data
 * with these ties could give, the mass of the smallest and of the largest
 * value the distribution holds. */
typedef struct tails {
    double below, above;   /* P(X <= at), P(X >= at) */
    double lowest, highest; /* P(X = its least value), P(X = its greatest) */
} tails;

static void tails_of(const double *counts, size_t n, double at, tails *t)
{
    double total = 0, low = 0, high = 0, first = 0, last = 0;
    for (size_t i = 0; i < n; i++) {
        total += counts[i];
        if ((double)i <= at + 1e-9)
            low += counts[i];
        if ((double)i >= at - 1e-9)
            high += counts[i];
        if (counts[i] > 0) {
            first = first > 0 ? first : counts[i];
            last = counts[i];
        }
    }
    t->below = fmin(1.0, low / total);
    t->above = fmin(1.0, high / total);
    t->lowest = fmin(1.0, first / total);
    t->highest = fmin(1.0, last / total);
}

/* The tails of U from its exact distribution with na, nb untied values;
 * -ENOMEM. */
static int exact_untied(size_t na, size_t nb, double u, tails *t)
{
    size_t top = na * nb;
    double *c = calloc(top + 1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c[0] = 1;
    for (size_t i = 1; i <= na; i++) {
        for (size_t k = top; k >= nb + i && k <= top; k--) /* times (1 - q^(nb+i)) */
            c[k] -= c[k - nb - i];
        for (size_t k = i; k <= top; k++) /* divided by (1 - q^i) */
            c[k] += c[k - i];
    }
    tails_of(c, top + 1, u, t);
    t->highest = t->lowest; /* symmetric: the top's count is 1 as the bottom's, where large ones round */
    free(c);
    return 0;
}

/* The work exact_tied does: per tie group of t values, t + 1 passes over
 * its table of (small + 1) x (2 small large + 1) counts. */
static double tied_work(size_t n, size_t groups, size_t small, size_t large)
{
    return (double)(n + groups) * (double)(small + 1) * (double)(2 * small * large + 1);
}

/* The tails of U with tied values: the permutation distribution of
 * U given the tie groups (the sizes in group[], in the order of their
 * values), which is what the test means when runs tie.  Counted over the
 * groups in order: ways[j][s] is the number of ways the groups so far hold
 * j runs of the first sample (na of them) with 2U = s -- mid-ranks make U a
 * multiple of 1/2.  A group of t tied values, k of them the first sample's,
 * above `before` runs of the second sample, adds 2 k before + k (t - k) to
 * 2U in C(t, k) ways.  -ENOMEM. */
static int exact_tied(const size_t *group, size_t groups, size_t na, size_t nb, double u, tails *out)
{
    size_t width = 2 * na * nb + 1, cells = (na + 1) * width;
    double *ways = calloc(cells, sizeof *ways), *next = calloc(cells, sizeof *next);
    if (!ways || !next) {
        free(ways);
        free(next);
        return -ENOMEM;
    }
    ways[0] = 1;
    size_t placed = 0;
    for (size_t g = 0; g < groups; g++) {
        size_t t = group[g];
        memset(next, 0, cells * sizeof *next);
        for (size_t j = 0; j <= na && j <= placed; j++) {
            size_t before = placed - j;
            if (before > nb)
                continue; /* more second-sample runs than there are */
            const double *from = ways + j * width;
            size_t reach = 2 * j * before; /* 2U is at most every pair apart */
            double choose = 1;             /* C(t, k) */
            for (size_t k = 0; k <= t && j + k <= na; k++) {
                if (k > 0)
                    choose = choose * (double)(t - k + 1) / (double)k;
                if (t - k > nb - before)
                    continue;
                double *to = next + (j + k) * width + 2 * k * before + k * (t - k);
                for (size_t s = 0; s <= reach; s++)
                    if (from[s] != 0)
                        to[s] += from[s] * choose;
            }
        }
        double *swap = ways;
        ways = next;
        next = swap;
        placed += t;
    }
    tails_of(ways + na * width, width, 2 * u, out);
    free(ways);
    free(next);
    return 0;
}

int rank_test(const double *a, size_t na, const double *b, size_t nb, rank_test_result *out)
{
    if (na == 0 || nb == 0)
        return -EINVAL;
    size_t n = na + nb;
    ranked *all = malloc(n * sizeof *all);
    size_t *group = malloc(n * sizeof *group);
    if (!all || !group) {
        free(all);
        free(group);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        all[i].value = i < na ? a[i] : b[i - na];
        all[i].first = i < na;
        if (isnan(all[i].value)) {
            free(all);
            free(group);
            return -EINVAL;
        }
    }
    qsort(all, n, sizeof *all, compare_ranked);
    double rank_sum = 0, tie_term = 0;
    size_t groups = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && all[j].value == all[i].value)
            j++;
        double t = (double)(j - i), mid = (double)(i + 1 + j) / 2; /* ranks i+1..j share their mean */
        for (size_t k = i; k < j; k++)
            rank_sum += all[k].first ? mid : 0;
        tie_term += t * t * t - t;
        group[groups++] = j - i;
        i = j;
    }
    free(all);
    double m = (double)na, k = (double)nb, total = (double)n;
    out->u = rank_sum - m * (m + 1) / 2;
    size_t small = na < nb ? na : nb, large = na < nb ? nb : na;
    int fits = na <= RANK_TEST_EXACT_MAX && nb <= RANK_TEST_EXACT_MAX;
    out->exact = fits && (tie_term == 0 || tied_work(n, groups, small, large) <= RANK_TEST_TIED_WORK_MAX);
    if (out->exact) {
        int rc;
        tails t;
        if (tie_term == 0) {
            rc = exact_untied(na, nb, out->u, &t);
        } else if (na <= nb) {
            rc = exact_tied(group, groups, na, nb, out->u, &t);
        } else { /* count the smaller side: U of b is na nb - U of a, its tails the other way round */
            rc = exact_tied(group, groups, nb, na, m * k - out->u, &t);
            t = (tails){.below = t.above, .above = t.below, .lowest = t.highest, .highest = t.lowest};
        }
        free(group);
        if (rc < 0)
            return rc;
        out->p_below = t.below;
        out->p_above = t.above;
        out->p_below_min = t.lowest;
        out->p_above_min = t.highest;
        out->p = fmin(1.0, 2 * fmin(out->p_below, out->p_above));
        return 0;
    }
    free(group);
    /* The approximation's least one-sided p, whatever the data: the sides
     * apart without ties (ties only make it larger). */
    out->p_below_min = out->p_above_min = rank_test_asymptotic_min_p(na, nb) / 2;
    double variance = m * k / 12 * ((total + 1) - tie_term / (total * (total - 1)));
    if (!(variance > 0)) { /* every value tied: nothing tells the sides apart */
        out->p = out->p_below = out->p_above = out->p_below_min = out->p_above_min = 1;
        return 0;
    }
    double z = (fabs(out->u - m * k / 2) - 0.5) / sqrt(variance);
    out->p = z <= 0 ? 1 : fmin(1.0, erfc(z / sqrt(2.0)));
    /* one-sided: half the two-sided p on the side U lies, the rest on the other */
    int low = out->u < m * k / 2;
    out->p_below = low ? out->p / 2 : 1 - out->p / 2;
    out->p_above = out->u > m * k / 2 ? out->p / 2 : 1 - out->p / 2;
    return 0;
}

double rank_test_asymptotic_min_p(size_t na, size_t nb)
{
    /* The sides apart (U = 0), no tie: the largest z the approximation gives. */
    double m = (double)na, k = (double)nb;
    double z = (m * k / 2 - 0.5) / sqrt(m * k * (m + k + 1) / 12);
    return z <= 0 ? 1 : fmin(1.0, erfc(z / sqrt(2.0)));
}

double rank_test_min_p(size_t na, size_t nb)
{
    /* 2 / C(na + nb, na), the binomial built as a product of ratios so it
     * never overflows before it passes 2 (then the answer is below 1e-300
     * long before any double runs out). */
    double ways = 1;
    size_t small = na < nb ? na : nb, n = na + nb;
    for (size_t i = 1; i <= small && ways < 1e300; i++)
        ways = ways * (double)(n - small + i) / (double)i;
    return fmin(1.0, 2 / ways);
}

size_t rank_test_runs_needed(double alpha)
{
    for (size_t n = 1; n <= 1000; n++)
        if (rank_test_min_p(n, n) <= alpha)
            return n;
    return 0;
}
