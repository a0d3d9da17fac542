use greeting::{greet, Greeter};

fn main() {
    let g = Greeter::new("> ");
    println!("{}", g.hello("world"));
    println!("{}", greet("again", true));
}
