//! Ranked search (`greppy find`): BM25 (Tantivy) over the chunks of
//! [`crate::chunk`], with definitions, exported names and names that spell
//! the query's words boosted, and definitions answered first.
//!
//! A [`Ranked`] index is kept beside a root's trigram index, built the
//! first time a root is asked a ranked question, and brought up to date
//! before each one: it reads the paths the root's updater has logged since
//! (see [`crate::live::Root::changes_since`]), or, when that log has moved
//! on without it (a rebuild, a restart, a long pause), compares every
//! file's size and time with those it indexed.
//!
//! Every file has one hidden `file` document (its path, size and time),
//! from which a reopened index learns what it holds; a file's documents
//! and its `file` document are replaced together, by the path's term.
//!
//! Tokens: words of letters, digits and `_`, each lowercased and stemmed,
//! with the parts of a snake_case or camelCase word beside the word
//! (`RetryPolicy` gives `retrypolicy`, `retri`, `polici`).

use crate::chunk::{Chunk, chunks};
use anyhow::{Context, Result};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
    Value,
};
use tantivy::tokenizer::{
    Language, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer, Token, TokenStream,
    Tokenizer,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

/// The name the code tokenizer is registered under.
const CODE: &str = "greppy_code";

/// Files larger than this are left out of ranked search (generated tables
/// and bundles, which would only crowd the answers).
pub const MAX_RANKED: u64 = 4 << 20;

/// The indexing memory of one sync: a small change takes one thread, a
/// build both cores.
const SMALL_HEAP: usize = 15 << 20;
const BUILD_HEAP: usize = 96 << 20;

/// A ranked answer: a span of lines of a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub path: PathBuf,
    /// 1-based and inclusive.
    pub start: u32,
    pub end: u32,
    pub score: f32,
    /// `function`, `struct`, …, or `text`.
    pub kind: String,
    pub name: String,
}

impl Hit {
    pub fn is_definition(&self) -> bool {
        self.kind != "text"
    }
}

#[derive(Debug, Clone, Copy)]
struct Fields {
    path: Field,
    dirs: Field,
    name: Field,
    name_raw: Field,
    kind: Field,
    def: Field,
    exported: Field,
    body: Field,
    path_text: Field,
    start: Field,
    end: Field,
    mtime: Field,
    size: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let code = |stored: bool| {
        let o = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(CODE)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        if stored { o.set_stored() } else { o }
    };
    let f = Fields {
        path: b.add_bytes_field("path", INDEXED | STORED),
        dirs: b.add_bytes_field("dirs", INDEXED),
        name: b.add_text_field("name", code(true)),
        name_raw: b.add_text_field("name_raw", STRING),
        kind: b.add_text_field("kind", STRING | STORED),
        def: b.add_text_field("def", STRING),
        exported: b.add_text_field("exported", STRING),
        body: b.add_text_field("body", code(false)),
        path_text: b.add_text_field("path_text", code(false)),
        start: b.add_u64_field("start", STORED),
        end: b.add_u64_field("end", STORED),
        mtime: b.add_u64_field("mtime", STORED),
        size: b.add_u64_field("size", STORED),
    };
    (b.build(), f)
}

/// The most query terms (and words spelled as names) taken.
const MAX_TERMS: usize = 32;

/// The analyzer of indexed text: code words, lowercased, long ones
/// dropped, stemmed.
fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(CodeTokenizer)
        .filter(RemoveLongFilter::limit(48))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Words a question is made of that say nothing about the code.
const QUESTION_WORDS: [&str; 16] = [
    "where", "how", "what", "which", "who", "when", "why", "does", "do", "done", "find", "show",
    "me", "we", "i", "code",
];

