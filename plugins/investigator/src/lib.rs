//! vouch built-in investigator specialist
