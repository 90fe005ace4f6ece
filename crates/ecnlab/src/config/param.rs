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

/// A key's value read from JSON: Err((path inside the value, message)).
pub fn parse<T: DeserializeOwned>(v: &Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        (if path == "." { String::new() } else { path }, e.into_inner().to_string())
    })
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
    /// Its value made canonical (and checked for its type).
    pub canonical: fn(&Value) -> Result<Value, (String, String)>,
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

    /// `key`'s value: as given, or its default (`default` None: required).
    pub fn get<T: DeserializeOwned>(&self, key: &str, default: Option<fn() -> Value>) -> Result<T, ConfigError> {
        let path = join(&self.sec, key);
        match (self.map.get(key), default) {
            (Some(v), _) => parse(v).map_err(|(inner, m)| ConfigError(format!("{}: {m}", key_path(&path, &inner)))),
            (None, Some(d)) => Ok(parse(&d()).expect("a declared default parses as its type")),
            (None, None) => {
                let at = if self.sec.is_empty() { String::new() } else { format!("{}: ", self.sec) };
                Err(ConfigError(format!("{at}missing field `{key}`")))
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
/// default_doc (text), resolved (Always, Given, InUse), per_port, lenient.
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
                        let v = t.get(stringify!($field), Self::PARAMS[i].default)?;
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
    (@opt $o:ident $v:tt) => { $v };
}
pub(crate) use section;
