//! Declared parameters. Every key ecnlab reads is declared once, next to
//! the code that uses it, with its type, default, allowed range, a one-line
//! doc and the paper (and section) it comes from: a section's keys in its
//! `section!` struct, a scheme's in the `section!` struct of its own file.
//! From the declarations come the parsing (key by key, with serde's words
//! and the key's path in every error), the refusal of unknown keys (with
//! the nearest ones named), the resolved form, `ecnlab keys` and the
//! experiment-file reference (`docs/reference.md`).

use super::error::{join, unknown_key, ConfigError};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

/// How the reference names a value type.
pub trait TypeName {
    fn type_name() -> String;
}

macro_rules! type_names {
    ($($t:ty => $name:literal),* $(,)?) => {
        $(impl TypeName for $t {
            fn type_name() -> String {
                $name.into()
            }
        })*
    };
}
type_names!(u32 => "integer", u64 => "integer", f64 => "number", bool => "boolean", String => "string");

impl<T: TypeName> TypeName for Option<T> {
    fn type_name() -> String {
        T::type_name()
    }
}
impl<T: TypeName> TypeName for Vec<T> {
    fn type_name() -> String {
        format!("list of {}", T::type_name())
    }
}

/// Why a value did not read as its key's type.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadError {
    /// Where inside the value ("" for the value itself, "[1]", "x").
    pub path: String,
    /// What is wrong, in serde's words or the type's own.
    pub msg: String,
    /// The value is of the wrong kind altogether (text for a number, a
    /// fraction for a count): the message then says, in place of `msg`,
    /// what it must be, with the key's allowed range and a hint.
    pub wrong_kind: Option<Box<WrongKind>>,
}

/// A value of the wrong kind: what was given and what the key takes.
#[derive(Clone, Debug, PartialEq)]
pub struct WrongKind {
    /// The value as the file spells it (`"60%"`, `2.5`).
    pub given: String,
    /// What the key takes ("a number", "a whole number").
    pub wanted: String,
    /// The type's own bound ("0 or more"), said where the key states no
    /// range of its own.
    pub bound: String,
    /// A way to write what was likely meant ("for 60% write 0.6"), or empty.
    pub hint: String,
}

impl ReadError {
    /// The message for the key at `at` ("workload.load") whose allowed
    /// values are `range` (empty: none stated): `at = value: must be ...`
    /// for a value of the wrong kind, `at: message` otherwise.
    pub fn message(&self, at: &str, range: &str) -> String {
        let at = key_path(at, &self.path);
        match &self.wrong_kind {
            None => format!("{at}: {}", self.msg),
            Some(w) => {
                let allowed = match (range.is_empty() || !self.path.is_empty(), w.bound.is_empty()) {
                    (false, _) => format!(" (allowed: {range})"),
                    (true, false) => format!(", {}", w.bound),
                    (true, true) => String::new(),
                };
                let hint = if w.hint.is_empty() { String::new() } else { format!("; {}", w.hint) };
                format!("{at} = {}: must be {}{allowed}{hint}", w.given, w.wanted)
            }
        }
    }
}

/// A key's value read from JSON. A value of the wrong kind for one of the
/// plain types (a number, a whole number, a boolean, a string, a list) is
/// told in words rather than serde's ("invalid type: string \"60%\",
/// expected f64"), for every key alike.
pub fn parse<T: DeserializeOwned>(v: &Value) -> Result<T, ReadError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let msg = e.into_inner().to_string();
        let wrong_kind = wrong_kind(&msg);
        ReadError { path, msg, wrong_kind }
    })
}

