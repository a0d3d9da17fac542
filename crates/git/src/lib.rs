//! vouch-git
