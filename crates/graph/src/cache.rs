//! Parsed files, cached by content: the key is the blob id and the language, so a file
//! unchanged between base and head is parsed once, and a cached index can never describe
//! other content than the blob it was parsed from.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use crate::index::FileIndex;
use crate::lang::Language;
use crate::words::WordIndex;

/// Trees whose word index a cache keeps (a review reads two: base and head).
const MAX_WORD_INDEXES: usize = 4;

/// One tree's word index, built once by whoever asks first while others wait.
pub(crate) type WordSlot = Arc<Mutex<Option<Arc<WordIndex>>>>;

/// Default bound of a cache: roughly this many bytes of parsed indexes.
pub const DEFAULT_CACHE_BYTES: usize = 32 * 1024 * 1024;

type Key = (String, Language);

/// A bounded cache of parsed files, shared by every graph that uses it. The oldest entries
/// leave first when the bound is passed.
#[derive(Debug)]
pub struct ParseCache {
    inner: Mutex<Inner>,
    max_bytes: usize,
    /// Word indexes by tree id, oldest first.
    words: Mutex<VecDeque<(String, WordSlot)>>,
    /// Files being parsed now, so that stages asking for the same file at once wait for
    /// one parse instead of each parsing it.
    parsing: Mutex<HashMap<Key, Arc<Mutex<()>>>>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<Key, Arc<FileIndex>>,
    order: VecDeque<(Key, usize)>,
    bytes: usize,
}

impl ParseCache {
    /// An empty cache holding about `max_bytes` of indexes.
    pub fn new(max_bytes: usize) -> ParseCache {
        ParseCache {
            inner: Mutex::new(Inner::default()),
            max_bytes,
            words: Mutex::new(VecDeque::new()),
            parsing: Mutex::new(HashMap::new()),
        }
    }

    /// The process-wide cache (one per run of the `vouch` binary), bounded by
    /// [`DEFAULT_CACHE_BYTES`].
    pub fn shared() -> Arc<ParseCache> {
        static SHARED: OnceLock<Arc<ParseCache>> = OnceLock::new();
        SHARED
            .get_or_init(|| Arc::new(ParseCache::new(DEFAULT_CACHE_BYTES)))
            .clone()
    }

    pub(crate) fn get(&self, blob_id: &str, language: Language) -> Option<Arc<FileIndex>> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.entries.get(&(blob_id.to_string(), language)).cloned()
    }

    /// The cached index of a blob, or the one `parse` makes (then cached); `true` when
    /// this call parsed. Rule: a blob asked for by several callers at once is parsed once,
    /// the others wait for it.
    pub(crate) fn get_or_parse(
        &self,
        blob_id: &str,
        language: Language,
        parse: impl FnOnce() -> FileIndex,
    ) -> (Arc<FileIndex>, bool) {
        if let Some(hit) = self.get(blob_id, language) {
            return (hit, false);
        }
        let key = (blob_id.to_string(), language);
        let slot = {
            let mut parsing = self.parsing.lock().unwrap_or_else(|e| e.into_inner());
            parsing.entry(key.clone()).or_default().clone()
        };
        let _turn = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hit) = self.get(blob_id, language) {
            return (hit, false);
        }
        let index = Arc::new(parse());
        self.insert(blob_id, language, index.clone());
        let mut parsing = self.parsing.lock().unwrap_or_else(|e| e.into_inner());
        if parsing.get(&key).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
            parsing.remove(&key);
        }
        (index, true)
    }

    fn insert(&self, blob_id: &str, language: Language, index: Arc<FileIndex>) {
        let weight = index.weight();
        let key = (blob_id.to_string(), language);
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.entries.insert(key.clone(), index).is_some() {
            return;
        }
        inner.order.push_back((key, weight));
        inner.bytes += weight;
        while inner.bytes > self.max_bytes && inner.order.len() > 1 {
            if let Some((old, w)) = inner.order.pop_front() {
                inner.entries.remove(&old);
                inner.bytes -= w;
            }
        }
    }

    /// Drops every cached index and word index (a review that ended keeps none of its
    /// parses alive while its report is built). Callers holding an index keep it.
    pub fn clear(&self) {
        *self.inner.lock().unwrap_or_else(|e| e.into_inner()) = Inner::default();
        self.words.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// The word-index slot of the tree `tree_id` (empty until someone builds it).
    pub(crate) fn word_slot(&self, tree_id: &str) -> WordSlot {
        let mut words = self.words.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, slot)) = words.iter().find(|(id, _)| id == tree_id) {
            return slot.clone();
        }
        let slot = WordSlot::default();
        words.push_back((tree_id.to_string(), slot.clone()));
        while words.len() > MAX_WORD_INDEXES {
            words.pop_front();
        }
        slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Callers asking for one blob at once: the first parses while every other one waits
    /// in line for the same file (held here until all of them are waiting), then each of
    /// them gets the one index.
    #[test]
    fn a_blob_asked_for_at_once_is_parsed_once() {
        const CALLERS: usize = 4;
        let cache = ParseCache::new(DEFAULT_CACHE_BYTES);
        let parses = AtomicU32::new(0);
        let indexes: Vec<Arc<FileIndex>> = std::thread::scope(|s| {
            let calls: Vec<_> = (0..CALLERS)
                .map(|_| {
                    s.spawn(|| {
                        cache
                            .get_or_parse("blob", Language::Rust, || {
                                parses.fetch_add(1, Ordering::SeqCst);
                                while waiting(&cache) < CALLERS {
                                    std::thread::yield_now();
                                }
                                FileIndex::parse(Language::Rust, b"fn main() {}\n")
                            })
                            .0
                    })
                })
                .collect();
            calls.into_iter().map(|c| c.join().unwrap()).collect()
        });
        assert_eq!(parses.load(Ordering::SeqCst), 1);
        assert!(indexes.iter().all(|i| Arc::ptr_eq(i, &indexes[0])));
        assert!(
            cache.parsing.lock().unwrap().is_empty(),
            "the slot is removed"
        );
    }

    /// After `clear` nothing is cached: the next caller parses again, and the word
    /// slots are new.
    #[test]
    fn clear_drops_every_index() {
        let cache = ParseCache::new(DEFAULT_CACHE_BYTES);
        let parse = || FileIndex::parse(Language::Rust, b"fn main() {}\n");
        let (held, parsed) = cache.get_or_parse("blob", Language::Rust, parse);
        assert!(parsed);
        let slot = cache.word_slot("tree");
        cache.clear();
        assert!(cache.get("blob", Language::Rust).is_none());
        assert_eq!(cache.inner.lock().unwrap().bytes, 0);
        assert!(!Arc::ptr_eq(&slot, &cache.word_slot("tree")));
        let (again, parsed) = cache.get_or_parse("blob", Language::Rust, parse);
        assert!(parsed, "parsed again after clear");
        assert!(!Arc::ptr_eq(&held, &again));
    }

    /// Callers holding the in-flight slot of the one key (the parser included).
    fn waiting(cache: &ParseCache) -> usize {
        let parsing = cache.parsing.lock().unwrap();
        parsing.values().map(|s| Arc::strong_count(s) - 1).sum()
    }
}