/// serde's "invalid type: X, expected Y" (or "invalid value: integer
/// `-1`, expected u32") for the plain types and the unit types (times,
/// rates, sizes, amounts), in words.
fn wrong_kind(msg: &str) -> Option<Box<WrongKind>> {
    let rest = msg.strip_prefix("invalid type: ").or_else(|| msg.strip_prefix("invalid value: "))?;
    let (what, expected) = rest.rsplit_once(", expected ")?;
    let given = given_of(what)?;
    let unsigned = expected.starts_with('u');
    let (wanted, bound) = match expected {
        "f32" | "f64" => ("a number".to_string(), ""),
        "u8" | "u16" | "u32" | "u64" | "usize" if what.starts_with("integer") && !given.starts_with('-') => {
            let max = match expected {
                "u8" => u8::MAX as u64,
                "u16" => u16::MAX as u64,
                "u32" => u32::MAX as u64,
                _ => u64::MAX,
            };
            (format!("a whole number up to {max}"), "")
        }
        "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64" => {
            ("a whole number".to_string(), if unsigned { "0 or more" } else { "" })
        }
        "a boolean" => ("true or false".to_string(), ""),
        "a string" => ("a string (in quotes)".to_string(), ""),
        "a sequence" => ("a list ([...])".to_string(), ""),
        // `values.rs`'s unit types: "a duration string with a unit".
        unit if unit.ends_with(" string with a unit") => {
            let kind = unit.trim_end_matches(" string with a unit");
            let example = match kind {
                "a duration" => "\"25us\"",
                "a rate" => "\"10Gbps\"",
                "a size" => "\"64KB\"",
                _ => "\"65pkt\" or \"300KB\"",
            };
            (format!("{} with a unit, e.g. {example}", kind.replace("a amount", "an amount")), "")
        }
        _ => return None,
    };
    Some(Box::new(WrongKind { hint: hint(&given, expected), given, wanted, bound: bound.to_string() }))
}

/// The value serde names (`string "60%"`, `floating point `2.5``,
/// `integer `5``, `boolean `true``, `sequence`, `map`) as a file spells it.
fn given_of(what: &str) -> Option<String> {
    if let Some(s) = what.strip_prefix("string ") {
        return Some(s.to_string());
    }
    if what.starts_with("floating point") || what.starts_with("integer") || what.starts_with("boolean") {
        return what.split('`').nth(1).map(str::to_string);
    }
    Some(
        match what {
            "sequence" => "a list",
            "map" => "a table",
            "unit" | "null" => "nothing",
            other => other,
        }
        .to_string(),
    )
}

/// A way to write what a value of the wrong kind likely meant.
fn hint(given: &str, expected: &str) -> String {
    let Some(text) = given.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return String::new();
    };
    let number = matches!(expected, "f32" | "f64") || expected.starts_with('u') || expected.starts_with('i');
    if number {
        if let Some(pct) = text.trim().strip_suffix('%').and_then(|p| p.trim().parse::<f64>().ok()) {
            if matches!(expected, "f32" | "f64") {
                return format!("for {} write {} (a fraction)", text.trim(), pct / 100.0);
            }
            return String::new();
        }
        if text.trim().parse::<f64>().is_ok() {
            return format!("write it without quotes: {}", text.trim());
        }
    }
    if expected == "a boolean" && matches!(text, "true" | "false") {
        return format!("write it without quotes: {text}");
    }
    String::new()
}

/// `key` with the path inside its value ("stages" + "[1]").
fn key_path(key: &str, inner: &str) -> String {
    if inner.is_empty() {
        key.to_string()
    } else if inner.starts_with('[') {
        format!("{key}{inner}")
    } else {
        format!("{key}.{inner}")
    }
}

/// The canonical JSON of a value.
pub fn write<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("config values serialise")
}

/// How the resolved form treats a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// Always written: its value, its default, or null when unset.
    Always,
    /// Left out while at its default (unset, for keys without one).
    Given,
    /// Written, defaults filled in, on the ports whose schemes use it; left
    /// out elsewhere (the policy of every key added after the resolved
    /// form was fixed, so that older configs resolve as they did).
    InUse,
}

/// What a key's value must stay within to act at all in the network it is
/// in: a run that sets it beyond gets a warning naming it (`warnings.rs`),
/// so a setting made for another network (an RFC's milliseconds on a
/// data-centre port) is not quietly a no-op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acts {
    /// Anywhere: no bound is checked.
    Anywhere,
    /// A queueing delay (a target, a threshold in time): it acts only below
    /// the most the port's buffer can hold at its rate, buffer × 8 / rate.
    BelowBufferTime,
    /// A queue length (bytes or packets): it acts only below the port's
    /// buffer.
    BelowBuffer,
    /// A span of time (an update interval, an allowance): it acts only if
    /// shorter than the run (run.duration).
    WithinRun,
}

