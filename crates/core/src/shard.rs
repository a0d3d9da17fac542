//! Sharding: how a lane whose files do not fit one stage execution is split into shards,
//! each a normal execution with its own slice of the canonical list.
//!
//! Sizes are token estimates the host computes ([`estimate_tokens`]); this module only
//! decides the grouping.

use std::ops::Range;

use vouch_abi::ReceiptBound;

/// Bytes counted as one token when the host estimates a prompt's size. Three is below
/// the average of common tokenizers on source code and prose (about 3.5 to 4), so an
/// estimate errs on the large side.
pub const BYTES_PER_TOKEN: u64 = 3;

/// The token estimate of `bytes` bytes of prompt text ([`BYTES_PER_TOKEN`], rounded up).
pub fn estimate_tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(BYTES_PER_TOKEN)
}

/// What one assigned file costs a shard, as the host estimated it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCost {
    /// Canonical path.
    pub path: String,
    /// Input tokens the file adds to any shard that holds any part of it (its change
    /// summary line and its entries in the expected list and the retry's lists).
    pub fixed: u64,
    /// Input tokens of its whole inline patch.
    pub whole: u64,
    /// Input tokens of each piece (hunk, in order) when the file is split; empty when it
    /// cannot be split (then it is one unit however large).
    pub pieces: Vec<u64>,
}

/// The limits of one shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardBudget {
    /// Most input tokens of change-specific content (patches, file lines, list entries).
    pub max_tokens: u64,
    /// Most output tokens the coverage receipt may take (see [`receipt_tokens`]).
    pub max_receipt_tokens: u64,
    /// Most shards per lane (at least 1).
    pub max_shards: usize,
}

/// Which part of a file a shard holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilePart {
    /// The whole file (its whole patch).
    Whole,
    /// Pieces `range` of [`FileCost::pieces`] (a file split by hunks across shards).
    Pieces(Range<usize>),
}

/// One file (or part of one) in a shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardEntry {
    /// Canonical path.
    pub path: String,
    /// The part of it this shard holds.
    pub part: FilePart,
}

/// One shard: entries in canonical order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// Its files or file parts.
    pub entries: Vec<ShardEntry>,
    /// Estimated input tokens of its change-specific content.
    pub tokens: u64,
    /// True when it holds a single unit larger than the budget (one file that cannot be
    /// split, or one piece of a split file): the host cannot give it inline whole.
    pub over_budget: bool,
}

impl Shard {
    /// Its distinct paths, in order (a shard's expected list).
    pub fn paths(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for e in &self.entries {
            if out.last() != Some(&e.path) {
                out.push(e.path.clone());
            }
        }
        out
    }
}

/// The shards of one lane and the files left out by `max_shards`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShardPlan {
    /// Shards in order.
    pub shards: Vec<Shard>,
    /// Files that did not fit within `max_shards` shards, in canonical order.
    pub left_out: Vec<String>,
}

/// The output-token bound of a receipt listing `paths` under the contract's per-shard
/// item bound (every item at the longest path's length plus quotes and a comma, as
/// `token_bound` counts one token per character).
pub fn receipt_tokens<'a>(paths: impl IntoIterator<Item = &'a str>) -> u64 {
    let (n, longest) = paths.into_iter().fold((0u64, 0u64), |(n, l), p| {
        (n + 1, l.max(p.chars().count() as u64))
    });
    bound_tokens(n, longest)
}

/// A receipt's output-token bound: `n` items of `longest` characters, quoted and
/// separated, in brackets.
fn bound_tokens(n: u64, longest: u64) -> u64 {
    2 + n * (longest + 3)
}

