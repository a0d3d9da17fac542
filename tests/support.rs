//! Shared helpers for workspace tests.
