//! Pathname expansion: a field with unquoted `*`, `?` or `[` becomes the
//! sorted list of paths it matches, component by component.

use crate::pattern::{Marked, Pattern};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The paths `field` matches, sorted bytewise; empty if none.
/// With `dotglob`, names starting with `.` match without a literal dot.
pub fn expand(field: &Marked, dotglob: bool) -> Vec<Vec<u8>> {
    // Split into components at every `/`.
    let mut comps: Vec<Marked> = vec![Marked::default()];
    for (&c, &q) in field.bytes.iter().zip(&field.quoted) {
        if c == b'/' {
            comps.push(Marked::default());
        } else if let Some(last) = comps.last_mut() {
            last.push(&[c], q);
        }
    }
    let absolute = field.bytes.first() == Some(&b'/');
    let mut paths: Vec<Vec<u8>> = vec![if absolute { b"/".to_vec() } else { Vec::new() }];
    let n = comps.len();
    for (i, comp) in comps.into_iter().enumerate() {
        let last = i + 1 == n;
        if comp.bytes.is_empty() {
            // `a//b`, a leading `/`, or a trailing `/`.
            if i == 0 {
                continue;
            }
            for p in &mut paths {
                if !p.ends_with(b"/") {
                    p.push(b'/');
                }
            }
            if last {
                // A trailing slash matches directories only.
                paths.retain(|p| Path::new(OsStr::from_bytes(p)).is_dir());
            }
            continue;
        }
        let mut next = Vec::new();
        if comp.has_magic() {
            let pat = Pattern::compile(&comp.bytes, &comp.quoted);
            for base in &paths {
                let dir = if base.is_empty() {
                    b".".as_slice()
                } else {
                    base.as_slice()
                };
                let Ok(rd) = std::fs::read_dir(OsStr::from_bytes(dir)) else {
                    continue;
                };
                let mut names: Vec<Vec<u8>> = rd
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().as_bytes().to_vec())
                    .filter(|name| pat.matches_name(name, dotglob))
                    .collect();
                // `.` and `..` are not listed by read_dir; `.*` matches them
                // in other shells only sometimes, and bash leaves them out.
                names.sort();
                for name in names {
                    let mut p = base.clone();
                    if !p.is_empty() && !p.ends_with(b"/") {
                        p.push(b'/');
                    }
                    p.extend_from_slice(&name);
                    if !last && !Path::new(OsStr::from_bytes(&p)).is_dir() {
                        continue;
                    }
                    next.push(p);
                }
            }
        } else {
            for base in &paths {
                let mut p = base.clone();
                if !p.is_empty() && !p.ends_with(b"/") {
                    p.push(b'/');
                }
                p.extend_from_slice(&comp.bytes);
                let exists = std::fs::symlink_metadata(OsStr::from_bytes(&p)).is_ok();
                if exists {
                    next.push(p);
                }
            }
        }
        paths = next;
        if paths.is_empty() {
            return paths;
        }
    }
    paths.sort();
    paths
}
