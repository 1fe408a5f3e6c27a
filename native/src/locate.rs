//! Which pack answers a grep: `quick_settings.query_state_path`, `fast_grep.locator_key` and
//! `grep_cache.recall`, read the same way. Any difference makes a lookup miss, and Python answers.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::pack::{Pack, VERSION};

// The embedded store's database (rag_indexer/store/__init__.py), whose inode is part of the refs token.
const DATABASE_FILE: &str = "index.sqlite";
// The index settings a query on the default backend may leave at these values (quick_settings.DEFAULTS).
const DEFAULTS: [(&str, &str); 2] = [
    ("MENDFLOW_INDEX__BACKEND", "embedded"),
    ("MENDFLOW_INDEX__EMBEDDINGS", "none"),
];
const GIT_CONFIGS: [&str; 3] = ["~/.gitconfig", "~/.config/git/config", "/etc/gitconfig"];
const GIT_PLACES: [&str; 5] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "XDG_CONFIG_HOME",
];

/// The state directory when a query needs no other setting, else None.
pub fn query_state_path() -> Option<Vec<u8>> {
    let mut state = None;
    for (name, value) in std::env::vars_os() {
        let name = name.as_bytes();
        if name.len() < 9 || !name[..9].eq_ignore_ascii_case(b"MENDFLOW_") {
            continue;
        }
        if name.iter().any(u8::is_ascii_lowercase) || name == b"MENDFLOW_INDEX" {
            return None; // Python upper-cases names (two may collide) and parses a JSON MENDFLOW_INDEX
        }
        if name == b"MENDFLOW_STATE_DIR" && !value.is_empty() {
            state = Some(value.as_bytes().to_vec());
        }
    }
    for (name, default) in DEFAULTS {
        if let Some(value) = std::env::var_os(name) {
            let value = std::str::from_utf8(value.as_bytes()).ok()?;
            if value.trim().to_lowercase() != default {
                return None;
            }
        }
    }
    state.or_else(|| Some(join(&home()?, b".local/state/mendflow")))
}

