//! One parsed file, reduced to what the tools need: its definitions (with line ranges,
//! signature lines and parameters) and every name it uses (with the line, whether it is
//! called, and the definition it sits in). The syntax tree itself is dropped.

use tree_sitter::{Node, Parser};

use crate::lang::{CALLS, Language, PATHS, is_name};
use crate::symbol::SymbolKind;

/// One definition in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// The defined name (for an `impl`, its type).
    pub name: String,
    /// What it defines.
    pub kind: SymbolKind,
    /// The name of the definition it sits in (class, impl, module, function), if any.
    pub container: Option<String>,
    /// How many definitions enclose it (0: top level).
    pub depth: u32,
    /// First line (1-based; decorators included).
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// Last line of the signature (the line where the body starts, or `end_line`).
    pub signature_end_line: u32,
    /// The parameters as written (names, keyword markers, defaults, types), one per
    /// parameter, whitespace collapsed.
    pub parameters: Vec<String>,
    /// Whether it appears in an outline: top level, or a direct member of a class,
    /// struct, trait, impl, enum or module.
    pub in_outline: bool,
    /// Byte where its name starts (to tell the name from references to it).
    name_byte: usize,
}

/// How a name is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The name is called (the callee of a call, a method call or a macro).
    Call,
    /// Any other use.
    Reference,
}

/// One use of a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    /// The name.
    pub name: Box<str>,
    /// Line (1-based).
    pub line: u32,
    /// Called or referenced.
    pub role: Role,
    /// Index (in [`FileIndex::definitions`]) of the innermost function it sits in, else
    /// of the innermost definition of any kind.
    pub enclosing: Option<usize>,
}

/// A parsed file.
#[derive(Debug, Clone)]
pub struct FileIndex {
    /// Its language.
    pub language: Language,
    /// Its definitions, in source order.
    pub definitions: Vec<Definition>,
    /// Every use of a name that is not a definition's own name, in source order.
    pub occurrences: Vec<Occurrence>,
    /// True when the parser met syntax errors (results may be incomplete).
    pub has_errors: bool,
    /// The file's lines (no line endings), for showing signatures and bodies.
    pub lines: Vec<String>,
    /// The lines (1-based, ascending) that end with `\r\n`: shown with
    /// [`vouch_core::CR_MARK`] after their text ([`FileIndex::ending_mark`]).
    pub crlf: Vec<u32>,
}

impl FileIndex {
    /// Parses `source` as `language`.
    pub fn parse(language: Language, source: &[u8]) -> FileIndex {
        let (lines, crlf) = crate::text::lines_and_crlf(source);
        let mut parser = Parser::new();
        let tree = parser
            .set_language(&language.grammar())
            .ok()
            .and_then(|()| parser.parse(source, None));
        let Some(tree) = tree else {
            return FileIndex {
                language,
                definitions: Vec::new(),
                occurrences: Vec::new(),
                has_errors: true,
                lines,
                crlf,
            };
        };
        let root = tree.root_node();
        let mut walk = Walk {
            language,
            source,
            definitions: Vec::new(),
            occurrences: Vec::new(),
        };
        walk.run(root);
        // Cached for the run: no growth slack is kept.
        walk.definitions.shrink_to_fit();
        walk.occurrences.shrink_to_fit();
        FileIndex {
            language,
            definitions: walk.definitions,
            occurrences: walk.occurrences,
            has_errors: root.has_error(),
            lines,
            crlf,
        }
    }

    /// What follows line `n` as shown: [`vouch_core::CR_MARK`] when it ended with `\r\n`.
    pub fn ending_mark(&self, n: u32) -> &'static str {
        vouch_core::ending_mark(self.crlf.binary_search(&n).is_ok())
    }

    /// Memory this index holds, roughly (for the cache bound).
    pub(crate) fn weight(&self) -> usize {
        // A line is a String (24 bytes) and its heap block; an occurrence 40 bytes and
        // its name's block (allocator overhead included).
        self.lines.iter().map(|l| l.len() + 40).sum::<usize>()
            + self.crlf.len() * 4
            + self
                .occurrences
                .iter()
                .map(|o| o.name.len() + 56)
                .sum::<usize>()
            + self.definitions.len() * 160
    }
}

/// The iterative walk that fills an index (no recursion: hostile nesting cannot overflow
/// the stack).
struct Walk<'s> {
    language: Language,
    source: &'s [u8],
    definitions: Vec<Definition>,
    occurrences: Vec<Occurrence>,
}

/// A node to visit, with what the walk knows about its surroundings.
struct Visit<'t> {
    node: Node<'t>,
    /// Parent, grandparent, great-grandparent.
    up: [Option<Node<'t>>; 3],
    /// The next sibling.
    next: Option<Node<'t>>,
    scope: Scope,
}

/// The definitions enclosing a node while walking.
#[derive(Clone, Copy, Default)]
struct Scope {
    innermost: Option<usize>,
    function: Option<usize>,
    depth: u32,
}

