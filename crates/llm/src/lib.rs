//! vouch-llm
