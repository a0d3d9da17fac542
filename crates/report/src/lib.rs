//! vouch-report