impl Walk<'_> {
    fn run(&mut self, root: Node<'_>) {
        // Each entry carries the node's ancestors (nearest first) and next sibling, because
        // tree-sitter finds a parent by descending from the root: asking for it per node
        // would make hostile nesting quadratic.
        let mut stack = vec![Visit {
            node: root,
            up: [None; 3],
            next: None,
            scope: Scope::default(),
        }];
        // One cursor and one buffer for the whole walk: a cursor per node allocates.
        let mut cursor = root.walk();
        let mut children: Vec<Node<'_>> = Vec::new();
        while let Some(visit) = stack.pop() {
            let Visit {
                node, up, scope, ..
            } = visit;
            let mut inner = scope;
            if let Some(def) = self.definition(node, up[0], scope) {
                let idx = self.definitions.len();
                let is_function = def.kind == SymbolKind::Function;
                self.definitions.push(def);
                inner = Scope {
                    innermost: Some(idx),
                    function: if is_function {
                        Some(idx)
                    } else {
                        scope.function
                    },
                    depth: scope.depth + 1,
                };
            }
            if node.child_count() == 0 {
                if node.is_named() && is_name(node.kind()) {
                    self.occurrence(&visit, scope);
                }
                continue;
            }
            // (`children` resets the cursor to `node` first.)
            children.clear();
            children.extend(node.children(&mut cursor));
            let child_up = [Some(node), up[0], up[1]];
            for (i, child) in children.iter().enumerate().rev() {
                stack.push(Visit {
                    node: *child,
                    up: child_up,
                    next: children.get(i + 1).copied(),
                    scope: inner,
                });
            }
        }
    }

    fn text(&self, node: Node<'_>) -> &str {
        std::str::from_utf8(&self.source[node.byte_range()]).unwrap_or("")
    }

    fn occurrence(&mut self, visit: &Visit<'_>, scope: Scope) {
        let node = visit.node;
        let start = node.start_byte();
        if let Some(i) = scope.innermost
            && self.definitions[i].name_byte == start
        {
            return;
        }
        let name = self.text(node);
        if name.is_empty() {
            return;
        }
        let role = if is_callee(node, &visit.up) || called_in_tokens(visit) {
            Role::Call
        } else {
            Role::Reference
        };
        self.occurrences.push(Occurrence {
            name: name.into(),
            line: node.start_position().row as u32 + 1,
            role,
            enclosing: scope.function.or(scope.innermost),
        });
    }

    /// The definition `node` starts, if any.
    fn definition(
        &self,
        node: Node<'_>,
        parent: Option<Node<'_>>,
        scope: Scope,
    ) -> Option<Definition> {
        let mut kind = self.language.definition_kind(node.kind())?;
        let name_node = match node.kind() {
            "impl_item" => node.child_by_field_name("type").map(last_name),
            "function_definition" | "declaration" | "field_declaration" | "type_definition"
                if matches!(self.language, Language::C | Language::Cpp) =>
            {
                let declarator = declarator_name(node)?;
                if matches!(node.kind(), "declaration" | "field_declaration")
                    && !has_function_declarator(node)
                {
                    return None;
                }
                Some(declarator)
            }
            "variable_declarator" => {
                let value = node.child_by_field_name("value");
                let function_like = value.is_some_and(|v| {
                    matches!(
                        v.kind(),
                        "arrow_function" | "function_expression" | "function" | "class"
                    )
                });
                if function_like {
                    kind = SymbolKind::Function;
                } else if scope.depth > 0 || !top_level_declaration(node) {
                    return None;
                }
                node.child_by_field_name("name")
            }
            _ => node.child_by_field_name("name").map(last_name),
        }?;
        if !is_name(name_node.kind()) && name_node.kind() != "operator_name" {
            return None;
        }
        let name = self.text(name_node).to_string();
        if name.is_empty() {
            return None;
        }
        let outer = match parent {
            Some(p) if p.kind() == "decorated_definition" => p,
            _ => node,
        };
        let start_line = outer.start_position().row as u32 + 1;
        let end_line = node.end_position().row as u32 + 1;
        let signature_end_line = node
            .child_by_field_name("body")
            .map_or(end_line, |body| {
                let before = body.prev_sibling().unwrap_or(body);
                before.end_position().row as u32 + 1
            })
            .clamp(start_line, end_line);
        let container = qualifier(name_node, self.source)
            .or_else(|| scope.innermost.map(|i| self.definitions[i].name.clone()));
        let in_outline = match scope.innermost {
            None => true,
            Some(i) => scope.depth == 1 && self.definitions[i].kind.holds_members(),
        };
        Some(Definition {
            name,
            kind,
            container,
            depth: scope.depth,
            start_line,
            end_line,
            signature_end_line,
            parameters: self.parameters(node),
            in_outline,
            name_byte: name_node.start_byte(),
        })
    }

    /// The parameters of a function-like node, as written.
    fn parameters(&self, node: Node<'_>) -> Vec<String> {
        let list = parameter_list(node);
        let Some(list) = list else {
            return Vec::new();
        };
        let mut cursor = list.walk();
        list.named_children(&mut cursor)
            .filter(|c| !c.kind().contains("comment"))
            .map(|c| {
                // Bytes that are not UTF-8 are shown escaped, as everywhere else.
                let raw = vouch_core::shown_text(&self.source[c.byte_range()]);
                let text = raw.split_whitespace().collect::<Vec<_>>().join(" ");
                let shown = crate::text::cut(&text, MAX_PARAMETER_BYTES);
                match shown.len() < text.len() {
                    true => format!("{shown}…[cut]"),
                    false => text,
                }
            })
            .collect()
    }
}

