//! A scripted OpenAI-compatible chat-completions server on 127.0.0.1.