/// Rule (stable prefix, issue 28 item 6): the receipt bound every shard of a lane asks
/// its contract with, so the shards get one contract and share a cacheable prefix: the
/// most paths any shard holds and the lane's longest path. `None` (each shard keeps its
/// own bound) for a lane of one shard, or when that common bound's receipt would not fit
/// `max_receipt_tokens` (the bound [`plan_shards`] closed each shard by).
pub fn lane_receipt_bound(shards: &[Vec<String>], max_receipt_tokens: u64) -> Option<ReceiptBound> {
    if shards.len() < 2 {
        return None;
    }
    let bound = shards
        .iter()
        .map(|paths| ReceiptBound::of(paths))
        .fold(ReceiptBound::default(), ReceiptBound::max);
    (bound_tokens(bound.files, bound.longest_path_chars) <= max_receipt_tokens).then_some(bound)
}

struct Unit {
    path: String,
    part: FilePart,
    cost: u64,
    over: bool,
}

/// The directory of a path (`""` at the root).
fn dir(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

/// A file as units: whole when it fits, else consecutive pieces grouped within the
/// budget (a piece larger than the budget alone).
fn units(file: &FileCost, cap: u64) -> Vec<Unit> {
    let unit = |part, cost, over| Unit {
        path: file.path.clone(),
        part,
        cost,
        over,
    };
    let whole = file.fixed + file.whole;
    if whole <= cap || file.pieces.is_empty() {
        return vec![unit(FilePart::Whole, whole, whole > cap)];
    }
    let mut out = Vec::new();
    let mut start = 0;
    let mut cost = file.fixed;
    for (i, &piece) in file.pieces.iter().enumerate() {
        if i > start && cost + piece > cap {
            out.push(unit(FilePart::Pieces(start..i), cost, cost > cap));
            start = i;
            cost = file.fixed;
        }
        cost += piece;
    }
    out.push(unit(
        FilePart::Pieces(start..file.pieces.len()),
        cost,
        cost > cap,
    ));
    out
}

/// Rule (issue 10, "Sharding"): a lane's assigned files, in canonical order, are cut
/// into contiguous shards whose change-specific content fits `max_tokens` and whose
/// receipt fits `max_receipt_tokens`. Files of one directory stay together: when a new
/// directory's files would not fit the open shard but fit an empty one, and the open
/// shard is at least half full, the shard closes early. A file larger than the budget
/// is split by its pieces (hunks) across consecutive shards; only a single unit that
/// cannot be split further may exceed the budget, alone in its shard. Every file is in
/// exactly one shard (a split file in consecutive ones) unless more than `max_shards`
/// shards would be needed: then the files of the shards past the limit (and any part
/// of them in earlier shards) are left out and named, never dropped silently.
pub fn plan_shards(files: &[FileCost], budget: ShardBudget) -> ShardPlan {
    let cap = budget.max_tokens.max(1);
    let units: Vec<Unit> = files.iter().flat_map(|f| units(f, cap)).collect();
    let mut shards: Vec<Shard> = Vec::new();
    let mut open: Option<Shard> = None;
    for (i, u) in units.iter().enumerate() {
        if let Some(shard) = open.take() {
            let receipt = receipt_tokens(
                shard
                    .entries
                    .iter()
                    .map(|e| e.path.as_str())
                    .chain([u.path.as_str()]),
            );
            let full = shard.tokens + u.cost > cap || receipt > budget.max_receipt_tokens;
            if full || shard.over_budget || u.over || directory_break(&units, i, &shard, cap) {
                shards.push(shard);
            } else {
                open = Some(shard);
            }
        }
        let shard = open.get_or_insert_with(|| Shard {
            entries: vec![],
            tokens: 0,
            over_budget: false,
        });
        shard.entries.push(ShardEntry {
            path: u.path.clone(),
            part: u.part.clone(),
        });
        shard.tokens += u.cost;
        shard.over_budget |= u.over;
    }
    shards.extend(open);
    limit(shards, budget.max_shards.max(1))
}

/// True when unit `i` starts a new directory whose units fit an empty shard but not the
/// open one, and the open shard is at least half full.
fn directory_break(units: &[Unit], i: usize, open: &Shard, cap: u64) -> bool {
    let d = dir(&units[i].path);
    let prev = open.entries.last().map(|e| dir(&e.path));
    if prev == Some(d) || open.tokens * 2 < cap {
        return false;
    }
    let group: u64 = units[i..]
        .iter()
        .take_while(|u| dir(&u.path) == d)
        .map(|u| u.cost)
        .sum();
    group <= cap && open.tokens + group > cap
}

/// Keeps the first `max` shards; every file with a part past them is left out (and
/// removed from the kept shards), empty shards dropped.
fn limit(shards: Vec<Shard>, max: usize) -> ShardPlan {
    if shards.len() <= max {
        return ShardPlan {
            shards,
            left_out: vec![],
        };
    }
    let mut left_out: Vec<String> = Vec::new();
    for s in &shards[max..] {
        for p in s.paths() {
            if !left_out.contains(&p) {
                left_out.push(p);
            }
        }
    }
    let mut kept: Vec<Shard> = shards.into_iter().take(max).collect();
    for s in &mut kept {
        s.entries.retain(|e| !left_out.contains(&e.path));
    }
    kept.retain(|s| !s.entries.is_empty());
    ShardPlan {
        shards: kept,
        left_out,
    }
}

/// Rule (issue 10, "verification batches likewise when candidates are many"):
/// consecutive items (in their given order) are grouped greedily so that each group's
/// total cost fits `cap` and it holds at most `max_items` (at least one); an item whose
/// cost alone is over `cap` forms a group of its own. Every item is in exactly one
/// group, in order.
pub fn batches(costs: &[u64], cap: u64, max_items: usize) -> Vec<Range<usize>> {
    let max_items = max_items.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    let mut total = 0u64;
    for (i, &cost) in costs.iter().enumerate() {
        if i > start && (total.saturating_add(cost) > cap || i - start >= max_items) {
            out.push(start..i);
            start = i;
            total = 0;
        }
        total = total.saturating_add(cost);
    }
    if start < costs.len() {
        out.push(start..costs.len());
    }
    out
}

/// Rule (scheduling): shards run round-robin across lanes (every lane's first shard, then
/// every lane's second, ...), so lanes reviewing the same files read them while the
/// parse and patch caches still hold them, instead of one lane re-reading, much later,
/// what another lane read first. `shards_per_lane` counts each lane's shards, the lanes'
/// shards numbered one after another; the answer is those numbers in running order.
pub fn running_order(shards_per_lane: &[usize]) -> Vec<usize> {
    let starts: Vec<usize> = shards_per_lane
        .iter()
        .scan(0, |next, &n| {
            let start = *next;
            *next += n;
            Some(start)
        })
        .collect();
    let rounds = shards_per_lane.iter().copied().max().unwrap_or(0);
    (0..rounds)
        .flat_map(|k| {
            shards_per_lane
                .iter()
                .zip(&starts)
                .filter(move |(n, _)| k < **n)
                .map(move |(_, start)| start + k)
        })
        .collect()
}

/// Least room a shard keeps for the previous answer a coverage retry shows back, in
/// estimated tokens (about 770 bytes: a receipt of a few files and a candidate or two),
/// when the stage's answers can be that long.
pub const MIN_RETRY_ANSWER_TOKENS: u64 = 256;

/// What a shard's requests hold besides their stable part, in estimated tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardRoom {
    /// The shard's change content (inline source or the patches the tools show).
    pub content: u64,
    /// The previous answer a coverage retry shows back (cut to this).
    pub retry_answer: u64,
    /// The context prefetched from the repository graph.
    pub prefetch: u64,
}

