//! What a definition defines: the kinds of symbol the graph's languages name.

/// What a definition defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    /// A function (or a method: see [`Definition::container`](crate::Definition::container)).
    Function,
    /// A class.
    Class,
    /// A struct or union.
    Struct,
    /// An enum.
    Enum,
    /// A trait or interface.
    Trait,
    /// A Rust `impl` block (named after its type).
    Impl,
    /// A module or namespace.
    Module,
    /// A type alias or type declaration.
    Type,
    /// A constant or static.
    Constant,
    /// A macro.
    Macro,
    /// A top-level variable.
    Variable,
}

impl SymbolKind {
    /// The name shown in tool results.
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::Trait => "trait/interface",
            SymbolKind::Impl => "impl",
            SymbolKind::Module => "module",
            SymbolKind::Type => "type",
            SymbolKind::Constant => "constant",
            SymbolKind::Macro => "macro",
            SymbolKind::Variable => "variable",
        }
    }

    /// Whether members of this kind of definition are listed in an outline.
    pub(crate) fn holds_members(self) -> bool {
        matches!(
            self,
            SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Trait
                | SymbolKind::Impl
                | SymbolKind::Module
                | SymbolKind::Enum
        )
    }
}
