//! vouch-host
