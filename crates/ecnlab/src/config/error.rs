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

/// A name that is none of `names` (a scheme, a scheduler): serde's
/// wording for an unknown enum variant.
pub fn unknown_name(key: &str, given: &str, names: &[&str]) -> ConfigError {
    let quoted: Vec<String> = names.iter().map(|k| format!("`{k}`")).collect();
    let expected = match quoted.len() {
        1 => format!("expected {}", quoted[0]),
        2 => format!("expected {} or {}", quoted[0], quoted[1]),
        _ => format!("expected one of {}", quoted.join(", ")),
    };
    ConfigError(format!("{key}: unknown variant `{given}`, {expected}"))
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