/// The analyzer of a query: as [`analyzer`], without English stop words
/// and question words.
fn query_analyzer() -> TextAnalyzer {
    let stop = StopWordFilter::new(Language::English)
        .unwrap_or_else(|| StopWordFilter::remove(Vec::<String>::new()));
    TextAnalyzer::builder(CodeTokenizer)
        .filter(RemoveLongFilter::limit(48))
        .filter(stop)
        .filter(StopWordFilter::remove(QUESTION_WORDS.map(String::from)))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Splits text into code words: runs of letters, digits and `_`. Each
/// word comes lowercased, followed by its parts when it has several
/// (`set_retryPolicy`: `set_retrypolicy`, `set`, `retry`, `policy`).
#[derive(Debug, Clone, Copy)]
struct CodeTokenizer;

#[derive(Debug)]
struct CodeTokens {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for CodeTokens {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }
    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokens;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokens {
        let mut tokens = Vec::new();
        let push = |from: usize, to: usize, tokens: &mut Vec<Token>| {
            tokens.push(Token {
                offset_from: from,
                offset_to: to,
                position: tokens.len(),
                text: text[from..to].to_lowercase(),
                position_length: 1,
            });
        };
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        let mut chars = text.char_indices().peekable();
        while let Some((start, c)) = chars.next() {
            if !is_word(c) {
                continue;
            }
            let mut end = start + c.len_utf8();
            while let Some(&(i, c)) = chars.peek() {
                if !is_word(c) {
                    break;
                }
                end = i + c.len_utf8();
                chars.next();
            }
            let word = &text[start..end];
            let trimmed = word.trim_matches('_');
            if trimmed.is_empty() {
                continue;
            }
            let from = start + (word.len() - word.trim_start_matches('_').len());
            push(from, from + trimmed.len(), &mut tokens);
            let parts = parts(trimmed);
            if parts.len() > 1 {
                for (a, b) in parts {
                    push(from + a, from + b, &mut tokens);
                }
            }
        }
        CodeTokens { tokens, next: 0 }
    }
}

/// The parts of an identifier, as byte ranges: split at `_` (and any
/// other character that is not a letter or digit), at a lower
/// case letter or digit followed by a capital, and before the last
/// capital of a run followed by a lower case letter (`HTTPServer`: `HTTP`,
/// `Server`).
fn parts(word: &str) -> Vec<(usize, usize)> {
    let cs: Vec<(usize, char)> = word.char_indices().collect();
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (k, &(i, c)) in cs.iter().enumerate() {
        if !c.is_alphanumeric() {
            if let Some(s) = start.take() {
                out.push((s, i));
            }
            continue;
        }
        let prev = k.checked_sub(1).map(|p| cs[p].1);
        let next = cs.get(k + 1).map(|x| x.1);
        let boundary = match prev {
            Some(p) if p.is_alphanumeric() && c.is_uppercase() => {
                p.is_lowercase()
                    || p.is_numeric()
                    || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
            }
            _ => false,
        };
        if boundary && let Some(s) = start.take() {
            out.push((s, i));
        }
        if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s, word.len()));
    }
    out
}

/// The words of an identifier, lowercased (`set_retryPolicy`: `set`,
/// `retry`, `policy`): how a person says it.
pub fn identifier_words(name: &str) -> Vec<String> {
    parts(name)
        .into_iter()
        .map(|(a, b)| name[a..b].to_lowercase())
        .collect()
}

/// The tokens an analyzer makes of `text`.
fn tokens(a: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut s = a.token_stream(text);
    while let Some(t) = s.next() {
        if !out.contains(&t.text) {
            out.push(t.text.clone());
        }
    }
    out
}

/// What a ranked index holds of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    mtime: u64,
    size: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some(Stamp {
        mtime: crate::index::mtime_ns(&m).unwrap_or(0),
        size: m.len(),
    })
}

/// The ranked index of one root.
pub struct Ranked {
    root: PathBuf,
    index: Index,
    reader: IndexReader,
    f: Fields,
    state: Mutex<State>,
}

impl std::fmt::Debug for Ranked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ranked").field("root", &self.root).finish()
    }
}

/// What is indexed, and how far the root's change log has been read.
#[derive(Debug, Default)]
struct State {
    files: FxHashMap<PathBuf, Stamp>,
    cursor: u64,
}

/// The files a root holds now, as a sync needs them.
pub trait Tree {
    /// Every file, in any order.
    fn all_files(&self) -> Vec<PathBuf>;
    /// Whether `path` is one of them.
    fn has_file(&self, path: &Path) -> bool;
    /// The files at or under `dir`.
    fn files_under(&self, dir: &Path) -> Vec<PathBuf>;
}

/// What changed in a tree since a sync: the paths named (files or
/// folders), or everything.
#[derive(Debug)]
pub enum Changes {
    Paths(Vec<PathBuf>),
    All,
}

impl Tree for crate::live::Snapshot {
    fn all_files(&self) -> Vec<PathBuf> {
        self.files_under(Path::new("/"))
    }
    fn has_file(&self, path: &Path) -> bool {
        crate::live::Snapshot::has_file(self, path)
    }
    fn files_under(&self, dir: &Path) -> Vec<PathBuf> {
        crate::live::Snapshot::files_under(self, dir)
    }
}

