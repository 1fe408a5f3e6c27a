//! Python `re` patterns that mean the same to the `regex` crate (ASCII, multi-line, Unicode off), rewritten
//! in its syntax; None for anything else (lookarounds, backreferences, inline flags, `\A`, set operations,
//! possessive repeats, a regex that may match nothing), which Python then runs.
//!
//! Every literal character other than a letter or digit is written as `\xHH`, so no character means
//! something to this crate that it does not mean to `re` (`\<`, `[[:alpha:]]`, `&&` in a class).

use regex_syntax::hir::{Class, Hir, HirKind};
use regex_syntax::ParserBuilder;

/// Escapes with the same meaning to both on ASCII text: classes, then characters.
const CLASS_ESCAPES: &[u8] = b"wWdDsS";
const CHAR_ESCAPES: &[(u8, u8)] = &[(b'n', b'\n'), (b't', b'\t'), (b'r', b'\r'), (b'f', 0x0C), (b'v', 0x0B)];

/// A pattern in this crate's syntax, with what tells where it may find lines Python would not.
pub struct Translated {
    pub pattern: String,
    /// No match can hold a newline: each line may be judged alone.
    pub in_line: bool,
    /// The longest literal every match holds (empty if none), as written: `ignore_case` applies to it too.
    pub literal: Vec<u8>,
}

pub fn translate(pattern: &[u8], ignore_case: bool) -> Option<Translated> {
    let rust = rust_pattern(pattern)?;
    let parse = |ignore_case| {
        let mut parser = ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .multi_line(true)
            .case_insensitive(ignore_case)
            .build();
        parser.parse(&rust).ok()
    };
    // Python reports an empty match after another where this crate does not: only a match of one byte or more.
    if parse(ignore_case)?.properties().minimum_len()? == 0 {
        return None;
    }
    let hir = parse(false)?; // literals as written; under ignore-case they are compared regardless of case
    let literal = required_literals(&hir)
        .into_iter()
        .max_by_key(Vec::len)
        .unwrap_or_default();
    Some(Translated {
        pattern: rust,
        in_line: in_line(&hir),
        literal,
    })
}

/// Runs of characters every match holds (alternations and optional parts add none).
fn required_literals(hir: &Hir) -> Vec<Vec<u8>> {
    match hir.kind() {
        HirKind::Literal(literal) => vec![literal.0.to_vec()],
        HirKind::Concat(parts) => parts.iter().flat_map(required_literals).collect(),
        HirKind::Capture(capture) => required_literals(&capture.sub),
        HirKind::Repetition(repeat) if repeat.min >= 1 => required_literals(&repeat.sub),
        _ => Vec::new(),
    }
}

fn in_line(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Literal(literal) => !literal.0.contains(&b'\n'),
        HirKind::Class(Class::Bytes(class)) => !class.ranges().iter().any(|r| r.start() <= b'\n' && b'\n' <= r.end()),
        HirKind::Class(Class::Unicode(class)) => !class.ranges().iter().any(|r| r.start() <= '\n' && '\n' <= r.end()),
        HirKind::Empty | HirKind::Look(_) => true, // multi-line ^ and $, \b and \B look at one line's edge
        HirKind::Repetition(repeat) => in_line(&repeat.sub),
        HirKind::Capture(capture) => in_line(&capture.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => parts.iter().all(in_line),
    }
}

fn rust_pattern(pattern: &[u8]) -> Option<String> {
    // re reads these inside a class as a future set operation (and warns); this crate as one today.
    let set_operators = [b"--", b"&&", b"~~"]
        .iter()
        .any(|op| memchr::memmem::find(pattern, *op).is_some());
    if !pattern.is_ascii() || set_operators {
        return None;
    }
    let mut out = Translation {
        pattern,
        at: 0,
        text: String::new(),
        repeatable: false,
        depth: 0,
    };
    while out.at < pattern.len() {
        out.item()?;
    }
    (out.depth == 0).then_some(out.text)
}

struct Translation<'a> {
    pattern: &'a [u8],
    at: usize,
    text: String,
    repeatable: bool, // the last item may take a repeat (re: "nothing to repeat" otherwise)
    depth: usize,
}

