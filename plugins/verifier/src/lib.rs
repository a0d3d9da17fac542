//! vouch built-in verifier specialist
