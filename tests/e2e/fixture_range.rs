//! A fixed, real commit range: the committed fixture repository made from real code.