impl Translation<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.pattern.get(self.at + ahead).copied()
    }

    fn item(&mut self) -> Option<()> {
        let c = self.peek(0)?;
        self.at += 1;
        match c {
            b'\\' => self.escape(),
            b'[' => self.class(),
            b'(' => self.open(),
            b')' => {
                self.depth = self.depth.checked_sub(1)?;
                self.push(")", true);
                Some(())
            }
            b'*' | b'+' | b'?' => self.repeat(&(c as char).to_string()),
            b'{' => self.braces(),
            b'^' | b'$' | b'|' => {
                self.push(&(c as char).to_string(), false);
                Some(())
            }
            b'.' => {
                self.push(".", true);
                Some(())
            }
            _ => {
                self.literal(c);
                Some(())
            }
        }
    }

    fn push(&mut self, text: &str, repeatable: bool) {
        self.text.push_str(text);
        self.repeatable = repeatable;
    }

    fn literal(&mut self, c: u8) {
        let text = if c.is_ascii_alphanumeric() {
            (c as char).to_string()
        } else {
            format!("\\x{c:02X}")
        };
        self.push(&text, true);
    }

    fn escape(&mut self) -> Option<()> {
        let e = self.peek(0)?;
        self.at += 1;
        if CLASS_ESCAPES.contains(&e) {
            self.push(&format!("\\{}", e as char), true);
        } else if e == b'b' || e == b'B' {
            self.push(&format!("\\{}", e as char), false);
        } else if let Some(&(_, c)) = CHAR_ESCAPES.iter().find(|(name, _)| *name == e) {
            self.literal(c);
        } else if e.is_ascii_punctuation() {
            self.literal(e);
        } else {
            return None; // \A, \Z, \1, \x41, \u, \N, \p and the rest: Python decides
        }
        Some(())
    }

    /// `*`, `+`, `?` or a brace repeat after something repeatable, with at most one `?` (lazy) after it.
    fn repeat(&mut self, repeat: &str) -> Option<()> {
        if !self.repeatable {
            return None;
        }
        self.text.push_str(repeat);
        if self.peek(0) == Some(b'?') {
            self.at += 1;
            self.text.push('?');
        }
        self.repeatable = false;
        match self.peek(0) {
            Some(b'*' | b'+' | b'?' | b'{') => None, // a repeat of a repeat (or possessive): re's own reading
            _ => Some(()),
        }
    }

    /// re's reading of `{`: a repeat when `{m}`, `{m,}`, `{,n}` or `{m,n}` follows, else a literal brace.
    fn braces(&mut self) -> Option<()> {
        let rest = &self.pattern[self.at..];
        let Some(close) = rest.iter().position(|&b| b == b'}') else {
            self.literal(b'{');
            return Some(());
        };
        let inside = &rest[..close];
        let (low, high) = match inside.iter().position(|&b| b == b',') {
            Some(comma) => (&inside[..comma], Some(&inside[comma + 1..])),
            None => (inside, None),
        };
        let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
        if inside.is_empty() || !digits(low) || !high.is_none_or(digits) || (low.is_empty() && high.is_none()) {
            self.literal(b'{');
            return Some(());
        }
        let number = |s: &[u8]| std::str::from_utf8(s).ok()?.parse::<u32>().ok();
        let low_n = if low.is_empty() { 0 } else { number(low)? };
        let repeat = match high {
            None => format!("{{{low_n}}}"),
            Some([]) => format!("{{{low_n},}}"),
            Some(high) => {
                let high_n = number(high)?;
                if low_n > high_n {
                    return None;
                }
                format!("{{{low_n},{high_n}}}")
            }
        };
        self.at += close + 1;
        self.repeat(&repeat)
    }

    fn open(&mut self) -> Option<()> {
        if self.peek(0) == Some(b'?') {
            match (self.peek(1), self.peek(2)) {
                (Some(b':'), _) => {
                    self.at += 2;
                    self.text.push_str("(?:");
                }
                (Some(b'P'), Some(b'<')) => self.named()?,
                _ => return None, // lookarounds, inline flags, comments, conditionals
            }
        } else {
            self.text.push('(');
        }
        self.depth += 1;
        self.repeatable = false;
        Some(())
    }

    fn named(&mut self) -> Option<()> {
        let rest = &self.pattern[self.at + 3..];
        let end = rest.iter().position(|&b| b == b'>')?;
        let name = &rest[..end];
        let valid = name.first().is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
            && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
        if !valid {
            return None;
        }
        self.text.push_str(&format!("(?P<{}>", std::str::from_utf8(name).ok()?));
        self.at += 3 + end + 1;
        Some(())
    }

    /// A class of characters, ranges and class escapes; re's possible set operations and nested `[` say no.
    fn class(&mut self) -> Option<()> {
        self.text.push('[');
        if self.peek(0) == Some(b'^') {
            self.at += 1;
            self.text.push('^');
        }
        let mut first = true;
        loop {
            let c = self.peek(0)?;
            if c == b']' && !first {
                self.at += 1;
                break;
            }
            first = false;
            let low = self.class_char()?;
            if self.peek(0) == Some(b'-') && self.peek(1).is_some_and(|c| c != b']') {
                self.at += 1;
                let high = self.class_char()?;
                let (Some(low), Some(high)) = (low, high) else {
                    return None;
                };
                if low > high {
                    return None;
                }
                self.text.push_str(&format!("{}-{}", hex(low), hex(high)));
            } else if let Some(c) = low {
                self.text.push_str(&hex(c));
            }
        }
        self.push("]", true);
        Some(())
    }

    /// One member of a class: Some(character), or None after writing a class escape (\w); fails on what re
    /// would read otherwise.
    fn class_char(&mut self) -> Option<Option<u8>> {
        let c = self.peek(0)?;
        self.at += 1;
        if c == b'[' {
            return None; // re warns of a future nested set there, and this crate reads [:alpha:]
        }
        if c != b'\\' {
            return Some(Some(c));
        }
        let e = self.peek(0)?;
        self.at += 1;
        if CLASS_ESCAPES.contains(&e) {
            self.text.push_str(&format!("\\{}", e as char));
            return Some(None);
        }
        if let Some(&(_, c)) = CHAR_ESCAPES.iter().find(|(name, _)| *name == e) {
            return Some(Some(c));
        }
        e.is_ascii_punctuation().then_some(Some(e))
    }
}