/// The files a walk found, sorted: the tree of a search with no daemon.
#[derive(Debug)]
pub struct Walked(pub Vec<PathBuf>);

impl Tree for Walked {
    fn all_files(&self) -> Vec<PathBuf> {
        self.0.clone()
    }
    fn has_file(&self, path: &Path) -> bool {
        self.0.binary_search_by(|p| p.as_path().cmp(path)).is_ok()
    }
    fn files_under(&self, dir: &Path) -> Vec<PathBuf> {
        self.0
            .iter()
            .filter(|p| p.starts_with(dir))
            .cloned()
            .collect()
    }
}

impl Ranked {
    /// Opens the index in `dir` (made if it is not there, rebuilt if it
    /// cannot be read), or one in memory.
    pub fn open(root: PathBuf, dir: Option<&Path>) -> Result<Ranked> {
        let (schema, f) = schema();
        let index = match dir {
            None => Index::create_in_ram(schema),
            Some(d) => match open_dir(d, &schema) {
                Ok(i) => i,
                Err(_) => {
                    let _ = std::fs::remove_dir_all(d);
                    open_dir(d, &schema)?
                }
            },
        };
        index.tokenizers().register(CODE, analyzer());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let ranked = Ranked {
            root,
            index,
            reader,
            f,
            state: Mutex::default(),
        };
        let files = ranked.stored_files()?;
        ranked.state.lock().unwrap_or_else(|e| e.into_inner()).files = files;
        Ok(ranked)
    }

    /// The files the index holds, from their `file` documents.
    fn stored_files(&self) -> Result<FxHashMap<PathBuf, Stamp>> {
        let searcher = self.reader.searcher();
        let q = TermQuery::new(
            Term::from_field_text(self.f.kind, "file"),
            IndexRecordOption::Basic,
        );
        let n = searcher.num_docs() as usize;
        let mut out = FxHashMap::default();
        if n == 0 {
            return Ok(out);
        }
        for (_, addr) in searcher.search(&q, &TopDocs::with_limit(n).order_by_score())? {
            let d: TantivyDocument = searcher.doc(addr)?;
            let (Some(p), Some(mtime), Some(size)) = (
                d.get_first(self.f.path).and_then(|v| v.as_bytes()),
                d.get_first(self.f.mtime).and_then(|v| v.as_u64()),
                d.get_first(self.f.size).and_then(|v| v.as_u64()),
            ) else {
                continue;
            };
            out.insert(
                PathBuf::from(std::ffi::OsStr::from_bytes(p)),
                Stamp { mtime, size },
            );
        }
        Ok(out)
    }

    /// The files indexed.
    pub fn files(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .files
            .len()
    }

