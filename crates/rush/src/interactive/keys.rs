//! Applies `bind`'s key bindings and variables ([`crate::keymap`]) to the
//! rustyline editor: each binding that differs from the keymap's defaults
//! (which are rustyline's own keys, named as readline names them) becomes
//! a custom binding; a removed one does nothing.
//!
//! `bind -x` commands need the shell, which the editor's handlers cannot
//! hold (they must be `Send`), so the handler leaves the request in a
//! [`Pending`] slot and ends the read; the prompt loop runs the command
//! with READLINE_LINE and READLINE_POINT and reads again from the line
//! the command left.

use crate::keymap::{self, Action, Map};
use crate::shell::Shell;
use rustyline::config::{BellStyle, Configurer as _};
use rustyline::{
    Anchor, At, Cmd, ConditionalEventHandler, EditMode, Event, EventContext, EventHandler,
    InputMode, KeyCode as K, KeyEvent, Modifiers as M, Movement as Mv, RepeatCount, Word,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// A `bind -x` command asked for: the command, the line and the cursor's
/// byte offset.
pub type Request = (Vec<u8>, String, usize);
/// Where a `bind -x` handler leaves its request.
pub type Pending = Arc<Mutex<Option<Request>>>;

/// What has been applied to the editor.
#[derive(Debug, Default)]
pub struct Applied {
    generation: u64,
    events: Vec<Event>,
}

/// What a key does in one keymap.
#[derive(Clone)]
enum Does {
    /// The editor's own binding.
    Default,
    /// A readline function, for the key sequence.
    Function(String, Vec<u8>),
    Cmd(Cmd),
    /// `bind -x`.
    Exec(Vec<u8>),
}

struct Handler {
    /// Emacs, vi insert, vi command.
    does: [Does; 3],
    pending: Pending,
}

impl ConditionalEventHandler for Handler {
    fn handle(&self, _: &Event, n: RepeatCount, _: bool, ctx: &EventContext<'_>) -> Option<Cmd> {
        let map = match (ctx.mode(), ctx.input_mode()) {
            (EditMode::Vi, InputMode::Command) => 2,
            (EditMode::Vi, _) => 1,
            _ => 0,
        };
        match &self.does[map] {
            Does::Default => None,
            Does::Function(f, seq) => Some(command(f, seq, n).unwrap_or(Cmd::Noop)),
            Does::Cmd(c) => Some(c.clone()),
            Does::Exec(cmd) => {
                if let Ok(mut p) = self.pending.lock() {
                    *p = Some((cmd.clone(), ctx.line().to_string(), ctx.pos()));
                }
                Some(Cmd::AcceptLine)
            }
        }
    }
}

/// Applies what `bind` changed since the last call.
pub fn apply<H: rustyline::Helper, I: rustyline::history::History>(
    sh: &mut Shell,
    editor: &mut rustyline::Editor<H, I>,
    applied: &mut Applied,
    pending: &Pending,
) {
    if sh.keymaps.generation == applied.generation {
        return;
    }
    applied.generation = sh.keymaps.generation;
    for e in applied.events.drain(..) {
        editor.unbind_sequence(e);
    }
    let maps = [Map::Emacs, Map::ViInsert, Map::ViCommand];
    let mut changed: BTreeMap<Vec<u8>, [Does; 3]> = BTreeMap::new();
    for (i, map) in maps.into_iter().enumerate() {
        let defaults = keymap::default_bindings(map);
        let now = sh.keymaps.bindings(map);
        let mut set = |seq: &[u8], d: Does| {
            changed
                .entry(seq.to_vec())
                .or_insert_with(|| [Does::Default, Does::Default, Does::Default])[i] = d;
        };
        for (seq, action) in now {
            if defaults
                .binary_search_by(|(k, a)| (k.as_slice(), a).cmp(&(seq.as_slice(), action)))
                .is_ok()
            {
                continue;
            }
            set(seq, does(seq, action));
        }
        for (seq, _) in &defaults {
            if now.binary_search_by(|(k, _)| k.cmp(seq)).is_err() {
                set(seq, Does::Cmd(Cmd::Noop));
            }
        }
    }
    for (seq, does) in changed {
        let Some(keys) = key_events(&seq) else {
            continue;
        };
        let event = Event::KeySeq(keys);
        let handler = Handler {
            does,
            pending: pending.clone(),
        };
        editor.bind_sequence(event.clone(), EventHandler::Conditional(Box::new(handler)));
        applied.events.push(event);
    }
    // The variables rustyline has a setting for.
    let bell = match sh.keymaps.variable("bell-style").as_deref() {
        Some("audible") => BellStyle::Audible,
        Some("visible") => BellStyle::Visible,
        _ => BellStyle::None,
    };
    editor.set_bell_style(bell);
    let number = |sh: &mut Shell, name: &str| {
        sh.keymaps
            .variable(name)
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let items = number(sh, "completion-query-items");
    editor.set_completion_prompt_limit(usize::try_from(items).unwrap_or(usize::MAX));
    let timeout = number(sh, "keyseq-timeout");
    editor.set_keyseq_timeout(u16::try_from(timeout).ok());
    editor.enable_bracketed_paste(sh.keymaps.is_on("enable-bracketed-paste"));
    editor.set_completion_show_all_if_ambiguous(sh.keymaps.is_on("show-all-if-ambiguous"));
}

fn does(seq: &[u8], action: &Action) -> Does {
    match action {
        Action::Function(f) => Does::Function(f.clone(), seq.to_vec()),
        Action::Macro(m) => Does::Cmd(Cmd::Insert(1, String::from_utf8_lossy(m).into_owned())),
        Action::Command(c) => Does::Exec(c.clone()),
    }
}

/// The editor's command for a readline function, where it has one, with
/// the count `n` (`M-3` first).
pub fn command(name: &str, seq: &[u8], n: RepeatCount) -> Option<Cmd> {
    let word = Word::Emacs;
    Some(match name {
        "abort" => Cmd::Abort,
        "accept-line" => Cmd::AcceptLine,
        "backward-char" => Cmd::Move(Mv::BackwardChar(n)),
        "backward-delete-char" | "vi-rubout" => Cmd::Kill(Mv::BackwardChar(n)),
        "backward-kill-line" | "unix-line-discard" => Cmd::Kill(Mv::BeginningOfLine),
        "backward-kill-word" => Cmd::Kill(Mv::BackwardWord(n, word)),
        "backward-word" | "vi-prev-word" => Cmd::Move(Mv::BackwardWord(n, word)),
        "beginning-of-history" => Cmd::BeginningOfHistory,
        "beginning-of-line" => Cmd::Move(Mv::BeginningOfLine),
        "capitalize-word" => Cmd::CapitalizeWord,
        "clear-screen" | "clear-display" => Cmd::ClearScreen,
        "complete" | "menu-complete" => Cmd::Complete,
        "menu-complete-backward" => Cmd::CompleteBackward,
        "delete-char" | "vi-delete" => {
            if seq == [4] {
                Cmd::EndOfFile
            } else {
                Cmd::Kill(Mv::ForwardChar(n))
            }
        }
        "vi-eof-maybe" => Cmd::EndOfFile,
        "downcase-word" => Cmd::DowncaseWord,
        "end-of-history" => Cmd::EndOfHistory,
        "end-of-line" => Cmd::Move(Mv::EndOfLine),
        "forward-char" => Cmd::Move(Mv::ForwardChar(n)),
        "forward-search-history" => Cmd::ForwardSearchHistory,
        "forward-word" => Cmd::Move(Mv::ForwardWord(n, At::AfterEnd, word)),
        "vi-next-word" => Cmd::Move(Mv::ForwardWord(n, At::Start, Word::Vi)),
        "vi-end-word" => Cmd::Move(Mv::ForwardWord(n, At::BeforeEnd, Word::Vi)),
        "history-search-backward" | "history-substring-search-backward" => {
            Cmd::HistorySearchBackward
        }
        "history-search-forward" | "history-substring-search-forward" => Cmd::HistorySearchForward,
        "kill-line" => Cmd::Kill(Mv::EndOfLine),
        "kill-whole-line" => Cmd::Kill(Mv::WholeLine),
        "kill-word" => Cmd::Kill(Mv::ForwardWord(n, At::AfterEnd, word)),
        "next-history" => Cmd::LineDownOrNextHistory(n),
        "previous-history" => Cmd::LineUpOrPreviousHistory(n),
        "quoted-insert" => Cmd::QuotedInsert,
        "redraw-current-line" => Cmd::Repaint,
        "reverse-search-history" => Cmd::ReverseSearchHistory,
        "self-insert" => {
            let c = std::str::from_utf8(seq).ok()?.chars().last()?;
            Cmd::SelfInsert(n, c)
        }
        "tab-insert" => Cmd::Insert(n, "\t".to_string()),
        "transpose-chars" => Cmd::TransposeChars,
        "transpose-words" => Cmd::TransposeWords(n),
        "undo" | "vi-undo" => Cmd::Undo(n),
        "unix-word-rubout" | "vi-unix-word-rubout" => Cmd::Kill(Mv::BackwardWord(n, Word::Big)),
        "unix-filename-rubout" => Cmd::Kill(Mv::BackwardWord(n, Word::Vi)),
        "upcase-word" => Cmd::UpcaseWord,
        "yank" => Cmd::Yank(n, Anchor::Before),
        "vi-put" => Cmd::Yank(n, Anchor::After),
        "yank-pop" => Cmd::YankPop,
        "vi-first-print" => Cmd::Move(Mv::ViFirstPrint),
        _ => return None,
    })
}

/// The keys rustyline reports for the bytes a terminal sends, where it
/// has names for them.
pub fn key_events(seq: &[u8]) -> Option<Vec<KeyEvent>> {
    let mut keys = Vec::new();
    let mut i = 0;
    while i < seq.len() {
        let c = seq[i];
        if c == 0x1b {
            let rest = &seq[i + 1..];
            if rest.is_empty() {
                keys.push(KeyEvent(K::Esc, M::NONE));
                i += 1;
                continue;
            }
            // ESC then a terminal's sequence: the key with Alt.
            let (alt, rest, skip) = match rest.first() {
                Some(0x1b) if rest.len() > 2 => (true, &rest[1..], 2),
                _ => (false, rest, 1),
            };
            if let Some((key, used)) = terminal_key(rest) {
                let key = if alt {
                    KeyEvent(key.0, key.1 | M::ALT)
                } else {
                    key
                };
                keys.push(key);
                i += skip + used;
                continue;
            }
            // ESC then one character: that character with Alt.
            let (ch, used) = one_char(&seq[i + 1..])?;
            keys.push(KeyEvent::new(ch, M::ALT));
            i += 1 + used;
            continue;
        }
        let (ch, used) = one_char(&seq[i..])?;
        keys.push(KeyEvent::new(ch, M::NONE));
        i += used;
    }
    Some(keys)
}

fn one_char(s: &[u8]) -> Option<(char, usize)> {
    let n = match s.first()? {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    let ch = std::str::from_utf8(s.get(..n)?).ok()?.chars().next()?;
    Some((ch, n))
}

/// The key a CSI or SS3 sequence's final letter names.
fn letter_key(c: u8) -> Option<K> {
    Some(match c {
        b'A' => K::Up,
        b'B' => K::Down,
        b'C' => K::Right,
        b'D' => K::Left,
        b'H' => K::Home,
        b'F' => K::End,
        b'P' => K::F(1),
        b'Q' => K::F(2),
        b'R' => K::F(3),
        b'S' => K::F(4),
        b'Z' => K::BackTab,
        _ => return None,
    })
}

/// A CSI (`[`) or SS3 (`O`) sequence after ESC: the key and the bytes
/// used.
fn terminal_key(s: &[u8]) -> Option<(KeyEvent, usize)> {
    let (&intro, body) = s.split_first()?;
    if intro == b'O' {
        return Some((KeyEvent(letter_key(*body.first()?)?, M::NONE), 2));
    }
    if intro != b'[' {
        return None;
    }
    let end = body.iter().position(|c| (0x40..=0x7e).contains(c))?;
    let params = std::str::from_utf8(&body[..end]).ok()?;
    let fin = body[end];
    let mut nums = params.split(';').map(|p| p.parse::<u16>().unwrap_or(1));
    let first = nums.next().unwrap_or(1);
    let mods = match nums.next().unwrap_or(1) {
        2 => M::SHIFT,
        3 => M::ALT,
        4 => M::SHIFT | M::ALT,
        5 => M::CTRL,
        6 => M::CTRL | M::SHIFT,
        7 => M::CTRL | M::ALT,
        8 => M::CTRL | M::ALT | M::SHIFT,
        _ => M::NONE,
    };
    let key = match fin {
        b'~' => match first {
            1 | 7 => K::Home,
            2 => K::Insert,
            3 => K::Delete,
            4 | 8 => K::End,
            5 => K::PageUp,
            6 => K::PageDown,
            200 => K::BracketedPasteStart,
            n @ 11..=15 => K::F((n - 10) as u8),
            n @ 17..=21 => K::F((n - 11) as u8),
            n @ 23..=24 => K::F((n - 12) as u8),
            _ => return None,
        },
        c => letter_key(c)?,
    };
    Some((KeyEvent(key, mods), 2 + end))
}

/// The inputrc file an interactive shell reads at start: INPUTRC, else
/// ~/.inputrc, else /etc/inputrc (as readline).
pub fn read_inputrc(sh: &mut Shell) {
    let home = sh.vars.get(b"HOME").map(<[u8]>::to_vec).unwrap_or_default();
    let mut candidates = Vec::new();
    if let Some(f) = sh.vars.get(b"INPUTRC").filter(|f| !f.is_empty()) {
        candidates.push(f.to_vec());
    } else {
        candidates.push([home.as_slice(), b"/.inputrc"].concat());
        candidates.push(b"/etc/inputrc".to_vec());
    }
    for path in candidates {
        use std::os::unix::ffi::OsStrExt;
        let Ok(text) = std::fs::read(std::ffi::OsStr::from_bytes(&path)) else {
            continue;
        };
        let term = sh
            .vars
            .get(b"TERM")
            .map(|t| String::from_utf8_lossy(t).into_owned())
            .unwrap_or_default();
        let name = String::from_utf8_lossy(&path).into_owned();
        let before = sh.keymaps.variable("editing-mode");
        for e in sh.keymaps.read_init(&name, &text, &term, sh.opts.vi, 0) {
            sh.err_out(format!("{e}\n").as_bytes());
        }
        if sh.keymaps.variable("editing-mode") != before {
            sh.opts.vi = sh.keymaps.variable("editing-mode").as_deref() == Some("vi");
            sh.opts.emacs = !sh.opts.vi;
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_sequences_are_rustyline_keys() {
        let k = |s: &str| key_events(&keymap::translate(s.as_bytes())).unwrap();
        assert_eq!(k(r"\e[A"), vec![KeyEvent(K::Up, M::NONE)]);
        assert_eq!(k(r"\e[1;5C"), vec![KeyEvent(K::Right, M::CTRL)]);
        assert_eq!(k(r"\e\e[D"), vec![KeyEvent(K::Left, M::ALT)]);
        assert_eq!(k(r"\C-t"), vec![KeyEvent::ctrl('T')]);
        assert_eq!(k(r"\eq"), vec![KeyEvent::alt('q')]);
        assert_eq!(
            k(r"\C-x\C-r"),
            vec![KeyEvent::ctrl('X'), KeyEvent::ctrl('R')]
        );
        assert_eq!(k(r"\e[3~"), vec![KeyEvent(K::Delete, M::NONE)]);
    }

    #[test]
    fn the_defaults_are_the_editors_commands() {
        // Every function the default tables name is one the editor can
        // perform (or a vi mode switch, which rustyline does itself).
        for map in [Map::Emacs, Map::ViInsert, Map::ViCommand] {
            for (seq, a) in keymap::default_bindings(map) {
                if let Action::Function(f) = a
                    && !f.starts_with("vi-")
                    && !matches!(f.as_str(), "digit-argument" | "bracketed-paste-begin")
                    && !f.starts_with("character-search")
                {
                    assert!(command(&f, &seq, 1).is_some(), "{f}");
                }
            }
        }
    }
}