/// Most bytes of one parameter as a definition lists it (a longer one ends `…[cut]`).
const MAX_PARAMETER_BYTES: usize = 160;

/// The parameter list of a function-like node: its `parameters` field, or that of its
/// declarator (C, C++) or of its value (a JavaScript arrow function).
fn parameter_list(node: Node<'_>) -> Option<Node<'_>> {
    if let Some(p) = node.child_by_field_name("parameters") {
        return Some(p);
    }
    let mut cur = node
        .child_by_field_name("declarator")
        .or_else(|| node.child_by_field_name("value"))?;
    for _ in 0..8 {
        if let Some(p) = cur.child_by_field_name("parameters") {
            return Some(p);
        }
        cur = cur.child_by_field_name("declarator")?;
    }
    None
}

/// The last name of a qualified name (`a::b::c` → `c`), or the node itself.
fn last_name(node: Node<'_>) -> Node<'_> {
    let mut cur = node;
    for _ in 0..16 {
        if !PATHS.contains(&cur.kind()) {
            break;
        }
        match cur
            .child_by_field_name("name")
            .or_else(|| cur.named_child(cur.named_child_count().saturating_sub(1)))
        {
            Some(next) => cur = next,
            None => break,
        }
    }
    cur
}

/// The name a C/C++ declarator chain ends in (`*f(int)` → `f`).
fn declarator_name(node: Node<'_>) -> Option<Node<'_>> {
    let mut cur = node.child_by_field_name("declarator")?;
    for _ in 0..16 {
        if PATHS.contains(&cur.kind()) {
            return Some(last_name(cur));
        }
        if is_name(cur.kind()) || matches!(cur.kind(), "operator_name" | "destructor_name") {
            return Some(cur);
        }
        cur = cur
            .child_by_field_name("declarator")
            .or_else(|| cur.named_child(0))?;
    }
    None
}

/// The scope a qualified definition name states (`Cache::put` → `Cache`).
fn qualifier(name: Node<'_>, source: &[u8]) -> Option<String> {
    let parent = name.parent()?;
    if !PATHS.contains(&parent.kind()) || last_name(parent) != name {
        return None;
    }
    let scope = parent.child_by_field_name("scope")?;
    let scope = last_name(scope);
    std::str::from_utf8(&source[scope.byte_range()])
        .ok()
        .map(str::to_string)
}

/// Whether a name inside a macro's token tree is followed by `(…)`: a call as far as the
/// tokens tell.
fn called_in_tokens(visit: &Visit<'_>) -> bool {
    visit.up[0].is_some_and(|p| p.kind() == "token_tree")
        && visit.next.is_some_and(|n| {
            n.kind() == "token_tree" && n.child(0).is_some_and(|open| open.kind() == "(")
        })
}

/// Whether a C/C++ declaration declares a function (a prototype).
fn has_function_declarator(node: Node<'_>) -> bool {
    let mut cur = node.child_by_field_name("declarator");
    for _ in 0..16 {
        match cur {
            Some(n) if n.kind() == "function_declarator" => return true,
            Some(n) => cur = n.child_by_field_name("declarator"),
            None => return false,
        }
    }
    false
}

/// Whether a JavaScript/TypeScript declarator sits in a top-level declaration.
fn top_level_declaration(node: Node<'_>) -> bool {
    let mut cur = node.parent();
    for _ in 0..3 {
        match cur {
            Some(n) if n.kind() == "program" => return true,
            Some(n) if n.kind().ends_with("declaration") || n.kind() == "export_statement" => {
                cur = n.parent();
            }
            _ => return false,
        }
    }
    false
}

/// Whether a name node is the callee of a call (`f()`, `a.f()`, `a::f()`, `f!()`).
fn is_callee(node: Node<'_>, up: &[Option<Node<'_>>; 3]) -> bool {
    let mut cur = node;
    for parent in up {
        let Some(parent) = *parent else {
            return false;
        };
        if let Some((_, field)) = CALLS.iter().find(|(kind, _)| *kind == parent.kind()) {
            return parent.child_by_field_name(field) == Some(cur);
        }
        if PATHS.contains(&parent.kind()) && last_name(parent) == cur {
            cur = parent;
            continue;
        }
        return false;
    }
    false
}
