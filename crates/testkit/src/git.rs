//! Builders for real git repositories in temporary directories.