    /// How far the root's change log has been read.
    pub fn cursor(&self) -> u64 {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).cursor
    }

    /// Brings the index up to `tree`: `changes` are what changed since the
    /// last sync, and `cursor` where the change log now stands.
    pub fn sync(&self, tree: &dyn Tree, changes: Changes, cursor: u64) -> Result<()> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut remove: Vec<PathBuf> = Vec::new();
        let mut add: Vec<(PathBuf, Stamp)> = Vec::new();
        let mut gone_dirs: Vec<PathBuf> = Vec::new();
        match changes {
            Changes::All => {
                let now = tree.all_files();
                let stamps: Vec<Option<Stamp>> = now.par_iter().map(|p| stamp(p)).collect();
                let mut present = rustc_hash::FxHashSet::default();
                for (p, s) in now.into_iter().zip(stamps) {
                    let Some(s) = s else { continue };
                    present.insert(p.clone());
                    if st.files.get(&p) != Some(&s) {
                        if st.files.contains_key(&p) {
                            remove.push(p.clone());
                        }
                        add.push((p, s));
                    }
                }
                remove.extend(st.files.keys().filter(|p| !present.contains(*p)).cloned());
            }
            Changes::Paths(mut paths) => {
                // A file named twice (created, then written) is read once.
                paths.sort();
                paths.dedup();
                for p in paths {
                    if tree.has_file(&p) {
                        if let Some(s) = stamp(&p)
                            && st.files.get(&p) != Some(&s)
                        {
                            remove.push(p.clone());
                            add.push((p, s));
                        }
                        continue;
                    }
                    // A folder (or a file that is gone): everything under
                    // it goes, and what the tree holds there comes back.
                    remove.push(p.clone());
                    gone_dirs.push(p.clone());
                    for f in tree.files_under(&p) {
                        if let Some(s) = stamp(&f) {
                            add.push((f, s));
                        }
                    }
                }
            }
        }
        // A file can be named and also be under a folder named: added once
        // (the deletions all come before the additions).
        add.sort_by(|a, b| a.0.cmp(&b.0));
        add.dedup_by(|a, b| a.0 == b.0);
        if remove.is_empty() && add.is_empty() && gone_dirs.is_empty() {
            st.cursor = cursor;
            return Ok(());
        }
        let build = add.len() > 256;
        let mut w: IndexWriter<TantivyDocument> = if build {
            self.index.writer_with_num_threads(2, BUILD_HEAP)?
        } else {
            self.index.writer_with_num_threads(1, SMALL_HEAP)?
        };
        for p in &remove {
            w.delete_term(Term::from_field_bytes(
                self.f.path,
                p.as_os_str().as_bytes(),
            ));
            st.files.remove(p);
        }
        for d in &gone_dirs {
            w.delete_term(Term::from_field_bytes(
                self.f.dirs,
                d.as_os_str().as_bytes(),
            ));
            st.files.retain(|p, _| !p.starts_with(d));
        }
        let f = self.f;
        let root = self.root.clone();
        // Read and cut in parallel; the writer takes documents from any
        // thread.
        let added: Vec<(PathBuf, Stamp)> = add
            .into_par_iter()
            .filter_map(|(p, s)| {
                let docs = file_docs(&f, &root, &p, s)?;
                for d in docs {
                    w.add_document(d).ok()?;
                }
                Some((p, s))
            })
            .collect();
        for (p, s) in added {
            st.files.insert(p, s);
        }
        w.commit().context("commit the ranked index")?;
        drop(w);
        self.reader.reload()?;
        if build {
            crate::give_back_memory();
        }
        st.cursor = cursor;
        Ok(())
    }

    /// The best `limit` spans for `query` under the folder `under`:
    /// definitions first, each group by score.
    pub fn find(&self, query: &str, under: &Path, limit: usize) -> Result<Vec<Hit>> {
        let f = self.f;
        let mut a = query_analyzer();
        let mut terms = tokens(&mut a, query);
        if terms.is_empty() {
            // Only stop words: take them as they are.
            terms = tokens(&mut analyzer(), query);
        }
        if terms.is_empty() {
            anyhow::bail!("{query:?}: no words to search for (letters, digits or _)");
        }
        if limit == 0 {
            return Ok(Vec::new());
        }
        // A query is a question, not a document: its first words decide.
        terms.truncate(MAX_TERMS);
        let mut content: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for t in &terms {
            for (field, boost) in [(f.name, 2.0), (f.body, 1.0), (f.path_text, 0.5)] {
                let q = TermQuery::new(
                    Term::from_field_text(field, t),
                    IndexRecordOption::WithFreqs,
                );
                content.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
            }
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> =
            vec![(Occur::Must, Box::new(BooleanQuery::new(content)))];
        if under != self.root {
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_bytes(f.dirs, under.as_os_str().as_bytes()),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        let constant = |field: Field, text: &str, score: f32| -> (Occur, Box<dyn Query>) {
            let q = TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::Basic);
            (
                Occur::Should,
                Box::new(ConstScoreQuery::new(Box::new(q), score)),
            )
        };
        clauses.push(constant(f.def, "1", 2.0));
        clauses.push(constant(f.exported, "1", 1.0));
        for (name, words) in spelled_names(query) {
            // A name that spells the whole query, or two of its words, is
            // what was asked for; one common word alone is only a hint.
            let score = match words {
                w if w >= 2 => 6.0,
                _ if terms.len() <= 2 => 6.0,
                _ => 1.0,
            };
            clauses.push(constant(f.name_raw, &name, score));
        }
        let q = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let want = (limit * 4).clamp(40, 400).max(limit);
        let top = searcher.search(&q, &TopDocs::with_limit(want).order_by_score())?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let d: TantivyDocument = searcher.doc(addr)?;
            let text = |field| {
                d.get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            let num = |field| {
                d.get_first(field)
                    .and_then(|v| v.as_u64())
                    .unwrap_or_default() as u32
            };
            let Some(path) = d.get_first(f.path).and_then(|v| v.as_bytes()) else {
                continue;
            };
            hits.push(Hit {
                path: PathBuf::from(std::ffi::OsStr::from_bytes(path)),
                start: num(f.start),
                end: num(f.end),
                score,
                kind: text(f.kind),
                name: text(f.name),
            });
        }
        // Stable: each group keeps the score order.
        hits.sort_by_key(|h| !h.is_definition());
        hits.truncate(limit);
        Ok(hits)
    }
}