/// One declared key.
#[derive(Clone, Copy)]
pub struct Param {
    pub key: &'static str,
    /// Its type in words.
    pub ty: fn() -> String,
    /// Its default as the resolved form writes it (null: unset), or None
    /// when the key must be given.
    pub default: Option<fn() -> Value>,
    /// The default in words where it depends on other keys ("min_rto",
    /// "one packet time at the port's rate"); empty to show `default`.
    pub default_doc: &'static str,
    /// What is allowed, in words ("(0, 1]", "1 to 64").
    pub range: &'static str,
    pub doc: &'static str,
    /// The paper and section it comes from, if one does.
    pub source: &'static str,
    pub resolved: Resolved,
    /// Ports: `[fabric]` and `[nic]` may set it too. False for keys that
    /// are one for the whole network (the number of queues, ML-ECN's
    /// classes).
    pub per_port: bool,
    /// Ports: set where its scheme does not run, it is ignored rather than
    /// refused. Only keys that experiment files have long set for every
    /// case of a sweep whose cases switch schemes (MQ-ECN's and RED's
    /// tuning keys); a new key is refused where it means nothing.
    pub lenient: bool,
    /// The bound it must stay within to act (ports' keys; see `Acts`).
    pub acts: Acts,
    /// Its value made canonical (and checked for its type).
    pub canonical: fn(&Value) -> Result<Value, ReadError>,
}

impl Param {
    /// The base every declaration fills in (see `section!`).
    pub const BASE: Param = Param {
        key: "",
        ty: || String::new(),
        default: None,
        default_doc: "",
        range: "",
        doc: "",
        source: "",
        resolved: Resolved::Always,
        per_port: true,
        lenient: false,
        acts: Acts::Anywhere,
        canonical: |v| Ok(v.clone()),
    };

    /// The default in words for the reference.
    pub fn default_text(&self) -> String {
        if !self.default_doc.is_empty() {
            return self.default_doc.to_string();
        }
        match self.default.map(|d| d()) {
            None => "(required)".into(),
            Some(Value::Null) => "unset".into(),
            Some(Value::String(s)) => format!("\"{s}\""),
            Some(v) => v.to_string(),
        }
    }

    /// `v` read as this key's type and made canonical; an error names the
    /// key as `at` ("switch.mqecn_beta"), the value and what is allowed.
    pub fn read(&self, at: &str, v: &Value) -> Result<Value, ConfigError> {
        (self.canonical)(v).map_err(|e| ConfigError(e.message(at, self.range)))
    }

    /// The value its declaration gives when the key is left out.
    pub fn default_value(&self) -> Value {
        self.default.map_or(Value::Null, |d| d())
    }
}

/// A table being read: its keys as given, and the path of the table for
/// errors ("switch", "flows[2]").
pub struct Table {
    pub sec: String,
    pub map: Map<String, Value>,
}

impl Table {
    pub fn new(sec: impl Into<String>, map: Map<String, Value>) -> Table {
        Table { sec: sec.into(), map }
    }

    /// The value of the key `p` declares: as given, or its default (none:
    /// the key is required).
    pub fn get<T: DeserializeOwned>(&self, p: &Param) -> Result<T, ConfigError> {
        let path = join(&self.sec, p.key);
        match (self.map.get(p.key), p.default) {
            (Some(v), _) => parse(v).map_err(|e| ConfigError(e.message(&path, p.range))),
            (None, Some(d)) => Ok(parse(&d()).expect("a declared default parses as its type")),
            (None, None) => {
                let at = if self.sec.is_empty() { String::new() } else { format!("{}: ", self.sec) };
                Err(ConfigError(format!("{at}missing field `{}`", p.key)))
            }
        }
    }

    /// Refuse the first key (in the table's order) that `params` do not
    /// declare.
    pub fn only(&self, params: &[Param]) -> Result<(), ConfigError> {
        if let Some(k) = self.map.keys().find(|k| !params.iter().any(|p| p.key == k.as_str())) {
            let allowed: Vec<&str> = params.iter().map(|p| p.key).collect();
            return Err(unknown_key(&self.sec, k, &allowed));
        }
        Ok(())
    }
}

