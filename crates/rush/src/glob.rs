//! Pathname expansion: a field with unquoted `*`, `?` or `[` becomes the
//! sorted list of paths it matches, component by component. With
//! `globstar`, a component that is `**` alone matches any number of
//! directories (and, last, every file below).

use crate::pattern::{Marked, Pattern};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The `shopt` options pathname expansion follows.
#[derive(Debug, Clone, Copy, Default)]
pub struct How {
    /// Names starting with `.` match without a literal dot.
    pub dotglob: bool,
    /// Patterns match without regard to case.
    pub nocase: bool,
    /// `**` alone matches any depth of directories.
    pub globstar: bool,
    /// `shopt -s globskipdots` (the default): `.` and `..` are never
    /// matched; without it a pattern with a leading dot matches them.
    pub skipdots: bool,
}

/// Every path below `base` (`.` when empty), depth first and sorted, not
/// following links to directories; hidden names only with `dotglob`.
/// Directories only when `dirs_only`, and then links to directories too
/// when `links_too` (they are listed, never entered).
fn below(base: &[u8], dotglob: bool, dirs_only: bool, links_too: bool, out: &mut Vec<Vec<u8>>) {
    let dir = if base.is_empty() {
        b".".as_slice()
    } else {
        base
    };
    let Ok(rd) = std::fs::read_dir(OsStr::from_bytes(dir)) else {
        return;
    };
    let mut entries: Vec<(Vec<u8>, bool, bool)> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().as_bytes().to_vec();
            let t = e.file_type().ok();
            let is_dir = t.is_some_and(|t| t.is_dir());
            let is_link = t.is_some_and(|t| t.is_symlink());
            (dotglob || !name.starts_with(b".")).then_some((name, is_dir, is_link))
        })
        .collect();
    entries.sort();
    for (name, is_dir, is_link) in entries {
        let mut p = base.to_vec();
        if !p.is_empty() && !p.ends_with(b"/") {
            p.push(b'/');
        }
        p.extend_from_slice(&name);
        if is_dir
            || !dirs_only
            || (links_too && is_link && Path::new(OsStr::from_bytes(&p)).is_dir())
        {
            out.push(p.clone());
        }
        if is_dir {
            below(&p, dotglob, dirs_only, links_too, out);
        }
    }
}

/// The paths `field` matches, sorted bytewise; empty if none.
pub fn expand(field: &Marked, how: How) -> Vec<Vec<u8>> {
    let dotglob = how.dotglob;
    // Split into components at every `/`.
    let mut comps: Vec<Marked> = vec![Marked::default()];
    for (&c, &q) in field.bytes.iter().zip(&field.quoted) {
        if c == b'/' {
            comps.push(Marked::default());
        } else if let Some(last) = comps.last_mut() {
            last.push(&[c], q);
        }
    }
    // `dir/**` lists `dir/` itself first; when the directory part has a
    // pattern of its own (`*/**`, `a/**/**`), bash lists it as `dir`.
    let dir_is_pattern = comps[..comps.len() - 1].iter().any(Marked::has_magic);
    if how.globstar {
        // bash collapses a run of `**` components into one: `**/**/x` is
        // `**/x`, and `a/**/**` is `a/**`.
        let starstar = |c: &Marked| c.bytes == b"**" && c.quoted.iter().all(|q| !q);
        comps.dedup_by(|b, a| starstar(a) && starstar(b));
    }
    let absolute = field.bytes.first() == Some(&b'/');
    let mut paths: Vec<Vec<u8>> = vec![if absolute { b"/".to_vec() } else { Vec::new() }];
    let n = comps.len();
    let comps_empty_last = comps.last().is_some_and(|c| c.bytes.is_empty());
    for (i, comp) in comps.into_iter().enumerate() {
        let last = i + 1 == n;
        if comp.bytes.is_empty() {
            // `a//b`, a leading `/`, or a trailing `/`.
            if i == 0 {
                continue;
            }
            // The current folder itself (from `**/`) is no match.
            paths.retain(|p| !p.is_empty());
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
        if how.globstar && comp.bytes == b"**" && comp.quoted.iter().all(|q| !q) {
            // Zero or more directories; last in the field, every path below.
            for base in &paths {
                if !last {
                    next.push(base.clone());
                } else if !base.is_empty() {
                    let mut b = base.clone();
                    if !b.ends_with(b"/") && !dir_is_pattern {
                        b.push(b'/');
                    }
                    next.push(b);
                }
                // `**/` alone lists links to directories as directories; a
                // further component never looks inside them.
                let links_too = i + 2 == n && comps_empty_last;
                let mut found = Vec::new();
                below(base, dotglob, !last, links_too, &mut found);
                next.extend(found);
            }
        } else if comp.has_magic() {
            let pat = Pattern::compile_with(
                &comp.bytes,
                &comp.quoted,
                crate::pattern::extglob(),
                how.nocase,
            );
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
                // `.` and `..` are not listed by read_dir; without
                // globskipdots bash matches them, by a leading dot only.
                if !how.skipdots {
                    names.extend(
                        [&b"."[..], b".."]
                            .into_iter()
                            .filter(|n| pat.matches_name(n, false))
                            .map(<[u8]>::to_vec),
                    );
                }
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