/// Rule (issue 28, "budgets from the model's window"; "every changed line reachable
/// without tools"): within `room`, the tokens a shard's requests have left after their
/// stable part, the shard's change content, the previous answer a coverage retry shows
/// back (at most `answer_tokens`, its whole bound) and the prefetch. The change comes
/// first, at most `max_shard_tokens`, leaving the answer at least
/// [`MIN_RETRY_ANSWER_TOKENS`]; the answer then gets its whole bound if the rest holds
/// it, else the rest (a retry shows it cut; the host keeps every candidate of it); the
/// prefetch gets what is left, at most `prefetch_tokens`. A coverage retry repeats its
/// first request and adds the answer: without tools it points to the missing files'
/// source given there instead of giving it again, so the content counts once with tools
/// or without.
pub fn shard_room(
    room: u64,
    max_shard_tokens: u64,
    answer_tokens: u64,
    prefetch_tokens: u64,
) -> ShardRoom {
    let least_answer = answer_tokens.min(MIN_RETRY_ANSWER_TOKENS);
    let content = max_shard_tokens.min(room.saturating_sub(least_answer));
    let retry_answer = answer_tokens.min(room - content);
    let prefetch = prefetch_tokens.min(room - content - retry_answer);
    ShardRoom {
        content,
        retry_answer,
        prefetch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn file(path: &str, fixed: u64, whole: u64, pieces: &[u64]) -> FileCost {
        FileCost {
            path: path.into(),
            fixed,
            whole,
            pieces: pieces.to_vec(),
        }
    }

    fn budget(max_tokens: u64, max_shards: usize) -> ShardBudget {
        ShardBudget {
            max_tokens,
            max_receipt_tokens: u64::MAX,
            max_shards,
        }
    }

    fn layout(plan: &ShardPlan) -> Vec<Vec<String>> {
        plan.shards
            .iter()
            .map(|s| {
                s.entries
                    .iter()
                    .map(|e| match &e.part {
                        FilePart::Whole => e.path.clone(),
                        FilePart::Pieces(r) => format!("{}[{}..{}]", e.path, r.start, r.end),
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn shards_follow_the_rule() {
        struct Case {
            name: &'static str,
            files: Vec<FileCost>,
            budget: ShardBudget,
            shards: Vec<Vec<&'static str>>,
            left_out: Vec<&'static str>,
        }
        let cases = [
            Case {
                name: "everything fits one shard",
                files: vec![file("a.rs", 1, 10, &[]), file("b.rs", 1, 10, &[])],
                budget: budget(100, 8),
                shards: vec![vec!["a.rs", "b.rs"]],
                left_out: vec![],
            },
            Case {
                name: "greedy in canonical order",
                files: vec![
                    file("a.rs", 1, 40, &[]),
                    file("b.rs", 1, 40, &[]),
                    file("c.rs", 1, 40, &[]),
                ],
                budget: budget(100, 8),
                shards: vec![vec!["a.rs", "b.rs"], vec!["c.rs"]],
                left_out: vec![],
            },
            Case {
                name: "a directory that fits a fresh shard starts one",
                files: vec![
                    file("a/1.rs", 0, 30, &[]),
                    file("a/2.rs", 0, 30, &[]),
                    file("b/1.rs", 0, 30, &[]),
                    file("b/2.rs", 0, 30, &[]),
                ],
                budget: budget(100, 8),
                shards: vec![vec!["a/1.rs", "a/2.rs"], vec!["b/1.rs", "b/2.rs"]],
                left_out: vec![],
            },
            Case {
                name: "a shard under half full keeps filling across directories",
                files: vec![
                    file("a/1.rs", 0, 20, &[]),
                    file("b/1.rs", 0, 40, &[]),
                    file("b/2.rs", 0, 40, &[]),
                ],
                budget: budget(100, 8),
                shards: vec![vec!["a/1.rs", "b/1.rs", "b/2.rs"]],
                left_out: vec![],
            },
            Case {
                name: "a file over the budget is split by hunks",
                files: vec![
                    file("a.rs", 1, 10, &[]),
                    file("big.rs", 10, 200, &[60, 60, 60, 20]),
                    file("c.rs", 1, 10, &[]),
                ],
                budget: budget(100, 8),
                shards: vec![
                    vec!["a.rs", "big.rs[0..1]"],
                    vec!["big.rs[1..2]"],
                    vec!["big.rs[2..4]"],
                    vec!["c.rs"],
                ],
                left_out: vec![],
            },
            Case {
                name: "a single hunk over the budget stands alone",
                files: vec![
                    file("big.rs", 0, 500, &[10, 300, 10]),
                    file("z.rs", 0, 5, &[]),
                ],
                budget: budget(100, 8),
                shards: vec![
                    vec!["big.rs[0..1]"],
                    vec!["big.rs[1..2]"],
                    vec!["big.rs[2..3]", "z.rs"],
                ],
                left_out: vec![],
            },
            Case {
                name: "max_shards leaves the rest out by name",
                files: vec![
                    file("a.rs", 0, 60, &[]),
                    file("b.rs", 0, 60, &[]),
                    file("c.rs", 0, 60, &[]),
                ],
                budget: budget(100, 2),
                shards: vec![vec!["a.rs"], vec!["b.rs"]],
                left_out: vec!["c.rs"],
            },
            Case {
                name: "a split file cut by max_shards is left out entirely",
                files: vec![
                    file("a.rs", 0, 10, &[]),
                    file("big.rs", 0, 300, &[90, 90, 90]),
                ],
                budget: budget(100, 2),
                shards: vec![vec!["a.rs"]],
                left_out: vec!["big.rs"],
            },
        ];
        for case in cases {
            let plan = plan_shards(&case.files, case.budget);
            let expected: Vec<Vec<String>> = case
                .shards
                .iter()
                .map(|s| s.iter().map(|p| p.to_string()).collect())
                .collect();
            assert_eq!(layout(&plan), expected, "{}", case.name);
            assert_eq!(plan.left_out, case.left_out, "{}", case.name);
        }
    }

    #[test]
    fn the_receipt_bound_also_closes_a_shard() {
        let files: Vec<FileCost> = (0..10)
            .map(|i| file(&format!("f{i}.rs"), 0, 1, &[]))
            .collect();
        let plan = plan_shards(
            &files,
            ShardBudget {
                max_tokens: 1_000,
                max_receipt_tokens: receipt_tokens(["f0.rs"; 4]),
                max_shards: 99,
            },
        );
        let sizes: Vec<usize> = plan.shards.iter().map(|s| s.entries.len()).collect();
        assert_eq!(sizes, [4, 4, 2]);
        assert_eq!(receipt_tokens(["ab", "abcd"]), 2 + 2 * 7);
        assert_eq!(estimate_tokens(7), 3);
    }

    #[test]
    fn batches_follow_the_rule() {
        type Case = (&'static str, Vec<u64>, u64, usize, Vec<(usize, usize)>);
        let cases: [Case; 5] = [
            ("nothing", vec![], 10, 3, vec![]),
            ("all fit", vec![1, 2, 3], 10, 5, vec![(0, 3)]),
            ("cost closes", vec![4, 4, 4, 4], 10, 5, vec![(0, 2), (2, 4)]),
            (
                "count closes",
                vec![1, 1, 1, 1, 1],
                100,
                2,
                vec![(0, 2), (2, 4), (4, 5)],
            ),
            (
                "an item over the cap alone",
                vec![1, 50, 1],
                10,
                5,
                vec![(0, 1), (1, 2), (2, 3)],
            ),
        ];
        for (name, costs, cap, max, want) in cases {
            let got: Vec<(usize, usize)> = batches(&costs, cap, max)
                .into_iter()
                .map(|r| (r.start, r.end))
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    fn hostile_files() -> impl Strategy<Value = Vec<FileCost>> {
        let file = (
            prop::sample::select(vec!["", "a/", "a/b/", "z/", "ünï/"]),
            0u64..30,
            0u64..400,
            prop::collection::vec(0u64..200, 0..6),
        );
        prop::collection::vec(file, 0..40).prop_map(|fs| {
            let mut out: Vec<FileCost> = fs
                .into_iter()
                .enumerate()
                .map(|(i, (d, fixed, whole, pieces))| FileCost {
                    path: format!("{d}f{i:03}.rs"),
                    fixed,
                    whole,
                    pieces,
                })
                .collect();
            out.sort_by(|a, b| a.path.cmp(&b.path));
            out
        })
    }

    proptest! {
        /// Every item once, in order; a group over the cap holds one item; no group over
        /// `max_items`.
        #[test]
        fn batches_cover_every_item_once(
            costs in prop::collection::vec(0u64..100, 0..60),
            cap in 0u64..300,
            max_items in 0usize..10,
        ) {
            let groups = batches(&costs, cap, max_items);
            let mut next = 0;
            for g in &groups {
                prop_assert_eq!(g.start, next);
                prop_assert!(g.end > g.start);
                prop_assert!(g.len() <= max_items.max(1));
                let total: u64 = costs[g.clone()].iter().sum();
                prop_assert!(total <= cap || g.len() == 1);
                next = g.end;
            }
            prop_assert_eq!(next, costs.len());
        }

        /// Every file is in exactly one shard (a split file in consecutive shards, its
        /// pieces each once and in order) or named as left out; order is the canonical
        /// order; a shard over budget holds a single unit; at most `max_shards` shards.
        #[test]
        fn every_file_lands_once_in_order(
            files in hostile_files(),
            max_tokens in 0u64..500,
            receipt in 0u64..200,
            max_shards in 0usize..12,
        ) {
            let b = ShardBudget { max_tokens, max_receipt_tokens: receipt, max_shards };
            let plan = plan_shards(&files, b);
            prop_assert!(plan.shards.len() <= max_shards.max(1));
            let mut seen: Vec<(String, FilePart)> = Vec::new();
            for s in &plan.shards {
                prop_assert!(!s.entries.is_empty());
                prop_assert!(s.tokens <= max_tokens.max(1) || (s.over_budget && s.entries.len() == 1),
                    "shard over budget with {} entries", s.entries.len());
                seen.extend(s.entries.iter().map(|e| (e.path.clone(), e.part.clone())));
            }
            let order: Vec<&String> = seen.iter().map(|(p, _)| p).collect();
            let mut sorted = order.clone();
            sorted.sort();
            prop_assert_eq!(&order, &sorted, "canonical order kept");
            for f in &files {
                let parts: Vec<&FilePart> = seen.iter().filter(|(p, _)| p == &f.path).map(|(_, part)| part).collect();
                if plan.left_out.contains(&f.path) {
                    prop_assert!(parts.is_empty(), "{} left out and sharded", f.path);
                    continue;
                }
                match parts.as_slice() {
                    [FilePart::Whole] => {}
                    pieces => {
                        let mut next = 0;
                        for part in pieces {
                            let FilePart::Pieces(r) = part else {
                                return Err(TestCaseError::fail(format!("whole and pieces mixed for {}", f.path)));
                            };
                            prop_assert_eq!(r.start, next);
                            prop_assert!(r.end > r.start);
                            next = r.end;
                        }
                        prop_assert_eq!(next, f.pieces.len(), "every piece of {} once", f.path);
                    }
                }
            }
        }
    }

    #[test]
    fn shards_run_round_robin_across_lanes() {
        let cases: [(&[usize], &[usize]); 5] = [
            (&[], &[]),
            (&[3], &[0, 1, 2]),
            (&[2, 2], &[0, 2, 1, 3]),
            (&[3, 1, 2], &[0, 3, 4, 1, 5, 2]),
            (&[0, 2], &[0, 1]),
        ];
        for (lanes, order) in cases {
            assert_eq!(running_order(lanes), order, "{lanes:?}");
        }
    }

    proptest! {
        /// Every shard runs exactly once, and within a lane in the lane's order.
        #[test]
        fn every_shard_runs_once_in_lane_order(lanes in proptest::collection::vec(0usize..9, 0..6)) {
            let order = running_order(&lanes);
            let total: usize = lanes.iter().sum();
            let mut sorted = order.clone();
            sorted.sort_unstable();
            prop_assert_eq!(sorted, (0..total).collect::<Vec<_>>());
            let mut start = 0;
            for n in lanes {
                let mine: Vec<usize> = order.iter().copied().filter(|i| (start..start + n).contains(i)).collect();
                prop_assert_eq!(mine, (start..start + n).collect::<Vec<_>>());
                start += n;
            }
        }
    }

    #[test]
    fn a_lanes_shards_share_a_receipt_bound_only_when_it_fits() {
        let shard = |paths: &[&str]| paths.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        let two = [shard(&["a.rs", "b.rs", "c.rs"]), shard(&["src/long/d.rs"])];
        let bound = |files, longest_path_chars| ReceiptBound {
            files,
            longest_path_chars,
        };
        for (shards, cap, expected) in [
            // One shard keeps its own bound.
            (&two[..1], u64::MAX, None),
            // The most paths of any shard, the lane's longest path.
            (&two[..], u64::MAX, Some(bound(3, 13))),
            // Exactly at the receipt cap: 2 + 3 * (13 + 3).
            (&two[..], 50, Some(bound(3, 13))),
            // Over it: each shard asks with its own list.
            (&two[..], 49, None),
        ] {
            assert_eq!(
                lane_receipt_bound(shards, cap),
                expected,
                "{shards:?} {cap}"
            );
        }
    }

    /// [`shard_room`]: (room, max_shard_tokens, answer_tokens, prefetch_tokens) →
    /// (content, retry answer, prefetch).
    #[test]
    fn a_shards_content_comes_first_then_the_retry_answer_then_the_prefetch() {
        type Case = ((u64, u64, u64, u64), (u64, u64, u64));
        let cases: [Case; 9] = [
            // The default 32k window: a whole shard, the whole answer and the prefetch.
            ((20_000, 4_000, 5_461, 6_000), (4_000, 5_461, 6_000)),
            // 16k: the prefetch takes what the shard and the answer leave.
            ((8_100, 2_000, 2_731, 6_000), (2_000, 2_731, 3_369)),
            // 8k: a whole shard; the answer is cut to the rest, no prefetch.
            ((2_065, 1_000, 1_365, 6_000), (1_000, 1_065, 0)),
            // Tighter: the answer keeps its least room, the content takes the rest.
            ((900, 1_000, 1_365, 6_000), (644, 256, 0)),
            // An answer bound below the least room is kept whole.
            ((900, 1_000, 100, 6_000), (800, 100, 0)),
            // 128k: everything fits.
            ((116_000, 53_000, 5_461, 6_000), (53_000, 5_461, 6_000)),
            // Less room than the least answer.
            ((200, 4_000, 1_365, 500), (0, 200, 0)),
            ((0, 4_000, 1_365, 500), (0, 0, 0)),
            ((3_000, 4_000, 0, 500), (3_000, 0, 0)),
        ];
        for ((room, shard, answer, prefetch), want) in cases {
            let got = shard_room(room, shard, answer, prefetch);
            assert_eq!(
                (got.content, got.retry_answer, got.prefetch),
                want,
                "room {room}, shard {shard}, answer {answer}, prefetch {prefetch}"
            );
        }
    }

    proptest! {
        /// Whatever the room and bounds: the three parts fit the room, none exceeds its
        /// bound, the answer keeps its least room (as far as the room goes) and the
        /// content is never lowered for the answer beyond that least room or for the
        /// prefetch at all.
        #[test]
        fn a_shards_parts_fit_the_room_in_their_order(
            room in 0u64..200_000,
            shard in 0u64..100_000,
            answer in 0u64..20_000,
            prefetch in 0u64..10_000,
        ) {
            let got = shard_room(room, shard, answer, prefetch);
            prop_assert!(got.content + got.retry_answer + got.prefetch <= room);
            prop_assert!(got.content <= shard);
            prop_assert!(got.retry_answer <= answer);
            prop_assert!(got.prefetch <= prefetch);
            let least = answer.min(MIN_RETRY_ANSWER_TOKENS).min(room);
            prop_assert!(got.retry_answer >= least);
            prop_assert_eq!(got.content, shard.min(room - least));
        }
    }
}
