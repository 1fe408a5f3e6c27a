//! The lines a grep prints, found as `rag_indexer/grep.py` finds them in a pack (`GrepQuery.buffer_spans`,
//! `Pack.lines`). A query this cannot answer exactly on every file in its scope returns None before it prints
//! anything, and Python answers the whole grep.

use std::io::{self, Write};

use memchr::memmem;
use regex::bytes::{Regex, RegexBuilder};

use crate::args::Args;
use crate::pack::{Pack, MARK_EVERY};
use crate::translate::{self, Translated};

/// What re.IGNORECASE lets an ASCII letter match beyond its two cases, as UTF-8 (`grams.CASE_FOLDS`).
const CASE_FOLDS: [(&[u8], u8); 4] = [
    (b"\xc4\xb0", b'i'),
    (b"\xc4\xb1", b'i'),
    (b"\xc5\xbf", b's'),
    (b"\xe2\x84\xaa", b'k'),
];
const MULTIPLIER: u32 = 0x9E37_79B1; // grams._MULTIPLIER

enum Query {
    Literal(Vec<u8>),
    /// An ASCII literal regardless of ASCII case, found in a lower-cased copy of each text.
    Folded(Vec<u8>),
    Regex(Regex, Translated, bool),
}

pub fn answer(pack: &Pack, args: &Args) -> Option<u8> {
    let pattern = args.pattern.as_deref()?;
    let query = compile(pattern, args.regex, args.ignore_case)?;
    let files = scope(pack, &query, pattern, args.path.as_deref());
    if !files.iter().all(|&i| answerable(pack, &query, i)) {
        return None;
    }
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut found = false;
    let written = files.into_iter().try_for_each(|i| {
        let spans = match &query {
            Query::Literal(needle) => literal_spans(pack.text(i), needle),
            Query::Folded(needle) => literal_spans(&pack.text(i).to_ascii_lowercase(), needle),
            Query::Regex(regex, ..) => regex_spans(pack.text(i), regex),
        };
        found |= !spans.is_empty();
        write_lines(&mut out, pack, i, &spans)
    });
    // A write fails when the reader left (`| head`): it has what it wanted, as Python's grep says too.
    let _ = written.and_then(|()| out.flush());
    Some(u8::from(!found))
}

fn compile(pattern: &[u8], regex: bool, ignore_case: bool) -> Option<Query> {
    if regex {
        let translated = translate::translate(pattern, ignore_case)?;
        let compiled = RegexBuilder::new(&translated.pattern)
            .unicode(false)
            .multi_line(true)
            .case_insensitive(ignore_case)
            .build()
            .ok()?;
        return Some(Query::Regex(compiled, translated, ignore_case));
    }
    if !ignore_case {
        return Some(Query::Literal(pattern.to_vec()));
    }
    // A non-ASCII literal: re's IGNORECASE decides (compile_query).
    pattern.is_ascii().then(|| Query::Folded(pattern.to_ascii_lowercase()))
}

/// The files to search, in path order: those under the path prefix whose signature may hold the literal.
fn scope(pack: &Pack, query: &Query, pattern: &[u8], prefix: Option<&[u8]>) -> Vec<usize> {
    let hashes = match query {
        Query::Regex(..) => Vec::new(), // a prefilter only skips files; the regex finds the same lines
        _ => trigram_hashes(pattern),
    };
    let numbers = if hashes.is_empty() {
        (0..pack.count).collect()
    } else {
        pack.candidates(&hashes)
    };
    numbers
        .into_iter()
        .filter(|&i| prefix.is_none_or(|p| pack.path(i).starts_with(p)))
        .collect()
}

/// Whether this finds in file `i` exactly the lines Python would.
fn answerable(pack: &Pack, query: &Query, i: usize) -> bool {
    let text = pack.text(i);
    match query {
        Query::Literal(_) => true, // a literal's UTF-8 occurs in any text's UTF-8 where the literal occurs
        // ASCII-lowering keeps offsets; only a character re.I matches with an ASCII letter could match more.
        Query::Folded(needle) => pack.plain(i) || !(may_fold(needle) && holds_fold(text)),
        Query::Regex(_, translated, ignore_case) => {
            pack.plain(i)
                || (translated.in_line
                    && !translated.literal.is_empty()
                    && special_lines(text).all(|line| !may_hold(line, &translated.literal, *ignore_case)))
        }
    }
}

