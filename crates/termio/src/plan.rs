//! Plan-mode detection in a coding agent's terminal output, incremental
//! and aware of ANSI escapes.
//!
//! The output is fed chunk by chunk, as the PTY gives it. Escape sequences
//! (CSI such as colours and cursor moves, OSC such as titles and links,
//! and two-byte escapes) are skipped by a small state machine that keeps
//! its state between chunks; the runs of text between them are found with
//! `memchr` and copied. The text is searched for every marker at once
//! with Teddy (aho-corasick's packed SIMD searcher; an Aho-Corasick
//! automaton where the CPU lacks the instructions), together with
//! the last bytes of the previous chunk's text, as many as the longest
//! marker less one. So a marker cut across chunks, or broken up by escapes
//! (`plan \x1b[1mmode\x1b[0m on`), is still found, once, and the cost per
//! MB does not grow with what was seen before, as a rescan of the history
//! does. (The first version stepped the automaton a byte at a time: 1.9-2.3
//! ms a MiB against 5.8-7.1 for the JavaScript chunk-plus-overlap detector,
//! in a quick run of `cargo xtask bench termio`. The automaton's own
//! prefilter, on two rare bytes of the markers, fired so often in English
//! text that it took 63% of the time: 1.16 ms a MiB with 14 markers,
//! against 0.35 with Teddy, timed alone.)
//!
//! (Two-byte escapes with intermediate bytes, such as `ESC ( B`, are
//! skipped whole.)
//!
//! Markers are literal text of the agents' interfaces, per agent and
//! kind ([`Marker`]). Between a [`Kind::PlanStart`] marker and the next
//! marker of the same agent, the text is kept (up to [`PLAN_MAX`] bytes)
//! and reported with [`Event::Plan`].

use aho_corasick::{AhoCorasick, MatchKind};

/// The most bytes of a plan's text kept.
pub const PLAN_MAX: usize = 256 << 10;

/// What a marker says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The agent is in plan mode.
    Entered,
    /// The plan's text follows.
    PlanStart,
    /// The plan's text has ended (the agent asks for approval).
    PlanEnd,
    /// The user approved the plan.
    Approved,
    /// The agent left plan mode without an approval.
    Exited,
}

/// A marker: literal text that the agent's interface prints.
#[derive(Debug, Clone)]
pub struct Marker {
    pub agent: &'static str,
    pub kind: Kind,
    pub text: String,
}

