//! A greeting library.

/// Greets `name`, shouting when `loud`.
pub fn greet(name: &str, loud: bool) -> String {
    let text = format!("hello, {name}");
    if loud { text.to_uppercase() } else { text }
}

pub struct Greeter {
    prefix: String,
}

impl Greeter {
    pub fn new(prefix: &str) -> Greeter {
        Greeter { prefix: prefix.to_string() }
    }

    pub fn hello(&self, name: &str) -> String {
        format!("{}{}", self.prefix, greet(name, false))
    }
}
