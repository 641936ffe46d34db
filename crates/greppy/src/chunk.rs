//! Files cut into the spans that ranked search (`greppy find`) answers
//! with: one per definition that tree-sitter finds (functions, methods,
//! types, traits, modules, macros, constants), and windows of the lines
//! that lie in no definition.
//!
//! Each line of a file belongs to the innermost definition that holds it,
//! so a definition's text (what is indexed for it) is its own lines, not
//! its nested definitions': an `impl` block is indexed by its header and
//! the lines between its methods, each method by its own body. The span a
//! hit shows is the whole definition, with the comments just above it.

use std::path::Path;
use std::sync::OnceLock;
use tree_sitter::{Language, Node, Parser, Query, QueryCursor, StreamingIterator};

/// Files larger than this are cut into windows without parsing.
pub const MAX_PARSED: usize = 1 << 20;

/// The longest window of lines outside every definition.
const WINDOW: usize = 40;

/// At most this much of a chunk's own text is indexed.
const MAX_TEXT: usize = 16 << 10;

/// The languages whose definitions are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
    Go,
    JavaScript,
    TypeScript,
    Tsx,
    C,
    Cpp,
    Java,
}

impl Lang {
    /// The language of a file, by its extension.
    pub fn of(path: &Path) -> Option<Lang> {
        let ext = path.extension()?.to_str()?;
        Some(match ext {
            "rs" => Lang::Rust,
            "py" | "pyi" => Lang::Python,
            "go" => Lang::Go,
            "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "c" | "h" => Lang::C,
            "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ipp" => Lang::Cpp,
            "java" => Lang::Java,
            _ => return None,
        })
    }

    pub const ALL: [Lang; 9] = [
        Lang::Rust,
        Lang::Python,
        Lang::Go,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::C,
        Lang::Cpp,
        Lang::Java,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::Go => "go",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::Java => "java",
        }
    }

    fn language(self) -> Language {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
        }
    }

    /// The query whose captures are the definitions: the capture's name is
    /// the kind of definition, and `@name` its name.
    fn query_text(self) -> String {
        const C_DEFS: &str = r#"
            (function_definition declarator: (function_declarator declarator: (_) @name)) @function
            (function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (_) @name))) @function
            (struct_specifier name: (type_identifier) @name body: (_)) @struct
            (union_specifier name: (type_identifier) @name body: (_)) @struct
            (enum_specifier name: (type_identifier) @name body: (_)) @enum
            (type_definition declarator: (type_identifier) @name) @type
            (preproc_function_def name: (identifier) @name) @macro
            (preproc_def name: (identifier) @name) @macro
        "#;
        const JS_DEFS: &str = r#"
            (function_declaration name: (_) @name) @function
            (generator_function_declaration name: (_) @name) @function
            (class_declaration name: (_) @name) @class
            (method_definition name: (_) @name) @method
            (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])) @function
            (variable_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])) @function
        "#;
        const TS_DEFS: &str = r#"
            (interface_declaration name: (_) @name) @interface
            (type_alias_declaration name: (_) @name) @type
            (enum_declaration name: (_) @name) @enum
            (abstract_class_declaration name: (_) @name) @class
            (internal_module name: (_) @name) @module
            (function_signature name: (_) @name) @function
            (abstract_method_signature name: (_) @name) @method
        "#;
        match self {
            Lang::Rust => r#"
                (function_item name: (identifier) @name) @function
                (function_signature_item name: (identifier) @name) @function
                (struct_item name: (type_identifier) @name) @struct
                (union_item name: (type_identifier) @name) @struct
                (enum_item name: (type_identifier) @name) @enum
                (trait_item name: (type_identifier) @name) @trait
                (type_item name: (type_identifier) @name) @type
                (mod_item name: (identifier) @name) @module
                (macro_definition name: (identifier) @name) @macro
                (const_item name: (identifier) @name) @const
                (static_item name: (identifier) @name) @const
                (impl_item type: (_) @name) @impl
            "#
            .to_string(),
            Lang::Python => r#"
                (function_definition name: (identifier) @name) @function
                (class_definition name: (identifier) @name) @class
                (module (expression_statement (assignment left: (identifier) @name)) @const)
            "#
            .to_string(),
            Lang::Go => r#"
                (function_declaration name: (identifier) @name) @function
                (method_declaration name: (field_identifier) @name) @method
                (type_declaration (type_spec name: (type_identifier) @name)) @type
                (source_file (const_declaration (const_spec name: (identifier) @name)) @const)
                (source_file (var_declaration (var_spec name: (identifier) @name)) @const)
            "#
            .to_string(),
            Lang::JavaScript => JS_DEFS.to_string(),
            Lang::TypeScript | Lang::Tsx => format!("{JS_DEFS}{TS_DEFS}"),
            Lang::C => C_DEFS.to_string(),
            Lang::Cpp => format!(
                "{C_DEFS}{}",
                r#"
                (class_specifier name: (type_identifier) @name body: (_)) @class
                (namespace_definition name: (_) @name) @module
                (template_declaration (function_definition declarator: (function_declarator declarator: (_) @name))) @function
                "#
            ),
            Lang::Java => r#"
                (class_declaration name: (identifier) @name) @class
                (interface_declaration name: (identifier) @name) @interface
                (enum_declaration name: (identifier) @name) @enum
                (record_declaration name: (identifier) @name) @class
                (annotation_type_declaration name: (identifier) @name) @interface
                (method_declaration name: (identifier) @name) @method
                (constructor_declaration name: (identifier) @name) @method
            "#
            .to_string(),
        }
    }

    /// The compiled query (compiled once per process).
    fn query(self) -> &'static Query {
        static QUERIES: OnceLock<Vec<Query>> = OnceLock::new();
        let all = QUERIES.get_or_init(|| {
            Lang::ALL
                .iter()
                .map(|l| {
                    Query::new(&l.language(), &l.query_text())
                        .unwrap_or_else(|e| panic!("the {} definitions query: {e}", l.name()))
                })
                .collect()
        });
        &all[Lang::ALL.iter().position(|l| *l == self).unwrap_or(0)]
    }
}

