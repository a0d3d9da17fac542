//! The languages the graph parses, chosen by file extension, and what their syntax trees
//! call definitions, calls and names.

use crate::symbol::SymbolKind;

/// A language with a tree-sitter grammar. Files of any other language fall back to text
/// search, and every tool result says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// `.rs`
    Rust,
    /// `.py`, `.pyi`
    Python,
    /// `.js`, `.mjs`, `.cjs`, `.jsx`
    JavaScript,
    /// `.ts`, `.mts`, `.cts`
    TypeScript,
    /// `.tsx`
    Tsx,
    /// `.go`
    Go,
    /// `.java`
    Java,
    /// `.c`, `.h`
    C,
    /// `.cc`, `.cpp`, `.cxx`, `.c++`, `.hh`, `.hpp`, `.hxx`, `.h++`
    Cpp,
}

impl Language {
    /// The language of a path by its extension (case-insensitive), if it has a grammar.
    pub fn from_path(path: &str) -> Option<Language> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let (_, ext) = name.rsplit_once('.')?;
        Some(match ext.to_ascii_lowercase().as_str() {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" => Language::Cpp,
            _ => return None,
        })
    }

    /// The name shown in tool results.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Go => "go",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "c++",
        }
    }

    /// The tree-sitter grammar.
    pub(crate) fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
    }

    /// What a node of this kind defines, if it is a definition in this language.
    pub(crate) fn definition_kind(self, node_kind: &str) -> Option<SymbolKind> {
        use SymbolKind as K;
        let table: &[(&str, SymbolKind)] = match self {
            Language::Rust => &[
                ("function_item", K::Function),
                ("function_signature_item", K::Function),
                ("struct_item", K::Struct),
                ("enum_item", K::Enum),
                ("union_item", K::Struct),
                ("trait_item", K::Trait),
                ("impl_item", K::Impl),
                ("mod_item", K::Module),
                ("const_item", K::Constant),
                ("static_item", K::Constant),
                ("type_item", K::Type),
                ("macro_definition", K::Macro),
            ],
            Language::Python => &[
                ("function_definition", K::Function),
                ("class_definition", K::Class),
            ],
            Language::JavaScript | Language::TypeScript | Language::Tsx => &[
                ("function_declaration", K::Function),
                ("generator_function_declaration", K::Function),
                ("function_signature", K::Function),
                ("class_declaration", K::Class),
                ("abstract_class_declaration", K::Class),
                ("method_definition", K::Function),
                ("method_signature", K::Function),
                ("abstract_method_signature", K::Function),
                ("interface_declaration", K::Trait),
                ("type_alias_declaration", K::Type),
                ("enum_declaration", K::Enum),
                ("internal_module", K::Module),
                ("variable_declarator", K::Variable),
            ],
            Language::Go => &[
                ("function_declaration", K::Function),
                ("method_declaration", K::Function),
                ("type_spec", K::Type),
                ("const_spec", K::Constant),
            ],
            Language::Java => &[
                ("class_declaration", K::Class),
                ("interface_declaration", K::Trait),
                ("enum_declaration", K::Enum),
                ("record_declaration", K::Class),
                ("annotation_type_declaration", K::Trait),
                ("method_declaration", K::Function),
                ("constructor_declaration", K::Function),
            ],
            Language::C | Language::Cpp => &[
                ("function_definition", K::Function),
                ("struct_specifier", K::Struct),
                ("union_specifier", K::Struct),
                ("enum_specifier", K::Enum),
                ("class_specifier", K::Class),
                ("namespace_definition", K::Module),
                ("type_definition", K::Type),
                ("preproc_function_def", K::Macro),
                ("preproc_def", K::Macro),
                ("declaration", K::Function),
                ("field_declaration", K::Function),
            ],
        };
        table
            .iter()
            .find(|(kind, _)| *kind == node_kind)
            .map(|&(_, k)| k)
    }
}

/// Node kinds that are calls, in every grammar, with the field that names the callee.
pub(crate) const CALLS: &[(&str, &str)] = &[
    ("call_expression", "function"),
    ("call", "function"),
    ("macro_invocation", "macro"),
    ("method_invocation", "name"),
    ("new_expression", "constructor"),
    ("object_creation_expression", "type"),
];

/// Node kinds that qualify a name (`a.b`, `a::b`, `a->b`); their last named child is the
/// name used.
pub(crate) const PATHS: &[&str] = &[
    "field_expression",
    "member_expression",
    "selector_expression",
    "attribute",
    "scoped_identifier",
    "qualified_identifier",
    "generic_function",
];

/// Whether a leaf node kind is a name (identifiers of every flavour).
pub(crate) fn is_name(kind: &str) -> bool {
    kind.ends_with("identifier") || kind == "constant"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_extension_chooses_its_grammar_and_others_have_none() {
        let cases: &[(&str, Option<Language>)] = &[
            ("src/lib.rs", Some(Language::Rust)),
            ("a/b.PY", Some(Language::Python)),
            ("x.mjs", Some(Language::JavaScript)),
            ("web/app.tsx", Some(Language::Tsx)),
            ("web/app.ts", Some(Language::TypeScript)),
            ("main.go", Some(Language::Go)),
            ("A.java", Some(Language::Java)),
            ("inc/x.h", Some(Language::C)),
            ("x.hpp", Some(Language::Cpp)),
            ("lib.rb", None),
            ("Makefile", None),
            (".rs", Some(Language::Rust)),
            ("dir.rs/README", None),
        ];
        for &(path, expected) in cases {
            assert_eq!(Language::from_path(path), expected, "{path}");
        }
    }
}
