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
pub const DEFAULT_CACHE_BYTES: usize = 64 * 1024 * 1024;

type Key = (String, Language);

/// A bounded cache of parsed files, shared by every graph that uses it. The oldest entries
/// leave first when the bound is passed.
#[derive(Debug)]
pub struct ParseCache {
    inner: Mutex<Inner>,
    max_bytes: usize,
    /// Word indexes by tree id, oldest first.
    words: Mutex<VecDeque<(String, WordSlot)>>,
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

    pub(crate) fn insert(&self, blob_id: &str, language: Language, index: Arc<FileIndex>) {
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
