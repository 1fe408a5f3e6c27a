//! The installed `mendflow` command.
//!
//! `mendflow grep` on a small tree must answer in about rg's time (4-8 ms), and CPython alone takes longer than
//! that to start. So this binary answers the plain forms of `mendflow grep` from a grep pack itself, exactly as
//! `mendflow/cli/fast_grep.py` would, and hands every other command, and every grep it cannot answer exactly,
//! to Python: it replaces itself with the `mendflow-py` script installed beside it, with the same arguments.
//!
//! Python stays the authority. This reads only what Python wrote (the locator, the refs token and the pack)
//! and never writes; whenever anything differs from what it expects it answers nothing and lets Python run.

mod args;
mod locate;
mod pack;
mod search;
mod translate;

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

/// The Python entry point installed beside this binary (the `mendflow-py` console script).
const PYTHON_ENTRY: &str = "mendflow-py";

fn main() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    if argv.get(1).map(|a| a.as_encoded_bytes()) == Some(b"grep".as_slice()) {
        if let Some(code) = answer(&argv[2..]) {
            return ExitCode::from(code);
        }
    }
    hand_to_python(&argv)
}

/// The exit code after printing the matching lines, or None when Python must answer.
fn answer(given: &[OsString]) -> Option<u8> {
    if !python_writes_utf8() {
        return None;
    }
    let args = args::plain(given)?;
    let state = locate::query_state_path()?;
    let key = locate::locator_key(args.repo.as_deref(), args.ref_.as_deref())?;
    let pack = locate::recall_pack(&state, &key)?;
    search::answer(&pack, &args)
}

/// Whether Python would print its lines as UTF-8, the bytes this prints: not under PYTHONIOENCODING, nor in a
/// locale of another charset (C and POSIX are read as UTF-8 by Python since 3.7: PEP 538 and 540).
fn python_writes_utf8() -> bool {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if var("PYTHONIOENCODING").is_some() {
        return false;
    }
    if let Some(utf8_mode) = var("PYTHONUTF8") {
        return utf8_mode == "1";
    }
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"].into_iter().find_map(var);
    locale.is_none_or(|locale| {
        let locale = locale.to_string_lossy().to_ascii_lowercase();
        locale == "c" || locale == "posix" || locale.contains("utf-8") || locale.contains("utf8")
    })
}

fn hand_to_python(argv: &[OsString]) -> ExitCode {
    let entry = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(PYTHON_ENTRY)));
    let Some(entry) = entry else {
        eprintln!("error: cannot tell where mendflow is installed (reinstall mendflow)");
        return ExitCode::from(2);
    };
    // An argv without even a program name (exec with none) hands nothing on, rather than panicking.
    let error = Command::new(&entry).args(argv.get(1..).unwrap_or_default()).exec();
    eprintln!("error: cannot start {}: {error} (reinstall mendflow)", entry.display());
    ExitCode::from(2)
}