/// One span of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// `function`, `method`, `struct`, `class`, …, or `text` for a window
    /// outside every definition.
    pub kind: &'static str,
    /// The definition's name (empty for `text`).
    pub name: String,
    /// Whether others can use it: `pub`, `export`, `public`, a capital
    /// (Go), no leading `_` (Python), not `static` (C).
    pub exported: bool,
    /// Its lines, 1-based and inclusive.
    pub start: u32,
    pub end: u32,
    /// The text indexed for it: its own lines (not its nested
    /// definitions').
    pub text: String,
}

impl Chunk {
    pub fn is_definition(&self) -> bool {
        self.kind != "text"
    }
}

/// A definition found in the tree, by byte and line.
struct Def {
    kind: &'static str,
    name: String,
    exported: bool,
    /// 0-based lines, inclusive.
    first: usize,
    last: usize,
}

/// Cuts a file's bytes into chunks. A file in no known language, or too
/// large to parse, is all windows.
pub fn chunks(path: &Path, bytes: &[u8]) -> Vec<Chunk> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let defs = match Lang::of(path) {
        Some(lang) if bytes.len() <= MAX_PARSED => definitions(lang, text.as_bytes()),
        _ => Vec::new(),
    };
    // The innermost definition of each line (defs are sorted outermost
    // first among those that start on the same line, so later ones win).
    let mut owner: Vec<Option<usize>> = vec![None; lines.len()];
    for (i, d) in defs.iter().enumerate() {
        for o in owner
            .iter_mut()
            .take(d.last.min(lines.len().saturating_sub(1)) + 1)
            .skip(d.first)
        {
            *o = Some(i);
        }
    }
    let mut texts: Vec<String> = vec![String::new(); defs.len()];
    let mut out = Vec::with_capacity(defs.len() + 4);
    let mut window: Option<(usize, String)> = None;
    let flush = |window: &mut Option<(usize, String)>, end: usize, out: &mut Vec<Chunk>| {
        if let Some((start, text)) = window.take()
            && !text.trim().is_empty()
        {
            out.push(Chunk {
                kind: "text",
                name: String::new(),
                exported: false,
                start: start as u32 + 1,
                end: end as u32,
                text,
            });
        }
    };
    for (n, line) in lines.iter().enumerate() {
        match owner[n] {
            Some(i) => {
                flush(&mut window, n, &mut out);
                push_line(&mut texts[i], line);
            }
            None => {
                if window.as_ref().is_some_and(|(s, _)| n - s >= WINDOW) {
                    flush(&mut window, n, &mut out);
                }
                push_line(
                    &mut window.get_or_insert_with(|| (n, String::new())).1,
                    line,
                );
            }
        }
    }
    flush(&mut window, lines.len(), &mut out);
    for (d, text) in defs.into_iter().zip(texts) {
        out.push(Chunk {
            kind: d.kind,
            text: format!("{}\n{text}", d.name),
            name: d.name,
            exported: d.exported,
            start: d.first as u32 + 1,
            end: d.last as u32 + 1,
        });
    }
    out.sort_by_key(|c| (c.start, std::cmp::Reverse(c.end)));
    out
}