/// What a grep asked for, as the locator's key (`fast_grep.locator_key`).
pub fn locator_key(repo: Option<&[u8]>, ref_: Option<&[u8]>) -> Option<Vec<u8>> {
    let ref_ = ref_.unwrap_or(b"");
    if let Some(repo) = repo {
        if fs::metadata(OsStr::from_bytes(repo)).is_err() {
            return Some([b"id\0", repo, b"\0", ref_].concat());
        }
    }
    if std::env::vars_os().any(|(name, _)| {
        let name = name.as_bytes();
        GIT_PLACES.iter().any(|p| p.as_bytes() == name) || name.starts_with(b"GIT_CONFIG")
    }) {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    let place = match repo {
        Some(repo) if repo.starts_with(b"//") => return None, // POSIX's implementation-defined root
        Some(repo) => normalized(&join(cwd.as_os_str().as_bytes(), repo)),
        None => normalized(cwd.as_os_str().as_bytes()),
    };
    let top = work_tree(place)?;
    let home = home()?;
    let mut configs = vec![join(&top, b".git/config")];
    configs.extend(GIT_CONFIGS.iter().map(|p| match p.strip_prefix('~') {
        Some(rest) => [home.as_slice(), rest.as_bytes()].concat(),
        None => p.as_bytes().to_vec(),
    }));
    let times: Vec<String> = configs.iter().map(|p| mtime_ns(p).to_string()).collect();
    Some(
        [
            b"tree\0",
            top.as_slice(),
            b"\0",
            ref_,
            b"\0",
            times.join(",").as_bytes(),
        ]
        .concat(),
    )
}

/// The pack `key` stands for, if its locator was written under the current refs token.
pub fn recall_pack(state: &[u8], key: &[u8]) -> Option<Pack> {
    let index = join(state, b"index");
    let grep = join(&index, b"grep");
    let locator = fs::read(path(&join(&grep, format!("at/{:016x}", fnv1a(key)).as_bytes()))).ok()?;
    let mut fields = locator.splitn(3, |&b| b == b'\t');
    let (token, tree, stored_key) = (fields.next()?, fields.next()?, fields.next()?);
    if stored_key != key || locator.contains(&b'\r') || Some(token.to_vec()) != refs_token(&index, &grep) {
        return None;
    }
    let tree = std::str::from_utf8(tree).ok()?;
    if tree.is_empty() || !tree.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    Pack::open(&path(&join(&grep, format!("packs/{tree}-v{VERSION}.pack").as_bytes())))
}

/// `grep_cache.refs_token`: the token with the database's inode; None while a ref is changing.
fn refs_token(index: &[u8], grep: &[u8]) -> Option<Vec<u8>> {
    let token = fs::read(path(&join(grep, b"refs-token"))).ok()?;
    let database = fs::metadata(path(&join(index, DATABASE_FILE.as_bytes()))).ok()?;
    if token.is_empty() || token == b"-" || token.contains(&b'\r') {
        return None;
    }
    Some([token.as_slice(), b".", database.ino().to_string().as_bytes()].concat())
}

/// The work tree holding `place` when its `.git` is a directory, as `fast_grep._work_tree` walks up.
fn work_tree(mut place: Vec<u8>) -> Option<Vec<u8>> {
    loop {
        let dot_git = path(&join(&place, b".git"));
        match fs::metadata(&dot_git) {
            Ok(meta) if meta.is_dir() => return Some(place),
            Ok(_) => return None, // a linked work tree or submodule: its config is elsewhere
            Err(_) => {}
        }
        let parent = dirname(&place);
        if parent == place {
            return None;
        }
        place = parent;
    }
}

/// `os.path.expanduser("~")`: HOME without its trailing slashes (the root when that leaves nothing).
fn home() -> Option<Vec<u8>> {
    let home = std::env::var_os("HOME")?;
    let home = home.as_bytes();
    let end = home.iter().rposition(|&b| b != b'/').map_or(0, |i| i + 1);
    Some(if end == 0 { b"/".to_vec() } else { home[..end].to_vec() })
}

fn mtime_ns(file: &[u8]) -> i128 {
    fs::metadata(path(file)).map_or(0, |m| {
        i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec())
    })
}

/// `os.path.join(a, b)` for a relative `b` (an absolute `b` replaces `a`).
pub fn join(a: &[u8], b: &[u8]) -> Vec<u8> {
    if b.starts_with(b"/") || a.is_empty() {
        return b.to_vec();
    }
    let glue: &[u8] = if a.ends_with(b"/") { b"" } else { b"/" };
    [a, glue, b].concat()
}

/// `os.path.normpath` of an absolute path (one leading slash: the caller refuses `//`).
fn normalized(absolute: &[u8]) -> Vec<u8> {
    let mut parts: Vec<&[u8]> = Vec::new();
    for part in absolute.split(|&b| b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    let mut out = Vec::with_capacity(absolute.len());
    for part in &parts {
        out.push(b'/');
        out.extend_from_slice(part);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    out
}

/// `os.path.dirname` of a normalized absolute path.
fn dirname(place: &[u8]) -> Vec<u8> {
    match place.iter().rposition(|&b| b == b'/') {
        Some(0) | None => b"/".to_vec(),
        Some(at) => place[..at].to_vec(),
    }
}

fn path(bytes: &[u8]) -> PathBuf {
    Path::new(OsStr::from_bytes(bytes)).to_path_buf()
}

/// `grep_cache._fnv1a`: FNV-1a, 64 bits, over the key's bytes.
fn fnv1a(text: &[u8]) -> u64 {
    text.iter().fold(0xCBF2_9CE4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_is_python_s() {
        // grep_cache._fnv1a's values for "" and "a"
        assert_eq!(fnv1a(b""), 0xCBF2_9CE4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xAF63_DC4C_8601_EC8C);
    }

    #[test]
    fn normalized_is_normpath() {
        assert_eq!(normalized(b"/a/./b/../c/"), b"/a/c");
        assert_eq!(normalized(b"/.."), b"/");
    }
}
