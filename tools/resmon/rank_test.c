/*
 * rank_test.c -- the two-sided Mann-Whitney U test (see rank_test.h).
 *
 * Exact: the number of orderings of na + nb untied values giving each U is
 * the coefficient list of the Gaussian binomial [na+nb choose na]_q, built as
 * prod_{i=1..na} (1 - q^(nb+i)) / (1 - q^i): a multiplication and a division
 * by a polynomial per factor, each one pass over na*nb + 1 coefficients.
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

/* P(U <= u) * 2, from the exact distribution of U with na, nb untied values;
 * NAN when out of memory. */
static double exact_two_sided(size_t na, size_t nb, double u)
{
    size_t top = na * nb;
    double *c = calloc(top + 1, sizeof *c);
    if (!c)
        return NAN;
    c[0] = 1;
    for (size_t i = 1; i <= na; i++) {
        for (size_t k = top; k >= nb + i && k <= top; k--) /* times (1 - q^(nb+i)) */
            c[k] -= c[k - nb - i];
        for (size_t k = i; k <= top; k++) /* divided by (1 - q^i) */
            c[k] += c[k - i];
    }
    double total = 0, below = 0, lower = fmin(u, (double)top - u);
    for (size_t k = 0; k <= top; k++) {
        total += c[k];
        if ((double)k <= lower + 1e-9)
            below += c[k];
    }
    free(c);
    return fmin(1.0, 2 * below / total);
}

int rank_test(const double *a, size_t na, const double *b, size_t nb, rank_test_result *out)
{
    if (na == 0 || nb == 0)
        return -EINVAL;
    size_t n = na + nb;
    ranked *all = malloc(n * sizeof *all);
    if (!all)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        all[i].value = i < na ? a[i] : b[i - na];
        all[i].first = i < na;
        if (isnan(all[i].value)) {
            free(all);
            return -EINVAL;
        }
    }
    qsort(all, n, sizeof *all, compare_ranked);
    double rank_sum = 0, tie_term = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && all[j].value == all[i].value)
            j++;
        double t = (double)(j - i), mid = (double)(i + 1 + j) / 2; /* ranks i+1..j share their mean */
        for (size_t k = i; k < j; k++)
            rank_sum += all[k].first ? mid : 0;
        tie_term += t * t * t - t;
        i = j;
    }
    free(all);
    double m = (double)na, k = (double)nb, total = (double)n;
    out->u = rank_sum - m * (m + 1) / 2;
    out->exact = tie_term == 0 && na <= RANK_TEST_EXACT_MAX && nb <= RANK_TEST_EXACT_MAX;
    if (out->exact) {
        out->p = exact_two_sided(na, nb, out->u);
        if (isnan(out->p))
            return -ENOMEM;
        return 0;
    }
    double variance = m * k / 12 * ((total + 1) - tie_term / (total * (total - 1)));
    if (!(variance > 0)) { /* every value tied: nothing tells the sides apart */
        out->p = 1;
        return 0;
    }
    double z = (fabs(out->u - m * k / 2) - 0.5) / sqrt(variance);
    out->p = z <= 0 ? 1 : fmin(1.0, erfc(z / sqrt(2.0)));
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