fn push_line(text: &mut String, line: &str) {
    if text.len() < MAX_TEXT {
        text.push_str(line);
        text.push('\n');
    }
}

thread_local! {
    static PARSERS: std::cell::RefCell<Vec<(Lang, Parser)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The definitions in a file, sorted by first line, outermost first.
fn definitions(lang: Lang, src: &[u8]) -> Vec<Def> {
    let tree = PARSERS.with(|ps| {
        let mut ps = ps.borrow_mut();
        let i = match ps.iter().position(|(l, _)| *l == lang) {
            Some(i) => i,
            None => {
                let mut p = Parser::new();
                if p.set_language(&lang.language()).is_err() {
                    return None;
                }
                ps.push((lang, p));
                ps.len() - 1
            }
        };
        ps[i].1.parse(src, None)
    });
    let Some(tree) = tree else {
        return Vec::new();
    };
    let query = lang.query();
    let names = query.capture_names();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), src);
    let mut defs = Vec::new();
    let mut seen = rustc_hash::FxHashSet::default();
    while let Some(m) = matches.next() {
        let mut def: Option<(Node<'_>, &str)> = None;
        let mut name: Option<Node<'_>> = None;
        for c in m.captures() {
            let kind = names[c.index as usize];
            if kind == "name" {
                name = Some(c.node);
            } else {
                def = Some((c.node, kind));
            }
        }
        let (Some((node, kind)), Some(name)) = (def, name) else {
            continue;
        };
        // One definition per node (a C++ template's function is also a
        // plain function definition).
        if !seen.insert((node.start_byte(), node.end_byte())) {
            continue;
        }
        let name_text = String::from_utf8_lossy(&src[name.byte_range()])
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let first = leading_comments(node).start_position().row;
        defs.push(Def {
            kind: static_kind(kind),
            exported: exported(lang, node, &name_text, src),
            name: name_text,
            first,
            last: end_row(node),
        });
    }
    defs.sort_by_key(|d| (d.first, std::cmp::Reverse(d.last)));
    defs
}

/// The last line a node takes (a node that ends at a line's start does
/// not take that line).
fn end_row(node: Node<'_>) -> usize {
    let end = node.end_position();
    if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    }
}

/// The first of the comments and attributes right above a definition (no
/// blank line between), or the definition itself.
fn leading_comments(node: Node<'_>) -> Node<'_> {
    let mut first = node;
    // A decorated or exported definition starts at its wrapper.
    while let Some(p) = first.parent() {
        if matches!(
            p.kind(),
            "decorated_definition" | "export_statement" | "template_declaration"
        ) {
            first = p;
        } else {
            break;
        }
    }
    while let Some(prev) = first.prev_sibling() {
        let k = prev.kind();
        let attached = prev.end_position().row + 1 >= first.start_position().row;
        if attached && (k.contains("comment") || k == "attribute_item" || k == "decorator") {
            first = prev;
        } else {
            break;
        }
    }
    first
}

fn exported(lang: Lang, node: Node<'_>, name: &str, src: &[u8]) -> bool {
    let head = &src[node.start_byte()..node.end_byte().min(node.start_byte() + 96)];
    let starts = |w: &[u8]| head.windows(w.len()).any(|x| x == w);
    match lang {
        Lang::Rust => {
            let mut c = node.walk();
            node.children(&mut c)
                .any(|n| n.kind() == "visibility_modifier")
        }
        Lang::Go => name.chars().next().is_some_and(char::is_uppercase),
        Lang::Python => !name.starts_with('_'),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
            let mut n = node;
            loop {
                match n.parent() {
                    Some(p) if p.kind() == "export_statement" => return true,
                    Some(p) if p.kind() == "class_body" || p.kind() == "program" => break,
                    Some(p) => n = p,
                    None => break,
                }
            }
            // A method of an exported class, unless private.
            node.kind() == "method_definition" && !name.starts_with('#')
        }
        Lang::Java => starts(b"public "),
        Lang::C | Lang::Cpp => !head.starts_with(b"static "),
    }
}