fn hex(c: u8) -> String {
    format!("\\x{c:02X}")
}

#[cfg(test)]
mod tests {
    use super::translate;

    fn of(pattern: &str) -> Option<String> {
        translate(pattern.as_bytes(), false).map(|t| t.pattern)
    }

    #[test]
    fn the_longest_required_literal_and_whether_matches_stay_in_a_line() {
        let t = translate(br"def _eval_\w+\(self\)", false).unwrap();
        assert_eq!((t.literal.as_slice(), t.in_line), (b"def _eval_".as_slice(), true));
        let t = translate(br"(ab|cd)xx\s+y", false).unwrap();
        assert_eq!((t.literal.as_slice(), t.in_line), (b"xx".as_slice(), false));
    }

    #[test]
    fn plain_syntax_is_rewritten() {
        assert_eq!(
            of(r"def _eval_\w+\(self\)").as_deref(),
            Some(r"def\x20\x5Feval\x5F\w+\x28self\x29")
        );
        assert_eq!(of("a{2,}?b").as_deref(), Some("a{2,}?b"));
        assert_eq!(of("x{a}").as_deref(), Some(r"x\x7Ba\x7D"));
        assert_eq!(of("[^a-c_]").as_deref(), Some(r"[^\x61-\x63\x5F]"));
        assert_eq!(of(r"\<a").as_deref(), Some(r"\x3Ca"));
    }

    #[test]
    fn what_re_reads_otherwise_is_left_to_python() {
        for pattern in [
            r"(?<=a)b",
            r"(a)\1",
            r"\Aa",
            "a**",
            "a*+",
            "[[:alpha:]]",
            "[a&&b]",
            "a|",
            "x*",
            "a--b",
            "(?i)a",
            "é",
        ] {
            assert_eq!(of(pattern), None, "{pattern}");
        }
    }
}
