//! vouch-core