/// What the detector reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `agent` printed a marker of `kind`.
    Marker { agent: &'static str, kind: Kind },
    /// `agent`'s plan, as text without escapes.
    Plan { agent: &'static str, text: String },
}

/// The markers of Claude Code's interface: the mode indicator under the
/// prompt, the plan shown for approval and its question, and the lines
/// written into the transcript when the plan is approved or rejected, or
/// plan mode is left. (All in the strings of Claude Code 2.1.197's binary.)
pub fn claude_code() -> Vec<Marker> {
    agent_markers(
        "claude-code",
        &[
            (Kind::Entered, "plan mode on"),
            (Kind::PlanStart, "Here is Claude's plan:"),
            (Kind::PlanEnd, "Would you like to proceed?"),
            (Kind::Approved, "User approved Claude's plan"),
            (Kind::Exited, "User rejected Claude's plan"),
            (Kind::Exited, "Exited plan mode"),
        ],
    )
}

/// The markers of OpenAI Codex's terminal interface (codex-rs/tui): the
/// footer's mode indicator, the heading of a proposed plan, the question
/// that follows it, and the message its "Yes, implement this plan" choice
/// sends, which the transcript then shows. (The last three are in the
/// strings of Codex 0.171.0's binary; its footer no longer spells the
/// cycle hint out, so there `entered` does not come.)
pub fn codex() -> Vec<Marker> {
    agent_markers(
        "codex",
        &[
            (Kind::Entered, "Plan mode (shift+tab to cycle)"),
            (Kind::PlanStart, "Proposed Plan"),
            (Kind::PlanEnd, "Implement this plan?"),
            (Kind::Approved, "Implement the plan."),
        ],
    )
}

/// The markers of Google's Gemini CLI: the approval-mode indicator in plan
/// mode (as 0.61.0 renders it, and two later wordings in its source), the
/// first choice of the dialog that asks to approve the plan, and the
/// result line of an approved plan. Its dialog prints no line of its own
/// before the plan, so Gemini's plan text is not reported.
pub fn gemini_cli() -> Vec<Marker> {
    agent_markers(
        "gemini-cli",
        &[
            (Kind::Entered, "plan Shift+Tab to manual"),
            (Kind::Entered, "plan shift+tab to accept edits"),
            (Kind::Entered, "plan shift+tab to deep work"),
            (Kind::PlanEnd, "Yes, automatically accept edits"),
            (Kind::Approved, "Plan approved: "),
        ],
    )
}

/// The markers of GitHub Copilot CLI (from the code inside its 1.0.102
/// release): the heading of its plan-review dialog (the plan follows it),
/// the first of the dialog's choices (after the plan), and the two lines
/// it writes when a plan is approved. Its mode indicator is the bare word
/// `plan`, too common to mark anything.
pub fn copilot_cli() -> Vec<Marker> {
    agent_markers(
        "copilot-cli",
        &[
            (Kind::PlanStart, "Plan Ready for Review"),
            (Kind::PlanEnd, "Accept plan and continue in"),
            (Kind::Approved, "Plan approved! Exited plan mode"),
            (Kind::Approved, "Plan approved, exited plan mode"),
        ],
    )
}

/// Every agent's markers that termio knows.
pub fn builtin() -> Vec<Marker> {
    let mut all = claude_code();
    all.extend(codex());
    all.extend(gemini_cli());
    all.extend(copilot_cli());
    all
}

fn agent_markers(agent: &'static str, list: &[(Kind, &str)]) -> Vec<Marker> {
    list.iter()
        .map(|&(kind, text)| Marker {
            agent,
            kind,
            text: text.into(),
        })
        .collect()
}

/// Where the escape skipper is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Esc {
    Text,
    /// After ESC.
    Escape,
    /// After ESC and intermediate bytes (`ESC ( B` chooses a charset).
    Intermediate,
    /// In a CSI sequence (ESC [ … final byte).
    Csi,
    /// In an OSC string (ESC ] … BEL or ESC \).
    Osc,
    /// ESC inside an OSC string: `\` ends it.
    OscEscape,
}

/// The detector: feed it output, get events.
#[derive(Debug)]
pub struct Detector {
    markers: Vec<Marker>,
    ac: AhoCorasick,
    packed: Option<aho_corasick::packed::Searcher>,
    /// The longest marker, less one: how much text of one chunk a marker
    /// that ends in the next may start in.
    keep: usize,
    esc: Esc,
    /// The last `keep` bytes of text (escapes taken out), then the new
    /// chunk's text: what is searched.
    text: Vec<u8>,
    /// Where in `text` the last marker found ends: the search starts there,
    /// so that a marker never shares text with the one before it, however
    /// the output was cut into reads (as one search of the whole output
    /// finds them: leftmost first, without overlaps).
    after: usize,
    /// The plan being read: its agent and text so far.
    plan: Option<(&'static str, Vec<u8>)>,
}

impl Detector {
    /// A detector of `markers` (empty ones are left out).
    pub fn new(markers: Vec<Marker>) -> Detector {
        let markers: Vec<Marker> = markers.into_iter().filter(|m| !m.text.is_empty()).collect();
        // Markers do not overlap one another: the plain search, which
        // skips ahead with the prefilter, finds them all.
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(markers.iter().map(|m| m.text.as_bytes()))
            .or_else(|_| AhoCorasick::new(std::iter::empty::<&[u8]>()))
            .expect("an automaton of no pattern builds");
        // Teddy (SIMD over the patterns' first bytes), where the CPU has it:
        // the automaton's own prefilter, on rare bytes, fires too often in
        // English text.
        let packed = aho_corasick::packed::Config::new()
            .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
            .builder()
            .extend(markers.iter().map(|m| m.text.as_bytes()))
            .build();
        let keep = markers.iter().map(|m| m.text.len()).max().unwrap_or(1) - 1;
        Detector {
            markers,
            ac,
            packed,
            keep,
            esc: Esc::Text,
            text: Vec::new(),
            after: 0,
            plan: None,
        }
    }

    /// Every agent's markers ([`builtin`]): Claude Code's, Codex's, Gemini
    /// CLI's and Copilot CLI's.
    pub fn with_builtin_markers() -> Detector {
        Detector::new(builtin())
    }

