//! Config errors: one line naming the key, the value and what is allowed.

use crate::units::{self, Time};
use std::fmt;

/// A config problem: one line naming the key, the value and what is allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ConfigError {}

/// `key = value: allowed`.
pub fn bad(key: &str, value: impl fmt::Display, allowed: &str) -> ConfigError {
    ConfigError(format!("{key} = {value}: {allowed}"))
}

/// `key: missing; why`.
pub fn missing(key: &str, why: &str) -> ConfigError {
    ConfigError(format!("{key}: missing; {why}"))
}

/// A time in seconds, as a value in a message ("0.0001s").
pub fn fmt_t(t: Time) -> String {
    format!("{}s", units::secs(t))
}

/// A time in its canonical spelling ("1ps", "85200ns").
pub fn fmt_dur(t: Time) -> String {
    units::fmt_duration(t)
}

/// `sec.key`, or `key` at the top level.
pub fn join(sec: &str, key: &str) -> String {
    if sec.is_empty() {
        key.to_string()
    } else {
        format!("{sec}.{key}")
    }
}

/// An unknown key of a table that allows `allowed`: serde's wording
/// ("unknown field `x`, expected one of `a`, `b`"), except that a list of
/// over 200 characters (a port allows dozens of keys) is cut to the three
/// keys nearest the one given, by edit distance, ties in the table's order.
pub fn unknown_key(sec: &str, given: &str, allowed: &[&str]) -> ConfigError {
    let quoted: Vec<String> = allowed.iter().map(|k| format!("`{k}`")).collect();
    let expected = match quoted.len() {
        0 => "there are no fields".to_string(),
        1 => format!("expected {}", quoted[0]),
        2 => format!("expected {} or {}", quoted[0], quoted[1]),
        _ => format!("expected one of {}", quoted.join(", ")),
    };
    let msg = format!("unknown field `{given}`, {expected}");
    let msg = if msg.len() <= 200 {
        msg
    } else {
        let mut near: Vec<&str> = allowed.to_vec();
        near.sort_by_key(|k| edit_distance(given, k));
        let near: Vec<String> = near.iter().take(3).map(|k| format!("`{k}`")).collect();
        format!(
            "unknown field `{given}`; of the {} keys allowed here the nearest are {}",
            allowed.len(),
            near.join(", ")
        )
    };
    ConfigError(format!("{}: {msg}", join(sec, given)))
}

/// The table and the key of an `unknown_key` error ("switch", "stages";
/// "" for the top level), to add where the key does belong.
pub fn unknown_key_of(e: &ConfigError) -> Option<(&str, &str)> {
    let (at, rest) = e.0.split_once(": unknown field `")?;
    let key = rest.split('`').next()?;
    let sec = if at == key { "" } else { at.strip_suffix(key)?.strip_suffix('.')? };
    Some((sec, key))
}

/// A name that is none of `names` (a scheme, a scheduler, a preset, a
/// recipe): serde's wording for an unknown enum variant, and the nearest
/// names when the one given looks like a slip of the keyboard.
pub fn unknown_name(key: &str, given: &str, names: &[&str]) -> ConfigError {
    ConfigError(format!("{key}: {}", unknown_variant(given, names)))
}

/// The text of `unknown_name` without the key: what the by-name enums'
/// deserialisers say, so every closed set of names reads alike.
pub fn unknown_variant(given: &str, names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|k| format!("`{k}`")).collect();
    let expected = match quoted.len() {
        0 => "there are none".to_string(),
        1 => format!("expected {}", quoted[0]),
        2 => format!("expected {} or {}", quoted[0], quoted[1]),
        _ => format!("expected one of {}", quoted.join(", ")),
    };
    format!("unknown variant `{given}`, {expected}{}", did_you_mean(given, names))
}

/// "; did you mean `x`?" when some of `names` are near `given` (see
/// `nearest`), else nothing.
pub fn did_you_mean(given: &str, names: &[&str]) -> String {
    let near = nearest(given, names);
    if near.is_empty() {
        return String::new();
    }
    let quoted: Vec<String> = near.iter().map(|n| format!("`{n}`")).collect();
    format!("; did you mean {}?", quoted.join(" or "))
}

/// The names nearest `given` when they are near enough to be what was
/// meant: case and `-`/`_` do not count, and the edit distance is at most
/// a third of the name's length (at least 1), so "mqecn" finds "mq-ecn"
/// and "dctpc" finds "dctcp", but "linux" finds nothing. Ties all come
/// back, in the list's order (at most three).
pub fn nearest<'a>(given: &str, names: &[&'a str]) -> Vec<&'a str> {
    let norm = |s: &str| s.to_lowercase().replace('_', "-");
    let g = norm(given);
    let scored: Vec<(usize, &'a str)> = names
        .iter()
        .map(|&n| (edit_distance(&g, &norm(n)), n))
        .filter(|&(d, n)| n != given && d <= (n.chars().count().div_ceil(3)).max(1))
        .collect();
    let Some(best) = scored.iter().map(|&(d, _)| d).min() else {
        return Vec::new();
    };
    scored.into_iter().filter(|&(d, _)| d == best).map(|(_, n)| n).take(3).collect()
}

/// Levenshtein distance: single-character insertions, deletions and
/// substitutions turning `a` into `b`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + (ca != cb) as usize).min(row[j] + 1).min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}
