//! Recipes (`switch.recipe`): a paper's whole set-up for a scheme under
//! one name, as `transport.profile` is for TCP's tuning. ML-ECN, say, is
//! one marking scheme but needs eight queues in three classes with 4:2:1
//! quanta, its scheduler, its levels and the hosts' stage tags; its recipe
//! gives all of them at once.
//!
//! A recipe fills each key it names that the experiment leaves out (a
//! null counts as left out), before the file is read: a key given always
//! wins, so every value stays overridable one by one, and the resolved
//! config keeps `recipe` and shows each value, so it reads back to the
//! same run. A recipe may reach beyond `[switch]` where the paper's set-up
//! does: `[host]` (ML-ECN's stages), `[transport]` (pFabric's), `[fabric]`
//! and `[nic]` (where FQ-CoDel runs). Its `[switch]` values reach the
//! fabric's ports through the usual merge unless `[fabric]` sets them; the
//! key itself is one for the whole network, given in `[switch]` only.
//!
//! A value is either fixed (JSON text) or derived from the rest of the
//! experiment (CEDM's K2 from K1 and the network's rate and base RTT);
//! a derived one that cannot be worked out (no K1 given) is left out, and
//! the scheme's own check then says what is missing.
//!
//! Each scheme declares its recipe in its own file (`pub const RECIPE`, of
//! the types in `scheme.rs`) and joins `RECIPES` below with one line. A config without `recipe` is
//! read exactly as before.

use crate::config::error::{self, unknown_name};
use crate::config::{Config, ConfigError, PortCfg};
use crate::switch::scheme::{RecipeDecl, RecipeFill, RecipeValue};
use serde_json::{Map, Value};

/// Every recipe: the registry's list, one line each.
pub const RECIPES: &[&RecipeDecl] = &[
    &super::marker::ml_ecn::RECIPE,
    &super::marker::cedm::RECIPE,
    &super::pfabric::RECIPE,
    &super::fq_codel::RECIPE,
    &super::marker::pie::RECIPE,
    &super::dualpi2::RECIPE,
];

/// The recipe named `name`.
pub fn decl(name: &str) -> Option<&'static RecipeDecl> {
    RECIPES.iter().copied().find(|d| d.about.name == name)
}

/// The value of a fill in words: its JSON, or its rule.
pub fn value_text(f: &RecipeFill) -> String {
    match f.value {
        RecipeValue::Json(text) => text.to_string(),
        RecipeValue::Derived { rule, .. } => rule.to_string(),
    }
}

/// An experiment (JSON) with its recipe applied, the recipe, and the keys
/// it filled.
pub struct Applied {
    pub config: Value,
    pub recipe: Option<&'static RecipeDecl>,
    pub filled: Vec<&'static str>,
}

/// Apply the recipe `[switch]` names, if any: fill every key it names that
/// the experiment leaves out. Without `switch.recipe` the experiment comes
/// back as it is.
pub fn apply(v: &Value) -> Result<Applied, ConfigError> {
    let mut out = Applied { config: v.clone(), recipe: None, filled: Vec::new() };
    let Some(given) = v.get("switch").and_then(|s| s.get("recipe")).filter(|r| !r.is_null()) else {
        return Ok(out);
    };
    let names: Vec<&str> = RECIPES.iter().map(|d| d.about.name).collect();
    let Some(name) = given.as_str() else {
        return Err(error::bad(
            "switch.recipe",
            given,
            &format!("must be the name of a recipe, one of {}", names.join(", ")),
        ));
    };
    let recipe = decl(name).ok_or_else(|| unknown_name("switch.recipe", name, &names))?;
    out.recipe = Some(recipe);
    let mut derived = Vec::new();
    for f in recipe.fills {
        match f.value {
            RecipeValue::Json(text) => {
                let value = serde_json::from_str(text).expect("a recipe's value is JSON");
                if fill(&mut out.config, f.key, value) {
                    out.filled.push(f.key);
                }
            }
            RecipeValue::Derived { value, .. } => derived.push((f.key, value)),
        }
    }
    if derived.iter().all(|(key, _)| given_at(&out.config, key)) {
        return Ok(out);
    }
    // Derived values read the experiment as parsed; one that does not
    // parse yet gets none, and reading it whole reports why.
    let Ok(mut cfg) = Config::parse(&out.config) else {
        return Ok(out);
    };
    let Ok(topology) = cfg.topology.resolved() else {
        return Ok(out);
    };
    if topology.validate().is_err() {
        return Ok(out);
    }
    cfg.topology = topology;
    for (key, value) in derived {
        if let Some(v) = value(&cfg) {
            if fill(&mut out.config, key, v) {
                out.filled.push(key);
            }
        }
    }
    Ok(out)
}

/// The experiment gives `key` ("section.key") a value (not null).
fn given_at(config: &Value, key: &str) -> bool {
    let (sec, k) = key.split_once('.').expect("a recipe's key is section.key");
    config.get(sec).and_then(|t| t.get(k)).is_some_and(|v| !v.is_null())
}

/// Set `key` ("section.key") to `value` where the experiment leaves it
/// out, making the section's table if there is none; true if it did.
fn fill(config: &mut Value, key: &str, value: Value) -> bool {
    let (sec, k) = key.split_once('.').expect("a recipe's key is section.key");
    let Some(top) = config.as_object_mut() else {
        return false;
    };
    let table = top.entry(sec).or_insert_with(|| Value::Object(Map::new()));
    if table.is_null() {
        *table = Value::Object(Map::new());
    }
    // A section that is not a table is refused when the file is read.
    let Some(table) = table.as_object_mut() else {
        return false;
    };
    if table.get(k).is_some_and(|v| !v.is_null()) {
        return false;
    }
    table.insert(k.to_string(), value);
    true
}

/// An error about a key the recipe filled says so: the value is the
/// recipe's, and giving the key sets another.
pub fn blame(e: ConfigError, applied: &Applied) -> ConfigError {
    let Some(recipe) = applied.recipe else {
        return e;
    };
    let about = applied
        .filled
        .iter()
        .find(|k| e.0.strip_prefix(**k).is_some_and(|rest| rest.starts_with([' ', ':', '[', '.']) || rest.is_empty()));
    match about {
        Some(key) => ConfigError(format!(
            "{} (the value of switch.recipe = \"{}\"; give {key} to set another)",
            e.0, recipe.about.name
        )),
        None => e,
    }
}

/// `RecipeDecl::hint` of the recipe named `scheme`, if there is one.
pub fn hint(scheme: &str, port: &PortCfg) -> String {
    decl(scheme).map_or_else(String::new, |r| r.hint(port))
}

#[cfg(test)]
mod tests;