    /// Appends the text of `chunk` (escapes skipped) to `self.text`.
    fn strip(&mut self, chunk: &[u8]) {
        let mut at = 0;
        while at < chunk.len() {
            if self.esc == Esc::Text {
                // A run of text, to the next escape.
                let end = memchr::memchr(0x1b, &chunk[at..]).map_or(chunk.len(), |k| at + k);
                self.text.extend_from_slice(&chunk[at..end]);
                if end == chunk.len() {
                    return;
                }
                self.esc = Esc::Escape;
                at = end + 1;
                continue;
            }
            // The long sequences are skipped with a tight scan for their
            // end, not a byte at a time through the state machine: a CSI
            // to its final byte, an OSC to BEL or ESC.
            if self.esc == Esc::Csi {
                match chunk[at..].iter().position(|b| (0x40..=0x7e).contains(b)) {
                    Some(k) => {
                        at += k + 1;
                        self.esc = Esc::Text;
                    }
                    None => at = chunk.len(),
                }
                continue;
            }
            if self.esc == Esc::Osc {
                match memchr::memchr2(0x07, 0x1b, &chunk[at..]) {
                    Some(k) => {
                        self.esc = if chunk[at + k] == 0x07 {
                            Esc::Text
                        } else {
                            Esc::OscEscape
                        };
                        at += k + 1;
                    }
                    None => at = chunk.len(),
                }
                continue;
            }
            let b = chunk[at];
            at += 1;
            self.esc = match self.esc {
                Esc::Escape => match b {
                    b'[' => Esc::Csi,
                    b']' => Esc::Osc,
                    0x20..=0x2f => Esc::Intermediate,
                    _ => Esc::Text,
                },
                Esc::Intermediate if (0x20..=0x2f).contains(&b) => Esc::Intermediate,
                Esc::Csi if !(0x40..=0x7e).contains(&b) => Esc::Csi,
                Esc::Osc => match b {
                    0x07 => Esc::Text,
                    0x1b => Esc::OscEscape,
                    _ => Esc::Osc,
                },
                Esc::OscEscape if b != b'\\' => Esc::Osc,
                _ => Esc::Text,
            };
        }
    }

    /// Feeds the next chunk of output; the events it completes.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        let old = self.text.len();
        self.strip(chunk);
        let mut events = Vec::new();
        // Only matches that end in the new text: the others were found.
        let mut last = old;
        let from = self.after.min(self.text.len());
        let hay = &self.text[from..];
        let found: Vec<(usize, usize)> = match &self.packed {
            Some(p) => p
                .find_iter(hay)
                .map(|m| (m.pattern().as_usize(), from + m.end()))
                .filter(|&(_, end)| end > old)
                .collect(),
            None => self
                .ac
                .find_iter(hay)
                .map(|m| (m.pattern().as_usize(), from + m.end()))
                .filter(|&(_, end)| end > old)
                .collect(),
        };
        if let Some(&(_, end)) = found.last() {
            self.after = end;
        }
        for (p, end) in found {
            let (agent, kind, len) = {
                let m = &self.markers[p];
                (m.agent, m.kind, m.text.len())
            };
            self.keep_plan(last, end);
            last = last.max(end);
            self.marker(agent, kind, len, &mut events);
        }
        self.keep_plan(last, self.text.len());
        let cut = self.text.len().saturating_sub(self.keep);
        self.text.drain(..cut);
        self.after = self.after.saturating_sub(cut);
        events
    }

