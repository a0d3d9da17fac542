//! The caps of an output contract: how many candidates and dismissed concerns one final
//! answer may hold, lowered until the contract's token bound fits the stage's output
//! budget.

/// Rule (structured outputs): the contract's caps are the first pair, in this order, that
/// fits: for each candidate cap from `max_candidates` down to 1, the dismissed-concern cap
/// from `max_dismissed` down to 1; then, with dismissed concerns left out (cap 0), each
/// candidate cap from the most down to 1. `None` when no pair fits.
///
/// `fits` must be monotone (whenever a pair fits, every pair with caps no larger fits
/// too), which a contract's token bound is: a smaller cap never allows a longer answer.
/// That lets the pair be found with a logarithmic number of probes instead of one probe
/// per pair; each probe asks a plugin for a whole contract.
///
/// # Errors
/// The first error `fits` returns.
pub fn fit_caps<E>(
    max_candidates: u64,
    max_dismissed: u64,
    mut fits: impl FnMut(u64, u64) -> Result<bool, E>,
) -> Result<Option<(u64, u64)>, E> {
    if max_candidates == 0 {
        return Ok(None);
    }
    if max_dismissed > 0 && fits(max_candidates, max_dismissed)? {
        return Ok(Some((max_candidates, max_dismissed)));
    }
    if max_dismissed > 0
        && let Some(cap) = largest(max_candidates, |c| fits(c, 1))?
    {
        let dismissed = largest(max_dismissed, |d| fits(cap, d))?.unwrap_or(1);
        return Ok(Some((cap, dismissed)));
    }
    Ok(largest(max_candidates, |c| fits(c, 0))?.map(|cap| (cap, 0)))
}

/// The largest `n` in `1..=max` for which the monotone `fits` holds (`None` when it holds
/// for none), by binary search.
fn largest<E>(max: u64, mut fits: impl FnMut(u64) -> Result<bool, E>) -> Result<Option<u64>, E> {
    // Invariant: every n <= lo fits (lo = 0 means none known), every n > hi does not.
    let (mut lo, mut hi) = (0u64, max);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid)? {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Ok((lo > 0).then_some(lo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::convert::Infallible;

    /// The rule as written: one probe per pair, in order.
    fn linear(max_c: u64, max_d: u64, fits: impl Fn(u64, u64) -> bool) -> Option<(u64, u64)> {
        let with = (1..=max_c)
            .rev()
            .flat_map(|c| (1..=max_d).rev().map(move |d| (c, d)));
        let without = (1..=max_c).rev().map(|c| (c, 0));
        with.chain(without).find(|&(c, d)| fits(c, d))
    }

    fn fit(max_c: u64, max_d: u64, fits: impl Fn(u64, u64) -> bool) -> (Option<(u64, u64)>, u32) {
        let mut probes = 0;
        let got = fit_caps::<Infallible>(max_c, max_d, |c, d| {
            probes += 1;
            Ok(fits(c, d))
        })
        .unwrap();
        (got, probes)
    }

    #[test]
    fn the_first_fitting_pair_in_the_rules_order() {
        // (bound per candidate, per dismissed concern, fixed part, budget) → caps
        type Case = (u64, u64, u64, u64, Option<(u64, u64)>);
        let cases: [Case; 7] = [
            (100, 10, 50, 10_000, Some((6, 3))),
            (1_000, 100, 500, 4_000, Some((3, 3))),
            (1_000, 400, 500, 2_300, Some((1, 2))),
            (1_000, 900, 500, 2_400, Some((1, 1))),
            (1_000, 2_000, 500, 2_400, Some((1, 0))),
            (1_000, 2_000, 500, 3_400, Some((2, 0))),
            (1_000, 10, 5_000, 4_000, None),
        ];
        for (per_c, per_d, fixed, budget, want) in cases {
            let fits = |c: u64, d: u64| fixed + per_c * c + per_d * d <= budget;
            assert_eq!(fit(6, 3, fits).0, want, "{per_c} {per_d} {fixed} {budget}");
            assert_eq!(linear(6, 3, fits), want);
        }
    }

    #[test]
    fn a_contract_that_fits_at_once_costs_one_probe() {
        assert_eq!(fit(6, 3, |_, _| true), (Some((6, 3)), 1));
    }

    #[test]
    fn a_fitting_error_is_returned() {
        let got = fit_caps(6, 3, |c, _| if c > 2 { Err("plugin") } else { Ok(true) });
        assert_eq!(got, Err("plugin"));
    }

    proptest! {
        /// For every monotone fit (a staircase: per dismissed cap, the largest candidate
        /// cap that fits, never larger for more dismissed concerns), the search answers as
        /// the one-probe-per-pair rule does, with fewer probes.
        #[test]
        fn binary_search_matches_the_rule(
            max_c in 0u64..12,
            max_d in 0u64..5,
            steps in proptest::collection::vec(0u64..14, 5),
        ) {
            // stair[d] = the most candidates that fit with d dismissed concerns.
            let mut stair = steps.clone();
            stair.sort_unstable_by(|a, b| b.cmp(a));
            let fits = |c: u64, d: u64| c <= stair[d as usize];
            let (got, probes) = fit(max_c, max_d, fits);
            prop_assert_eq!(got, linear(max_c, max_d, fits));
            // One probe, then at most two searches over candidate caps and one over
            // dismissed caps, each of at most bits(max) + 1 probes.
            let bits = |n: u64| 64 - n.leading_zeros() + 1;
            prop_assert!(probes <= 1 + 2 * bits(max_c) + bits(max_d));
        }
    }
}
