//! vouch-abi
