//! Quoting values and listing variables as bash prints them (`declare -p`,
//! `set`, `export -p`, `xtrace`).

use crate::escape::single_quote;
use crate::vars::Value;

/// A variable's attribute letters, in bash's order (`declare -p`,
/// `${x@a}`, `${x@A}`).
pub fn attr_flags(v: &crate::vars::Var) -> String {
    let mut flags = String::new();
    match v.value {
        Some(Value::Indexed(_)) => flags.push('a'),
        Some(Value::Assoc(_)) => flags.push('A'),
        _ => {}
    }
    for (on, c) in [
        (v.integer, 'i'),
        (v.nameref, 'n'),
        (v.readonly, 'r'),
        (v.exported, 'x'),
        (v.case == Some(crate::vars::Case::Capitalize), 'c'),
        (v.case == Some(crate::vars::Case::Lower), 'l'),
        (v.case == Some(crate::vars::Case::Upper), 'u'),
    ] {
        if on {
            flags.push(c);
        }
    }
    flags
}

/// `declare -x name="value"`, as bash prints variables for `declare -p`,
/// `export -p` and `readonly -p`.
pub fn declare_line(name: &[u8], v: &crate::vars::Var) -> Vec<u8> {
    let mut flags = attr_flags(v);
    if flags.is_empty() {
        flags.push('-');
    }
    let mut out = format!("declare -{flags} ").into_bytes();
    out.extend_from_slice(name);
    match &v.value {
        Some(Value::Str(s)) => {
            out.push(b'=');
            out.extend_from_slice(&double_quote(s));
        }
        // `declare -a x` and nothing assigned: no `=()` (bash).
        Some(arr) if v.declared_only && arr.keys().is_empty() => {}
        Some(arr) => {
            out.push(b'=');
            out.extend_from_slice(&array_literal(arr));
        }
        None => {}
    }
    out.push(b'\n');
    out
}

/// `"value"` with `"`, `\`, `$` and `` ` `` escaped.
pub fn double_quote(s: &[u8]) -> Vec<u8> {
    if crate::escape::needs_ansi_c(s) {
        return crate::escape::ansi_c_quote(s);
    }
    let mut out = vec![b'"'];
    for &c in s {
        if matches!(c, b'"' | b'\\' | b'$' | b'`') {
            out.push(b'\\');
        }
        out.push(c);
    }
    out.push(b'"');
    out
}

/// Whether an associative array's key must be quoted to be read back, as
/// bash decides: empty, or with a blank or a character special to the
/// shell.
pub fn key_needs_quotes(k: &[u8]) -> bool {
    k.is_empty()
        || crate::escape::needs_ansi_c(k)
        || k.iter().any(|c| {
            matches!(
                c,
                b' ' | b'\t'
                    | b'\n'
                    | b'\''
                    | b'"'
                    | b'\\'
                    | b'|'
                    | b'&'
                    | b';'
                    | b'('
                    | b')'
                    | b'<'
                    | b'>'
                    | b'!'
                    | b'{'
                    | b'}'
                    | b'*'
                    | b'['
                    | b'?'
                    | b']'
                    | b'^'
                    | b'$'
                    | b'`'
            )
        })
        || matches!(k.first(), Some(b'#'))
        // A tilde where an assignment would expand it.
        || k.iter()
            .enumerate()
            .any(|(i, &c)| c == b'~' && (i == 0 || matches!(k[i - 1], b'=' | b':')))
        // `@` or `*` alone would name every element.
        || matches!(k, b"@" | b"*")
}

/// `([0]="a" [1]="b")`
pub fn array_literal(v: &Value) -> Vec<u8> {
    let mut out = vec![b'('];
    let keys = v.keys();
    let vals = v.elements();
    for (i, (k, val)) in keys.iter().zip(&vals).enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.push(b'[');
        if matches!(v, Value::Assoc(_)) && key_needs_quotes(k) {
            out.extend_from_slice(&double_quote(k));
        } else {
            out.extend_from_slice(k);
        }
        out.extend_from_slice(b"]=");
        out.extend_from_slice(&double_quote(val));
    }
    if matches!(v, Value::Assoc(_)) && !vals.is_empty() {
        out.push(b' ');
    }
    out.push(b')');
    out
}

/// Whether a function of this name may go to the environment: not a
/// path, no `=` (bash).
pub fn exportable_function_name(name: &[u8]) -> bool {
    !name.contains(&b'/') && !name.contains(&b'=')
}

/// Quotes a value for `set` output as bash does: `$'…'` for control
/// characters, single quotes when it holds a character special to the
/// shell (`~` only where it would expand, `#` only first), `\'` for a
/// lone single quote, else bare.
pub fn quote_value(v: &[u8]) -> Vec<u8> {
    let special = v.iter().enumerate().any(|(i, &c)| match c {
        b' ' | b'\t' | b'\n' | b'\'' | b'"' | b'\\' | b'|' | b'&' | b';' | b'(' | b')' | b'<'
        | b'>' | b'!' | b'{' | b'}' | b'*' | b'[' | b'?' | b']' | b'^' | b'$' | b'`' => true,
        b'~' => i == 0 || matches!(v[i - 1], b'=' | b':'),
        b'#' => i == 0,
        _ => false,
    });
    if v == b"'" {
        return b"\\'".to_vec();
    }
    if special || crate::escape::needs_ansi_c(v) {
        return quote_always(v);
    }
    v.to_vec()
}

/// Single quotes around any value (`${x@Q}`), or `$'…'` when it holds a
/// control character, as bash writes it.
pub fn quote_always(v: &[u8]) -> Vec<u8> {
    if crate::escape::needs_ansi_c(v) {
        return crate::escape::ansi_c_quote(v);
    }
    single_quote(v)
}

/// Quoting for `set -x` lines: as `set` quotes, and `''` for an empty
/// word (bash).
pub fn quote_for_trace(v: &[u8]) -> Vec<u8> {
    if v.is_empty() {
        return b"''".to_vec();
    }
    quote_value(v)
}