/// Declares a table of keys: the struct, with one typed field per key, and
/// beside it `PARAMS` (each key's declaration), `read` (from a `Table`,
/// refusing unknown keys unless `partial`) and `write` (the resolved form).
///
/// ```ignore
/// section! {
///     /// `[run]`: ...
///     pub struct RunCfg {
///         /// Seed of every random stream.
///         seed: u64 = 1;
///         /// CEDM's slope EWMA weight w_s.
///         cedm_ws: f64 = 0.129, range "(0, 1]", source "CEDM §IV-C";
///         trace_from: Option<Dur> = None, resolved Given;
///     }
/// }
/// ```
/// A key without `= default` must be given. Options: range, source,
/// default_doc (text), resolved (Always, Given, InUse), per_port, lenient,
/// acts (Anywhere, BelowBufferTime, BelowBuffer, WithinRun).
macro_rules! section {
    (
        $(#[$meta:meta])*
        pub struct $name:ident $(with $extra:ident)? {
            $(
                $(#[doc = $doc:literal])*
                $field:ident : $ty:ty $(= $default:expr)? $(, $opt:ident $val:tt)* ;
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            $($(#[doc = $doc])* pub $field: $ty,)*
            $(
                /// Keys this table does not declare itself: the keys of the
                /// schemes it names, which their declarations check.
                pub $extra: serde_json::Map<String, serde_json::Value>,
            )?
        }

        impl $name {
            /// Every key of this table, declared.
            pub const PARAMS: &'static [$crate::config::param::Param] = &[$(
                $crate::config::param::Param {
                    key: stringify!($field),
                    ty: <$ty as $crate::config::param::TypeName>::type_name,
                    default: section!(@default $ty $(, $default)?),
                    doc: section!(@doc $($doc)*),
                    canonical: |v| $crate::config::param::parse::<$ty>(v).map(|x| $crate::config::param::write(&x)),
                    $($opt: section!(@opt $opt $val),)*
                    ..$crate::config::param::Param::BASE
                }
            ),*];

            /// Read the table: every key declared here, at its default when
            /// absent. A key not declared here is refused, unless the table
            /// keeps such keys for its schemes (`with extra`) or `partial`.
            #[allow(dead_code)]
            pub fn read(t: &$crate::config::param::Table, partial: bool) -> Result<Self, $crate::config::ConfigError> {
                let keeps_extra = false $(|| { let _ = stringify!($extra); true })?;
                if !partial && !keeps_extra {
                    t.only(Self::PARAMS)?;
                }
                let mut i = 0;
                #[allow(unused_assignments)]
                let out = $name {
                    $($field: {
                        let v = t.get(&Self::PARAMS[i])?;
                        i += 1;
                        v
                    },)*
                    $($extra: t.map.iter()
                        .filter(|(k, _)| !Self::PARAMS.iter().any(|p| p.key == k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),)?
                };
                Ok(out)
            }

            /// Read from a JSON object (tests, and tables built in code).
            #[allow(dead_code)]
            pub fn from_json(sec: &str, v: serde_json::Value) -> Result<Self, $crate::config::ConfigError> {
                let map = match v {
                    serde_json::Value::Object(m) => m,
                    _ => return Err($crate::config::ConfigError(format!("{sec}: expected a table"))),
                };
                Self::read(&$crate::config::param::Table::new(sec, map), false)
            }

            /// Write the resolved form of every key declared here
            /// (`Resolved::Given` ones only when not at their default).
            #[allow(dead_code)]
            pub fn write(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
                let mut i = 0;
                $(
                    let p = &Self::PARAMS[i];
                    let v = $crate::config::param::write(&self.$field);
                    if p.resolved != $crate::config::param::Resolved::Given || v != p.default_value() {
                        m.insert(p.key.to_string(), v);
                    }
                    i += 1;
                )*
                let _ = i;
            }
        }

        /// Read from any serde format (tests and tables built in code);
        /// errors name the key as the config's do.
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
                Self::read(&$crate::config::param::Table::new(stringify!($name), map), false)
                    .map_err(<D::Error as serde::de::Error>::custom)
            }
        }
    };
    (@default $ty:ty) => { None };
    (@default $ty:ty, $d:expr) => { Some(|| $crate::config::param::write::<$ty>(&$d)) };
    (@doc) => { "" };
    (@doc $($doc:literal)+) => { concat!($($doc, "\n"),+) };
    (@opt resolved $v:ident) => { $crate::config::param::Resolved::$v };
    (@opt acts $v:ident) => { $crate::config::param::Acts::$v };
    (@opt $o:ident $v:tt) => { $v };
}
pub(crate) use section;