/// Whether re may find `literal` in `line` (regardless of case: with re.IGNORECASE's folds too).
fn may_hold(line: &[u8], literal: &[u8], ignore_case: bool) -> bool {
    if !ignore_case {
        return memmem::find(line, literal).is_some();
    }
    (may_fold(literal) && holds_fold(line))
        || memmem::find(&line.to_ascii_lowercase(), &literal.to_ascii_lowercase()).is_some()
}

/// An ASCII literal that re.IGNORECASE may match with a non-ASCII character (i, k and s: CASE_FOLDS).
fn may_fold(literal: &[u8]) -> bool {
    literal.iter().any(|c| b"iksIKS".contains(c))
}

/// A plain text (ASCII without \x1c-\x1f) matches the regex in its bytes where re matches in its text. In
/// any other, a regex whose matches stay in a line still does on every line that is plain: only the lines
/// that are not must be unable to match, which they are when they lack a literal every match holds.
fn special_lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from
            + text[from..]
                .iter()
                .position(|&b| b >= 0x80 || (0x1C..=0x1F).contains(&b))?;
        let (first, last) = line_of(text, at);
        from = (last + 1).min(text.len());
        Some(&text[first..last])
    })
}

fn holds_fold(text: &[u8]) -> bool {
    CASE_FOLDS.iter().any(|(seq, _)| memmem::find(text, seq).is_some())
}

/// `grams.literal_hashes` of one literal: its folded, ASCII-lower-cased trigrams.
fn trigram_hashes(literal: &[u8]) -> Vec<u32> {
    let mut folded = literal.to_vec();
    for (seq, letter) in CASE_FOLDS {
        folded = replace(&folded, seq, letter);
    }
    folded.make_ascii_lowercase();
    folded
        .windows(3)
        .map(|w| (u32::from(w[0]) << 16 | u32::from(w[1]) << 8 | u32::from(w[2])).wrapping_mul(MULTIPLIER))
        .collect()
}

fn replace(data: &[u8], seq: &[u8], letter: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut last = 0;
    for at in memmem::find_iter(data, seq) {
        out.extend_from_slice(&data[last..at]);
        out.push(letter);
        last = at + seq.len();
    }
    out.extend_from_slice(&data[last..]);
    out
}

/// Lines holding `needle` (`grep._found`): past each reported line and each match, as re's matches do not overlap.
fn literal_spans(text: &[u8], needle: &[u8]) -> Vec<(usize, usize)> {
    let finder = memmem::Finder::new(needle);
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(at) = finder.find(&text[from..]).map(|at| at + from) {
        let (first, last) = line_of(text, at);
        spans.push((first, last));
        from = last.max(at + needle.len()); // within the text: a line ends at its end at the latest
    }
    spans
}

/// Lines where a match starts (`grep._scanned`): a line is reported once, whatever it holds.
fn regex_spans(text: &[u8], regex: &Regex) -> Vec<(usize, usize)> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for found in regex.find_iter(text) {
        if spans.last().is_some_and(|&(_, last)| found.start() <= last) {
            continue;
        }
        spans.push(line_of(text, found.start()));
    }
    spans
}

fn line_of(text: &[u8], at: usize) -> (usize, usize) {
    let first = memchr::memrchr(b'\n', &text[..at]).map_or(0, |n| n + 1);
    let last = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |n| at + n);
    (first, last)
}

/// `path:line:text` per span, numbered from the nearer of the last line mark and the span before (`Pack._numbered`).
fn write_lines(out: &mut impl Write, pack: &Pack, i: usize, spans: &[(usize, usize)]) -> io::Result<()> {
    if spans.is_empty() {
        return Ok(());
    }
    let (text, path) = (pack.text(i), pack.path(i));
    let marks: Vec<usize> = pack.marks(i).collect();
    let (mut pos, mut line) = (0, 1);
    for &(first, last) in spans {
        let k = marks.partition_point(|&m| m <= first);
        let mark = if k > 0 { marks[k - 1] } else { 0 };
        if mark > pos {
            (pos, line) = (mark, 1 + MARK_EVERY * k);
        }
        line += memchr::memchr_iter(b'\n', &text[pos..first]).count();
        pos = first;
        out.write_all(path)?;
        write!(out, ":{line}:")?;
        out.write_all(&text[first..last])?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
