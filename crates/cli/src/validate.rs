//! `vouch validate-report`: check a review final report (see the vouch-final-report crate).