/// A ranked search of `dir` with no daemon: its walk indexed in memory
/// (the whole tree is read, so this takes about what a build takes).
pub fn find_in_walk(dir: &Path, query: &str, limit: usize) -> Result<Vec<Hit>> {
    let mut files = crate::search::walk_tree(dir).files;
    files.sort();
    let ranked = Ranked::open(dir.to_path_buf(), None)?;
    ranked.sync(&Walked(files), Changes::All, 0)?;
    ranked.find(query, dir, limit)
}

fn open_dir(d: &Path, schema: &Schema) -> Result<Index> {
    std::fs::create_dir_all(d).with_context(|| format!("make {}", d.display()))?;
    let dir = tantivy::directory::MmapDirectory::open(d)?;
    let index = Index::open_or_create(dir, schema.clone())?;
    if index.schema() != *schema {
        anyhow::bail!("the ranked index in {} has another layout", d.display());
    }
    Ok(index)
}

/// The names a query may be spelling, lowercased, with the number of its
/// words each takes: each word, and each run of two or three neighbouring
/// words, run together and joined by `_`.
fn spelled_names(query: &str) -> Vec<(String, usize)> {
    let words: Vec<String> = query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .take(MAX_TERMS)
        .collect();
    let mut out: Vec<(String, usize)> = words.iter().map(|w| (w.clone(), 1)).collect();
    for n in 2..=3 {
        for run in words.windows(n) {
            out.push((run.concat(), n));
            out.push((run.join("_"), n));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A file's documents: its chunks and its `file` document. `None` if it
/// cannot be read, is binary (a NUL in its first page, as rg decides) or
/// is over [`MAX_RANKED`].
fn file_docs(f: &Fields, root: &Path, path: &Path, s: Stamp) -> Option<Vec<TantivyDocument>> {
    let path_bytes = path.as_os_str().as_bytes();
    let dirs: Vec<&Path> = path
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(root))
        .collect();
    let mut marker = TantivyDocument::new();
    marker.add_bytes(f.path, path_bytes);
    for dir in &dirs {
        marker.add_bytes(f.dirs, dir.as_os_str().as_bytes());
    }
    marker.add_text(f.kind, "file");
    marker.add_u64(f.mtime, s.mtime);
    marker.add_u64(f.size, s.size);
    let mut docs = vec![marker];
    if s.size > MAX_RANKED {
        return Some(docs);
    }
    let bytes = std::fs::read(path).ok()?;
    if crate::index::never_matches(&bytes) {
        return Some(docs);
    }
    let rel = path.strip_prefix(root).unwrap_or(path);
    let rel_text = rel.to_string_lossy();
    for c in chunks(path, &bytes) {
        docs.push(chunk_doc(f, path_bytes, &rel_text, &dirs, c));
    }
    Some(docs)
}

fn chunk_doc(f: &Fields, path: &[u8], rel: &str, dirs: &[&Path], c: Chunk) -> TantivyDocument {
    let mut d = TantivyDocument::new();
    d.add_bytes(f.path, path);
    for dir in dirs {
        d.add_bytes(f.dirs, dir.as_os_str().as_bytes());
    }
    d.add_text(f.path_text, rel);
    d.add_text(f.kind, c.kind);
    if c.is_definition() {
        d.add_text(f.def, "1");
        d.add_text(f.name_raw, c.name.to_lowercase());
    }
    if c.exported {
        d.add_text(f.exported, "1");
    }
    d.add_text(f.name, &c.name);
    d.add_text(f.body, &c.text);
    d.add_u64(f.start, u64::from(c.start));
    d.add_u64(f.end, u64::from(c.end));
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_words_and_their_parts() {
        let mut a = TextAnalyzer::builder(CodeTokenizer).build();
        assert_eq!(
            tokens(&mut a, "set_retryPolicy(HTTPServer, x2y) __init__"),
            vec![
                "set_retrypolicy",
                "set",
                "retry",
                "policy",
                "httpserver",
                "http",
                "server",
                "x2y",
                "init"
            ]
        );
    }

    #[test]
    fn query_words_drop_questions() {
        let mut a = query_analyzer();
        assert_eq!(
            tokens(&mut a, "where is the retry policy set?"),
            vec!["retri", "polici", "set"]
        );
    }
}
