//! Large blobs, kept once read. Reading a blob inflates all of it, and a review reads a
//! large changed file many times: sizing its shards, each shard that shows a piece of
//! it, and the model's tool calls. Small blobs are read straight from the repository
//! (inflating them costs less than keeping them).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use git2::{Oid, Repository};

/// Blobs at least this large are kept once read.
pub const LARGE_BLOB_BYTES: usize = 64 * 1024;

/// Most bytes of large blobs kept; past it the oldest read go first (one read again is
/// inflated again, nothing else changes).
pub const MAX_KEPT_LARGE_BLOB_BYTES: usize = 32 * 1024 * 1024;

/// A blob's content and what git says of it.
#[derive(Debug)]
pub(crate) struct BlobBytes {
    pub content: Vec<u8>,
    /// git's binary heuristic (a NUL byte in the first 8,000 bytes).
    pub binary: bool,
}

/// Large blobs by id, bounded in bytes (oldest out first).
#[derive(Debug, Default)]
pub(crate) struct LargeBlobs {
    map: HashMap<Oid, Arc<BlobBytes>>,
    order: VecDeque<Oid>,
    bytes: usize,
    /// Large blobs inflated from the repository (misses).
    loaded: u64,
}

impl LargeBlobs {
    fn get(&self, id: Oid) -> Option<Arc<BlobBytes>> {
        self.map.get(&id).cloned()
    }

    fn insert(&mut self, id: Oid, blob: Arc<BlobBytes>) {
        self.loaded += 1;
        if blob.content.len() > MAX_KEPT_LARGE_BLOB_BYTES || self.map.contains_key(&id) {
            return;
        }
        self.bytes += blob.content.len();
        self.order.push_back(id);
        self.map.insert(id, blob);
        while self.bytes > MAX_KEPT_LARGE_BLOB_BYTES {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some(gone) = self.map.remove(&old) {
                self.bytes -= gone.content.len();
            }
        }
    }

    pub fn loaded(&self) -> u64 {
        self.loaded
    }
}

impl super::SourceReader {
    /// Calls `f` with the content of blob `id` and whether it is binary
    /// ([`crate::range_diff::is_binary`], the diff's own rule): a large
    /// blob from the kept ones (inflated and kept on its first read), any other straight
    /// from `repo`.
    pub(crate) fn with_blob<R>(
        &self,
        repo: &Repository,
        id: Oid,
        f: impl FnOnce(&[u8], bool) -> R,
    ) -> Result<R, git2::Error> {
        if let Some(kept) = self.large_blobs().get(id) {
            return Ok(f(&kept.content, kept.binary));
        }
        let blob = repo.find_blob(id)?;
        if blob.size() < LARGE_BLOB_BYTES {
            return Ok(f(
                blob.content(),
                crate::range_diff::is_binary(blob.content()),
            ));
        }
        let kept = Arc::new(BlobBytes {
            content: blob.content().to_vec(),
            binary: crate::range_diff::is_binary(blob.content()),
        });
        drop(blob);
        self.large_blobs().insert(id, kept.clone());
        Ok(f(&kept.content, kept.binary))
    }

    /// How many large blobs ([`LARGE_BLOB_BYTES`] and up) this reader has inflated: each
    /// once while it keeps them; tests use this to prove it.
    pub fn large_blobs_loaded(&self) -> u64 {
        self.large_blobs().loaded()
    }

    fn large_blobs(&self) -> std::sync::MutexGuard<'_, LargeBlobs> {
        self.large.lock().unwrap_or_else(|e| e.into_inner())
    }
}
