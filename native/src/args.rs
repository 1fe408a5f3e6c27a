//! `fast_grep.plain_args`: the plain argument forms, or None for anything argparse must read.

use std::ffi::OsString;

#[derive(Default)]
pub struct Args {
    pub pattern: Option<Vec<u8>>,
    pub ignore_case: bool,
    pub regex: bool,
    pub repo: Option<Vec<u8>>,
    pub ref_: Option<Vec<u8>>,
    pub path: Option<Vec<u8>>,
}

pub fn plain(given: &[OsString]) -> Option<Args> {
    let mut args = Args::default();
    // Python reads arguments that are not UTF-8 with surrogateescape: other bytes than these.
    let given: Vec<&str> = given.iter().map(|a| a.to_str()).collect::<Option<_>>()?;
    let mut rest = given.iter().map(|a| a.as_bytes());
    while let Some(arg) = rest.next() {
        let (name, value) = if arg.starts_with(b"--") {
            split_value(arg)
        } else {
            (arg, None)
        };
        match arg {
            b"--" => {
                let positional: Vec<&[u8]> = rest.by_ref().collect();
                if positional.len() != 1 || args.pattern.is_some() {
                    return None;
                }
                args.pattern = Some(positional[0].to_vec());
            }
            b"-i" | b"--ignore-case" => args.ignore_case = true,
            b"--regex" => args.regex = true,
            _ if matches!(name, b"--repo" | b"--ref" | b"--path") => {
                let value = match value {
                    Some(v) => v,
                    None => rest.next().unwrap_or(b""),
                };
                if value.is_empty() {
                    return None;
                }
                let slot = match name {
                    b"--repo" => &mut args.repo,
                    b"--ref" => &mut args.ref_,
                    _ => &mut args.path,
                };
                *slot = Some(value.to_vec());
            }
            _ if arg.starts_with(b"-") || args.pattern.is_some() => return None,
            _ => args.pattern = Some(arg.to_vec()),
        }
    }
    let glob = args.path.as_ref().is_some_and(|p| p.iter().any(|c| b"*?[".contains(c)));
    let answerable = args.pattern.as_ref().is_some_and(|p| !p.is_empty()) && !glob;
    answerable.then_some(args)
}

/// `--name=value` as (name, value); an argument without `=` has no value.
fn split_value(arg: &[u8]) -> (&[u8], Option<&[u8]>) {
    match memchr::memchr(b'=', arg) {
        Some(at) => (&arg[..at], Some(&arg[at + 1..])),
        None => (arg, None),
    }
}
