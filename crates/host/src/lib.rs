//! vouch-host
pub mod registry;
