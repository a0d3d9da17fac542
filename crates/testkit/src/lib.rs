//! vouch-testkit