fn static_kind(k: &str) -> &'static str {
    match k {
        "function" => "function",
        "method" => "method",
        "struct" => "struct",
        "class" => "class",
        "enum" => "enum",
        "trait" => "trait",
        "interface" => "interface",
        "type" => "type",
        "module" => "module",
        "macro" => "macro",
        "const" => "const",
        "impl" => "impl",
        _ => "definition",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(path: &str, src: &str) -> Vec<(&'static str, String, u32, u32)> {
        chunks(Path::new(path), src.as_bytes())
            .into_iter()
            .filter(Chunk::is_definition)
            .map(|c| (c.kind, c.name, c.start, c.end))
            .collect()
    }

    #[test]
    fn every_query_compiles() {
        for l in Lang::ALL {
            let _ = l.query();
        }
    }

    #[test]
    fn rust_definitions_with_their_comments() {
        let src = "use x;\n\n/// Sets it.\n#[inline]\npub fn set_retry(p: u32) {\n    let a = 1;\n}\n\nimpl Foo {\n    fn go(&self) {}\n}\n";
        let ks = kinds("a.rs", src);
        assert_eq!(
            ks,
            vec![
                ("function", "set_retry".into(), 3, 7),
                ("impl", "Foo".into(), 9, 11),
                ("function", "go".into(), 10, 10),
            ]
        );
        let cs = chunks(Path::new("a.rs"), src.as_bytes());
        let f = cs.iter().find(|c| c.name == "set_retry").unwrap();
        assert!(f.exported);
        assert!(f.text.contains("let a = 1;"));
        // The impl's text is its own lines, not its method's.
        let i = cs.iter().find(|c| c.kind == "impl").unwrap();
        assert!(!i.text.contains("fn go"));
        // The use line is a window.
        assert_eq!(cs[0].kind, "text");
        assert_eq!((cs[0].start, cs[0].end), (1, 2));
    }

    #[test]
    fn each_language_finds_a_function() {
        let cases = [
            ("a.py", "import os\n\ndef retry_policy(x):\n    return x\n"),
            (
                "a.go",
                "package a\n\nfunc RetryPolicy() int {\n\treturn 1\n}\n",
            ),
            (
                "a.js",
                "const x = 1;\nexport function retryPolicy() {\n  return 1;\n}\n",
            ),
            (
                "a.ts",
                "let x = 1;\nexport function retryPolicy(): number {\n  return 1;\n}\n",
            ),
            (
                "a.tsx",
                "let x = 1;\nfunction retryPolicy() {\n  return <div/>;\n}\n",
            ),
            (
                "a.c",
                "#include <x.h>\nint retry_policy(void) {\n  return 1;\n}\n",
            ),
            (
                "a.cpp",
                "#include <x>\nint retry_policy() {\n  return 1;\n}\n",
            ),
            (
                "A.java",
                "class A {\n  public int retryPolicy() {\n    return 1;\n  }\n}\n",
            ),
        ];
        for (path, src) in cases {
            let ks = kinds(path, src);
            assert!(
                ks.iter()
                    .any(|(k, n, _, _)| matches!(*k, "function" | "method")
                        && n.to_lowercase().replace('_', "") == "retrypolicy"),
                "{path}: {ks:?}"
            );
        }
    }

    #[test]
    fn windows_cover_text_outside_definitions() {
        let src: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let cs = chunks(Path::new("notes.txt"), src.as_bytes());
        assert_eq!(
            cs.iter().map(|c| (c.start, c.end)).collect::<Vec<_>>(),
            vec![(1, 40), (41, 80), (81, 100)]
        );
    }
}