    /// Adds the text from `from` to `to` to the plan being read.
    fn keep_plan(&mut self, from: usize, to: usize) {
        if let Some((_, buf)) = &mut self.plan
            && from < to
        {
            let room = PLAN_MAX.saturating_sub(buf.len());
            let take = &self.text[from..to];
            buf.extend(take.iter().take(room).filter(|&&b| b != b'\r'));
        }
    }
    /// A marker of `kind`, `len` bytes long, has just been read.
    fn marker(&mut self, agent: &'static str, kind: Kind, len: usize, out: &mut Vec<Event>) {
        // A plan of this agent ends at its next marker (whose text is not
        // the plan's).
        if let Some((a, _)) = &self.plan
            && *a == agent
            && let Some((a, mut buf)) = self.plan.take()
        {
            buf.truncate(buf.len().saturating_sub(len));
            let text = String::from_utf8_lossy(&buf).trim().to_string();
            out.push(Event::Plan { agent: a, text });
        }
        if kind == Kind::PlanStart {
            self.plan = Some((agent, Vec::new()));
        }
        out.push(Event::Marker { agent, kind });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn markers(events: &[Event]) -> Vec<Kind> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Marker { kind, .. } => Some(*kind),
                Event::Plan { .. } => None,
            })
            .collect()
    }

    /// A marker cut across chunks at every offset, or broken up by escape
    /// sequences of every kind, is found once.
    /// "User approved Claude's plan mode on": the approval consumes
    /// "plan", so "plan mode on" is not a marker, whether the output came
    /// in one read or byte by byte (found by the fuzz smoke: the text kept
    /// between reads let the second marker reuse the first's bytes).
    #[test]
    fn markers_never_share_text_however_the_reads_are_cut() {
        let out = b"User approved Claude's plan\x1b[0m mode on (shift+tab)\r\n";
        let whole = markers(&Detector::with_builtin_markers().feed(out));
        assert_eq!(whole, [Kind::Approved]);
        for n in 1..out.len() {
            let mut d = Detector::with_builtin_markers();
            let mut ev = Vec::new();
            for c in out.chunks(n) {
                ev.extend(d.feed(c));
            }
            assert_eq!(markers(&ev), whole, "reads of {n} bytes");
        }
    }

    #[test]
    fn markers_are_found_across_chunks_and_escapes() {
        let plain = b"  \xe2\x8f\xb8 plan mode on (shift+tab to cycle)\r\n".to_vec();
        let styled = b"\x1b[2m\xe2\x8f\xb8 \x1b[38;5;33mplan\x1b[0m \x1b]8;;http://x\x07mode\x1b]8;;\x1b\\ o\x1b(Bn\x1b[0m".to_vec();
        for text in [plain, styled] {
            for cut in 0..text.len() {
                let mut d = Detector::with_builtin_markers();
                let mut events = d.feed(&text[..cut]);
                events.extend(d.feed(&text[cut..]));
                assert_eq!(markers(&events), [Kind::Entered], "cut at {cut}");
            }
            // And a byte at a time.
            let mut d = Detector::with_builtin_markers();
            let events: Vec<Event> = text.iter().flat_map(|b| d.feed(&[*b])).collect();
            assert_eq!(markers(&events), [Kind::Entered]);
        }
    }

    /// The plan's text, between its start and the question, comes with
    /// the escapes taken out; then the approval.
    #[test]
    fn the_plan_text_is_reported() {
        let mut d = Detector::with_builtin_markers();
        let out = "\x1b[1mReady to code?\x1b[0m\r\n\r\nHere is Claude's plan:\r\n\
                   \x1b[38;5;246m1. Add a retry policy\x1b[0m\r\n2. Test it\r\n\r\n\
                   Would you like to proceed?\r\n❯ 1. Yes\r\n";
        let mut events = Vec::new();
        for piece in out.as_bytes().chunks(7) {
            events.extend(d.feed(piece));
        }
        events.extend(d.feed(b"\x1b[2K  \xe2\x8e\xbf  User approved Claude's plan:\r\n"));
        assert_eq!(
            events,
            [
                Event::Marker {
                    agent: "claude-code",
                    kind: Kind::PlanStart
                },
                Event::Plan {
                    agent: "claude-code",
                    text: "1. Add a retry policy\n2. Test it".into()
                },
                Event::Marker {
                    agent: "claude-code",
                    kind: Kind::PlanEnd
                },
                Event::Marker {
                    agent: "claude-code",
                    kind: Kind::Approved
                },
            ]
        );
    }

    /// Text that is not a marker, however much, reports nothing, and what
    /// is kept of a plan is bounded.
    #[test]
    fn other_text_reports_nothing_and_plans_are_bounded() {
        let mut d = Detector::with_builtin_markers();
        let noise = "plan mode o\x1b[31mff\x1b[0m; Here is Claude's pla\r\n".repeat(1000);
        assert!(d.feed(noise.as_bytes()).is_empty());
        let mut d = Detector::with_builtin_markers();
        d.feed(b"Here is Claude's plan:");
        d.feed(&vec![b'x'; 3 * PLAN_MAX]);
        let events = d.feed(b"Would you like to proceed?");
        match &events[0] {
            Event::Plan { text, .. } => assert!(text.len() <= PLAN_MAX),
            other => panic!("{other:?}"),
        }
    }

    /// Codex's proposed plan, rendered as its interface does (a dim bullet,
    /// a bold heading, the plan in a tinted block), its question, and the
    /// message sent on approval; Gemini CLI's mode indicator, approval
    /// choice and result.
    #[test]
    fn codex_and_gemini_markers_are_found() {
        let mut d = Detector::with_builtin_markers();
        let codex = "\x1b[2m\u{2022} \x1b[0m\x1b[1mProposed Plan\x1b[0m\r\n \r\n\
                     \x1b[48;5;236m  1. Read the config loader\x1b[0m\r\n\
                     \x1b[48;5;236m  2. Add the flag\x1b[0m\r\n \r\n\
                     \x1b[1mImplement this plan?\x1b[0m\r\n\
                     \x1b[36m\u{203a} 1. Yes, implement this plan\x1b[0m\r\n\
                     \x1b[2m\u{203a} \x1b[0mImplement the plan.\r\n";
        let mut events = Vec::new();
        for piece in codex.as_bytes().chunks(5) {
            events.extend(d.feed(piece));
        }
        let plan = events.iter().find_map(|e| match e {
            Event::Plan {
                agent: "codex",
                text,
            } => Some(text.clone()),
            _ => None,
        });
        assert_eq!(
            plan.as_deref(),
            Some("1. Read the config loader\n  2. Add the flag")
        );
        assert_eq!(
            markers(&events),
            [Kind::PlanStart, Kind::PlanEnd, Kind::Approved]
        );
        let footer =
            "\x1b[2m? for shortcuts \u{b7} \x1b[0m\x1b[35mPlan mode (shift+tab to cycle)\x1b[0m";
        assert_eq!(markers(&d.feed(footer.as_bytes())), [Kind::Entered]);

        let mut d = Detector::with_builtin_markers();
        let gemini = "\x1b[32mplan\x1b[90m Shift+Tab to manual\x1b[39m\r\n\
                      \u{25cf} 1. Yes, automatically accept edits\r\n\
                      \u{2713}  Exit Plan Mode Plan approved: /tmp/plans/p.md\r\n";
        let events: Vec<Event> = gemini
            .as_bytes()
            .chunks(3)
            .flat_map(|c| d.feed(c))
            .collect();
        assert_eq!(
            markers(&events),
            [Kind::Entered, Kind::PlanEnd, Kind::Approved]
        );
        assert!(events.iter().all(|e| matches!(
            e,
            Event::Marker {
                agent: "gemini-cli",
                ..
            }
        )));

        // Copilot CLI's review dialog: its heading, the plan, its choices;
        // then its approval line, which holds Claude Code's `Exited plan
        // mode` and is Copilot's, not Claude's.
        let mut d = Detector::with_builtin_markers();
        let copilot = "\x1b[1mPlan Ready for Review\x1b[22m\r\n\x1b[2mready to implement\x1b[22m\r\n\r\n\
                       # Retry policy\r\n1. Add backoff\r\n\r\n\
                       \x1b[36m\u{276f} 1. Accept plan and continue in Autopilot execution mode\x1b[39m\r\n\
                       \u{2705} Plan approved! Exited plan mode.\r\n";
        let events: Vec<Event> = copilot
            .as_bytes()
            .chunks(4)
            .flat_map(|c| d.feed(c))
            .collect();
        assert_eq!(
            markers(&events),
            [Kind::PlanStart, Kind::PlanEnd, Kind::Approved]
        );
        assert!(events.iter().any(|e| matches!(e,
            Event::Plan { agent: "copilot-cli", text } if text.contains("1. Add backoff"))));
        assert!(events.iter().all(|e| matches!(
            e,
            Event::Marker {
                agent: "copilot-cli",
                ..
            } | Event::Plan {
                agent: "copilot-cli",
                ..
            }
        )));

        // Claude Code's line when plan mode is left.
        let left = "\x1b[38;5;66m\u{23f8}\x1b[39m Exited plan mode\r\n";
        assert_eq!(
            Detector::with_builtin_markers().feed(left.as_bytes()),
            [Event::Marker {
                agent: "claude-code",
                kind: Kind::Exited
            }]
        );
    }
}
