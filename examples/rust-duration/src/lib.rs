//! Human durations: `"1h30m"`, `"90s"`, `"2d 4h"` parsed into seconds and formatted back.

use std::fmt;

/// Why a duration could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum ParseError {
    Empty,
    MissingUnit(String),
    UnknownUnit(char),
    Overflow,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty => write!(f, "empty duration"),
            ParseError::MissingUnit(n) => write!(f, "number {n} has no unit"),
            ParseError::UnknownUnit(c) => write!(f, "unknown unit {c:?}"),
            ParseError::Overflow => write!(f, "duration too long"),
        }
    }
}

fn unit_seconds(unit: char) -> Result<u64, ParseError> {
    match unit {
        'd' => Ok(86_400),
        'h' => Ok(3_600),
        'm' => Ok(60),
        's' => Ok(1),
        other => Err(ParseError::UnknownUnit(other)),
    }
}

/// Seconds in a duration such as `"1h30m"` or `"2d 4h"` (spaces between parts are allowed).
pub fn parse(text: &str) -> Result<u64, ParseError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ParseError::Empty);
    }
    let mut total: u64 = 0;
    let mut number = String::new();
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let value: u64 = number.parse().map_err(|_| ParseError::Overflow)?;
        let part = value
            .checked_mul(unit_seconds(c)?)
            .ok_or(ParseError::Overflow)?;
        total = total.checked_add(part).ok_or(ParseError::Overflow)?;
        number.clear();
    }
    if !number.is_empty() {
        return Err(ParseError::MissingUnit(number));
    }
    Ok(total)
}

/// The shortest form of `seconds`: `5400` → `"1h30m"`, `0` → `"0s"`.
pub fn format(seconds: u64) -> String {
    if seconds == 0 {
        return "0s".to_string();
    }
    let mut rest = seconds;
    let mut out = String::new();
    for (unit, size) in [('d', 86_400), ('h', 3_600), ('m', 60), ('s', 1)] {
        if rest >= size {
            out.push_str(&format!("{}{}", rest / size, unit));
            rest %= size;
        }
    }
    out
}

/// `seconds` rounded to the nearest multiple of `step` (both in seconds), halves rounding up.
pub fn round_to(seconds: u64, step: u64) -> u64 {
    if step == 0 {
        return seconds;
    }
    let down = seconds - seconds % step;
    if seconds % step * 2 >= step {
        down + step
    } else {
        down
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hours_and_minutes() {
        assert_eq!(parse("1h30m"), Ok(5_400));
    }

    #[test]
    fn formats_the_shortest_form() {
        assert_eq!(format(5_400), "1h30m");
        assert_eq!(format(0), "0s");
    }
}
