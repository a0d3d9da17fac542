//! What the repository graph offered a stage before its budget, and the review's memo of
//! it by file set (held by the review environment, filled by [`super::prefetch`]).

use std::collections::HashMap;
use std::sync::Arc;

use vouch_core::{PrefetchKind, SourceWindow, estimate_tokens};

/// One prefetched item: a titled block of numbered lines and the windows it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Item {
    /// What it is (its value class).
    pub(crate) kind: PrefetchKind,
    /// Its title line (kind, name, place).
    pub(crate) title: String,
    /// Numbered lines and notes.
    pub(crate) body: String,
    /// The exact windows the body shows.
    pub(crate) windows: Vec<SourceWindow>,
}

impl Item {
    pub(super) fn text(&self) -> String {
        format!("### {}\n{}", self.title, self.body)
    }

    /// Its estimated cost as a block of the section (JSON-escaped, with its newline):
    /// `json_text_len` of [`Item::text`] less one, measured by parts without building the
    /// text (escaping is per character, so the escaped lengths of the parts add up).
    pub(super) fn tokens(&self) -> u64 {
        let escaped = |s: &str| vouch_llm::json_text_len(s) - 2;
        estimate_tokens(
            2 + escaped("### ") + escaped(&self.title) + escaped("\n") + escaped(&self.body) - 1,
        )
    }
}

/// Everything the graph offered for a set of files, before the budget.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Gathered {
    /// Items in value order.
    pub(crate) items: Vec<Item>,
    /// What was not looked up (lookup bounds, files without a grammar), in words.
    pub(crate) not_looked_up: Vec<String>,
}

/// Memoised gathers of one review, by file set: the lanes that share a file set (and
/// the verifier deciding candidates in the same files) get the same items without
/// walking the graph again. Each file set has its own slot, so stages gathering
/// different file sets run at once and stages asking for the same one wait for one
/// gather.
#[derive(Default)]
pub(crate) struct PrefetchMemo(std::sync::Mutex<HashMap<Vec<String>, GatherSlot>>);

type GatherSlot = Arc<std::sync::OnceLock<Arc<Gathered>>>;

impl PrefetchMemo {
    /// The gathered prefetch of `files`: `gather`'s, run once per file set.
    pub(super) fn get_or_gather(
        &self,
        files: &[String],
        gather: impl FnOnce() -> Gathered,
    ) -> Arc<Gathered> {
        let slot = {
            let mut memo = self.0.lock().unwrap_or_else(|e| e.into_inner());
            memo.entry(files.to_vec()).or_default().clone()
        };
        slot.get_or_init(|| Arc::new(gather())).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// An item's cost measured by parts is that of the block it is shown as.
        #[test]
        fn an_items_cost_is_that_of_its_text(title in "\\PC{0,40}", body in "(\\PC|[\\n\\t\"\\\\\\x01]){0,200}") {
            let item = Item {
                kind: PrefetchKind::Callee,
                title,
                body,
                windows: vec![],
            };
            prop_assert_eq!(item.tokens(), estimate_tokens(vouch_llm::json_text_len(&item.text()) - 1));
        }
    }

    /// Two stages gathering different file sets run at once (each gather here waits for
    /// the other to start: one lock over every gather would not let it), and stages
    /// asking for one file set share one gather.
    #[test]
    fn different_file_sets_gather_at_once_and_one_set_gathers_once() {
        use std::sync::mpsc::channel;
        use std::time::Duration;
        let memo = PrefetchMemo::default();
        let gathers = std::sync::atomic::AtomicU32::new(0);
        let (a_started, a_seen) = channel::<()>();
        let (b_started, b_seen) = channel::<()>();
        // Sends that it started, then waits for the other (a deadlock guard, not a
        // measure: without it a serialised memo would hang instead of failing).
        let gather = |started: std::sync::mpsc::Sender<()>,
                      other: std::sync::mpsc::Receiver<()>| {
            gathers.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            started.send(()).unwrap();
            let met = other.recv_timeout(Duration::from_secs(20)).is_ok();
            Gathered {
                items: vec![],
                not_looked_up: vec![format!("met the other gather: {met}")],
            }
        };
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| memo.get_or_gather(&["a.rs".into()], || gather(a_started, b_seen)));
            let b = s.spawn(|| memo.get_or_gather(&["b.rs".into()], || gather(b_started, a_seen)));
            (a.join().unwrap(), b.join().unwrap())
        });
        for g in [&a, &b] {
            assert_eq!(g.not_looked_up, ["met the other gather: true"]);
        }
        let again = memo.get_or_gather(&["a.rs".into()], || unreachable!("gathered before"));
        assert!(Arc::ptr_eq(&again, &a));
        assert_eq!(gathers.load(std::sync::atomic::Ordering::SeqCst), 2);
    }
}
