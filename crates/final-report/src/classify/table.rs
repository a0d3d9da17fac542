//! The shape of the declarative tables that map a command to its effects: one row per
//! case, naming the words the command starts with, a condition on its arguments, and
//! what it does. The first row that fits decides; no row means no effect (a read).

use super::effect::Effect;

/// A condition on a command's arguments (those after the words a row names).
#[derive(Clone, Copy)]
pub(crate) enum Cond {
    /// One of these words (a flag or a word) is among the arguments.
    Word(&'static [&'static str]),
    /// An argument starts with this text (`--format=…`).
    WordPrefix(&'static str),
    /// The first argument is one of these (`""`: there is none).
    First(&'static [&'static str]),
    /// At most this many arguments do not start with `-`.
    PositionalsAtMost(usize),
    /// At least this many arguments do not start with `-`.
    PositionalsAtLeast(usize),
    /// Every argument is an option (`tee -a`, no file).
    OnlyOptions,
    /// A named predicate over the arguments, for a case a word list cannot say.
    Holds(fn(&[&str]) -> bool),
    /// Every one of these conditions holds.
    All(&'static [Cond]),
    /// This condition does not hold.
    Not(&'static Cond),
}

impl Cond {
    pub(crate) fn holds(&self, args: &[&str]) -> bool {
        let positionals = || args.iter().filter(|a| !a.starts_with('-')).count();
        match *self {
            Cond::Word(words) => args.iter().any(|a| words.contains(a)),
            Cond::WordPrefix(prefix) => args.iter().any(|a| a.starts_with(prefix)),
            Cond::First(words) => words.contains(&args.first().copied().unwrap_or("")),
            Cond::PositionalsAtMost(n) => positionals() <= n,
            Cond::PositionalsAtLeast(n) => positionals() >= n,
            Cond::OnlyOptions => args.iter().all(|a| a.starts_with('-')),
            Cond::Holds(predicate) => predicate(args),
            Cond::All(conds) => conds.iter().all(|c| c.holds(args)),
            Cond::Not(cond) => !cond.holds(args),
        }
    }
}

/// What a row's command does.
#[derive(Clone, Copy)]
pub(crate) enum Does {
    /// These effects (none: it only reads).
    Fixed(&'static [Effect]),
    /// Edits files the command line does not name (`git apply`, `cargo fmt`).
    Edits,
    /// Edits its operands (every argument that is not an option).
    EditsOperands,
    /// Edits its last operand (`cp`, `install`, `ln`: the destination).
    EditsLastOperand,
    /// What a function of its arguments decides (a nested command line, an API call).
    By(fn(&[&str]) -> Vec<Effect>),
}

/// One row: the words a command starts with (each a list of alternatives; an empty
/// list takes any word, `""` matches a missing one), the conditions of which one must
/// hold (none: always), and what it does.
pub(crate) struct Row {
    pub words: &'static [&'static [&'static str]],
    pub when: &'static [Cond],
    pub does: Does,
}

/// A row of `words`, `when` and `does`.
pub(crate) const fn row(
    words: &'static [&'static [&'static str]],
    when: &'static [Cond],
    does: Does,
) -> Row {
    Row { words, when, does }
}

/// No condition: the row fits whenever its words do.
pub(crate) const ALWAYS: &[Cond] = &[];
/// No effect: the command only reads.
pub(crate) const NOTHING: Does = Does::Fixed(&[]);

impl Row {
    /// The arguments after the row's words when the row fits `args`.
    fn fits<'a, 'w>(&self, args: &'a [&'w str]) -> Option<&'a [&'w str]> {
        let words_fit = self.words.iter().enumerate().all(|(i, alternatives)| {
            alternatives.is_empty() || alternatives.contains(&args.get(i).copied().unwrap_or(""))
        });
        let rest = args.get(self.words.len()..).unwrap_or(&[]);
        let cond_fits = self.when.is_empty() || self.when.iter().any(|c| c.holds(rest));
        (words_fit && cond_fits).then_some(rest)
    }
}

/// The effects of a command by the first row of `table` that fits its arguments;
/// `None` when no row does.
pub(crate) fn lookup(table: &[Row], args: &[&str]) -> Option<Vec<Effect>> {
    table.iter().find_map(|row| {
        let rest = row.fits(args)?;
        Some(match row.does {
            Does::Fixed(effects) => effects.to_vec(),
            Does::Edits => vec![Effect::EDIT],
            Does::EditsOperands => vec![Effect::Edit(operands(rest))],
            Does::EditsLastOperand => {
                vec![Effect::Edit(operands(rest).pop().into_iter().collect())]
            }
            Does::By(effects) => effects(rest),
        })
    })
}

/// The arguments that are not options, as written.
fn operands(args: &[&str]) -> Vec<String> {
    args.iter()
        .filter(|a| !a.starts_with('-'))
        .map(|a| (*a).to_owned())
        .collect()
}
