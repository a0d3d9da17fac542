//! vouch-final-report
