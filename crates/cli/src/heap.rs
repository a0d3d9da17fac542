//! glibc malloc settings for a review's memory profile: many threads allocate while the
//! review runs, one thread builds the report after it.

/// Bounds glibc's malloc to two heaps; call first thing in `main`, before any thread
/// starts. By default it keeps one per thread (up to eight per core) and rarely returns
/// their free pages; a review runs stage tasks and blocking work on many threads, which
/// grew a 5,000-file review's resident memory by about a sixth over what it used.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn bound() {
    // SAFETY: `mallopt` only sets a malloc tunable; it is called first thing in `main`,
    // before any other thread exists, and its result (0 when refused) needs no handling:
    // a refused setting leaves glibc's default.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Returns the free pages of every malloc heap to the system. Called when a review's
/// working set (patches, parses, prefetch) has been dropped and before its report is
/// built: that memory was freed on the stage threads' heap, which the thread building the
/// report may not allocate from, so without this the report's schema check (a JSON value
/// of the whole report) grows the resident set past the review's own peak.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn release_free() {
    // SAFETY: `malloc_trim` only releases free memory of the allocator's own heaps; it is
    // safe to call from any thread at any time, and its result (whether memory was
    // released) needs no handling.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn bound() {}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn release_free() {}
